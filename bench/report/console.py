"""The per-model summary printed at the end of a run (and by the demo)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from glyphbench.calibration.reader_error import NOT_SIGNIFICANT
from glyphbench.core.bootstrap import MIN_UNITS
from glyphbench.core.schema import failed_mask
from glyphbench.core.terminal import printable
from glyphbench.report.console_fit import (
    cell_lines,
    least_width,
    natural_width,
    part_widths,
    stacked,
    table_width,
)
from glyphbench.report.latex import ABBREVIATIONS
from glyphbench.report.metric_info import metric_info
from glyphbench.report.suites import headline_metrics, headline_points
from glyphbench.report.tables import (  # the report's header and numbers, in the console too
    fmt_number,
    metric_header,
    too_few,
)
from glyphbench.scoring.table import METRICS
from glyphbench.suites.base import resolve_suite

if TYPE_CHECKING:
    from rich.console import Console, RenderableType


#: The metrics of the console summary: the first three of the metric table's summary
#: metrics of ``glyphbench`` (Algorithm 1, exact match, NED), a compact view of the report's.
CONSOLE_METRICS = tuple(METRICS.summary_names(["glyphbench"])[:3])

#: How a refused image's error starts (a hosted API's content policy said no).
REFUSED = "Refused:"

#: The columns :func:`print_summary` reads besides its metrics' (model lines, errors,
#: refusals, costs, and which suite and subset a row belongs to).
SUMMARY_COLUMNS = ("model", "is_control", "error", "cost_usd", "suite", "suite_subset")


def summary_columns(suites: Iterable[str] = ()) -> list[str]:
    """The results columns :func:`print_summary` reads, for results of ``suites`` (specs).

    :data:`SUMMARY_COLUMNS`, then what the metric table says each shown metric's
    aggregate reads (:meth:`~glyphbench.scoring.table.MetricTable.inputs`): the
    :data:`CONSOLE_METRICS`, and each suite's headline metrics in each of its subsets'
    families. ``glyphbench run`` and ``merge`` read only these back from a merged
    table (a million rows of every column are over a GB).

    >>> summary_columns()[-4:]
    ['suite_subset', 'algorithm1', 'exact_match', 'ned']
    >>> summary_columns(["longtext"])[-2:]
    ['longtext_matched', 'longtext_total']
    """

    columns = [*SUMMARY_COLUMNS, *METRICS.inputs(CONSOLE_METRICS)]
    for spec in suites:
        suite = resolve_suite(spec).suite
        for family in dict.fromkeys(subset.family for subset in suite.subsets):
            columns += METRICS.inputs(headline_metrics(suite.headline), family)
    return list(dict.fromkeys(columns))


def suites_of(rows: pd.DataFrame) -> list[str]:
    """The suites whose rows ``rows`` holds (its ``suite`` column), by name.

    >>> suites_of(pd.DataFrame({"suite": ["cvtg", None, "cvtg", ""]}))
    ['cvtg']
    """
    if "suite" not in rows.columns:
        return []
    return sorted({str(s) for s in rows["suite"].dropna().astype(str) if str(s)})


def summarize(rows: pd.DataFrame, metrics: Sequence[str] = CONSOLE_METRICS) -> pd.DataFrame:
    """One line per model: images, errors and each metric's aggregate over the rows without error.

    A row failed when :func:`glyphbench.core.schema.failed_mask` says so. Refusals (errors
    starting ``Refused:``) are counted apart from the other errors, with their rate
    over the model's images; ``cost_usd`` is the model's total cost (NaN for models
    without prices). Aggregates (a mean, or pooled where the record says so), labels
    and directions come from the metric table.

    >>> rows = pd.DataFrame({"model": ["a", "a", "b"], "is_control": [True, True, False],
    ...     "error": ["", "Generate: E: x", ""], "algorithm1": [0.0, None, 4.0],
    ...     "exact_match": [1.0, None, 0.0], "ned": [1.0, None, 0.5]})
    >>> summarize(rows)[["model", "images", "errors", "exact_match"]].values.tolist()
    [['a', 2, 1, 1.0], ['b', 1, 0, 0.0]]
    >>> rows.loc[1, "error"] = "Refused: openai: moderation_blocked"
    >>> summarize(rows)[["errors", "refused", "refusal_rate"]].values.tolist()[0]
    [0.0, 1.0, 0.5]
    """
    failed = pd.Series(failed_mask(rows), index=rows.index)
    lines = []
    for model, group in rows.groupby("model", sort=False):
        ok = group[~failed.loc[group.index]]
        refused = int(group["error"].fillna("").astype(str).str.startswith(REFUSED).sum())
        cost = group["cost_usd"] if "cost_usd" in group.columns else pd.Series(dtype=float)
        line: dict[str, object] = {
            "model": str(model),
            "control": bool(group["is_control"].fillna(False).astype(bool).any()),
            "images": len(group),
            "errors": len(group) - len(ok) - refused,
        }
        values = METRICS.aggregate(ok, metrics) if len(ok) else {}
        for metric in metrics:
            line[metric] = values.get(metric, float("nan"))
        line["refused"] = refused
        line["refusal_rate"] = refused / len(group)
        line["cost_usd"] = float(cost.sum()) if cost.notna().any() else float("nan")
        lines.append(line)
    columns = ["model", "control", "images", "errors", *metrics]
    return pd.DataFrame(lines, columns=[*columns, "refused", "refusal_rate", "cost_usd"])


def short_header(metric: str) -> str:
    """A metric's short header with its direction: the LaTeX tables' abbreviation.

    >>> short_header("ned"), short_header("algorithm1")
    ('NED ↑', 'Alg1 ↓')
    """
    info = metric_info(metric)
    return f"{ABBREVIATIONS.get(metric, info.label)} {'↑' if info.higher_is_better else '↓'}"


def print_summary(
    rows: pd.DataFrame,
    console: Console,
    title: str = "Summary",
    answer: Mapping[str, Any] | None = None,
) -> None:
    """Print :func:`summarize` as a rich table; controls are marked as such.

    The table fits ``console``'s width and never cuts a number (:func:`_summary_parts`).
    The refusal and cost columns appear only when they say something. A suite run
    adds its benchmark's headline numbers, computed as the benchmark computes them
    (:func:`glyphbench.report.suites.headline_points`: LongText's text score per language,
    CVTG-2K's pooled word accuracy and NED, ...), beside glyphbench's metrics.

    With ``answer`` (:mod:`glyphbench.report.answer`, the run's numbers as the report
    computes them) the table is the answer's (:func:`print_answer`: the headline first,
    intervals under the values, rank and place against the controls), with the suite,
    refusal and cost columns after it.
    """

    lines = summarize(rows)
    headlines, by_model = headline_points(rows)
    refusals = bool(lines["refused"].sum())
    costs = bool(lines["cost_usd"].notna().any())
    extra = [*headlines, *["refused (rate)"] * refusals, *["cost USD"] * costs]
    answered = {str(m["model"]): m for m in (answer or {}).get("models", [])}
    place = {model: at for at, model in enumerate(answered)}  # the answer's order, best first
    records = sorted(lines.to_dict("records"), key=lambda r: place.get(str(r["model"]), len(place)))
    rendered = []
    for line in records:
        mine = by_model.get(str(line["model"]), {})
        cells = [_fmt(mine.get(header, float("nan"))) for header in headlines]
        if refusals:
            cells.append(f"{line['refused']} ({float(line['refusal_rate']):.0%})")
        if costs:
            cost = float(line["cost_usd"])
            cells.append("-" if cost != cost else f"{cost:.2f}")
        model = answered.get(str(line["model"]))
        if answer is not None and model is not None:
            rendered.append([*_answer_row(model), *cells])
            continue
        label = _shown(line["model"])
        label = f"{label} [dim](control)[/]" if line["control"] else label
        head = [label, str(line["images"]), str(line["errors"])]
        head += [_fmt(float(line[metric])) for metric in CONSOLE_METRICS]
        rendered.append([*head, *cells])
    if answer is None:
        headers = ["model", "images", "errors", *map(metric_header, CONSOLE_METRICS), *extra]
        for part in _summary_parts(headers, rendered, console.width, title):
            console.print(part)
        return
    _print_answer_table(answer, [*ANSWER_HEADERS, *extra], rendered, console, title)
    _print_notes(answer, console, failed=False)  # the run names them on stderr


#: The answer's metrics in the console, the ranked one first (short headers, a legend).
ANSWER_METRICS = ("ned", "exact_match", "algorithm1")

#: The answer table's columns: the answer first (a console of 80 columns shows these in
#: its first part), then the other metrics and the counts.
ANSWER_HEADERS = [
    "model",
    short_header(ANSWER_METRICS[0]),
    "rank",
    "vs controls",
    *map(short_header, ANSWER_METRICS[1:]),
    "images",
]

#: Columns of the answer table set left-aligned (text, not numbers).
ANSWER_TEXT_COLUMNS = (0, 2, 3)


def print_answer(answer: Mapping[str, Any], console: Console, title: str = "Summary") -> None:
    """Print an answer document (``answer.json``, :mod:`glyphbench.report.answer`): the
    headline, then per model NED with its interval, its rank, its place against the
    controls, exact match and Algorithm 1 with theirs, its images (and failed rows), fitted
    to ``console``; a legend of the short headers and how the intervals were made."""
    rendered = [_answer_row(model) for model in answer.get("models", [])]
    _print_answer_table(answer, ANSWER_HEADERS, rendered, console, title)
    _print_notes(answer, console)


def _answer_row(model: Mapping[str, Any]) -> list[str]:
    """One model's cells of :data:`ANSWER_HEADERS` (its failed rows under its images)."""
    values = [cell_lines(*pair) for pair in metric_cells(model, ANSWER_METRICS)]
    failed = f"({model['failed']} failed)" if model["failed"] else ""
    return [
        _shown(model["model"]),
        values[0],
        *_standing(model),
        *values[1:],
        cell_lines(str(model["images"]), failed),
    ]


