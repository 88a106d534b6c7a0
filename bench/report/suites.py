"""Suite sections of reports: each benchmark's own numbers with intervals, beside published ones.

For every suite in the results (rows carry ``suite`` and ``suite_subset``), per
model and subset (and over all subsets when the benchmark pools them): the suite
family's summary metrics aggregated exactly as the metric table says (pooled
ratios where the benchmark pools, derived scores from the aggregates) with
percentile bootstrap intervals over prompts (all images of a prompt move
together; :mod:`glyphbench.core.bootstrap`). Then paired differences between models on
shared prompts (the same prompt resample for both models, so the difference of two
pooled or derived aggregates gets its own interval), the published scores of
``bench/suites/published.csv`` with whether each lies inside glyphbench's interval,
and each run's protocol card. Runs whose cards differ in a compared field are
named in a warning: their numbers are not comparable.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.bootstrap import (
    MIN_UNITS,
    Estimands,
    cluster_codes,
    percentile_interval,
    resample_weights,
    resampled_means,
    seeded_rng,
)
from glyphbench.core.schema import failed_mask
from glyphbench.report.metric_info import higher_is_better, metric_label
from glyphbench.report.tables import fmt_ci, metric_header
from glyphbench.scoring.table import METRICS
from glyphbench.suites.base import resolve_suite
from glyphbench.suites.protocol import COMPARED_FIELDS, comparable_part
from glyphbench.suites.published import options_text, published_for

#: The subset label of a pooled row (every selected subset together).
ALL = "all"

SCORE_COLUMNS = ["model", "subset", "n_prompts", "n_images"]
COMPARISON_COLUMNS = [
    "subset",
    "metric",
    "model_a",
    "model_b",
    "n_prompts",
    "value_a",
    "value_b",
    "diff",
    "lo",
    "hi",
    "significant",
    "better",
]
PUBLISHED_COLUMNS = [
    "model",
    "subset",
    "metric",
    "value",
    "lo",
    "hi",
    "published",
    "published_text",
    "inside",
    "published_model",
    "source",
    "protocol",
    "same_protocol",
]


#: What a benchmark's tables print beside its headline: CVTG-2K's word accuracy with
#: NED (TextCrafter's table and the Ovis-Image, GLM-Image and LongCat-Image READMEs),
#: LeX-Bench's PNED with recall (LeX-Art's results table), AnyText's sentence accuracy
#: with NED (AnyText's evaluation table).
COMPANIONS: dict[str, tuple[str, ...]] = {
    "cvtg_word_accuracy": ("cvtg_ned",),
    "lex_pned": ("lex_recall",),
    "anytext_sen_acc": ("anytext_ned",),
}


def headline_metrics(headline: str) -> list[str]:
    """The suite's headline metric and the numbers its benchmark prints beside it.

    >>> headline_metrics("cvtg_word_accuracy"), headline_metrics("longtext_text_score")
    (['cvtg_word_accuracy', 'cvtg_ned'], ['longtext_text_score'])
    """
    return [headline, *COMPANIONS.get(headline, ())]


@dataclass(frozen=True)
class SuiteSection:
    """One suite's tables (see the module docstring)."""

    name: str
    title: str
    headline: str
    metrics: list[str]
    scores: pd.DataFrame
    comparisons: pd.DataFrame
    published: pd.DataFrame
    cards: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def analyse_suites(
    frame: pd.DataFrame, *, n_boot: int, seed: int, confidence: float
) -> list[SuiteSection]:
    """A section per suite present in ``frame`` (none for results without suite rows)."""
    if "suite" not in frame.columns:
        return []
    names = [str(s) for s in frame["suite"].dropna().astype(str).unique() if str(s)]
    settings = {"n_boot": n_boot, "seed": seed, "confidence": confidence}
    return [_section(frame, name, settings) for name in sorted(names)]


