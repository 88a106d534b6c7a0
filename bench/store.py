"""A run folder on disk: images, per-batch part files, the merged results table.

Layout of ``DIR``::

    run.json                 resolved config, versions, prompt hash, times, shards
    config.yaml | flags.txt  the config exactly as given (YAML text or the command line)
    prompts.parquet          the selected prompt set (so merge/rescore need no source)
    images/<model>/<prompt_id>_s<seed>_i<sample>.png
    parts/<shard>/<model>/batch-00001.parquet   rows of one batch, written after its images
    parts/<shard>/shard.json                    that process's host, device, times, models
    results.parquet          the merged table (one row per image)

Crash safety: an image is written (atomically) before the part file holding its
row, and each part file is written atomically after its batch, so a crash
loses at most the batch in flight and never leaves a half-written file.

Merging reads every part file and keeps, for each row key
(:data:`bench.schema.ROW_KEY`), the row from the newest part file (by
modification time, then path): a resumed run only re-does errored or missing
rows, and a ``rescore`` writes its rows as a newer part, so "newest" is always
the row the user last asked for.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bench.config import slugify
from bench.io import atomic_path, write_table
from bench.schema import RESULT_COLUMNS, ROW_KEY
from prompts.schema import PROMPT_COLUMNS

if TYPE_CHECKING:
    from PIL import Image

#: pandas dtypes of the results columns that are not prompt columns.
RESULT_DTYPES: dict[str, str] = {
    "run_id": "string",
    "model": "string",
    "is_control": "boolean",
    "prompt_id": "string",
    "seed": "Int64",
    "sample_index": "Int64",
    "image_seed": "Int64",
    "image_path": "string",
    "image_sha256": "string",
    "width": "Int64",
    "height": "Int64",
    "batch_size": "Int64",
    "gen_seconds": "float64",
    "ocr_text": "string",
    "ocr_pieces": "string",
    "ocr_boxes": "string",
    "ocr_confidences": "string",
    "ocr_engine": "string",
    "ocr_version": "string",
    "ocr_seconds": "float64",
    "error": "string",
}

#: Columns that measure time, so they differ between two otherwise identical runs.
TIMING_COLUMNS = ("gen_seconds", "ocr_seconds")


def column_dtype(column: str) -> str:
    """The dtype of a results column (scores are float64 so error rows can hold NaN)."""
    if column in RESULT_DTYPES:
        return RESULT_DTYPES[column]
    if column in PROMPT_COLUMNS:
        return PROMPT_COLUMNS[column]
    return "float64" if column in RESULT_COLUMNS else "object"


def conform_results(frame: pd.DataFrame) -> pd.DataFrame:
    """Every results column present and typed, in schema order; extra columns follow."""
    out = frame.copy()
    for column in RESULT_COLUMNS:
        dtype = column_dtype(column)
        if column not in out.columns:
            out[column] = pd.Series(pd.NA if dtype != "float64" else float("nan"), index=out.index)
        out[column] = out[column].astype(dtype)
    extras = [c for c in out.columns if c not in RESULT_COLUMNS]
    return out[list(RESULT_COLUMNS) + extras].reset_index(drop=True)


def image_name(prompt_id: str, seed: int, sample_index: int) -> str:
    """File name of one image; ids with unsafe characters get a short hash to stay unique.

    >>> image_name("p-001", 0, 2)
    'p-001_s0_i2.png'
    >>> image_name("a/b", 0, 0).startswith("a_b-")
    True
    """
    stem = slugify(prompt_id)
    if stem != prompt_id:
        stem += "-" + hashlib.sha256(prompt_id.encode("utf-8")).hexdigest()[:8]
    return f"{stem}_s{seed}_i{sample_index}.png"


class RunStore:
    """Paths and atomic writes inside one run folder."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._last_part: dict[Path, int] = {}

    # paths ---------------------------------------------------------------
    @property
    def run_json(self) -> Path:
        return self.root / "run.json"

    @property
    def results(self) -> Path:
        return self.root / "results.parquet"

    @property
    def prompts(self) -> Path:
        return self.root / "prompts.parquet"

    @property
    def parts(self) -> Path:
        return self.root / "parts"

    def image_relpath(self, model_slug: str, prompt_id: str, seed: int, sample_index: int) -> str:
        return f"images/{model_slug}/{image_name(prompt_id, seed, sample_index)}"

    # images ----------------------------------------------------------------
    def write_image(self, image: Image.Image, relpath: str) -> str:
        """Save ``image`` as PNG at ``relpath`` atomically; return the file's SHA-256."""
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        data = buffer.getvalue()
        with atomic_path(self.root / relpath) as tmp:
            tmp.write_bytes(data)
        return hashlib.sha256(data).hexdigest()

    # part files ------------------------------------------------------------
    def part_dir(self, shard_name: str, model_slug: str) -> Path:
        return self.parts / shard_name / model_slug

    def next_part(self, shard_name: str, model_slug: str) -> Path:
        """A fresh ``batch-NNNNN.parquet`` path after the existing ones of this shard and model.

        The folder is listed once; later numbers come from a counter, so a long
        run does not re-list thousands of part files for every batch.
        """
        folder = self.part_dir(shard_name, model_slug)
        if folder not in self._last_part:
            numbers = [int(p.stem.split("-")[-1]) for p in folder.glob("batch-*.parquet")]
            self._last_part[folder] = max(numbers, default=0)
        self._last_part[folder] += 1
        return folder / f"batch-{self._last_part[folder]:05d}.parquet"

    def write_part(self, rows: pd.DataFrame, shard_name: str, model_slug: str) -> Path:
        path = self.next_part(shard_name, model_slug)
        write_table(conform_results(rows), path)
        return path

    def part_files(self) -> list[Path]:
        """Every part file, oldest first (modification time, then path)."""
        files = list(self.parts.glob("*/*/batch-*.parquet"))
        return sorted(files, key=lambda p: (p.stat().st_mtime_ns, str(p)))

    def read_parts(self) -> pd.DataFrame:
        """All rows of all part files, de-duplicated: the newest row of each key wins."""
        frames = [pd.read_parquet(path) for path in self.part_files()]
        frames = [f for f in frames if len(f)]
        if not frames:
            return conform_results(pd.DataFrame(columns=list(RESULT_COLUMNS)))
        rows = pd.concat([conform_results(f) for f in frames], ignore_index=True)
        return rows.drop_duplicates(subset=list(ROW_KEY), keep="last").reset_index(drop=True)

    def done_keys(self) -> set[tuple[str, str, int, int]]:
        """Keys of rows that succeeded (empty ``error``); these are skipped on resume."""
        rows = self.read_parts()
        ok = rows[rows["error"].fillna("") == ""]
        return {
            (str(m), str(p), int(s), int(i))
            for m, p, s, i in zip(
                ok["model"], ok["prompt_id"], ok["seed"], ok["sample_index"], strict=True
            )
        }

    # json --------------------------------------------------------------------
    def read_json(self, path: Path) -> dict[str, Any]:
        if not path.is_file():
            return {}
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return data