def _shown(text: object) -> str:
    """Text from a file (a label, a verdict naming one) as Rich markup that prints it as it
    is: brackets escaped (``m [reader easyocr]`` was printed ``m``), and every character a
    terminal would act on (``ESC [2J`` clears the screen) written as ``\\uXXXX``."""
    from rich.markup import escape

    return escape(printable(str(text)))


def _print_answer_table(
    answer: Mapping[str, Any],
    headers: list[str],
    rendered: list[list[str]],
    console: Console,
    title: str,
) -> None:
    _print_headline(answer, console)
    parts = _summary_parts(headers, rendered, console.width, title, left=ANSWER_TEXT_COLUMNS)
    for part in parts:
        console.print(part)


def metric_cells(model: Mapping[str, Any], metrics: Sequence[str]) -> list[tuple[str, str]]:
    """``(value, "[lo, hi]")`` of each of ``metrics`` for one model line of an answer.

    The interval is ``n = K: too few`` when the model has fewer prompts than an interval
    needs, and empty when the value is unknown.
    """
    cells = []
    for metric in metrics:
        value = model["metrics"].get(metric, {})
        number = value.get("value")
        if number is None:
            cells.append(("–", ""))
            continue
        if model["n_prompts"] < MIN_UNITS:
            cells.append((fmt_number(number, metric), f"({too_few(model['n_prompts'])})"))
        elif value.get("lo") is None or value.get("hi") is None:
            cells.append((fmt_number(number, metric), ""))
        else:
            low, high = fmt_number(value["lo"], metric), fmt_number(value["hi"], metric)
            cells.append((fmt_number(number, metric), f"[{low}, {high}]"))
    return cells