def _section(frame: pd.DataFrame, name: str, settings: dict[str, Any]) -> SuiteSection:
    suite = resolve_suite(name).suite
    rows = frame[frame["suite"].astype(str) == name]
    families = {s.name: s.family for s in suite.subsets}
    present = [s.name for s in suite.subsets if (rows["suite_subset"].astype(str) == s.name).any()]
    metrics = _summary_metrics(families[p] for p in present)
    groups = _groups(rows, present, families, suite.pools_subsets, suite.report_groups)
    models = list(dict.fromkeys(rows["model"].astype(str)))
    scores = _scores(rows, models, groups, metrics, name, settings)
    comparisons = _comparisons(rows, models, groups, metrics, name, settings)
    runs = frame.attrs.get("runs", {})
    cards = {run: (runs.get(run, {}).get("meta") or {}).get("protocol") for run in _runs(rows)}
    published = _published(scores, rows, runs, cards, name)
    return SuiteSection(
        name=name,
        title=suite.title,
        headline=suite.headline,
        metrics=metrics,
        scores=scores,
        comparisons=comparisons,
        published=published,
        cards={run: card for run, card in cards.items() if card},
        warnings=suite_warnings(cards),
    )


def _summary_metrics(families: Any) -> list[str]:
    names: dict[str, None] = {}
    for family in dict.fromkeys(families):
        names.update(dict.fromkeys(METRICS.summary_names([family])))
    return list(names)


@dataclass(frozen=True)
class _Group:
    """Rows scored together: one subset (or all, pooled) and the family that aggregates them."""

    subset: str
    family: str
    mask: np.ndarray


def _groups(
    rows: pd.DataFrame,
    present: Sequence[str],
    families: Mapping[str, str],
    pools: bool,
    report_groups: Sequence[tuple[str, tuple[str, ...]]] = (),
) -> list[_Group]:
    """Each present subset, each report group whose subsets are all present, then ``all``."""
    subsets = rows["suite_subset"].astype(str).to_numpy()
    groups = [_Group(s, families[s], subsets == s) for s in present]
    for name, members in report_groups:
        if set(members) <= set(present) and len({families[m] for m in members}) == 1:
            groups.append(_Group(name, families[members[0]], np.isin(subsets, list(members))))
    if pools and len(present) > 1 and len({families[s] for s in present}) == 1:
        groups.append(_Group(ALL, families[present[0]], np.isin(subsets, list(present))))
    return groups


def _runs(rows: pd.DataFrame) -> list[str]:
    return [str(r) for r in rows["run"].astype(str).unique()] if "run" in rows else []


# --------------------------------------------------------------------------- scores


def estimands(metrics: Sequence[str], family: str) -> Estimands:
    """The metrics' aggregates as ``family`` defines them (e.g. OneIG's cap of 100 or 50)."""

    return Estimands(metrics, lambda name: METRICS.get(name, family).aggregate)


