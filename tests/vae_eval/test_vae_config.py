"""vae-eval --config / --dry-run, and configs/vaes-2026.yaml (the field's VAEs), offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.vae_eval.codecs.diffusers_vae import SUPPORTED_CLASSES
from glyphbench.vae_eval.config import VaeConfig, check_entries, load_config, merge_settings
from tests.helpers.paths import REPO_ROOT

REPO = REPO_ROOT
FIELD = REPO / "configs" / "vaes-2026.yaml"
#: The config's taesd: entry, relative to the repository root (the tests' working folder).
TAEF2 = REPO.parent / "shared" / "taef2"

#: The models the field's VAE table covers, by a word of their label.
EXPECTED = ("SD 1.5", "SDXL", "SD3.5", "FLUX.1", "FLUX.2", "Qwen-Image", "Sana", "HunyuanImage")


def test_the_field_config_names_every_vae_and_resolves_offline() -> None:
    config = load_config(FIELD)
    entries = config.entries()
    labels = " | ".join(entry.label for entry in entries)
    for name in EXPECTED:
        assert name in labels, name
    for family in ("TAESD", "TAESDXL", "TAESD3", "TAEF1", "TAEF2"):
        assert any(entry.label.startswith(family) for entry in entries), family
    declared = {entry.autoencoder for entry in entries if entry.autoencoder}
    assert declared <= set(SUPPORTED_CLASSES)
    assert {"AutoencoderKLFlux2", "AutoencoderKLQwenImage", "AutoencoderDC"} <= declared
    if not TAEF2.is_dir():  # its taesd: folder is checked: only where it is
        entries = [entry for entry in entries if not entry.spec.startswith("taesd:")]
    records = check_entries(entries, "--vae")  # offline: nothing is downloaded or loaded
    assert [r["plugin"] for r in records].count("diffusers") >= 12


@pytest.mark.slow
@pytest.mark.skipif(not TAEF2.is_dir(), reason="../shared/taef2 (the config's taesd: entry) absent")
def test_dry_run_cli_prints_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "never"
    code = (
        "import sys; from typer.testing import CliRunner; from glyphbench.cli.root import app\n"
        f"r = CliRunner().invoke(app, ['vae-eval', '--config', {str(FIELD)!r}, '--dry-run',"
        f" '--out', {str(out)!r}, '--limit', '3'])\n"
        "print(r.output); assert r.exit_code == 0, r.output\n"
        "heavy = [m for m in ('torch', 'diffusers', 'easyocr') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=REPO
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "black-forest-labs/FLUX.2-dev [vae]" in result.stdout
    assert "AutoencoderKLQwenImage" in result.stdout
    assert "(3 images)" in result.stdout  # --limit on the command line wins over the file
    assert "dry run: nothing loaded or written" in result.stdout
    assert not out.exists()


def test_config_problems_are_one_line_errors(tmp_path: Path) -> None:
    bad_key = tmp_path / "bad.yaml"
    bad_key.write_text("vaes: [identity]\nimagez: default\n", encoding="utf-8")
    with pytest.raises(InputError, match="unknown key 'imagez'"):
        load_config(bad_key)
    bad_class = tmp_path / "class.yaml"
    bad_class.write_text(
        "vaes:\n  - spec: diffusers:x/y\n    autoencoder: AutoencoderKLNew\n", encoding="utf-8"
    )
    result = CliRunner().invoke(app, ["vae-eval", "--config", str(bad_class), "--dry-run"])
    assert "autoencoder 'AutoencoderKLNew' is not supported" in str(result.exception)
    typo = tmp_path / "typo.yaml"
    typo.write_text("vaes: ['jpeg?qualty=3']\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["vae-eval", "--config", str(typo), "--dry-run"])
    assert "unknown option 'qualty'" in str(result.exception)


@pytest.mark.parametrize(
    "text, said",
    [
        ("vaes:\n  - spec: identity\n    lable: x\n", "[vaes.0.lable]: unknown key 'lable'"),
        ("vaes:\n  - jpeg\n  - foobar:x\n", "[vaes.1]: unknown codec 'foobar'"),
        (
            "vaes:\n  - spec: identity\n    autoencoder: AutoencoderKL\n",
            "[vaes.0]: identity: autoencoder applies to diffusers: codecs only",
        ),
    ],
    ids=["misspelt key", "unknown codec", "autoencoder on another codec"],
)
def test_a_config_problem_names_the_file_and_its_key(tmp_path: Path, text: str, said: str) -> None:
    """It named --vae (never typed) and pydantic's class name (vaes.0.VaeEntry.lable), and
    took an autoencoder on a codec that ignores it for a full run."""
    path = tmp_path / "vaes.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path} {said}"), caught.value


def test_flags_typed_on_the_command_line_win() -> None:
    config = VaeConfig(vaes=["identity", "jpeg?quality=30"], limit=20, ocr="tesseract")
    flags = {"vae": ["resize?factor=8"], "limit": None, "ocr": "easyocr", "images": "default"}
    merged = merge_settings(config, flags, given={"ocr"})
    assert merged["vae"] == ["identity", "jpeg?quality=30", "resize?factor=8"]
    assert merged["limit"] == 20 and merged["ocr"] == "easyocr" and merged["images"] == "default"