def _standing(model: Mapping[str, Any] | None) -> list[str]:
    """The rank (``1 =`` when shared) and the verdict cells of one model of an answer."""
    if model is None or model["control"]:
        return ["control" if model is not None else "–", "–"]
    if not model["n_prompts"]:
        return ["–", "every row failed" if model["failed"] else "no scored row"]
    if model["rank"] is None:  # alone in its run: nothing to rank it against
        rank = "–"
    else:
        rank = f"{model['rank']} =" if model["tied_with"] else str(model["rank"])
    return [rank, _shown(model["verdict"] or "–")]


def _print_headline(answer: Mapping[str, Any], console: Console) -> None:
    for warning in answer.get("warnings", []):  # before the numbers they qualify
        console.print(f"[bold yellow]warning:[/] {_shown(warning)}")
    for sentence in answer.get("headline", []):
        console.print(_shown(sentence))


def _print_notes(answer: Mapping[str, Any], console: Console, *, failed: bool = True) -> None:
    """The short headers' metrics, how the intervals were made (and with ``failed`` the
    controls every row of which failed: the headline names the other models)."""
    legend = "; ".join(f"{short_header(m)[:-2]}: {metric_info(m).label}" for m in ANSWER_METRICS)
    console.print(
        f"[dim]{legend}. {answer['confidence']:.0%} intervals: bootstrap over prompts, "
        f"{answer['n_boot']} resamples, seed {answer['seed']}; rank: paired bootstrap, "
        "Holm ('=' shared).[/]"
    )
    controls = {m["model"] for m in answer.get("models", []) if m["control"]}
    for name in answer.get("failed_models", []) if failed else []:
        if name in controls:
            console.print(_shown(f"{name}: every row failed (see the errors column)"))
    reader = answer.get("reader_error")
    if reader and reader.get("headline"):  # the reader's doubt beside the table's intervals
        for line in reader_error_lines(reader):  # wrapped to the console's width
            console.print(_shown(line))


