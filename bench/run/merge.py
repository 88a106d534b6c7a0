"""Merge a run's part files into ``results.parquet``, in job-list order (``glyphbench merge``).

* :func:`merge_run` / :func:`merge_run_rows` merge under the folder's manifest lock
  and complete run.json (rows, errors, shards, protocol card); the table, its checksum
  and run.json are replaced together (:func:`merge_commit`, a
  :class:`~glyphbench.core.durable.Commit`);
* :func:`order_rows` and :class:`JobOrder` give the rows the job list's order (the
  latter from integer ranks, for the streamed merge).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.durable import Commit
from glyphbench.core.errors import InputError
from glyphbench.core.io import checksum_path, read_table, write_json
from glyphbench.core.paths import Contained
from glyphbench.core.schema import ROW_KEY, failed_mask
from glyphbench.engine import RunFolder
from glyphbench.engine.folder import MANIFEST
from glyphbench.engine.parts import UNREADABLE
from glyphbench.run.config import RunConfig
from glyphbench.run.provenance import now
from glyphbench.run.reader_claim import table_reader
from glyphbench.run.results import PROMPTS, RESULTS, conform_results, read_results
from glyphbench.suites.protocol import protocol_card


def merge_run(
    root: str | Path,
    *,
    folder: RunFolder | None = None,
    read_columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Merge the part files into ``results.parquet`` (in job list order); update run.json.

    Under the folder's manifest lock, so shards finishing together merge in turn; the
    table, its checksum and run.json are replaced together (:func:`merge_commit`).
    Returns the merged table, read back from ``results.parquet``: only the columns
    ``read_columns`` (those it has) when given, e.g. what the console summary reads
    (the whole table of a million rows is over a GB). :func:`merge_run_rows`
    merges without reading anything back.
    """
    folder = folder or RunFolder(root)
    folder.manifest(required=True)  # not a run folder: refused before the lock is made
    with folder.locked():
        _merge_rows(folder)
        return read_results(folder.root / RESULTS, read_columns)


def merge_run_rows(root: str | Path, *, folder: RunFolder | None = None) -> MergeTally:
    """:func:`merge_run` without reading the table back: what the merge counted.

    The merge streams the part files into ``results.parquet`` chunk by chunk
    (:meth:`RunFolder.merge_stream`): its memory grows with the row keys only.
    """
    folder = folder or RunFolder(root)
    folder.manifest(required=True)  # not a run folder: refused before the lock is made
    return _merge_rows(folder)


def _merge_rows(folder: RunFolder) -> MergeTally:
    with folder.locked(), Commit(folder.root) as commit:
        return merge_commit(folder, commit)


class MergeTally:
    """What a streamed merge saw: rows, failed rows, reader engines and image sizes.

    Each row's ``image_path`` is checked to stay inside the run folder (``contained``):
    a table naming a file outside it is never written.
    """

    def __init__(self, contained: Contained | None = None) -> None:
        self.rows = 0
        self.errors = 0
        #: the distinct (ocr_engine, ocr_version) and (width, height) pairs, as rows.
        self.seen: list[pd.DataFrame] = []
        #: rows read by each reader ("engine version"), over the whole table.
        self.readers: dict[str, int] = {}
        self.contained = contained

    def __call__(self, chunk: pd.DataFrame) -> None:
        if self.contained is not None and "image_path" in chunk.columns:
            named = chunk["image_path"].dropna()
            self.contained.cells(named.set_axis(row_labels(chunk.loc[named.index])))
        self.rows += len(chunk)
        failed = failed_mask(chunk)
        self.errors += int(failed.sum())
        for pair in (["ocr_engine", "ocr_version"], ["width", "height"]):
            if set(pair) <= set(chunk.columns):
                self.seen.append(chunk[pair].dropna().drop_duplicates())
        if {"ocr_engine", "ocr_version"} <= set(chunk.columns):
            read = chunk.loc[~failed & chunk["ocr_engine"].notna()]
            names = read["ocr_engine"].astype(str) + " " + read["ocr_version"].astype(str)
            for name, count in names.value_counts().items():
                self.readers[str(name)] = self.readers.get(str(name), 0) + int(count)

    def observed(self) -> pd.DataFrame:
        """A small frame with the observed pairs (what the protocol card reads)."""
        return pd.concat(self.seen, ignore_index=True) if self.seen else pd.DataFrame()


def row_labels(rows: pd.DataFrame) -> list[str]:
    """Rows named by their key, as a one-line error names them.

    >>> row_labels(pd.DataFrame({"model": ["m"], "prompt_id": ["p1"], "seed": [0],
    ...                          "sample_index": [2]}))
    ['model m prompt p1 seed 0 sample 2']
    """
    keys = zip(*(rows[column].astype(str) for column in ROW_KEY), strict=True)
    return [f"model {m} prompt {p} seed {s} sample {k}" for m, p, s, k in keys]


