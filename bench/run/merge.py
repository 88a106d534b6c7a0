"""Merge a run's part files into ``results.parquet``, in job-list order (``glyphbench merge``).

* :func:`merge_run` / :func:`merge_run_rows` merge under the folder's manifest lock
  and complete run.json (rows, errors, shards, protocol card);
* :func:`order_rows` and :class:`JobOrder` give the rows the job list's order (the
  latter from integer ranks, for the streamed merge of issue 26).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.io import read_table
from glyphbench.core.schema import ROW_KEY, failed_mask
from glyphbench.engine import RunFolder
from glyphbench.run.config import RunConfig
from glyphbench.run.provenance import now
from glyphbench.run.results import PROMPTS, RESULTS, conform_results, read_results
from glyphbench.suites.protocol import update_card


def merge_run(
    root: str | Path,
    *,
    folder: RunFolder | None = None,
    read_columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Merge the part files into ``results.parquet`` (in job list order); update run.json.

    Under the folder's manifest lock, so shards finishing together merge in turn.
    Returns the merged table, read back from ``results.parquet``: only the columns
    ``read_columns`` (those it has) when given, e.g. what the console summary reads
    (issue 26: the whole table of a million rows is over a GB). :func:`merge_run_rows`
    merges without reading anything back.
    """
    folder = folder or RunFolder(root)
    with folder.locked():
        _merge_locked(folder)
        return read_results(folder.root / RESULTS, read_columns)


def merge_run_rows(root: str | Path, *, folder: RunFolder | None = None) -> MergeTally:
    """:func:`merge_run` without reading the table back: what the merge counted (issue 26).

    The merge streams the part files into ``results.parquet`` chunk by chunk
    (:meth:`RunFolder.merge_stream`): its memory grows with the row keys only.
    """
    folder = folder or RunFolder(root)
    with folder.locked():
        return _merge_locked(folder)


class MergeTally:
    """What a streamed merge saw: rows, failed rows, reader engines and image sizes."""

    def __init__(self) -> None:
        self.rows = 0
        self.errors = 0
        #: the distinct (ocr_engine, ocr_version) and (width, height) pairs, as rows.
        self.seen: list[pd.DataFrame] = []

    def __call__(self, chunk: pd.DataFrame) -> None:
        self.rows += len(chunk)
        self.errors += int(failed_mask(chunk).sum())
        for pair in (["ocr_engine", "ocr_version"], ["width", "height"]):
            if set(pair) <= set(chunk.columns):
                self.seen.append(chunk[pair].dropna().drop_duplicates())

    def observed(self) -> pd.DataFrame:
        """A small frame with the observed pairs (what the protocol card reads)."""
        return pd.concat(self.seen, ignore_index=True) if self.seen else pd.DataFrame()


def _merge_locked(folder: RunFolder) -> MergeTally:
    meta = folder.manifest(required=True)
    if not isinstance(meta.get("config"), dict):
        raise InputError(folder.manifest_path, "no 'config' mapping: not a benchmark run.json")
    config = RunConfig.from_mapping(meta["config"], folder.manifest_path)
    results = folder.root / RESULTS
    tally = MergeTally()
    if not folder.part_files() and results.is_file():
        # Part files removed (e.g. to save space): the merged table is all there is; keep it.
        tally(conform_results(read_table(results)))
        return tally
    prompt_ids: list[str] = []
    if (folder.root / PROMPTS).is_file():
        prompts = read_table(folder.root / PROMPTS)
        if "prompt_id" not in prompts.columns:
            raise InputError(folder.root / PROMPTS, "missing column 'prompt_id'")
        prompt_ids = prompts["prompt_id"].astype(str).tolist()
    labels = [e.label for e in config.models]
    folder.merge_stream(
        RESULTS,
        ROW_KEY,
        lambda rows: order_rows(rows, labels, prompt_ids),
        conform=conform_results,
        pick=JobOrder(labels, prompt_ids),
        observe=tally,
    )
    shards = folder.shards()
    models: dict[str, Any] = {}
    model_errors: dict[str, str] = {}
    for info in shards.values():
        models.update(info.get("models", {}))
        model_errors.update(info.get("model_errors", {}))
    expected = len(config.models) * len(prompt_ids) * len(config.seeds) * config.images_per_prompt
    errors = tally.errors
    finished = [str(info["finished_at"]) for info in shards.values() if info.get("finished_at")]
    meta.update(
        models=models,
        model_errors=model_errors,
        shards=shards,
        rows=tally.rows,
        errors=errors,
        expected_rows=expected,
        complete=bool(tally.rows == expected and errors == 0),
        finished_at=max(finished) if finished else None,
        merged_at=now(),
    )
    meta["protocol"] = update_card(meta.get("protocol") or {}, config, tally.observed())
    folder.write_manifest(meta)
    return tally


