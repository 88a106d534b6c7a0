"""Control-model sanity checks and the OCR ceiling.

Control "models" draw the expected text themselves, so they bound what OCR can
measure:

* ``control:render`` renders the exact text: its score is the OCR ceiling (a
  perfect model would score this, not 1.0);
* ``control:typo?rate=R`` renders it with a fraction R of characters corrupted;
* ``control:blank`` draws nothing: the floor.

If the pipeline is sound, scores rise along blank < typo (highest rate) < ... <
typo (lowest rate) < render. :func:`control_sanity` checks that per slice;
:func:`ocr_ceiling` puts each model next to render's score in the same slice.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import pandas as pd

from glyphbench.core.bootstrap import MIN_UNITS
from glyphbench.core.registry import Spec
from glyphbench.core.schema import failed_mask
from glyphbench.report.tables import too_few
from glyphbench.scoring.edits import classify_edits, faithfulness, warning

_RUN_TAG = re.compile(r"^(?P<name>.*?)(?: \[(?P<run>[^\]]+)\])?$")


def parse_control(model: str) -> tuple[str, float, str] | None:
    """``(kind, typo rate, run tag)`` of a control model name, or None for other models.

    >>> parse_control("control:typo?rate=0.3")
    ('typo', 0.3, '')
    >>> parse_control("control:render [run-b]")
    ('render', 0.0, 'run-b')
    >>> parse_control("sdxl") is None
    True
    """
    match = _RUN_TAG.match(model)
    name, run = (match.group("name"), match.group("run") or "") if match else (model, "")
    if not name.startswith("control:"):
        return None
    spec = Spec.parse(name)
    try:
        rate = float(spec.options.get("rate", "nan"))
    except ValueError:
        rate = math.nan
    return spec.target, (0.0 if spec.target == "render" else rate), run


def control_chain(models: Sequence[str]) -> dict[str, list[str]]:
    """Control models per run tag, ordered from worst expected score to best.

    blank first, then typo controls from the highest rate to the lowest, render last.

    >>> control_chain(["control:render", "m", "control:typo?rate=0.1", "control:blank",
    ...                "control:typo?rate=0.3"])
    {'': ['control:blank', 'control:typo?rate=0.3', 'control:typo?rate=0.1', 'control:render']}
    """
    order = {"blank": 0, "typo": 1, "render": 2}
    chains: dict[str, list[tuple[int, float, str]]] = {}
    for model in dict.fromkeys(models):
        parsed = parse_control(model)
        if parsed is None or parsed[0] not in order:
            continue
        kind, rate, run = parsed
        rate_key = -rate if not math.isnan(rate) else 0.0
        chains.setdefault(run, []).append((order[kind], rate_key, model))
    return {run: [m for *_, m in sorted(items)] for run, items in sorted(chains.items())}


def _holds(means: list[float]) -> bool | None:
    """Non-decreasing along the chain and strictly higher at the end; None when unknown."""
    if len(means) < 2 or any(math.isnan(m) for m in means):
        return None
    steps = all(a <= b for a, b in pairwise(means))
    return bool(steps and means[0] < means[-1])


def control_sanity(
    summary: pd.DataFrame, by: Sequence[str] = (), metrics: Sequence[str] = ("ned", "exact_match")
) -> pd.DataFrame:
    """Check blank < typo (high rate) < typo (low rate) < render in every slice.

    ``summary`` is :func:`glyphbench.report.stats.summarize` output for the same ``by``.
    One row per (run tag, slice): ``chain`` (the models in order), ``min_n``
    (fewest rows any control has there: small slices are noisy), ``too_few``
    (``"n = K: too few"`` when some control has fewer than
    :data:`~glyphbench.core.bootstrap.MIN_UNITS` prompts there, else ""; such a slice gets
    no verdict: its order columns and ``passed`` are None), the mean of each
    control for each metric (``<metric>:<model>``, and all of them in chain order
    as the tuple ``<metric>_means``), one
    ``<metric>_order`` column (True/False, None when a control has no rows there)
    and ``passed`` (all metrics hold). A metric "holds" when it never drops along
    the chain and render is strictly above blank (two typo rates can tie on exact
    match, both at zero). Empty when the run has no controls.
    """
    by = list(by)
    chains = control_chain(summary["model"].astype(str).tolist())
    rows: list[dict[str, Any]] = []
    if not chains:
        return pd.DataFrame(columns=["run", *by, "passed"])
    slice_keys = (
        [tuple(k) for k in summary[by].drop_duplicates().itertuples(index=False)] if by else [()]
    )
    keys = list(zip(summary["model"].astype(str), *(summary[c] for c in by), strict=False))
    lookups = {m: dict(zip(keys, summary[m].astype(float), strict=False)) for m in metrics}
    n_lookup = dict(zip(keys, summary["n"], strict=False)) if "n" in summary.columns else {}
    units = "n_prompts" if "n_prompts" in summary.columns else "n"
    unit_lookup = dict(zip(keys, summary[units], strict=False)) if units in summary else {}
    for run, chain in chains.items():
        for key in slice_keys:
            row: dict[str, Any] = {
                "run": run,
                **dict(zip(by, key, strict=False)),
                "chain": " < ".join(chain),
            }
            sizes = [n_lookup.get((model, *key), 0) for model in chain]
            row["min_n"] = int(min(sizes)) if sizes else 0
            verdicts = []
            for metric in metrics:
                means = []
                lookup = lookups[metric]
                for model in chain:
                    value = lookup.get((model, *key), math.nan)
                    means.append(float(value))
                    row[f"{metric}:{model}"] = float(value)
                verdict = _holds(means)
                row[f"{metric}_means"] = tuple(means)
                row[f"{metric}_order"] = verdict
                verdicts.append(verdict)
            if row["min_n"] == 0 and all(v is None for v in verdicts):
                continue  # no control has rows in this slice of this run
            fewest = min((int(unit_lookup.get((model, *key), 0)) for model in chain), default=0)
            row["too_few"] = ""
            if unit_lookup and fewest < MIN_UNITS:  # too few to tell: no verdict, no badge
                row["too_few"] = too_few(fewest)
                verdicts = [None] * len(verdicts)
                for metric in metrics:
                    row[f"{metric}_order"] = None
            known = [v for v in verdicts if v is not None]
            row["passed"] = None if not known else all(known)
            rows.append(row)
    return pd.DataFrame(rows)


def ocr_ceiling(
    summary: pd.DataFrame,
    by: Sequence[str] = (),
    metric: str = "ned",
    *,
    model_runs: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Each non-control model's score beside render's (the OCR ceiling) in the same slice.

    Columns: ``model``, the ``by`` columns, ``metric``, ``ceiling`` (render's mean),
    ``gap`` (ceiling - model) and ``ocr_share``: the part of the model's shortfall
    from a perfect 1.0 that render also shows, i.e. ``(1 - ceiling) / (1 - model)``
    capped to [0, 1] (how much of the model's error is OCR's). Needs a metric where
    1.0 is perfect (ned, exact_match, anls, word_f1). Empty without a render control.
    With several runs, each model is compared with the render control of its own
    run: ``model_runs`` maps model -> run (else the ``[run]`` tag in the name is used).

    >>> s = pd.DataFrame({"model": ["m", "control:render"], "ned": [0.8, 0.95]})
    >>> ocr_ceiling(s).round(3).to_dict("records")
    [{'model': 'm', 'ned': 0.8, 'ceiling': 0.95, 'gap': 0.15, 'ocr_share': 0.25}]
    """
    by = list(by)
    names = summary["model"].astype(str)
    parsed = names.map(parse_control)
    is_render = parsed.map(lambda p: p is not None and p[0] == "render")
    if not is_render.any():
        return pd.DataFrame(columns=["model", *by, metric, "ceiling", "gap", "ocr_share"])

    def run_of(model: str) -> str:
        if model_runs is not None and model in model_runs:
            return str(model_runs[model])
        match = _RUN_TAG.match(model)
        return (match.group("run") or "") if match else ""

    render = summary[is_render.to_numpy()].copy()
    render["_run"] = render["model"].astype(str).map(run_of)
    models = summary[parsed.isna().to_numpy()].copy()
    models["_run"] = models["model"].astype(str).map(run_of)
    # Use render of the same run when available, else the only render present.
    if render["_run"].nunique() == 1:
        render["_run_join"] = "*"
        models["_run_join"] = "*"
    else:
        render["_run_join"] = render["_run"]
        models["_run_join"] = models["_run"]
    ceiling = render[["_run_join", *by, metric]].rename(columns={metric: "ceiling"})
    out = models[["model", "_run_join", *by, metric]].merge(
        ceiling, on=["_run_join", *by], how="left"
    )
    out["gap"] = out["ceiling"] - out[metric]
    shortfall = 1.0 - out[metric]
    share = (1.0 - out["ceiling"]) / shortfall.where(shortfall > 0)
    out["ocr_share"] = share.clip(0.0, 1.0)
    return out.drop(columns="_run_join").reset_index(drop=True)


