"""The report's .tex tables compile with pdflatex (Debian's texlive; CI installs it), and
fit a 7-inch text width without an overfull box."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glyphbench.calibration.reader_error import ReaderError
from glyphbench.cli.demo import DEMO_CONTROLS, TINY_LABEL
from glyphbench.report.build import write_report
from glyphbench.report.latex import DEFAULT_TEX_WIDTH, TEX_WIDTHS
from glyphbench.report.tables import to_latex
from tests.helpers.report_fixtures import build_run

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None,
    reason="pdflatex not installed (apt-get install -y --no-install-recommends "
    "texlive-latex-base texlive-latex-recommended)",
)


def page(width_in: float) -> str:
    """A paper page of ``width_in`` inches of text (9-inch text height) on letter paper."""
    return (
        f"\\setlength{{\\textwidth}}{{{width_in:.4f}in}}"
        f"\\setlength{{\\oddsidemargin}}{{{(8.5 - width_in) / 2 - 1:.4f}in}}"
        "\\setlength{\\textheight}{9in}\\setlength{\\topmargin}{-0.5in}\n"
    )


def compile_tables(
    tables: list[Path], where: Path, width_in: float = 5.5
) -> subprocess.CompletedProcess[str]:
    body = "\n".join(rf"\input{{{t.resolve()}}}\clearpage" for t in tables)
    document = where / "paper.tex"
    document.write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{amssymb}\n"
        f"{page(width_in)}\\begin{{document}}\n{body}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    return subprocess.run(
        [str(PDFLATEX), "-interaction=nonstopmode", "-halt-on-error", document.name],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "max_print_line": "100000"},  # whole file names in the log
    )


@pytest.mark.slow
@needs_pdflatex
def test_every_report_table_compiles(tmp_path: Path) -> None:
    # Names with the characters that stopped pdflatex before: arrows, minus, CJK, _ and %.
    run = build_run(
        tmp_path / "run",
        n_prompts=8,
        models={"model_a → 100%": 0.05, "模型 b": 0.3, "control:render": 0.0},
        with_images=False,
    )
    card = tmp_path / "card.json"  # a reader's card: the reader-aware tables compile too
    errors = ReaderError("fixture", "fixture-1", np.array([-0.2, 0.0, 0.0, -0.1, 0.05]))
    card.write_text(json.dumps({"reader_error": errors.to_json()}), encoding="utf-8")
    write_report([run], tmp_path / "report", by=["prompt_type"], n_boot=50, reader_card=card)
    tables = sorted((tmp_path / "report" / "tables").glob("*.tex"))
    assert {"reader_error.tex", "reader_comparisons.tex"} <= {t.name for t in tables}
    done = compile_tables(tables, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    summary = (tmp_path / "report" / "tables" / "summary.tex").read_text(encoding="utf-8")
    assert r"\caption{" in summary and r"\toprule" in summary
    assert r"\textbf{" in summary  # the significantly best model's scores
    assert not too_wide(tmp_path / "paper.log")


def too_wide(log: Path) -> list[str]:
    """Each overfull box or too-tall float of the compiled document, with the table's file."""
    found, current = [], "?"
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        opened = re.findall(r"\((/[^()\s]+\.tex)", line)
        current = Path(opened[-1]).name if opened else current
        if "Overfull" in line or "Float too large" in line:
            found.append(f"{current}: {line.strip()}")
    return found


@pytest.mark.slow
@needs_pdflatex
@pytest.mark.parametrize("preset", [None, "acl", "full", "icml-column", "acl-column"])
def test_every_table_of_a_demo_like_report_fits_the_templates(
    tmp_path: Path, preset: str | None
) -> None:
    """The demo's models (four controls, the untrained model) and every default slicing:
    summary, slices, controls and ranking all fit the template's text width without an
    overfull box (default: 5.5 in, NeurIPS and ICLR)."""
    models = {
        name: rate
        for name, rate in zip(
            [label for _, label in DEMO_CONTROLS], (0.0, 0.1, 0.4, 1.0), strict=True
        )
    }
    models[TINY_LABEL] = 1.0
    models["a much longer model name [reader rapidocr, run-2026-11-27]"] = 0.05
    run = build_run(tmp_path / "run", n_prompts=40, models=models, with_images=False)
    write_report([run], tmp_path / "report", n_boot=50, tex_width=preset)
    tables = sorted((tmp_path / "report" / "tables").glob("*.tex"))
    assert {"summary.tex", "ranking.tex", "controls.tex", "by_group.tex"} <= {
        t.name for t in tables
    }
    width_in = TEX_WIDTHS[preset or DEFAULT_TEX_WIDTH]
    done = compile_tables(tables, tmp_path, width_in)
    assert done.returncode == 0, done.stdout[-3000:]
    assert too_wide(tmp_path / "paper.log") == []
    summary = (tmp_path / "report" / "tables" / "summary.tex").read_text(encoding="utf-8")
    assert "NED: NED similarity (1 = exact)" in summary  # the abbreviation, defined