def _summary_parts(
    headers: list[str],
    rendered: list[list[str]],
    width: int,
    title: str,
    left: Collection[int] = (0,),
) -> list[RenderableType]:
    """The summary as rich tables no wider than ``width`` that cut no number.

    A table that fits at its natural width is laid out by rich as it always was.
    Otherwise each column gets at least its longest word, and its whole header where
    the header fits beside the model column (headers are read whole: one line wherever
    the width allows); columns that do not fit beside the model go to further parts
    that repeat it (:func:`glyphbench.report.console_fit.part_widths`, as ``human stats``).
    When not even the model and one column fit, each model's values are stacked.
    """
    from rich.table import Table
    from rich.text import Text

    plain = [[Text.from_markup(cell).plain for cell in row] for row in rendered]
    cells = [list(column) for column in zip(*plain, strict=True)] or [[] for _ in headers]
    natural = [max(map(natural_width, [h, *c])) for h, c in zip(headers, cells, strict=True)]
    layout: Sequence[tuple[list[int], list[int] | None]] | None
    if table_width(natural) <= width:
        layout = [(list(range(len(headers))), None)]  # rich's own layout, as before
    else:
        least = [max(map(least_width, column), default=0) for column in cells]
        least[0] = max(least[0], least_width(headers[0]))
        beside = table_width(least[:1])  # the model column, repeated in every part
        for index, header in enumerate(headers[1:], start=1):
            whole = max(least[index], len(header))
            fits = beside + table_width([whole]) - 1 <= width
            least[index] = whole if fits else max(least[index], least_width(header))
        layout = part_widths(least, natural, 1, width)
        if layout is None:
            return [stacked(headers, plain, 1, title)]
    parts: list[RenderableType] = []
    for number, (shown, widths) in enumerate(layout, start=1):
        table = Table(title=title if len(layout) == 1 else f"{title} ({number} of {len(layout)})")
        for position, index in enumerate(shown):
            table.add_column(
                headers[index],
                justify="left" if index in left else "right",
                width=None if widths is None else widths[position],
                overflow="ellipsis" if widths is None else "fold",
            )
        for row in rendered:
            table.add_row(*(row[i] for i in shown))
        parts.append(table)
    return parts


def summary_console() -> Console:
    """A stdout console wide enough for the table even when output is piped to a file."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=120)


def _fmt(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value:.3f}"


def _missing(value: Any) -> bool:
    return value is None or value != value  # JSON's null, or NaN in memory


def _why_unwidened(score: Mapping[str, Any]) -> str:
    """Why a score has no reader-aware interval (:func:`~glyphbench.report.reader_aware.
    reader_scores`): no interval at all below MIN_UNITS prompts, else a reader not carded."""
    if _missing(score["lo"]) or _missing(score["hi"]):
        return f"no interval (fewer than {MIN_UNITS} prompts)"
    return "not measured (another reader)"


def reader_error_lines(section: Mapping[str, Any]) -> list[str]:
    """The answer's reader error in a few console lines (``answer.json``'s ``reader_error``):
    its headline, then, where a card widened the intervals, each score with both intervals
    and each significant comparison's verdict with the reader's error counted.

    >>> section = {"measured": True, "headline": "Counted (c): 1 of 2 beyond.", "caveats": [],
    ...            "scores": [{"model": "m", "value": 0.8123, "lo": 0.8, "hi": 0.82,
    ...                        "reader_lo": 0.77, "reader_hi": 0.86},
    ...                       {"model": "o", "value": 0.5, "lo": 0.4, "hi": 0.6,
    ...                        "reader_lo": None, "reader_hi": None},
    ...                       {"model": "p", "value": 0.7, "lo": None, "hi": None,
    ...                        "reader_lo": None, "reader_hi": None}],
    ...            "comparisons": [
    ...                {"model_a": "m", "model_b": "n", "reader_verdict": "beyond it"},
    ...                {"model_a": "n", "model_b": "o", "reader_verdict": NOT_SIGNIFICANT}]}
    >>> print("\\n".join(reader_error_lines(section)))
    Counted (c): 1 of 2 beyond.
      m  0.812 [0.800, 0.820]  with the reader's error [0.770, 0.860]
      o  0.500 [0.400, 0.600]  with the reader's error: not measured (another reader)
      p  0.700 [-, -]  with the reader's error: no interval (fewer than 5 prompts)
      m vs n: beyond it
    """
    lines = [str(section.get("headline", ""))]
    lines += [f"  note: {caveat}" for caveat in section.get("caveats", [])]
    if not section.get("measured"):
        return lines
    for score in section.get("scores", []):
        plain = (
            f"  {score['model']}  {_fmt(score['value'])} [{_fmt(score['lo'])}, {_fmt(score['hi'])}]"
        )
        if _missing(score["reader_lo"]) or _missing(score["reader_hi"]):
            lines.append(f"{plain}  with the reader's error: {_why_unwidened(score)}")
            continue
        lines.append(
            f"{plain}  with the reader's error [{_fmt(score['reader_lo'])}, "
            f"{_fmt(score['reader_hi'])}]"
        )
    for pair in section.get("comparisons", []):
        if pair["reader_verdict"] != NOT_SIGNIFICANT:
            lines.append(f"  {pair['model_a']} vs {pair['model_b']}: {pair['reader_verdict']}")
    return lines
