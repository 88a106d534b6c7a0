"""The report's .tex tables compile with pdflatex (Debian's texlive; CI installs it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from report_fixtures import build_run

from bench.report.build import write_report
from bench.report.tables import to_latex

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None, reason="pdflatex not installed (apt-get install texlive-latex-recommended)"
)


def compile_tables(tables: list[Path], where: Path) -> subprocess.CompletedProcess[str]:
    body = "\n".join(rf"\input{{{t.resolve()}}}\clearpage" for t in tables)
    document = where / "paper.tex"
    document.write_text(
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{amssymb}\n"
        f"\\begin{{document}}\n{body}\n\\end{{document}}\n",
        encoding="utf-8",
    )
    return subprocess.run(
        [str(PDFLATEX), "-interaction=nonstopmode", "-halt-on-error", document.name],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=120,
    )


@needs_pdflatex
def test_every_report_table_compiles(tmp_path: Path) -> None:
    # Names with the characters that stopped pdflatex before: arrows, minus, CJK, _ and %.
    run = build_run(
        tmp_path / "run",
        n_prompts=8,
        models={"model_a → 100%": 0.05, "模型 b": 0.3, "control:render": 0.0},
        with_images=False,
    )
    write_report([run], tmp_path / "report", by=["prompt_type"], n_boot=50)
    tables = sorted((tmp_path / "report" / "tables").glob("*.tex"))
    assert len(tables) >= 3
    done = compile_tables(tables, tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    summary = (tmp_path / "report" / "tables" / "summary.tex").read_text(encoding="utf-8")
    assert r"\caption{" in summary and r"\toprule" in summary
    assert r"\textbf{" in summary  # the best model's scores


def test_latex_rounds_floats_and_never_writes_an_empty_tabular() -> None:
    table = pd.DataFrame({"model": ["a"], "ned": [0.9964781746031747]})
    assert "0.996" in to_latex(table) and "0.99647" not in to_latex(table)
    empty = to_latex(table.iloc[:0], caption="Paired comparisons")
    assert "tabular" not in empty and empty.startswith("% Paired comparisons: no rows")


def test_unsettable_characters_are_replaced_and_latin_accents_kept() -> None:
    text = to_latex(pd.DataFrame({"text": ["café −1 ≤ 2 汉字 🙂"]}))
    assert "café" in text and "$-$1" in text and r"$\le$" in text
    assert "汉" not in text and "🙂" not in text