def test_a_width_is_a_template_or_a_length() -> None:
    from glyphbench.core.errors import InputError
    from glyphbench.report.latex import tex_width_pt

    assert tex_width_pt("ACL") == pytest.approx(16.0 / 2.54 * 72.27)
    assert tex_width_pt("14cm") == pytest.approx(14 / 2.54 * 72.27)
    with pytest.raises(InputError, match="neurips, iclr"):
        tex_width_pt("nips")
    with pytest.raises(InputError, match="between 2 and 12 inches"):
        tex_width_pt("40in")


def test_a_long_table_is_split_and_a_wide_one_set_in_blocks() -> None:
    rows = pd.DataFrame(
        {
            "Model": [f"model-{i}" for i in range(50)],
            **{f"metric {k}": ["0.500 [0.400, 0.600]"] * 50 for k in range(12)},
        }
    )
    text = to_latex(rows, caption="Wide and long")
    assert text.count(r"\begin{table}") > 1 and "continued" in text
    first = text.split(r"\end{table}")[0]
    assert first.count(r"\begin{tabular}{") > 1  # the columns in several blocks
    assert first.count("model-0 ") + first.count("model-0 &") >= 2  # each repeats the model


def test_latex_rounds_floats_and_never_writes_an_empty_tabular() -> None:
    table = pd.DataFrame({"model": ["a"], "ned": [0.9964781746031747]})
    assert "0.996" in to_latex(table) and "0.99647" not in to_latex(table)
    empty = to_latex(table.iloc[:0], caption="Paired comparisons")
    assert "tabular" not in empty and empty.startswith("% Paired comparisons: no rows")


def test_unsettable_characters_are_replaced_and_latin_accents_kept() -> None:
    text = to_latex(pd.DataFrame({"text": ["café −1 ≤ 2 汉字 🙂"]}))
    assert "café" in text and "$-$1" in text and r"$\le$" in text
    assert "汉" not in text and "🙂" not in text


@pytest.mark.slow
@needs_pdflatex
@pytest.mark.parametrize("preset", [None, "acl-column"])
def test_hostile_labels_compile_and_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, preset: str | None
) -> None:
    """Control characters stopped pdflatex ("Text line contains an invalid character"); a
    long name with no break point ran 94 pt past the page, a one-word text 4,800 pt, and
    ``<script>`` 2.7 pt (``\\textless`` measured as a letter)."""
    from tests.helpers import report_fixtures

    long_word = "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3
    monkeypatch.setattr(report_fixtures, "WORDS", [long_word, "OPEN", "<b>&amp;</b>"])
    models = {
        "bad\x7fname\x1b[2J\x00": 0.1,
        "<script>alert(1)</script>": 0.2,
        "diffusers:StableDiffusionXLBaseFinetunedOnTextCapsWithLoRARank128Step120000EMA": 0.05,
        "control:render": 0.0,
    }
    run = report_fixtures.build_run(tmp_path / "run", n_prompts=6, models=models, with_images=False)
    write_report([run], tmp_path / "report", by=["text"], n_boot=20, tex_width=preset)
    tables = sorted((tmp_path / "report" / "tables").glob("*.tex"))
    done = compile_tables(tables, tmp_path, TEX_WIDTHS[preset or DEFAULT_TEX_WIDTH])
    assert done.returncode == 0, done.stdout[-3000:]
    # In one narrow column a row of two 80-letter keys is repeated in each of six blocks:
    # taller than a page. Its width, the defect here, fits.
    assert [line for line in too_wide(tmp_path / "paper.log") if "Overfull" in line] == []
