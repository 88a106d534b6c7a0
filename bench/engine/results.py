"""The benchmark's results table on a run folder (:class:`bench.engine.RunFolder`).

Layout of a benchmark run ``DIR`` (the engine's layout, see :mod:`bench.engine`)::

    run.json                 resolved config, versions, prompt hash, times, shards
    config.yaml | command.txt  the config exactly as given (YAML text or the command line)
    prompts.parquet          the selected prompt set (so merge/rescore need no source)
    images/<model>/<prompt_id>_s<seed>_i<sample>.png
    parts/<shard>/<model>/batch-00001.parquet   rows of one batch, written after its images
    parts/<shard>/shard.json                    that process's host, device, times, models
    results.parquet          the merged table (one row per image)

Merging keeps, for each row key (:data:`bench.core.schema.ROW_KEY`), the row from the
newest part file: a resumed run only re-does errored or missing rows, and a
``rescore`` writes its rows as a newer part, so "newest" is always the row the user
last asked for. This module adds what is specific to the results table: column
types, image names, and the part reading/writing with that key.
"""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from bench.core.schema import IDENTITY_COLUMNS, IMAGE_COLUMNS, OCR_COLUMNS, ROW_KEY
from bench.engine import RunFolder, image_path, slug
from bench.scoring.frame import SCORE_COLUMNS
from prompts.schema import PROMPT_COLUMNS

if TYPE_CHECKING:
    from bench.engine.config import RunConfig

RESULTS = "results.parquet"
PROMPTS = "prompts.parquet"

#: The prompt columns a row carries (``prompt_id`` is already in the identity columns).
PROMPT_PART = tuple(c for c in PROMPT_COLUMNS if c != "prompt_id")

#: Every column of ``results.parquet``, in order (groups: :mod:`bench.core.schema`).
RESULT_COLUMNS: tuple[str, ...] = (
    IDENTITY_COLUMNS + PROMPT_PART + IMAGE_COLUMNS + OCR_COLUMNS + tuple(SCORE_COLUMNS) + ("error",)
)

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


def _add_family(
    rows: pd.DataFrame, family: str, has_ocr: pd.Series, config: RunConfig
) -> pd.DataFrame:
    """``rows`` with the per-image metrics of ``family`` (NaN where there is no reading)."""
    from bench.scoring import score_pairs
    from bench.scoring.frame import text_metrics

    columns = [m.name for m in text_metrics([family]) if m.name not in rows.columns]
    if not columns:
        return rows
    scores = pd.DataFrame(float("nan"), index=rows.index, columns=columns)
    if has_ocr.any():
        scored = score_pairs(
            rows.loc[has_ocr, "text"].fillna("").astype(str).tolist(),
            rows.loc[has_ocr, "ocr_text"].fillna("").astype(str).tolist(),
            families=[family],
            keep_case=config.normalization.keep_case,
            strip_punct=config.normalization.strip_punct,
            nfkc=config.normalization.nfkc,
            fold_width=config.normalization.fold_width,
        )
        scores.loc[has_ocr.to_numpy(), columns] = scored[columns].astype(float).to_numpy()
    return pd.concat([rows, scores], axis=1)


def score_rows(rows: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    """Add every score column; rows without OCR text (errors) get NaN scores."""
    from bench.core.schema import failed_mask
    from bench.scoring import score_pairs
    from bench.scoring.frame import text_metrics

    columns = [metric.name for metric in text_metrics()]  # read now: plug-ins may add metrics
    rows = rows.drop(columns=[c for c in columns if c in rows.columns])
    has_ocr = rows["ocr_text"].notna() & ~failed_mask(rows)
    scores = pd.DataFrame(float("nan"), index=rows.index, columns=columns)
    if has_ocr.any():
        scored = score_pairs(
            rows.loc[has_ocr, "text"].fillna("").astype(str).tolist(),
            rows.loc[has_ocr, "ocr_text"].fillna("").astype(str).tolist(),
            keep_case=config.normalization.keep_case,
            strip_punct=config.normalization.strip_punct,
            nfkc=config.normalization.nfkc,
            fold_width=config.normalization.fold_width,
        )
        scores.loc[has_ocr.to_numpy(), columns] = scored[columns].astype(float).to_numpy()
    rows = pd.concat([rows, scores], axis=1)
    for family in config.metrics:  # families asked for besides glyphbench's (--metrics)
        rows = _add_family(rows, family, has_ocr, config)
    if config.suite is not None:  # issue 12: the suite's own scorer, beside glyphbench's
        from bench.suites.scores import add_suite_scores

        rows = add_suite_scores(rows, config.suite.spec, has_ocr.to_numpy())
    return rows
