"""The README's VAE figures come out of the command printed beside them: the test reads the
command and the figures from README.md, runs the command as printed (its output folder
moved under the test's own), and compares each codec's Word Retention at the README's one
decimal. Needs the real taef2 weights in ../shared/taef2 (skipped without them).

The figures drifted before (README taef2 WR 56.0, the command 54.0) because the default
image set took fonts from the system: installing Liberation changed 20 of its 25 images.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT
README = ROOT / "README.md"
TAEF2 = ROOT.parent / "shared" / "taef2"

#: How the README names each codec of its figures, by the spec in its command.
CODEC_NAMES = {
    "taef2": "taesd:../shared/taef2",
    "identity": "identity",
    "resize x8": "resize?factor=8",
}


def readme_vae() -> tuple[list[str], dict[str, float]]:
    """The README's VAE command (its words after ``glyphbench``) and its WR figures."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    command = re.search(r"\*\*VAE text survival\*\* \(`glyphbench ([^`]+)`\)", text)
    assert command, "the README's VAE paragraph names no command"
    said = re.search(
        r"WR taef2 ([\d.]+), identity ([\d.]+) \(the reader's ceiling\), resize x8 ([\d.]+)", text
    )
    assert said, "the README's VAE paragraph gives no WR figures"
    figures = dict(zip(CODEC_NAMES, map(float, said.groups()), strict=True))
    return shlex.split(command.group(1)), figures


def test_the_readme_names_its_command_and_figures_and_the_demo_prints_it() -> None:
    from glyphbench.cli.demo import VAE_COMMAND

    words, figures = readme_vae()
    assert words[0] == "vae-eval" and "--out" in words
    assert set(figures) == set(CODEC_NAMES)
    printed = shlex.split(VAE_COMMAND)[1:]
    assert printed == words  # the output folder too: the README names what the demo prints


@pytest.mark.slow
@pytest.mark.skipif(not (TAEF2 / "taef2_decoder.pth").is_file(), reason=f"needs {TAEF2}")
def test_the_readme_vae_command_gives_the_readme_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from glyphbench.cli import main

    words, figures = readme_vae()
    out = tmp_path / "vae-out"
    words[words.index("--out") + 1] = str(out)
    monkeypatch.chdir(ROOT)  # the command's ../shared/taef2 is relative to the clone
    monkeypatch.setattr(sys, "argv", ["glyphbench", *words])
    try:
        main()
    except SystemExit as exc:
        assert not exc.code, exc.code
    from glyphbench.vae_eval.analyse import summary_table

    summary = summary_table(pd.read_parquet(out / "vae_results.parquet"))  # indexed by codec
    measured = {
        name: round(float(summary.loc[spec, "WR"]), 1) for name, spec in CODEC_NAMES.items()
    }
    assert measured == figures
