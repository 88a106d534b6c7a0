"""Two people against each other, and the default reader against each, on the images of the
real set that a second person read (``tests/data/real_t2i/second_readings.csv``).

The second person saw neither the first reading, nor the prompt, nor any reader's reading
(``tests/data/real_t2i/SOURCES.md``). Taking the second reading as a reader's reading of the
first person's (:func:`glyphbench.calibration.real_set.real_rows`) gives the figures a reader
gets on the calibration card, here for a person:

* ``exact``: share of images whose two readings are the same after glyphbench's
  normalisation (NED 1);
* ``NED``: mean NED between the two readings;
* ``score error``: mean |NED(intended, second) - NED(intended, first)| with its 95%
  bootstrap interval over images and over repositories, and the bias (second minus first):
  how far a benchmark score moves when another person reads.

Then the default reader's score error on the same images, against the first person and
against the second (its readings: the stored ones of ``tests/data/real_t2i/readings`` where
they were read by this reader, code and engines, else read now).

    .venv/bin/python benchmarks/second_reading.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_reader_sweep import cached_readings  # noqa: E402
from glyphbench.calibration.real_set import (  # noqa: E402
    load_real_set,
    real_rows,
    score_error_table,
    shipped_real_set,
)
from glyphbench.core.errors import InputError  # noqa: E402
from glyphbench.readers import DEFAULT_READER  # noqa: E402

#: The second readings' columns: the image (as the manifest names it), the reading, a note.
COLUMNS = ("file", "second_reading", "note")


def load_second_readings(manifest: Path) -> tuple[pd.DataFrame, list[str]]:
    """The manifest's rows that were read a second time, and the second readings, in order."""
    frame = load_real_set(manifest)
    path = (manifest if manifest.is_dir() else manifest.parent) / "second_readings.csv"
    second = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [column for column in COLUMNS if column not in second.columns]
    if missing:
        raise InputError(path, f"missing column(s) {', '.join(missing)}", line=1)
    for number, file in enumerate(second["file"], start=2):
        if file not in set(frame["file"]):
            raise InputError(path, f"{file!r} is no image of the manifest", line=number)
    if not second["file"].is_unique:
        raise InputError(path, "an image is listed twice", line=1)
    rows = frame.set_index("file").loc[second["file"]].reset_index()
    return rows, second["second_reading"].tolist()


def agreement(rows: pd.DataFrame) -> dict[str, Any]:
    """A reading's figures against the person's (the card's): ``real_rows`` output in."""
    table = score_error_table(rows, "part")[0]
    return {
        "images": len(rows),
        "exact": float((rows["ned_vs_human"] == 1.0).mean()),
        "ned": float(rows["ned_vs_human"].mean()),
        "scored": table["images"],
        "repositories": table["repositories"],
        "score_error": table["score_mae"],
        "interval": table["interval"],
        "interval_by_repository": table["interval_by_repository"],
        "bias": table["score_bias"],
    }


def figures(manifest: Path, stored: Path) -> dict[str, Any]:
    """Person against person, and the default reader against each person."""
    rows, second = load_second_readings(manifest)
    with tempfile.TemporaryDirectory() as cache:  # read into a copy: the stored stay as they are
        for path in stored.glob("*.json"):
            shutil.copyfile(path, Path(cache) / path.name)
        read, _, _ = cached_readings(DEFAULT_READER, rows, Path(cache))
    by_second = rows.assign(human_reading=second)
    return {
        "second_person": agreement(real_rows(rows, second)),
        "reader_vs_first": agreement(real_rows(rows, read)),
        "reader_vs_second": agreement(real_rows(by_second, read)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--real", type=Path, default=None, help="manifest (default: shipped)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args()
    manifest = args.real or shipped_real_set()
    if manifest is None:
        parser.error("no real-image set: pass --real MANIFEST")
    manifest = Path(manifest)
    folder = manifest if manifest.is_dir() else manifest.parent
    result = figures(manifest, folder / "readings")
    names = {
        "second_person": "second person vs first",
        "reader_vs_first": "default reader vs first person",
        "reader_vs_second": "default reader vs second person",
    }
    print(f"{'':34} {'n':>3} {'exact':>6} {'NED':>6}  score error [95% CI] (repos)   bias")
    for key, name in names.items():
        f = result[key]
        lo, hi = f["interval"]
        rlo, rhi = f["interval_by_repository"]
        print(
            f"{name:34} {f['images']:3d} {f['exact']:6.1%} {f['ned']:6.3f}  "
            f"{f['score_error']:.3f} [{lo:.3f}, {hi:.3f}] ([{rlo:.3f}, {rhi:.3f}], "
            f"{f['repositories']}) {f['bias']:+.3f}"
        )
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
