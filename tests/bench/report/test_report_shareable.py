"""A report is sent to others: no file of it names a folder of the machine it was made on
(the run's folder is given relative to the report), and each run has one name (its run id)
on the page, in report.json and in the tables."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from glyphbench.report.build import write_report
from tests.helpers.report_fixtures import build_run


def test_no_file_of_a_report_names_a_folder_of_this_machine(tmp_path: Path) -> None:
    run = build_run(tmp_path / "runs" / "first", n_prompts=6, models={"toy-good": 0.05})
    meta = json.loads((run / "run.json").read_text(encoding="utf-8"))
    meta.update(  # what a real run records: its folder, the command, a local model's folder
        argv=[str(tmp_path / ".venv" / "bin" / "glyphbench"), "run", "--out", str(run)],
        models={"tiny": {"spec": f"diffusers:{tmp_path / 'models' / 'tiny'}?device=cpu"}},
    )
    (run / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    out = tmp_path / "shared" / "report"
    write_report([run], out, n_boot=20, by=["prompt_type"])
    machine = str(tmp_path.resolve())
    for path in out.rglob("*"):
        if path.suffix in {".html", ".json", ".csv", ".md", ".tex", ".svg"}:
            text = path.read_text(encoding="utf-8")
            assert machine not in text, path.relative_to(out)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    (name,) = report["runs"]
    assert report["runs"][name]["dir"] == "../../runs/first"
    assert report["runs"][name]["meta"]["argv"][0] == "…/glyphbench"
    # one name: the run id, in the title, report.json and every table's run column
    html = (out / "index.html").read_text(encoding="utf-8")
    assert f"<title>glyphbench report: {name}</title>" in html
    per_image = pd.read_csv(out / "tables" / "per_image.csv")
    assert set(per_image["run"]) == {name}
