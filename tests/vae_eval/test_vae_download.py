"""glyphbench.vae_eval.download against file:// URLs and a local HTTP server on 127.0.0.1 (no
internet)."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.vae_eval.download import download


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A folder served over HTTP on 127.0.0.1 with one PNG and one HTML page."""
    root = tmp_path / "served"
    root.mkdir()
    Image.new("RGB", (24, 16), (200, 10, 10)).save(root / "red.png")
    (root / "page.html").write_text("<!doctype html><title>photo page</title>")
    handler = partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


def _metadata(path: Path, entries: dict[str, str]) -> Path:
    data = {
        name: {"image_url": url, "photographer_profile": "", "source": "test"}
        for name, url in entries.items()
    }
    path.write_text(json.dumps(data))
    return path


def test_download_fetches_refuses_html_and_resumes(
    tmp_path: Path, served: tuple[str, Path]
) -> None:
    base, root = served
    meta = _metadata(
        tmp_path / "vae_images_metadata.json",
        {
            "a.png": f"{base}/red.png",
            "b.jpg": f"{base}/page.html",  # a photo page, not the image
            "c.png": f"{base}/missing.png",  # 404
            "d.png": (root / "red.png").as_uri(),  # file:// works too
        },
    )
    out = tmp_path / "images"
    summary = download(meta, out)
    assert sorted(summary.fetched) == ["a.png", "d.png"]
    assert "HTML page" in summary.failed["b.jpg"]
    assert summary.failed["c.png"].startswith("HTTP 404")
    assert not (out / "b.jpg").exists() and not (out / "c.png").exists()
    with Image.open(out / "a.png") as image:
        assert image.size == (24, 16)
    assert (out / "vae_images_metadata.json").is_file()  # copied beside the images
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporaries

    again = download(meta, out)  # resumable: present files are skipped, failures retried
    assert sorted(again.skipped) == ["a.png", "d.png"]
    assert again.fetched == [] and set(again.failed) == {"b.jpg", "c.png"}


def test_download_cli(tmp_path: Path, served: tuple[str, Path]) -> None:
    base, _ = served
    meta = _metadata(
        tmp_path / "meta.json", {"x.png": f"{base}/red.png", "y.png": f"{base}/nope.png"}
    )
    result = CliRunner().invoke(
        app, ["vae-eval", "download", str(meta), "--out", str(tmp_path / "dl")]
    )
    assert result.exit_code == 0, result.output
    assert "fetched 1" in result.output and "failed 1" in result.output
    assert (tmp_path / "dl" / "x.png").is_file()