def merge_commit(
    folder: RunFolder,
    commit: Commit,
    *,
    update: Callable[[dict[str, Any]], None] | None = None,
    staged: Sequence[Path] = (),
) -> MergeTally:
    """Merge into ``commit``: results.parquet, its checksum and run.json, staged together.

    The caller holds the manifest lock and applies the commit, so a kill at any moment
    leaves the old three files or the new three (:class:`glyphbench.core.durable.Commit`).
    ``update`` changes run.json before the protocol card is made from it (a rescore's
    reader); ``staged``: part files staged in the same commit, merged as the newest.
    """
    meta = folder.manifest(required=True)
    if not isinstance(meta.get("config"), dict):
        raise InputError(folder.manifest_path, "no 'config' mapping: not a benchmark run.json")
    config = RunConfig.from_mapping(meta["config"], folder.manifest_path)
    if update is not None:
        update(meta)
    results = folder.root / RESULTS
    if not folder.part_files() and not staged and results.is_file():
        # Part files removed (e.g. to save space): the merged table is all there is; keep it.
        tally = MergeTally(Contained(folder.root, source=results, files=False))
        tally(conform_results(read_table(results)))
        return tally
    if results.is_file() and not checksum_path(results).is_file():
        folder.say(
            f"merge: {results} had no {checksum_path(results).name} beside it (unverified); "
            "rebuilt from the part files, with its checksum"
        )
    prompt_ids: list[str] = []
    if (folder.root / PROMPTS).is_file():
        prompts = read_table(folder.root / PROMPTS)
        if "prompt_id" not in prompts.columns:
            raise InputError(folder.root / PROMPTS, "missing column 'prompt_id'")
        prompt_ids = prompts["prompt_id"].astype(str).tolist()
    labels = [e.label for e in config.models]
    tally = MergeTally(Contained(folder.root, source=folder.parts, files=False))
    folder.merge_stream(
        RESULTS,
        ROW_KEY,
        lambda rows: order_rows(rows, labels, prompt_ids),
        conform=conform_results,
        pick=JobOrder(labels, prompt_ids),
        observe=tally,
        commit=commit,
        staged=staged,
    )
    _keep_a_longer_table(folder, results, tally.rows, _set_aside(folder))
    generate = config.generate
    expected = len(labels) * len(prompt_ids) * len(generate.seeds) * generate.images_per_prompt
    _complete_meta(folder, meta, tally, expected)
    # the card names the reader the table holds
    reader = table_reader(meta) or config.read.reader
    card = protocol_card(
        config.with_reader(reader), **_recorded_counts(meta), rows=tally.observed()
    )
    if len(tally.readers) > 1:  # a partial rescore: rows kept their previous reading
        card["reader_rows"] = dict(sorted(tally.readers.items(), key=lambda kv: -kv[1]))
    meta["protocol"] = card
    write_json(commit.path(MANIFEST), meta)
    return tally


def _set_aside(folder: RunFolder) -> set[Path]:
    """The part files set aside as unreadable so far."""
    return set(folder.parts.rglob(f"*{UNREADABLE}")) if folder.parts.is_dir() else set()


def _keep_a_longer_table(folder: RunFolder, results: Path, rows: int, aside: set[Path]) -> None:
    """Refuse to replace a results table by a shorter one while part files are set aside
    as unreadable: their rows are in the old table, and would be lost until the run makes
    them again (for an API model, paid for twice). The commit is dropped, so the old table,
    its checksum and run.json stand; once the run has made the rows again, the new table
    is as long and replaces it."""
    if not aside or not results.is_file():
        return
    import pyarrow.parquet as pq

    try:
        before = pq.read_metadata(results).num_rows
    except Exception:  # an unreadable old table: nothing to keep
        return
    if before <= rows:
        return
    first = sorted(aside)[0]
    raise InputError(
        results,
        f"kept as it is: {len(aside)} part file(s) could not be read (set aside as "
        f"{first.relative_to(folder.root)}), and the merge would replace these {before:,} "
        f"rows by {rows:,}; run the command that made the run again (it remakes the set-aside "
        "rows), then merge",
    )


def _recorded_counts(meta: dict[str, Any]) -> dict[str, Any]:
    """The prompt counts run.json's protocol card recorded when the run started."""
    prompts = dict((meta.get("protocol") or {}).get("prompts") or {})
    return {"prompt_count": prompts.get("selected"), "benchmark_prompts": prompts.get("benchmark")}


def _complete_meta(
    folder: RunFolder, meta: dict[str, Any], tally: MergeTally, expected: int
) -> None:
    """run.json after a merge: rows, errors, shards and whether every row is there."""
    shards = folder.shards()
    models: dict[str, Any] = {}
    model_errors: dict[str, str] = {}
    for info in shards.values():
        models.update(info.get("models", {}))
        model_errors.update(info.get("model_errors", {}))
    finished = [str(info["finished_at"]) for info in shards.values() if info.get("finished_at")]
    meta.update(
        models=models,
        model_errors=model_errors,
        shards=shards,
        rows=tally.rows,
        errors=tally.errors,
        expected_rows=expected,
        complete=bool(tally.rows == expected and tally.errors == 0),
        finished_at=max(finished) if finished else None,
        merged_at=now(),
    )


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
    """The lean pick of :meth:`RunFolder.merge_stream` for results.

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
