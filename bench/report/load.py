"""Read one or more run folders into one results frame."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Container, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.io import read_parquet, read_run_json
from glyphbench.core.schema import failed_mask, unread_mask
from glyphbench.report.controls import parse_control
from glyphbench.report.stats import SUMMARY_METRICS
from glyphbench.scoring.table import METRICS
from glyphbench.suites.protocol import COMPARED_FIELDS, comparable_part

#: Columns a report cannot do without.
REQUIRED_COLUMNS = ("model", "prompt_id", "text", *SUMMARY_METRICS)
#: Columns no part of the report reads: ``write_report`` does not load them (the
#: reading's JSON lists are the widest columns of a real run).
REPORT_UNUSED_COLUMNS = (
    "ocr_pieces",
    "ocr_confidences",
    "ocr_raw",
    "image_sha256",
)
#: Columns read dictionary-encoded: the reader's version, one long string per reader
#: repeated on every row (the reader-aware intervals match it against a card's).
DICTIONARY_COLUMNS = ("ocr_version",)


def load_runs(run_dirs: Sequence[str | Path], *, skip: Container[str] = ()) -> pd.DataFrame:
    """Concatenate the results of several runs, adding ``run`` and ``run_dir`` columns.

    ``run`` is the run's ``run_id`` (from ``run.json``, else the folder name; made
    unique with a suffix when two runs share one). When one model name appears in
    several runs, its rows are renamed ``"model [run]"`` so each (run, model) stays
    a separate system; with several runs, control models are always tagged so,
    as their sanity checks are per run. ``is_control`` is derived from the
    ``control:`` prefix when missing and ``error`` defaults to empty. ``frame.attrs["runs"]`` holds
    ``{run: {"dir": ..., "meta": run.json}}``.

    Several runs must share at least one prompt, or comparing them is meaningless:
    that is an :class:`~glyphbench.core.errors.InputError`. Columns in ``skip`` are not read.
    """
    if not run_dirs:
        raise InputError(None, "no run folders given")
    seen: dict[Path, str | Path] = {}
    for raw in run_dirs:  # one run compared with itself reads as two systems that agree
        resolved = Path(raw).resolve()
        if resolved in seen:
            raise InputError(raw, f"given twice (first as {seen[resolved]}); give each run once")
        seen[resolved] = raw
    frames: list[pd.DataFrame] = []
    runs: dict[str, dict[str, Any]] = {}
    for raw in run_dirs:
        run_dir = Path(raw)
        meta, frame = _read_run(run_dir, skip)
        name = _unique_name(str(meta.get("run_id") or run_dir.name), taken=runs)
        runs[name] = {"dir": str(run_dir.resolve()), "meta": meta}
        frame["run"] = name  # the frame is this call's own (just read): no copy
        frame["run_dir"] = str(run_dir.resolve())
        frames.append(frame)
    if len(frames) > 1:
        _require_shared_prompts(frames, run_dirs)
        frame = pd.concat(frames, ignore_index=True)
    else:
        frame = frames[0].reset_index(drop=True)
    frame["model"] = frame["model"].astype(str)
    if len(frames) > 1:
        _tag_models_with_run(frame, run_tags(runs))
    _fill_defaults(frame)
    _refuse_unmarked_controls(frame)
    frame.attrs["runs"] = runs
    return frame


def _refuse_unmarked_controls(frame: pd.DataFrame) -> None:
    """The report tells a control and its kind by its label (:func:`parse_control`): a
    control labelled otherwise would be ranked as a model and left out of the control
    checks, and a model labelled ``control:...`` taken for the reader's ceiling. A run
    refuses such names (``models:``' ``name:``); a table written otherwise is refused here."""
    flagged = frame.groupby("model", sort=False)["is_control"].any()
    for label, is_control in flagged.items():
        if bool(is_control) == (parse_control(str(label)) is not None):
            continue
        said = "a control (is_control)" if is_control else "not a control (is_control false)"
        raise InputError(
            None,
            f"model {label!r} is {said}, but its name says otherwise; the report tells "
            "controls by their names (control:render, control:typo?rate=R, control:blank): "
            "rename it in results.parquet, or make the run again without its name:",
        )


def _read_run(run_dir: Path, skip: Container[str] = ()) -> tuple[dict[str, Any], pd.DataFrame]:
    """(``run.json``, ``results.parquet``) of one run folder, checked for the required columns."""
    results = run_dir / "results.parquet"
    if run_dir.exists() and not run_dir.is_dir():
        raise InputError(run_dir, f"is a file, not a run folder; give its folder, {run_dir.parent}")
    if not run_dir.is_dir():
        raise InputError(run_dir, "run folder not found")
    if not results.exists():
        raise InputError(
            run_dir, "no results.parquet in this folder (has the run finished scoring?)"
        )
    meta = read_run_json(run_dir)
    import pyarrow.parquet as pq

    try:
        names = pq.read_schema(results).names
    except (OSError, ValueError) as exc:
        read_parquet(results)  # an empty or damaged table: its own line (glyphbench merge)
        raise InputError(results, f"cannot read: {exc}".splitlines()[0]) from None
    columns = [n for n in names if n not in skip]
    frame = read_parquet(results, columns=columns, dictionary=DICTIONARY_COLUMNS)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise InputError(results, f"missing columns {missing}")
    if frame.empty:
        raise InputError(results, "no rows: nothing to report (has the run made any image?)")
    _refuse_unnamed_rows(results, frame)
    _refuse_read_rows_without_scores(results, frame)
    return meta, frame


#: What each key column names, for the refusal of a row without it.
_ROW_NAMES = {
    "model": "the name of the model that made it",
    "prompt_id": "the id of its prompt (the paired intervals match rows by it)",
    "text": "the text it was asked to write (its scores are measured against it)",
}


def _refuse_unnamed_rows(results: Path, frame: pd.DataFrame) -> None:
    """Refuse rows without a model, a prompt id or an expected text: rows of no model would
    be pooled under one label, and rows of no prompt would be left out of the paired
    intervals of every model, changing models whose rows are whole."""
    for column, why in _ROW_NAMES.items():
        values = frame[column]
        empty = values.isna()
        if column != "text":  # a name may not be blank; a text may (a blank image's prompt)
            distinct = pd.unique(values.dropna())  # a dictionary column: few distinct values
            empty |= values.isin([value for value in distinct if not str(value).strip()])
        if empty.any():
            raise InputError(
                results,
                f"row {int(empty.to_numpy().argmax()) + 1}: empty {column!r} "
                f"({int(empty.sum())} rows); every row needs {why}",
            )


def _refuse_read_rows_without_scores(results: Path, frame: pd.DataFrame) -> None:
    """Rows read and not failed must carry every summary score, each in its range (a share
    in [0, 1], a count of edits finite and 0 or more). Without one, a model's rows dropped
    out of its means and the headline called the run "only control models"; an infinite
    one was left out of the mean while the model's count kept it; a huge one made the mean
    meaningless."""
    scored = ~failed_mask(frame) & ~unread_mask(frame)
    for metric in SUMMARY_METRICS:
        values = pd.to_numeric(frame[metric], errors="coerce").astype("float64").to_numpy()
        # A metric with a unit counts (Algorithm 1's edits: 0 and up); the others are shares.
        top = np.inf if METRICS.get(metric).unit else 1 + 1e-9  # float slack
        missing = scored & np.isnan(values)
        in_range = np.isfinite(values) & (values >= 0) & (values <= top)
        outside = scored & ~np.isnan(values) & ~in_range
        expected = "outside [0, 1]" if np.isfinite(top) else "not a finite count of 0 or more"
        if missing.any():
            _refuse_rows(results, frame, missing, f"read but no {metric!r} score")
        if outside.any():
            value = float(values[int(outside.argmax())])
            _refuse_rows(results, frame, outside, f"{metric!r} is {value!r}, {expected}")


def _refuse_rows(results: Path, frame: pd.DataFrame, bad: np.ndarray, what: str) -> None:
    """The refusal of rows ``bad`` that a rescore of their scores mends, naming the first."""
    first = int(bad.argmax())
    raise InputError(
        results,
        f"row {first + 1} ({frame['model'].iloc[first]}): {what} ({int(bad.sum())} such rows); "
        f"score them again with glyphbench rescore {results.parent} --scores-only",
    )


def _unique_name(name: str, taken: Container[str]) -> str:
    """``name``, or ``name-2``, ``name-3``... the first one not taken.

    >>> _unique_name("run", taken={"run", "run-2"})
    'run-3'
    """
    base, k = name, 2
    while name in taken:
        name, k = f"{base}-{k}", k + 1
    return name


def _require_shared_prompts(frames: Sequence[pd.DataFrame], run_dirs: Sequence[str | Path]) -> None:
    shared = set.intersection(*(set(f["prompt_id"].astype(str)) for f in frames))
    if not shared:
        raise InputError(
            ", ".join(str(d) for d in run_dirs),
            "these runs share no prompts (prompt_id); cannot compare them",
        )


def run_tags(runs: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """What tells the runs apart in a model's label: the protocol fields in which their
    cards differ (``reader rapidocr``), with the run's name only where those are the same.

    >>> cards = {"a": {"meta": {"protocol": {"reader": "easyocr", "seeds": [0]}}},
    ...          "b": {"meta": {"protocol": {"reader": "rapidocr", "seeds": [0]}}},
    ...          "c": {"meta": {"protocol": {"reader": "rapidocr", "seeds": [0]}}}}
    >>> run_tags(cards)
    {'a': 'reader easyocr', 'b': 'reader rapidocr, b', 'c': 'reader rapidocr, c'}
    """
    tags = protocol_tags(runs)
    counts = Counter(tags.values())
    return {
        run: (f"{tag}, {run}" if counts[tag] > 1 else tag) if tag else run
        for run, tag in tags.items()
    }


def protocol_tags(runs: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each run's values of the protocol fields in which the runs' cards differ
    (``reader rapidocr``); "" for every run when the cards agree.

    Fields are taken in the card's order only until they tell every distinct card
    apart, so a reader's version string (``reader_engines``) is not added to a label
    the reader's spec already makes unique.

    >>> runs = {r: {"meta": {"protocol": {"reader": r, "reader_engines": [r + " 1.0"]}}}
    ...         for r in ("easyocr", "tesseract")}
    >>> protocol_tags(runs)
    {'easyocr': 'reader easyocr', 'tesseract': 'reader tesseract'}
    """

    cards = {
        run: comparable_part((info.get("meta") or {}).get("protocol") or {})
        for run, info in runs.items()
    }

    def text(run: str, key: str) -> str:
        return json.dumps(cards[run].get(key), sort_keys=True, default=str)

    distinct = len({json.dumps(card, sort_keys=True, default=str) for card in cards.values()})
    shown: list[str] = []
    for key in COMPARED_FIELDS:
        if len({text(run, key) for run in cards}) < 2:
            continue
        shown.append(key)
        if len({tuple(text(run, k) for k in shown) for run in cards}) == distinct:
            break
    return {run: ", ".join(f"{key} {_short(cards[run].get(key))}" for key in shown) for run in runs}


def _short(value: Any) -> str:
    """A protocol value for a label: short, and without the brackets that end a tag."""
    if isinstance(value, list | tuple):
        text = ",".join(map(str, value))
    else:
        text = value if isinstance(value, str) else json.dumps(value, default=str)
    text = text.replace("[", "(").replace("]", ")")
    return text if len(text) <= 40 else text[:37] + "..."


def _tag_models_with_run(frame: pd.DataFrame, tags: Mapping[str, str]) -> None:
    """Rename ``model`` to ``"model [tag]"`` where a model is in several runs, and for controls.

    The tag (:func:`run_tags`) names what differs between the runs' protocols (the
    reader, say), so the rows of one model read by two readers say which is which.
    """
    runs_per_model = frame.groupby("model")["run"].nunique()
    clashing = set(runs_per_model[runs_per_model > 1].index)
    # Controls belong to their run (same OCR, same prompts): always tag them.
    clashing |= {m for m in runs_per_model.index if str(m).startswith("control:")}
    if clashing:
        rename = frame["model"].isin(clashing)
        tag = frame.loc[rename, "run"].map(dict(tags)).fillna(frame.loc[rename, "run"])
        frame.loc[rename, "model"] = frame.loc[rename, "model"] + " [" + tag + "]"
    runs_per_label = frame.groupby("model")["run"].unique()
    merged = runs_per_label[runs_per_label.map(len) > 1]
    if len(merged):  # a model named like another run's tagged label: two systems in one row
        label, runs = str(merged.index[0]), ", ".join(map(str, merged.iloc[0]))
        raise InputError(
            None,
            f"model label {label!r} names rows of two runs ({runs}) once each run's models "
            "are told apart; rename the model in one of them (a models entry's name:)",
        )


def _fill_defaults(frame: pd.DataFrame) -> None:
    """``is_control`` from the ``control:`` prefix when absent; ``error`` "" when absent or NA."""
    if "is_control" not in frame.columns:
        frame["is_control"] = frame["model"].str.startswith("control:")
    frame["is_control"] = frame["is_control"].fillna(False).astype(bool)
    if "error" not in frame.columns:
        frame["error"] = ""
    frame["error"] = frame["error"].astype(object).where(frame["error"].notna(), "").astype(str)