def order_rows(
    rows: pd.DataFrame, labels: Sequence[str], prompt_ids: Sequence[str]
) -> pd.DataFrame:
    """Sort rows like the job list: model (config order), prompt (set order), seed, sample."""
    model_rank = {label: i for i, label in enumerate(labels)}
    prompt_rank = {pid: i for i, pid in enumerate(prompt_ids)}
    keyed = rows.assign(
        _m=rows["model"].map(lambda m: model_rank.get(str(m), len(model_rank))),
        _p=rows["prompt_id"].map(lambda p: prompt_rank.get(str(p), len(prompt_rank))),
    )
    keyed = keyed.sort_values(
        ["_m", "_p", "model", "prompt_id", "seed", "sample_index"], kind="stable"
    )
    return keyed.drop(columns=["_m", "_p"]).reset_index(drop=True)


class _Ranks:
    """Integer stand-ins for one key column's strings that sort as :func:`order_rows` does.

    A string listed in ``known`` gets ``(its position, -1)``; any other gets
    ``(len(known), its rank among the other strings seen, by text)``, the second number
    known only once every file is seen (:meth:`final`).
    """

    def __init__(self, known: Sequence[str]) -> None:
        self.known = {value: i for i, value in enumerate(known)}  # as order_rows' dict
        self.others: dict[str, int] = {}

    def codes(self, column: Any) -> tuple[Any, Any]:
        """(rank, provisional id of an unlisted string or -1) for each value of ``column``."""
        import pyarrow as pa

        if column.null_count:
            raise ValueError("a key column holds a missing value")
        encoded = column.combine_chunks().cast(pa.string()).dictionary_encode()
        ranks, ids = [], []
        for value in encoded.dictionary.to_pylist():
            rank = self.known.get(value)
            ranks.append(len(self.known) if rank is None else rank)
            ids.append(-1 if rank is not None else self.others.setdefault(value, len(self.others)))
        indices = encoded.indices.to_numpy()
        return np.asarray(ranks, np.int32)[indices], np.asarray(ids, np.int32)[indices]

    def final(self, ids: Any) -> Any:
        """The provisional ids as ranks by text (-1 stays -1)."""
        by_text = np.zeros(len(self.others) + 1, np.int32)
        by_text[-1] = -1
        for rank, value in enumerate(sorted(self.others)):
            by_text[self.others[value]] = rank
        return by_text[ids]


class JobOrder:
    """The lean pick of :meth:`RunFolder.merge_stream` for results (issue 26).

    The same rows in the same order as :func:`order_rows` after keeping the newest row
    of each key, from integer ranks of the key columns (about 40 bytes a row, where a
    frame of the keys' strings took hundreds).
    """

    def __init__(self, labels: Sequence[str], prompt_ids: Sequence[str]) -> None:
        self.models, self.prompts = _Ranks(labels), _Ranks(prompt_ids)

    def __call__(self, tables: Any) -> tuple[Any, Any]:
        columns: list[list[Any]] = [[] for _ in range(8)]
        for number, table in tables:
            if set(ROW_KEY) - set(table.column_names):
                raise ValueError("a part file lacks a key column")
            seed, sample = (table[c] for c in ("seed", "sample_index"))
            if seed.null_count or sample.null_count:
                raise ValueError("a key column holds a missing value")
            values = (
                *self.models.codes(table["model"]),
                *self.prompts.codes(table["prompt_id"]),
                seed.to_numpy().astype(np.int64),
                sample.to_numpy().astype(np.int64),
                np.full(table.num_rows, number, np.int32),
                np.arange(table.num_rows, dtype=np.int32),
            )
            for gathered, value in zip(columns, values, strict=True):
                gathered.append(value)
        if not columns[0]:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        m, m_id, p, p_id, seed_, sample_, parts, rows = (np.concatenate(c) for c in columns)
        del columns
        m_text, p_text = self.models.final(m_id), self.prompts.final(p_id)
        del m_id, p_id
        # order_rows: model rank, prompt rank, model text, prompt text, seed, sample;
        # lexsort is stable, so of equal keys the newest (last read) comes last.
        ordered = np.lexsort((sample_, seed_, p_text, m_text, p, m))
        keys = [k[ordered] for k in (m, p, m_text, p_text, seed_, sample_)]
        del m, p, m_text, p_text, seed_, sample_
        last = np.ones(len(ordered), bool)
        same = np.ones(len(ordered) - 1, bool)
        for k in keys:
            same &= k[1:] == k[:-1]
        last[:-1] = ~same
        kept = ordered[last]
        return parts[kept], rows[kept]
