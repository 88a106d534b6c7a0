"""The report's first answer: where each model stands against its run's controls.

The control models bracket what a reader can tell apart: ``control:blank`` draws
nothing, ``control:typo?rate=R`` draws the text with a share R of its characters
wrong, ``control:render`` draws it exactly (the reader's ceiling). Each model is
compared with each control of its run on the primary metric, paired on the
prompts both saw (the differences of prompt means resampled prompt by prompt, as
:func:`glyphbench.report.compare.compare_models` does, at the report's confidence; no
multiplicity correction: the controls are landmarks, not contestants). The
verdict places the model on that ladder:

* ``no better than blank``: not significantly better than the blank control;
* ``between typo 30% and typo 10%``: significantly better than the first and
  significantly worse than the second (``level with typo 10%`` when no difference
  from a control is significant);
* ``near the reader's ceiling``: better than blank and not significantly worse
  than render (``above the reader's ceiling`` when significantly better).

Pure: a DataFrame in, a DataFrame out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.calibration.reader_error import NOT_MEASURED, ReaderBounds
from glyphbench.core.bootstrap import MIN_UNITS, percentile_interval, seeded_rng
from glyphbench.core.paired import paired_differences
from glyphbench.report import controls as ctl
from glyphbench.report.compare import prompt_means
from glyphbench.report.metric_info import metric_info, metric_label
from glyphbench.report.tables import fmt_ci_n, fmt_number, metric_header

VERDICT_COLUMNS = ["model", "verdict", "level", "controls", "n_prompts"]


def control_label(control: str) -> str:
    """A control's short name on the ladder.

    >>> control_label("control:typo?rate=0.3 [run-b]"), control_label("control:blank")
    ('typo 30%', 'blank')
    """
    parsed = ctl.parse_control(control)
    if parsed is None:
        return control
    kind, rate, _ = parsed
    if kind == "typo" and not math.isnan(rate):
        return f"typo {100 * rate:g}%"
    return kind


def verdicts(
    frame: pd.DataFrame,
    models: Sequence[str],
    controls: Sequence[str],
    metric: str,
    *,
    n_boot: int,
    seed: int,
    confidence: float = 0.95,
    reader: ReaderBounds | None = None,
) -> pd.DataFrame:
    """One line per model: its verdict against the controls of its run (see the module).

    ``level`` is ``blank``, ``between``, ``level``, ``ceiling``, ``above`` or ``unknown``
    (no control in its run, or too few shared prompts); ``controls`` the per-control
    differences as text (``blank +0.42 [0.35, 0.50]``). With ``reader`` (a card's bounds,
    on its metric) two more columns: ``reader_verdict``, the same placing from the
    differences' reader-aware intervals, and ``reader_controls``, those intervals as text
    (``reader error not measured`` for a model the card's reader did not read).
    """
    if not models or not controls:
        return pd.DataFrame([], columns=VERDICT_COLUMNS)
    run_of = _runs(frame)
    chains = ctl.control_chain(list(controls))
    means = prompt_means(frame, metric)
    names = [m for m in [*models, *controls] if m in means.columns]
    index = {m: i for i, m in enumerate(names)}
    ladders = {
        model: [c for c in _chain_of(model, chains, run_of) if c in index and model in index]
        for model in models
    }
    pairs = [(index[m], index[c]) for m in models for c in ladders[m]]
    if pairs:  # every (model, control) pair from one draw of the prompts, as compare_models
        paired = paired_differences(
            means.reindex(columns=names).to_numpy(),
            pairs,
            n_boot=n_boot,
            rng=seeded_rng(seed, ("verdict", metric, *names)),
        )
        lo, hi = percentile_interval(paired.resamples, confidence)
        shared = paired.shared.sum(axis=0)
        total = np.where(paired.shared, paired.differences, 0.0).sum(axis=0)
        diff = total / np.maximum(shared, 1)
    sign = 1.0 if metric_info(metric).higher_is_better else -1.0
    aware = reader is not None and reader.card.metric == metric
    lines, j = [], 0
    for model in models:
        if not ladders[model]:
            line = [model, "no control in its run to compare with", "unknown", "", 0]
            lines.append(line + ["", ""] * aware)
            continue
        steps, widened = [], []
        for control in ladders[model]:
            low, high = sorted((sign * float(lo[j]), sign * float(hi[j])))
            steps.append(_Step(control, float(sign * diff[j]), low, high, int(shared[j])))
            if aware:
                assert reader is not None
                bounds = reader.difference(model, control, paired.resamples[:, j], confidence)
                low, high = sorted((sign * bounds[0], sign * bounds[1]))
                widened.append(_Step(control, steps[-1].diff, low, high, steps[-1].n))
            j += 1
        text, level = place(steps)
        against = "; ".join(step.text(metric) for step in steps)
        line = [model, text, level, against, min(step.n for step in steps)]
        if aware:
            line += _reader_placing(widened, metric)
        lines.append(line)
    return pd.DataFrame(lines, columns=[*VERDICT_COLUMNS, *READER_VERDICT_COLUMNS[: 2 * aware]])


#: Columns :func:`verdicts` adds with a reader's bounds.
READER_VERDICT_COLUMNS = ("reader_verdict", "reader_controls")


def _reader_placing(steps: Sequence[_Step], metric: str) -> list[str]:
    """The placing and the differences' text from reader-aware intervals."""
    if any(math.isnan(step.lo) for step in steps if step.n >= MIN_UNITS):
        return [NOT_MEASURED, ""]
    return [place(steps)[0], "; ".join(step.text(metric) for step in steps)]


class _Step:
    """The model against one control: difference (positive: the model is better) and interval."""

    def __init__(self, control: str, diff: float, lo: float, hi: float, n: int) -> None:
        self.control, self.diff, self.lo, self.hi, self.n = control, diff, lo, hi, n
        self.label = control_label(control)

    @property
    def known(self) -> bool:
        return self.n >= MIN_UNITS and not (math.isnan(self.lo) or math.isnan(self.hi))

    @property
    def above(self) -> bool:
        return self.known and self.lo > 0

    @property
    def below(self) -> bool:
        return self.known and self.hi < 0

    def text(self, metric: str) -> str:

        if not self.known:
            return f"{self.label}: n = {self.n}, too few"
        return (
            f"{self.label} {'+' if self.diff >= 0 else ''}{fmt_number(self.diff, metric)} "
            f"[{fmt_number(self.lo, metric)}, {fmt_number(self.hi, metric)}]"
        )


def place(steps: Sequence[_Step]) -> tuple[str, str]:
    """(verdict, level) from the comparisons with the chain's controls, worst first."""
    if not any(step.known for step in steps):
        return "too few shared prompts to place against the controls", "unknown"
    by_kind: Mapping[str, _Step] = {
        (ctl.parse_control(s.control) or ("", 0.0, ""))[0]: s for s in steps
    }
    blank, render = by_kind.get("blank"), by_kind.get("render")
    if blank is not None and blank.known and not blank.above:
        return "no better than a blank image", "blank"
    if render is not None and render.known:
        if render.above:
            return "above the reader's ceiling (better than render)", "above"
        if not render.below:
            return "near the reader's ceiling (no worse than render)", "ceiling"
    known = [s for s in steps if s.known]
    above = [i for i, s in enumerate(known) if s.above]
    below = [i for i, s in enumerate(known) if s.below]
    low = above[-1] if above else None
    high = below[0] if below else None
    if low is not None and high is not None and high == low + 1:
        return f"between {known[low].label} and {known[high].label}", "between"
    start = 0 if low is None else low + 1
    stop = len(known) if high is None else high
    level = [s.label for s in known[start:stop]]
    if level:
        return "level with " + " and ".join(level), "level"
    if high is not None:
        return f"below {known[high].label}", "between"
    return f"above {known[low].label}" if low is not None else "not placed", "between"


def _runs(frame: pd.DataFrame) -> dict[str, str]:
    """Each model's run (one run: "" for all)."""
    if "run" not in frame.columns:
        return {}
    first = frame.drop_duplicates("model")
    return dict(zip(first["model"].astype(str), first["run"].astype(str), strict=True))


def _chain_of(model: str, chains: Mapping[str, list[str]], run_of: Mapping[str, str]) -> list[str]:
    """The control chain of ``model``'s run (the only chain of a report of one run).

    With runs named, a model is placed on its own run's controls only, never on another
    run's: those were read by another reader, maybe with other prompts.
    """
    if len(chains) == 1 and not run_of:
        return next(iter(chains.values()))
    run = run_of.get(model)
    for chain in chains.values():
        if chain and run_of.get(chain[0]) == run:
            return chain
    return []


def headline(
    ranking: pd.DataFrame,
    lines: pd.DataFrame,
    metric: str,
    *,
    controls: Sequence[str] = (),
    failed: Sequence[str] = (),
) -> list[str]:
    """The first screen's sentences: who is best and how sure, then each model's verdict.

    Runs of control models alone rank nothing: one sentence says so (``controls``: the
    control models present), never a rank 1 shared by nobody. ``failed``: models every
    row of which failed (not ranked), named last.

    >>> lines = pd.DataFrame([["m", "no better than a blank image", "blank", "", 8]],
    ...                      columns=VERDICT_COLUMNS)
    >>> said = headline(pd.DataFrame({"model": ["m"], "rank": [1]}), lines, "ned")[0]
    >>> said.split("; ")
    ['One model (m): nothing to rank it against', 'against the controls it is no better \
than a blank image.']
    >>> empty = pd.DataFrame(columns=["model", "rank"])
    >>> headline(empty, lines.iloc[:0], "ned", controls=["control:blank"])[0][:40]
    'Only control models: nothing to rank or '

    """

    said: list[str] = []
    models = ranking["model"].astype(str).tolist() if len(ranking) else []
    groups = ranking.groupby("protocol") if "protocol" in ranking.columns else [("", ranking)]
    for protocol, group in groups:
        where = f" ({protocol})" if protocol else ""
        names = group["model"].astype(str).tolist()
        if not names:
            continue
        if len(names) == 1:
            placed = lines.loc[lines["model"] == names[0], "verdict"]
            against = f"; against the controls it is {placed.iloc[0]}" if len(placed) else ""
            said.append(f"One model{where} ({names[0]}): nothing to rank it against{against}.")
            continue
        top = group[group["rank"] == group["rank"].min()]
        if len(top) == 1:
            said.append(
                f"{top['model'].iloc[0]} is best{where} on {metric_label(metric)}: "
                "significantly better than every other model (paired bootstrap, Holm)."
            )
        else:
            shared = ", ".join(top["model"].astype(str))
            said.append(
                f"No model is significantly best{where} on {metric_label(metric)}: "
                f"{shared} share rank 1."
            )
    if not models and not failed:
        said.append(
            "Only control models: nothing to rank or place against them (the controls "
            "measure the reader; see the control checks)."
            if len(controls) or len(lines)
            else "No model has a scored row: nothing to rank."
        )
    elif not models:
        said.append("No model besides the controls made a scored row: nothing to rank.")
    if failed:
        names = ", ".join(failed)
        said.append(f"Every row of {names} failed: not ranked or placed (see the errors).")
    return said


def best_of(comparisons: pd.DataFrame, models: Sequence[str], metric: str) -> str | None:
    """The model significantly better than every other model on ``metric`` (Holm), if any.

    >>> c = pd.DataFrame({"model_a": ["a", "a"], "model_b": ["b", "c"], "metric": "ned",
    ...                   "better": ["a", "a"]})
    >>> best_of(c, ["a", "b", "c"], "ned"), best_of(c, ["a"], "ned")
    ('a', None)
    """
    if len(models) < 2 or comparisons.empty:
        return None
    rows = comparisons[comparisons["metric"] == metric]
    wins: dict[str, int] = {}
    for a, b, better in rows[["model_a", "model_b", "better"]].itertuples(index=False):
        if a in models and b in models and isinstance(better, str):
            wins[better] = wins.get(better, 0) + 1
    best = [m for m, n in wins.items() if n == len(models) - 1]
    return best[0] if best else None


def verdict_rows(lines: pd.DataFrame, summary: pd.DataFrame, metric: str) -> list[dict[str, Any]]:
    """The verdict table's records: model, its mean with interval, verdict, the differences."""

    shown = summary.set_index("model")
    out = []
    for line in lines.to_dict("records"):
        row = shown.loc[line["model"]] if line["model"] in shown.index else None
        score = (
            fmt_ci_n(
                row[metric], row[f"{metric}_lo"], row[f"{metric}_hi"], metric, row.get("n_prompts")
            )
            if row is not None
            else "–"
        )
        record = {
            "Model": line["model"],
            metric_header(metric): score,
            "Against the controls": line["verdict"],
            "Difference from each control [95% CI, paired]": line["controls"],
        }
        if "reader_verdict" in line:  # a reader's card widened the differences
            record["With the reader's error"] = line["reader_verdict"] or "–"
        out.append(record)
    return out