def reader_faithfulness(frame: pd.DataFrame) -> pd.DataFrame:
    """How each reader reported the typos the ``control:typo`` images carry ('s card).

    The typo control draws a known corruption of the expected text and the run records
    it (``drawn_text``; the report never makes the control again: it is a pure function
    of the results), so a run that includes it measures its own reader: each injected
    edit is ``written`` (read as drawn), ``corrected`` (read as the intended text) or
    ``misread`` (:func:`glyphbench.calibration.calibrate.classify_edits`). One row per reader:
    the counts, ``faithfulness`` = written / (written + corrected) and the report's
    warning when it is below :data:`~glyphbench.scoring.edits.FAITHFULNESS_FLOOR`.
    Rows without ``drawn_text`` (runs made before it was recorded) are not counted.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"model": ["control:render"], "text": ["A"], "ocr_text": ["A"],
    ...     "drawn_text": ["A"], "ocr_engine": ["easyocr"], "error": [None]})
    >>> reader_faithfulness(rows).empty  # no typo control, nothing to measure
    True
    """
    from collections import Counter

    counts: dict[str, Counter[str]] = {}
    for row in _typo_rows(frame).itertuples(index=False):
        verdicts = classify_edits(str(row.text), str(row.drawn_text), str(row.ocr_text or ""))
        counts.setdefault(str(row.ocr_engine), Counter()).update(verdicts)
    records = []
    for reader, verdicts in counts.items():
        value = faithfulness(verdicts)
        records.append(
            {
                "reader": reader,
                "written": verdicts["written"],
                "corrected": verdicts["corrected"],
                "misread": verdicts["misread"],
                "faithfulness": value,
                "warning": warning(reader, value),
            }
        )
    return pd.DataFrame.from_records(records)


def _typo_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The readable typo-control rows with their rate (a ``rate`` column)."""

    needed = {"model", "text", "ocr_text", "drawn_text", "ocr_engine"}
    if not needed <= set(frame.columns):  # no control row recorded what it drew
        return pd.DataFrame(columns=[*sorted(needed), "rate"])
    parsed = frame["model"].map(parse_control)
    is_typo = parsed.map(lambda p: p is not None and p[0] == "typo" and p[1] == p[1])
    recorded = frame["drawn_text"].notna()
    keep = (is_typo & recorded & ~failed_mask(frame)).to_numpy(dtype=bool)
    rows = frame.loc[keep, sorted(needed)].copy()
    rows["rate"] = [p[1] for p in parsed[keep]]
    return rows
