"""``glyphbench vae-eval download``: fetch the images a metadata file lists.

For users with internet only; nothing else in glyphbench needs the network.

Each entry's ``image_url`` is fetched with :mod:`urllib` into ``OUT/<file name>``
(atomic write: a partial download never looks finished), and the metadata file is
copied to ``OUT`` so ``--images OUT`` finds both. Files already present are skipped,
so an interrupted download resumes where it stopped. A response that is not an image
(e.g. an HTML photo page: several of TextInVision's ``image_url`` values point at the
page on Pixabay/Unsplash, not at the file) is refused and reported, never saved
under an image name.
"""

from __future__ import annotations

import shutil
import urllib.error
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from glyphbench.core.errors import InputError
from glyphbench.core.io import atomic_path
from glyphbench.vae_eval.imageset import read_metadata

USER_AGENT = "glyphbench-vae-eval/0.1 (+https://github.com/; research benchmark)"
#: Leading bytes of the image formats Pillow reads that a server may send.
IMAGE_MAGIC = (
    b"\xff\xd8\xff",
    b"\x89PNG\r\n\x1a\n",
    b"GIF8",
    b"RIFF",
    b"BM",
    b"II*\x00",
    b"MM\x00*",
)


@dataclass
class DownloadSummary:
    fetched: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already present
    failed: dict[str, str] = field(default_factory=dict)  # file name -> reason


def looks_like_image(head: bytes) -> bool:
    """True when ``head`` starts like a JPEG, PNG, GIF, WebP, BMP or TIFF file.

    >>> looks_like_image(b"\\x89PNG\\r\\n\\x1a\\n...."), looks_like_image(b"<!doctype html>")
    (True, False)
    """
    return any(head.startswith(magic) for magic in IMAGE_MAGIC)


def fetch(url: str, target: Path, timeout: float = 30.0) -> None:
    """Download ``url`` to ``target`` atomically; raise ValueError/OSError with a reason."""
    import urllib.request  # http.client and ssl: not loaded for ``glyphbench --help``

    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = response.read()
    if not looks_like_image(data[:16]):
        kind = "an HTML page" if data.lstrip()[:1] == b"<" else "not an image"
        raise ValueError(f"{url} returned {kind} ({len(data)} bytes), not an image file")
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def download(
    metadata_path: Path,
    out: Path,
    *,
    limit: int | None = None,
    timeout: float = 30.0,
    on_item: Callable[[str, str], None] | None = None,
) -> DownloadSummary:
    """Fetch every listed image missing from ``out``; see the module docstring.

    ``on_item(file name, status)`` is called after each entry (status: fetched,
    present or the failure reason).
    """
    metadata = read_metadata(metadata_path)
    if not metadata:
        raise InputError(metadata_path, "lists no images")
    out.mkdir(parents=True, exist_ok=True)
    copy = out / metadata_path.name
    if copy.resolve() != metadata_path.resolve():
        shutil.copyfile(metadata_path, copy)
    summary = DownloadSummary()
    for index, (name, record) in enumerate(metadata.items()):
        if limit is not None and index >= limit:
            break
        target = out / name
        if Path(name).name != name:
            summary.failed[name] = "file name must not contain folders"
        elif target.is_file():
            summary.skipped.append(name)
        elif not isinstance(record.get("image_url"), str) or not record["image_url"]:
            summary.failed[name] = "no image_url"
        else:
            try:
                fetch(record["image_url"], target, timeout)
                summary.fetched.append(name)
            except urllib.error.HTTPError as exc:
                summary.failed[name] = f"HTTP {exc.code}: {exc.reason}"
            except (urllib.error.URLError, OSError, ValueError) as exc:
                reason = getattr(exc, "reason", None) or exc
                summary.failed[name] = f"{type(exc).__name__}: {reason}"
        if on_item:
            status = (
                "fetched"
                if name in summary.fetched
                else "present"
                if name in summary.skipped
                else summary.failed[name]
            )
            on_item(name, status)
    return summary
