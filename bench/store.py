"""The benchmark's results table on a run folder (:class:`bench.engine.RunFolder`).

Layout of a benchmark run ``DIR`` (the engine's layout, see :mod:`bench.engine`)::

    run.json                 resolved config, versions, prompt hash, times, shards
    config.yaml | command.txt  the config exactly as given (YAML text or the command line)
    prompts.parquet          the selected prompt set (so merge/rescore need no source)
    images/<model>/<prompt_id>_s<seed>_i<sample>.png
    parts/<shard>/<model>/batch-00001.parquet   rows of one batch, written after its images
    parts/<shard>/shard.json                    that process's host, device, times, models
    results.parquet          the merged table (one row per image)

Merging keeps, for each row key (:data:`bench.schema.ROW_KEY`), the row from the
newest part file: a resumed run only re-does errored or missing rows, and a
``rescore`` writes its rows as a newer part, so "newest" is always the row the user
last asked for. This module adds what is specific to the results table: column
types, image names, and the part reading/writing with that key.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.engine import RunFolder, image_path, slug
from bench.schema import RESULT_COLUMNS, ROW_KEY
from prompts.schema import PROMPT_COLUMNS

RESULTS = "results.parquet"
PROMPTS = "prompts.parquet"

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
    # Written only by runs with hosted-API models (after the schema's columns): what the
    # image cost in USD (0 for a refusal or an image another run paid; NaN: no price known).
    "cost_usd": "float64",
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
    # Built as one dict of typed columns: setting ~70 columns one by one on a frame
    # was most of the harness's per-batch cost (issue 18).
    # Columns already of their type are kept as they are, and missing ones are made
    # typed at once: conforming a conformed batch costs a third of what it did (issue 26).
    source = frame.reset_index(drop=True)
    columns: dict[str, Any] = {}
    for column in RESULT_COLUMNS:
        dtype = column_dtype(column)
        if column in source.columns:
            values = source[column]
            columns[column] = values if values.dtype == dtype else values.astype(dtype)
        elif dtype == "float64":
            columns[column] = np.full(len(source), np.nan)
        elif dtype == "object":
            columns[column] = np.full(len(source), pd.NA, dtype=object)
        else:
            columns[column] = pd.array([pd.NA] * len(source), dtype=dtype)
    for column in source.columns:
        if column not in columns:  # optional columns (cost_usd) keep their type too
            extra = source[column]
            columns[column] = (
                extra.astype(RESULT_DTYPES[column]) if column in RESULT_DTYPES else extra
            )
    return pd.DataFrame(columns, index=source.index, copy=False)


def image_stem(prompt_id: str, seed: int, sample_index: int) -> str:
    """File name (without ``.png``) of one image; ids with unsafe characters get a short hash.

    >>> image_stem("p-001", 0, 2)
    'p-001_s0_i2'
    >>> image_stem("a/b", 0, 0).startswith("a_b-")
    True
    """
    return f"{slug(prompt_id, digest=8)}_s{seed}_i{sample_index}"


def image_relpath(model_slug: str, prompt_id: str, seed: int, sample_index: int) -> str:
    """``images/<model>/<prompt_id>_s<seed>_i<sample>.png`` (relative to the run folder)."""
    return image_path(model_slug, image_stem(prompt_id, seed, sample_index))


def done_keys(folder: RunFolder) -> set[tuple[Hashable, ...]]:
    """Keys of rows that succeeded; these are skipped on resume (failed rows are retried)."""
    return folder.done_keys(ROW_KEY)


def write_rows(folder: RunFolder, rows: pd.DataFrame, shard: str, group: str) -> Path:
    """Write rows (typed by :func:`conform_results`) as a new part file of (shard, group)."""
    return folder.write_part(conform_results(rows), shard, group)