def _values(rows: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    return np.column_stack(
        [pd.to_numeric(rows[c].astype(object), errors="coerce").astype(float) for c in columns]
    )


def _scores(
    rows: pd.DataFrame,
    models: Sequence[str],
    groups: Sequence[_Group],
    metrics: Sequence[str],
    suite: str,
    settings: dict[str, Any],
) -> pd.DataFrame:
    ok = ~failed_mask(rows)
    model_of = rows["model"].astype(str).to_numpy()
    records = []
    for model in models:
        for group in groups:
            chosen = rows[(model_of == model) & group.mask & ok]
            if chosen.empty:
                continue
            records.append(_score_row(chosen, model, group, metrics, suite, settings))
    columns = SCORE_COLUMNS + [f"{m}{s}" for m in metrics for s in ("", "_lo", "_hi")]
    return pd.DataFrame(records, columns=columns)


def _score_row(
    rows: pd.DataFrame,
    model: str,
    group: _Group,
    metrics: Sequence[str],
    suite: str,
    settings: dict[str, Any],
) -> dict[str, Any]:
    est = estimands(metrics, group.family)
    values = _values(rows, est.columns)
    clusters = cluster_codes(rows["prompt_id"].astype(str).to_numpy(), len(rows))
    rng = seeded_rng(settings["seed"], ("suite", suite, model, group.subset))
    boot = resampled_means(
        values, n_boot=settings["n_boot"], rng=rng, clusters=clusters, estimands=est
    )
    lo, hi = percentile_interval(boot, settings["confidence"])
    record: dict[str, Any] = {
        "model": model,
        "subset": group.subset,
        "n_prompts": int(clusters.max()) + 1 if len(clusters) else 0,
        "n_images": len(rows),
    }
    enough = record["n_prompts"] >= MIN_UNITS  # as the summary: no interval below it
    for index, (metric, point) in enumerate(zip(metrics, est.point(values), strict=True)):
        known = enough and not math.isnan(point)
        record[metric] = point
        record[f"{metric}_lo"] = float(lo[index]) if known else math.nan
        record[f"{metric}_hi"] = float(hi[index]) if known else math.nan
    return record


# --------------------------------------------------------------------------- comparisons


def _comparisons(
    rows: pd.DataFrame,
    models: Sequence[str],
    groups: Sequence[_Group],
    metrics: Sequence[str],
    suite: str,
    settings: dict[str, Any],
) -> pd.DataFrame:
    records = []
    for group in groups:
        for model_a, model_b in combinations(models, 2):
            key = (suite, group.subset, group.family)
            records += paired_suite_difference(
                rows[group.mask], model_a, model_b, metrics, key, settings
            )
    return pd.DataFrame(records, columns=COMPARISON_COLUMNS)


def _prompt_sums(
    rows: pd.DataFrame, est: Estimands, prompts: pd.Index
) -> tuple[np.ndarray, np.ndarray]:
    """Per prompt of ``prompts``: summed known values and known counts of ``est``'s columns."""
    rows = rows[rows["prompt_id"].astype(str).isin(prompts)]
    filled, known = est.prepare(_values(rows, est.columns))
    position = prompts.get_indexer(rows["prompt_id"].astype(str))
    sums = np.zeros((len(prompts), filled.shape[1]))
    counts = np.zeros_like(sums)
    np.add.at(sums, position, filled)
    np.add.at(counts, position, known)
    return sums, counts


def paired_suite_difference(
    rows: pd.DataFrame,
    model_a: str,
    model_b: str,
    metrics: Sequence[str],
    key: tuple[str, str, str],
    settings: dict[str, Any],
) -> list[dict[str, Any]]:
    """``model_a`` minus ``model_b`` for each metric, on the prompts both have images for.

    Both models' aggregates are computed from the same resample of shared prompts
    (prompt weights), so pooled ratios and derived scores get a paired interval.
    ``key`` is (suite, subset, family).
    """

    ok = rows[~failed_mask(rows)]
    prompts = {m: ok.loc[ok["model"].astype(str) == m, "prompt_id"].astype(str) for m in
               (model_a, model_b)}  # fmt: skip
    shared = pd.Index(sorted(set(prompts[model_a]) & set(prompts[model_b])))
    if shared.empty:
        return []
    suite, subset, family = key
    est = estimands(metrics, family)
    sums_a, known_a = _prompt_sums(ok.loc[prompts[model_a].index], est, shared)
    sums_b, known_b = _prompt_sums(ok.loc[prompts[model_b].index], est, shared)
    ones = np.ones((1, len(shared)))
    with np.errstate(invalid="ignore", divide="ignore"):
        point_a = est.combine(ones @ sums_a, ones @ known_a)[0]
        point_b = est.combine(ones @ sums_b, ones @ known_b)[0]
        rng = seeded_rng(settings["seed"], ("suite-paired", suite, subset, model_a, model_b))
        weights = resample_weights(len(shared), settings["n_boot"], rng)
        diffs = est.combine(weights @ sums_a, weights @ known_a) - est.combine(
            weights @ sums_b, weights @ known_b
        )
    lo, hi = percentile_interval(diffs, settings["confidence"])
    records = []
    for index, metric in enumerate(metrics):
        diff = float(point_a[index] - point_b[index])
        # as the summary's comparisons: below MIN_UNITS shared prompts, no interval, no verdict
        enough = len(shared) >= MIN_UNITS
        low, high = (float(lo[index]), float(hi[index])) if enough else (math.nan, math.nan)
        significant = bool(enough and (low > 0 or high < 0))
        ahead = model_a if (diff > 0) == higher_is_better(metric) else model_b
        records.append(
            {
                "subset": subset,
                "metric": metric,
                "model_a": model_a,
                "model_b": model_b,
                "n_prompts": len(shared),
                "value_a": float(point_a[index]),
                "value_b": float(point_b[index]),
                "diff": diff,
                "lo": low,
                "hi": high,
                "significant": significant,
                "better": ahead if significant else None,
            }
        )
    return records


# --------------------------------------------------------------------------- published


def _model_names(rows: pd.DataFrame, runs: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each model label -> the names it goes by: the label, its label in its run, its spec."""
    names: dict[str, tuple[str, ...]] = {}
    pairs = rows[["model", "run"]].drop_duplicates() if "run" in rows else rows[["model"]]
    for record in pairs.astype(str).to_dict("records"):
        model, run = record["model"], record.get("run", "")
        original = model.removesuffix(f" [{run}]") if run else model
        requested = ((runs.get(run) or {}).get("meta") or {}).get("models_requested") or {}
        spec = str((requested.get(original) or {}).get("resolved_spec") or original)
        names[model] = tuple(dict.fromkeys((model, original, spec)))
    return names


def _published(
    scores: pd.DataFrame,
    rows: pd.DataFrame,
    runs: Mapping[str, Any],
    cards: Mapping[str, Any],
    suite: str,
) -> pd.DataFrame:
    names = _model_names(rows, runs)
    options = _suite_options(cards)
    same = _same_as_benchmark(cards)
    records = []
    for score in scores.to_dict("records"):
        table = published_for(suite, score["subset"], options, names.get(score["model"], ()))
        for item in table.to_dict("records"):
            metric = item["metric"]
            if metric not in score:
                continue
            low, high = score[f"{metric}_lo"], score[f"{metric}_hi"]
            records.append(
                {
                    "model": score["model"],
                    "subset": score["subset"],
                    "metric": metric,
                    "value": score[metric],
                    "lo": low,
                    "hi": high,
                    "published": item["value"],
                    "published_text": item.get("value_text") or str(item["value"]),
                    "inside": bool(low <= item["value"] <= high),
                    "published_model": item["model"],
                    "source": item["source"],
                    "protocol": item["protocol"],
                    "same_protocol": same,
                }
            )
    return pd.DataFrame(records, columns=PUBLISHED_COLUMNS)


def _suite_options(cards: Mapping[str, Any]) -> str:
    """The suite options the runs used, as ``published.csv`` writes them (first run's)."""

    for card in cards.values():
        spec = ((card or {}).get("suite") or {}).get("spec")
        if spec:
            options = resolve_suite(str(spec)).options.model_dump()
            return options_text(options)
    return ""


def _same_as_benchmark(cards: Mapping[str, Any]) -> bool:
    """True when every run read with the benchmark's reader and its images per prompt."""
    if not cards or not all(cards.values()):
        return False
    for card in cards.values():
        suite = card.get("suite") or {}
        if card.get("reader") != suite.get("benchmark_reader"):
            return False
        if any("image(s) per prompt" in d for d in card.get("deviations") or []):
            return False
    return True


# --------------------------------------------------------------------------- warnings


def suite_warnings(cards: Mapping[str, Any]) -> list[str]:
    """Each run's deviations from the benchmark (clashes between the runs' cards are said
    once, at the top of the report: :func:`protocol_clashes`)."""
    warnings = []
    for run, card in cards.items():
        if not card:
            warnings.append(f"run {run} has no protocol card (made before suites existed)")
            continue
        warnings += [f"run {run}: {d}" for d in card.get("deviations") or []]
    return warnings


def protocol_clashes(cards: Mapping[str, Any]) -> list[str]:
    """One sentence per compared field in which the runs' protocol cards differ, in words.

    >>> (warning,) = protocol_clashes({"a": {"reader": "easyocr"}, "b": {"reader": "rapidocr"}})
    >>> warning
    'reader: easyocr in run a, rapidocr in run b'
    """

    known = {run: comparable_part(card) for run, card in cards.items() if card}
    if len(known) < 2:
        return []
    runs = list(known)
    warnings = []
    for key in COMPARED_FIELDS:
        values = [known[run].get(key) for run in runs]
        if any(value != values[0] for value in values[1:]):
            by_value: dict[str, list[str]] = {}
            for run, value in zip(runs, values, strict=True):
                by_value.setdefault(_in_words(value), []).append(run)
            parts = [
                f"{text} in run{'s' if len(names) > 1 else ''} {', '.join(names)}"
                for text, names in by_value.items()
            ]
            warnings.append(f"{key.replace('_', ' ')}: {', '.join(parts)}")
    return warnings


def _in_words(value: Any) -> str:
    """A protocol value as a person writes it: no quotes, brackets or braces.

    >>> _in_words([0, 1]), _in_words(None), _in_words({"lower": True}), _in_words("easyocr")
    ('0, 1', 'not recorded', 'lower true', 'easyocr')
    """
    if value is None or value == "":
        return "not recorded"
    if isinstance(value, list | tuple):
        return ", ".join(_in_words(v) for v in value) or "none"
    if isinstance(value, Mapping):
        return "; ".join(f"{k} {_in_words(v)}" for k, v in value.items()) or "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# --------------------------------------------------------------------------- headlines


def reported_subsets(subsets: Sequence[str]) -> list[str]:
    """The groups a benchmark reports its headline for: the pooled one alone where it pools.

    >>> reported_subsets(["CVTG/2", "CVTG/3", "all"]), reported_subsets(["en", "zh"])
    (['all'], ['en', 'zh'])
    """
    return [ALL] if ALL in subsets else list(subsets)


def headline_columns(suite_title: str, subset: str, metric: str) -> str:
    """A headline column's header: ``LongText-Bench en: LongText text score ↑``."""

    where = suite_title if subset == ALL else f"{suite_title} {subset}"
    return f"{where}: {metric_header(metric)}"


def headline_points(frame: pd.DataFrame) -> tuple[list[str], dict[str, dict[str, float]]]:
    """Each suite's headline numbers per model, as the benchmark computes them (no intervals).

    Returns the column headers (suite by suite: each reported subset, or the pooled
    group where the benchmark pools, times :func:`headline_metrics`) and, per model,
    header -> value. Failed rows are left out, as everywhere. Results without suite
    rows give no columns.
    """

    headers: list[str] = []
    values: dict[str, dict[str, float]] = {}
    if "suite" not in frame.columns or frame.empty:
        return headers, values
    rows = frame[~failed_mask(frame)]
    for name in sorted({str(s) for s in frame["suite"].dropna().astype(str) if str(s)}):
        suite = resolve_suite(name).suite
        mine = frame[frame["suite"].astype(str) == name]
        present = [
            s.name for s in suite.subsets if (mine["suite_subset"].astype(str) == s.name).any()
        ]
        families = {s.name: s.family for s in suite.subsets}
        groups = _groups(mine, present, families, suite.pools_subsets)
        kept = reported_subsets([g.subset for g in groups])
        ok = rows[rows["suite"].astype(str) == name]
        subset_of = ok["suite_subset"].astype(str).to_numpy()
        for group in (g for g in groups if g.subset in kept):
            chosen = ok[np.isin(subset_of, present if group.subset == ALL else [group.subset])]
            metrics = headline_metrics(suite.headline)
            columns = [headline_columns(suite.title, group.subset, m) for m in metrics]
            headers += columns
            for model, part in chosen.groupby(chosen["model"].astype(str), sort=False):
                point = METRICS.aggregate(part, metrics, group.family)
                line = values.setdefault(str(model), {})
                line.update({c: float(point[m]) for c, m in zip(columns, metrics, strict=True)})
    return headers, values


def headline_display(sections: Sequence[SuiteSection], models: Sequence[str]) -> pd.DataFrame:
    """One row per model: each suite's headline numbers with their intervals (report Summary)."""

    cells: dict[str, dict[str, str]] = {}
    headers: list[str] = []
    for section in sections:
        table = section.scores
        kept = reported_subsets(list(dict.fromkeys(table["subset"].astype(str))))
        for subset in kept:
            for metric in headline_metrics(section.headline):
                if metric not in table.columns:
                    continue
                header = headline_columns(section.title, subset, metric)
                headers.append(header)
                for row in table[table["subset"].astype(str) == subset].to_dict("records"):
                    value = fmt_ci(row[metric], row[f"{metric}_lo"], row[f"{metric}_hi"], metric)
                    cells.setdefault(str(row["model"]), {})[header] = value
    order = [m for m in models if m in cells] + [m for m in cells if m not in models]
    out = pd.DataFrame({"Model": order})
    for header in headers:
        out[header] = [cells[m].get(header, "–") for m in order]
    return out


# --------------------------------------------------------------------------- display


def scores_display(section: SuiteSection) -> pd.DataFrame:
    """Model, subset, prompts, images and each metric as ``value [lo, hi]``."""

    table = section.scores
    out = pd.DataFrame(
        {
            "Model": table["model"],
            "Subset": table["subset"],
            "Prompts": table["n_prompts"].astype(int),
            "Images": table["n_images"].astype(int),
        }
    )
    for metric in section.metrics:
        header = metric_header(metric) + (" (headline)" if metric == section.headline else "")
        out[header] = [
            fmt_ci(v, lo, hi, metric)
            for v, lo, hi in table[[metric, f"{metric}_lo", f"{metric}_hi"]].to_numpy()
        ]
    return out


def published_display(section: SuiteSection) -> pd.DataFrame:
    """glyphbench's value with its interval beside the published one, and the verdict."""

    table = section.published
    return pd.DataFrame(
        {
            "Model": table["model"],
            "Subset": table["subset"],
            "Metric": table["metric"].map(metric_label),
            "glyphbench [95% CI]": [
                fmt_ci(v, lo, hi, m)
                for v, lo, hi, m in table[["value", "lo", "hi", "metric"]].to_numpy()
            ],
            "Published (as printed)": table["published_text"],
            "Published inside the interval": [
                "yes" if inside else "no" for inside in table["inside"]
            ],
            "Same protocol": ["yes" if same else "no" for same in table["same_protocol"]],
            "Published as": table["published_model"],
            "Source": table["source"],
        }
    )


def comparisons_display(section: SuiteSection) -> pd.DataFrame:
    """Paired differences per subset and metric, with the significantly better model."""

    table = section.comparisons
    return pd.DataFrame(
        {
            "Subset": table["subset"],
            "Metric": table["metric"].map(metric_label),
            "Model A": table["model_a"],
            "Model B": table["model_b"],
            "Shared prompts": table["n_prompts"],
            "A − B [95% CI]": [
                fmt_ci(d, lo, hi, m)
                for d, lo, hi, m in table[["diff", "lo", "hi", "metric"]].to_numpy()
            ],
            "Significantly better": table["better"].fillna("– (no clear difference)"),
        }
    )


def card_lines(card: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A protocol card as (field, value) lines for the page.

    >>> card_lines({"reader": "easyocr", "seeds": [0]})[:2]
    [('Reader', 'easyocr'), ('Reader engines (versions)', '–')]
    """
    suite = card.get("suite") or {}
    resolution = card.get("resolution") or {}
    prompts = card.get("prompts") or {}
    scorer = card.get("scorer") or {}
    normalisation = card.get("normalisation") or {}

    def text(value: Any) -> str:
        if value in (None, "", [], {}):
            return "–"
        if isinstance(value, list):
            return ", ".join(map(str, value))
        if isinstance(value, Mapping):
            return "; ".join(f"{k}: {v}" for k, v in value.items())
        return str(value)

    return [
        ("Reader", text(card.get("reader"))),
        ("Reader engines (versions)", text(card.get("reader_engines"))),
        # a partly rescored table: each reader with the rows it read
        *([("Readers in the table (rows)", text(card["reader_rows"]))]
          if card.get("reader_rows") else []),
        ("Benchmark's reader", text(suite.get("benchmark_reader"))),
        ("Instruction", text(card.get("instruction"))),
        ("Resolution (benchmark / images)",
         f"{text(resolution.get('benchmark'))} / {text(resolution.get('images'))}"),
        ("Seeds", text(card.get("seeds"))),
        ("Images per prompt", text(card.get("images_per_prompt"))),
        ("Prompts (selected / selection)",
         f"{text(prompts.get('selected'))} / {text(prompts.get('benchmark'))}"),
        ("Grid", text(suite.get("grid"))),
        ("File naming (benchmark)", text(suite.get("file_naming"))),
        ("Normalisation", text(normalisation)),
        ("Scorer families", text(scorer.get("families"))),
        ("Scorer references", text(scorer.get("references"))),
        *([("Images read", text(card["image_path"]))] if card.get("image_path") else []),
    ]  # fmt: skip
