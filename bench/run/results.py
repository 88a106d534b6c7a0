"""The benchmark's results table on a run folder (:class:`glyphbench.engine.RunFolder`).

Layout of a benchmark run ``DIR`` (the engine's layout, see :mod:`glyphbench.engine`)::

    run.json                 resolved config, versions, prompt hash, times, shards
    config.yaml | command.txt  the config exactly as given (YAML text or the command line)
    prompts.parquet          the selected prompt set (so merge/rescore need no source)
    images/<model>/<prompt_id>_s<seed>_i<sample>.png
    parts/<shard>/<model>/batch-00001.parquet   rows of one batch, written after its images
    parts/<shard>/shard.json                    that process's host, device, times, models
    results.parquet          the merged table (one row per image)

Merging keeps, for each row key (:data:`glyphbench.core.schema.ROW_KEY`), the row from the
newest part file: a resumed run only re-does errored or missing rows, and a
``rescore`` writes its rows as a newer part, so "newest" is always the row the user
last asked for. This module adds what is specific to the results table: column
types, image names, and the part reading/writing with that key.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from glyphbench.core.io import read_parquet, read_table
from glyphbench.core.schema import (
    IDENTITY_COLUMNS,
    IMAGE_COLUMNS,
    OCR_COLUMNS,
    ROW_KEY,
    failed_mask,
)
from glyphbench.engine import RunFolder, image_path, slug
from glyphbench.prompts.schema import PROMPT_COLUMNS
from glyphbench.scoring import score_pairs
from glyphbench.scoring.frame import SCORE_COLUMNS, score_columns, text_metrics
from glyphbench.suites.scores import add_suite_scores

if TYPE_CHECKING:
    import pyarrow as pa

    from glyphbench.run.config import NormalizationConfig, ScoreSettings, SuiteEntry

RESULTS = "results.parquet"
PROMPTS = "prompts.parquet"

#: The prompt columns a row carries (``prompt_id`` is already in the identity columns).
PROMPT_PART = tuple(c for c in PROMPT_COLUMNS if c != "prompt_id")

#: Every column of ``results.parquet``, in order (groups: :mod:`glyphbench.core.schema`).
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
    "ocr_raw": "string",
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
    # was most of the harness's per-batch cost.
    # Columns already of their type are kept as they are, and missing ones are made
    # typed at once: conforming a conformed batch costs a third of what it did.
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


def read_results(path: str | Path, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """A results table: every column, conformed (``columns`` None), or only ``columns``.

    With ``columns``, only those the file has are read, as stored: a summary of a
    million rows reads a few columns, not the whole table.
    """

    if columns is None:
        return conform_results(read_table(path))
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        present = set(pq.read_schema(path).names)
    except (OSError, ValueError, pa.ArrowException):
        return read_table(path)  # its one-line error (checksums, an empty file: merge)
    return read_parquet(path, columns=[c for c in dict.fromkeys(columns) if c in present])


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
    """Keys of rows that succeeded and whose image is on disk; these are skipped on resume
    (failed rows, and rows whose image was deleted, are made again)."""
    return folder.done_keys(ROW_KEY, on_disk="image_path")


def write_rows(folder: RunFolder, rows: pd.DataFrame, shard: str, group: str) -> Path:
    """Write rows (typed by :func:`conform_results`) as a new part file of (shard, group)."""
    return folder.write_part(conform_results(rows), shard, group)


def _add_family(
    rows: pd.DataFrame, family: str, has_ocr: pd.Series, norm: NormalizationConfig
) -> pd.DataFrame:
    """``rows`` with the per-image metrics of ``family`` (NaN where there is no reading)."""

    columns = [m.name for m in text_metrics([family]) if m.name not in rows.columns]
    if not columns:
        return rows
    scores = pd.DataFrame(float("nan"), index=rows.index, columns=columns)
    if has_ocr.any():
        scored = score_pairs(
            rows.loc[has_ocr, "text"].fillna("").astype(str).tolist(),
            rows.loc[has_ocr, "ocr_text"].fillna("").astype(str).tolist(),
            families=[family],
            keep_case=norm.keep_case,
            strip_punct=norm.strip_punct,
            nfkc=norm.nfkc,
            fold_width=norm.fold_width,
        )
        scores.loc[has_ocr.to_numpy(), columns] = scored[columns].astype(float).to_numpy()
    return pd.concat([rows, scores], axis=1)


def score_rows(
    rows: pd.DataFrame, score: ScoreSettings, suite: SuiteEntry | None = None
) -> pd.DataFrame:
    """Add every score column; rows without OCR text (errors) get NaN scores.

    ``score``: the run's score section (normalisation, metric families besides
    glyphbench's); ``suite``: the run's suite, whose own scorer adds its columns.
    """
    norm = score.normalization

    columns = [metric.name for metric in text_metrics()]  # read now: plug-ins may add metrics
    rows = rows.drop(columns=[c for c in columns if c in rows.columns])
    has_ocr = rows["ocr_text"].notna() & ~failed_mask(rows)
    scores = pd.DataFrame(float("nan"), index=rows.index, columns=columns)
    if has_ocr.any():
        scored = score_pairs(
            rows.loc[has_ocr, "text"].fillna("").astype(str).tolist(),
            rows.loc[has_ocr, "ocr_text"].fillna("").astype(str).tolist(),
            keep_case=norm.keep_case,
            strip_punct=norm.strip_punct,
            nfkc=norm.nfkc,
            fold_width=norm.fold_width,
        )
        scores.loc[has_ocr.to_numpy(), columns] = scored[columns].astype(float).to_numpy()
    rows = pd.concat([rows, scores], axis=1)
    for family in score.metrics:  # families asked for besides glyphbench's (--metrics)
        rows = _add_family(rows, family, has_ocr, norm)
    if suite is not None:  # the suite's own scorer, beside glyphbench's
        rows = add_suite_scores(rows, suite.spec, has_ocr.to_numpy())
    return rows


class BatchRows:
    """A batch's results rows as an Arrow table, built without a frame.

    :meth:`table` returns what ``pa.Table.from_pandas(frame_rows(), preserve_index=False)``
    returns, where ``frame_rows()`` builds the conformed, scored frame of the same rows
    (``conform_results(score_rows(...))``): the same values, Arrow types and pandas
    metadata, so the part file is the same file. Per batch that frame cost most of the
    harness's CPU time (a few ms of pandas for 8 rows); columns cost a fraction.

    The columns' types and metadata are taken from the frame: the first batch of each
    *shape* (which record columns it has, which of them are empty: what pandas infers
    the types from) is built both ways, the frame's schema is kept for that shape and
    the two tables are compared; if they differ (an unforeseen column), every later
    batch uses the frame. Runs scoring more than glyphbench's own metrics (a suite,
    ``--metrics``) and prompt sets with untyped (object) or clashing columns use the
    frame throughout.
    """

    def __init__(
        self, frame: pd.DataFrame, score: ScoreSettings, suite: SuiteEntry | None = None
    ) -> None:
        self.normalization = score.normalization
        part = [c for c in frame.columns if c != "prompt_id"]
        typed = all(_typed(frame[column].dtype) for column in part)
        #: False: every batch through the frame.
        self.enabled = typed and not score.metrics and suite is None
        self.frame = frame
        self._prompts: pa.Table | None = None  # the prompt columns with a value, as Arrow
        self._texts: list[str] | None = None
        self._schemas: dict[tuple[Any, ...], pa.Schema] = {}

    def table(
        self,
        records: list[dict[str, Any]],
        rows: list[int],
        frame_rows: Callable[[], pd.DataFrame],
    ) -> pa.Table:
        """The rows of ``records`` (one dict per row: the columns besides the prompt's and
        the scores; ``rows``: each one's position in the prompt frame) as an Arrow table."""
        import pyarrow as pa

        keys, values, shape = _shape(records)
        if self.enabled and set(keys) & set(self.frame.columns) - {"prompt_id"}:
            self.enabled = False  # a prompt column named like a results column
        if not self.enabled:
            return pa.Table.from_pandas(frame_rows(), preserve_index=False)
        schema = self._schemas.get(shape)
        if schema is not None:
            try:
                return self._build(schema, values, rows)
            except (pa.ArrowException, ValueError, TypeError):
                return pa.Table.from_pandas(frame_rows(), preserve_index=False)
        expected = self._check_shape(shape, values, rows, frame_rows)
        if shape not in self._schemas:
            self.enabled = False  # an unforeseen column: every later batch via the frame
        return expected

    def learn(
        self,
        records: list[dict[str, Any]],
        rows: list[int],
        frame_rows: Callable[[], pd.DataFrame],
    ) -> None:
        """Learn the schema of ``records``' shape as :meth:`table` does on a first batch,
        from a stand-in batch (nothing is written from it), so the run's first batch of
        that shape is built as the later ones are; where the two ways differ nothing is
        learnt and the first real batch decides, as before."""
        import pyarrow as pa

        keys, values, shape = _shape(records)
        if not self.enabled or shape in self._schemas:
            return
        if set(keys) & set(self.frame.columns) - {"prompt_id"}:
            return
        with contextlib.suppress(pa.ArrowException, ValueError, TypeError):
            self._check_shape(shape, values, rows, frame_rows)

    def _check_shape(
        self,
        shape: tuple[Any, ...],
        values: dict[str, list[Any]],
        rows: list[int],
        frame_rows: Callable[[], pd.DataFrame],
    ) -> pa.Table:
        """The frame path's table of a batch of a new ``shape``; its schema is kept for the
        shape when the columns built from ``values`` give the same table."""
        import pyarrow as pa

        expected = pa.Table.from_pandas(frame_rows(), preserve_index=False)
        try:
            built = self._build(expected.schema, values, rows)
            same = built.equals(expected, check_metadata=True)
        except (pa.ArrowException, ValueError, TypeError):
            same = False
        if same:
            self._schemas[shape] = expected.schema
        return expected

    def warm(self) -> None:
        """Make the prompt columns and expected texts now (they are made once per run)."""
        if self.enabled:
            self._prompt_columns()
            self._expected_texts()

    def _build(self, schema: pa.Schema, values: dict[str, list[Any]], rows: list[int]) -> pa.Table:
        import pyarrow as pa

        scores = self._scores(values, rows)
        prompts = self._prompt_columns().take(pa.array(rows, pa.int64()))
        held = dict(zip(prompts.column_names, prompts.columns, strict=True))  # once a batch
        n = len(rows)
        arrays: list[Any] = []
        for field in schema:
            name = field.name
            if name in values:
                arrays.append(pa.array(values[name], type=field.type, from_pandas=True))
            elif name in scores:
                arrays.append(pa.array(scores[name], type=field.type, from_pandas=True))
            elif name in held:
                column = held[name]
                arrays.append(column if column.type == field.type else column.cast(field.type))
            else:  # a column no row has a value in
                arrays.append(pa.nulls(n, field.type))
        return pa.Table.from_arrays(arrays, schema=schema)

    def _scores(self, values: dict[str, list[Any]], rows: list[int]) -> dict[str, Any]:
        """Every score column (NaN where there is no reading), as :func:`score_rows` scores."""

        columns = [metric.name for metric in text_metrics()]  # read now: plug-ins may add
        read, errors = values["ocr_text"], values["error"]
        scored_rows = [
            i
            for i, (text, error) in enumerate(zip(read, errors, strict=True))
            if text is not None and (error is None or not str(error).strip())
        ]
        scores = {name: np.full(len(rows), np.nan) for name in columns}
        if scored_rows:
            texts = self._expected_texts()
            norm = self.normalization
            scored = score_columns(
                [texts[rows[i]] for i in scored_rows],
                [str(read[i]) for i in scored_rows],
                keep_case=norm.keep_case,
                strip_punct=norm.strip_punct,
                nfkc=norm.nfkc,
                fold_width=norm.fold_width,
            )
            for name in columns:
                scores[name][scored_rows] = scored[name].astype(float)
        return scores

    def _expected_texts(self) -> list[str]:
        if self._texts is None:
            self._texts = self.frame["text"].fillna("").astype(str).tolist()
        return self._texts

    def _prompt_columns(self) -> pa.Table:
        """The prompt columns (but ``prompt_id``) that hold a value, once, as Arrow."""
        import pyarrow as pa

        if self._prompts is None:
            part = [c for c in self.frame.columns if c != "prompt_id"]
            held = [c for c in part if self.frame[c].notna().any()]
            self._prompts = pa.Table.from_pandas(self.frame[held], preserve_index=False)
        return self._prompts


def _shape(
    records: list[dict[str, Any]],
) -> tuple[list[str], dict[str, list[Any]], tuple[Any, ...]]:
    """The columns of ``records``, their values, and their shape: the columns, and which
    hold no value at all (what pandas infers the types from)."""
    keys = list(dict.fromkeys(key for record in records for key in record))
    values = {key: [record.get(key) for record in records] for key in keys}
    shape = (tuple(keys), tuple(all(v is None for v in values[key]) for key in keys))
    return keys, values, shape


def _typed(dtype: Any) -> bool:
    """A column dtype whose Arrow type and pandas metadata do not depend on its values."""
    from pandas.api.types import is_bool_dtype, is_numeric_dtype

    if isinstance(dtype, pd.CategoricalDtype):
        return False
    return isinstance(dtype, pd.StringDtype) or is_numeric_dtype(dtype) or is_bool_dtype(dtype)
