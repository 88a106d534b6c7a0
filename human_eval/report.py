"""Export ratings and write the study report (agreement, alignment, rater quality).

Everything is read from the study folder. Rater ids in exports and reports are
anonymised as ``R001``, ``R002``, ... in order of sign-up; resume codes and
logins never leave the database.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.io import atomic_open, spreadsheet_safe, write_json, write_table
from glyphbench.human_eval import stats
from glyphbench.human_eval.raters import rater_quality
from glyphbench.human_eval.study import ACCURACY_CRITERION, Study, open_store
from glyphbench.report.figures import font_family, quiet_missing_glyphs
from glyphbench.report.metric_info import metric_label
from glyphbench.scoring.table import METRICS
from glyphbench.templates import Cell, Table, render, table_from_frame

#: Manifest columns joined onto exported ratings (the model is revealed only here), before
#: the scores compared with people (:func:`ranking_metrics`).
EXPORT_MANIFEST_COLUMNS = (
    "model",
    "is_control",
    "is_gold",
    "gold_answer",
    "cell",
    "inclusion_prob",
    "weight",
    "prompt_id",
    "text",
)


def ranking_metrics() -> list[str]:
    """Automatic scores compared with people (alignment, model ranking), the first plotted:
    the metric table's ``human`` places, in that order.

    >>> ranking_metrics()
    ['ned', 'algorithm1']
    """

    return METRICS.human_names(compared=True)


#: What one rating holds besides who rated which image.
_RATING_COLUMNS = ["criterion", "value", "seconds", "created_at", "updated_at", "revisions"]


def anonymised_ratings(study: Study) -> pd.DataFrame:
    """Long format: image_id, rater_id (R001...), criterion, value, seconds, times + manifest."""
    if not study.database.exists():
        ratings = pd.DataFrame(columns=["participant_id", "image_id", *_RATING_COLUMNS])
        participants = pd.DataFrame(columns=["participant_id"])
    else:
        store = open_store(study)
        ratings = store.ratings_frame()
        participants = store.participants_frame()
    width = max(3, len(str(len(participants))))
    anonymous = {pid: f"R{k + 1:0{width}d}" for k, pid in enumerate(participants["participant_id"])}
    out = ratings.assign(rater_id=ratings["participant_id"].map(anonymous)).drop(
        columns=["participant_id"]
    )
    exported = [*EXPORT_MANIFEST_COLUMNS, *ranking_metrics()]
    keep = ["image_id"] + [c for c in exported if c in study.manifest.columns]
    out = out.merge(study.manifest[keep], on="image_id", how="left")
    front = ["image_id", "rater_id", *_RATING_COLUMNS]
    return out[front + [c for c in out.columns if c not in front]]


#: How a time of day is written in a CSV export: ISO 8601 in UTC, to the second (the format
#: of study.json's ``created_at``, human_eval/study.py).
CSV_TIME = "%Y-%m-%dT%H:%M:%SZ"


#: What every command that needs ratings says before any is stored.
NO_RATINGS = "no ratings yet: serve the study and collect some first"


def export_ratings(study: Study, path: str | Path, ratings: pd.DataFrame | None = None) -> Path:
    """Write the anonymised long-format ratings (.csv or .parquet by suffix); ``ratings``:
    :func:`anonymised_ratings` of ``study`` when the caller has them already.

    ``created_at`` and ``updated_at`` are times, not the database's epoch seconds: UTC
    timestamps in Parquet, :data:`CSV_TIME` text in CSV.
    """
    path = Path(path)
    ratings = (anonymised_ratings(study) if ratings is None else ratings).copy()
    for column in ("created_at", "updated_at"):
        times = pd.to_datetime(pd.to_numeric(ratings[column]), unit="s", utc=True)
        ratings[column] = times.dt.strftime(CSV_TIME) if path.suffix.lower() == ".csv" else times
    write_table(spreadsheet_safe(ratings) if path.suffix.lower() == ".csv" else ratings, path)
    return path


@dataclass
class Analysis:
    """Every table of the study's statistics."""

    agreement: pd.DataFrame
    alignment: pd.DataFrame
    ranking: pd.DataFrame  # one block of rows per metric (column "metric")
    kendall: dict[str, dict[str, float]]  # metric -> {"tau": ..., "p": ...}
    raters: pd.DataFrame
    labels: pd.DataFrame
    per_image: pd.DataFrame
    notes: list[str] = field(default_factory=list)


def analyse(
    study: Study, *, n_boot: int = 1000, seed: int = 0, include_gold: bool = False
) -> Analysis:
    """Agreement per criterion, metric-human alignment, model ranking and rater quality.

    Agreement and alignment use the sampled images only (gold items check
    raters, they are not part of the sample) unless ``include_gold``.
    """
    ratings = anonymised_ratings(study)
    if ratings.empty:
        raise InputError(study.folder, NO_RATINGS)
    manifest = study.manifest
    sample_ids = set(manifest.loc[~manifest["is_gold"].astype(bool), "image_id"])
    rated = ratings if include_gold else ratings[ratings["image_id"].isin(sample_ids)]
    categories = sorted(study.scale.values())
    yes_no = study.config["scale"] == "yesno"
    agreement = stats.agreement(
        rated,
        categories=categories,
        n_boot=n_boot,
        seed=seed,
        alpha_level=stats.NOMINAL if yes_no else stats.ORDINAL,  # a 1..5 scale is ordered
    )
    positive = 1 if yes_no else 4
    labels = stats.human_labels(rated, ACCURACY_CRITERION, positive=positive)
    compared = ranking_metrics()
    alignment = stats.metric_alignment(labels, manifest, compared, n_boot=n_boot, seed=seed)
    blocks, kendall = [], {}
    for metric in compared:
        if metric in manifest.columns:
            table, tau, p = stats.model_ranking(labels, manifest, metric=metric)
            blocks.append(table.assign(metric=metric))
            kendall[metric] = {"tau": tau, "p": p}
    ranking = pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame()
    raters = rater_quality(ratings, manifest)
    notes = []
    if positive != 1:
        notes.append("five-point scale: an answer of 4 or 5 counts as 'yes' for alignment")
    per_image = stats.per_image_agreement(rated)
    return Analysis(agreement, alignment, ranking, kendall, raters, labels, per_image, notes)


def _plot(study: Study, labels: pd.DataFrame) -> str:
    """The first ranking metric (its label from the metric table) vs the share of 'yes' per
    image, as a base64 PNG (empty when nothing to plot)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    plt.rcParams["font.family"] = font_family()
    plt.rcParams["text.parse_math"] = False  # labels are text: "$" is no math
    compared = ranking_metrics()
    if not compared:
        return ""
    metric = compared[0]
    if metric not in study.manifest.columns:
        return ""
    data = labels.merge(study.manifest[["image_id", "model", metric]], on="image_id")
    data = data[data[metric].notna()]
    if data.empty:
        return ""
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    rng = np.random.default_rng(0)
    for model, part in sorted(data.groupby("model")):
        jitter = rng.uniform(-0.02, 0.02, len(part))
        ax.scatter(part[metric], part["human_share"] + jitter, label=str(model), alpha=0.7, s=18)
    ax.set_xlabel(f"{METRICS.get(metric).label}, automatic")
    ax.set_ylabel(f"share of raters saying yes ({ACCURACY_CRITERION})")
    ax.set_ylim(-0.08, 1.08)
    # beside the axes, so the legend never covers a point
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    fig.tight_layout()
    buffer = io.BytesIO()
    with quiet_missing_glyphs():
        fig.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def _fmt(value: object) -> str:
    """A value as the page shows it: 3 decimals, "n/a" for a missing number, "none" for ""."""
    if isinstance(value, float):
        return "n/a" if math.isnan(value) else f"{value:.3f}"
    if value is None or value is pd.NA:
        return "n/a"
    return str(value) if str(value) else "none"


#: Headers of the agreement statistics, in :data:`stats.STATISTICS` order.
AGREEMENT_HEADERS = {
    "percent_agreement": "percent agreement",
    "pairwise_agreement": "pairwise agreement",
    "krippendorff_alpha": "Krippendorff's alpha",
    "fleiss_kappa": "Fleiss' kappa",
    "gwet_ac1": "Gwet's AC1",
}
#: Headers of the alignment statistics and why one can be undefined.
ALIGNMENT_HEADERS = {
    "roc_auc": ("ROC-AUC", "needs images people accept and reject, and spread in the score"),
    "point_biserial": ("point-biserial", "needs both labels and spread in the score"),
    "spearman": ("Spearman", "needs 3+ images and spread in score and share"),
}


def _estimate(value: object, lo: object, hi: object, reason: str) -> Cell:
    """A number with its interval, or "n/a" and why."""

    if not isinstance(value, (int, float)) or math.isnan(value):
        return Cell(f"n/a: {reason}", cls="na")
    bounds = (lo, hi)
    finite = all(isinstance(b, (int, float)) and math.isfinite(b) for b in bounds)
    ci = f"[{float(lo):.3f}, {float(hi):.3f}]" if finite else "(no interval)"  # type: ignore[arg-type]
    return Cell(f"{value:.3f}", ci=ci, cls="num")


def readable(name: str) -> str:
    """A metric's label from the metric table, or a criterion's name in words: what the
    page shows for the names the CSV files keep.

    >>> readable("ned"), readable("text_accuracy")
    ('NED similarity (1 = exact)', 'text accuracy')
    """

    label = metric_label(name)
    return label if label != name else name.replace("_", " ")


def _agreement_reason(stat: str, row: dict[str, object]) -> str:
    if not row["n_images"]:
        return "no image has two ratings"
    if stat == "fleiss_kappa" and not row["balanced"]:
        return "raters per image differ"
    if row["prevalence"] == 1.0:
        return "every answer is the same"
    return "undefined on these ratings"


def agreement_table(agreement: pd.DataFrame) -> Table:
    """One row per criterion: counts, every statistic with its interval, the notes."""

    columns = ["criterion", "images (2+ ratings)", "ratings", "prevalence"]
    columns += [*AGREEMENT_HEADERS.values(), "note"]
    rows = []
    for row in agreement.to_dict("records"):
        cells = [Cell(readable(str(row["criterion"])))]
        cells += [Cell(str(row["n_images"]), cls="num"), Cell(str(row["n_ratings"]), cls="num")]
        cells.append(Cell(_fmt(row["prevalence"]), cls="num"))
        for stat in AGREEMENT_HEADERS:
            cell = _estimate(
                row[stat], row[f"{stat}_lo"], row[f"{stat}_hi"], _agreement_reason(stat, row)
            )
            if stat == "krippendorff_alpha" and row.get("alpha_level"):
                cell = Cell(cell.text, ci=f"{cell.ci} {row['alpha_level']}".strip(), cls=cell.cls)
            cells.append(cell)
        cells.append(Cell(_fmt(row["note"])))
        rows.append(cells)
    return Table(columns, rows, row_headers=True, id="agreement")


def alignment_table(alignment: pd.DataFrame) -> Table:
    """Metric, model, counts and each statistic with its bootstrap interval."""

    counts = ("metric", "model", "n_images", "n_accepted", "n_rejected", "n_ties")
    plain = [c for c in counts if c in alignment.columns]
    shown = [s for s in ALIGNMENT_HEADERS if s in alignment.columns]
    headers = {
        "n_images": "images",
        "n_accepted": "accepted",
        "n_rejected": "rejected",
        "n_ties": "ties (no label)",
    }
    columns = [headers.get(c, c) for c in plain] + [ALIGNMENT_HEADERS[s][0] for s in shown]
    columns += ["note"] * ("note" in alignment.columns)
    rows = []
    for row in alignment.to_dict("records"):
        cells = [
            Cell(
                readable(str(row[c])) if c == "metric" else _fmt(row[c]),
                cls="num" * c.startswith("n_"),
            )
            for c in plain
        ]
        note = str(row.get("note") or "")
        for stat in shown:
            if note.startswith("too few"):  # a number from 2 images of a class says nothing
                needed = f"{stats.MIN_PER_CLASS} of each class needed"
                cells.append(Cell("too few", ci=needed, cls="na"))
                continue
            bounds = (row.get(f"{stat}_lo", math.nan), row.get(f"{stat}_hi", math.nan))
            cells.append(_estimate(row[stat], *bounds, ALIGNMENT_HEADERS[stat][1]))
        if "note" in alignment.columns:
            cells.append(Cell(note or "none"))
        rows.append(cells)
    return Table(columns, rows, id="alignment")


def kendall_sentence(kendall: dict[str, dict[str, float]]) -> str:
    """Kendall tau between people's and each metric's model ranking, as one full sentence part.

    >>> kendall_sentence({"ned": {"tau": 0.8, "p": 0.05}, "algorithm1": {"tau": math.nan,
    ...                   "p": math.nan}})
    'NED similarity (1 = exact) 0.800 (p = 0.050); Algorithm 1 distance n/a (needs two or \
more models with different ranks)'
    """
    parts = []
    for metric, figures in kendall.items():
        tau, p = figures.get("tau", math.nan), figures.get("p", math.nan)
        name = readable(metric)
        if math.isnan(tau):
            parts.append(f"{name} n/a (needs two or more models with different ranks)")
        elif math.isnan(p):
            parts.append(f"{name} {tau:.3f} (p n/a: too few models)")
        else:
            parts.append(f"{name} {tau:.3f} (p = {p:.3f})")
    return "; ".join(parts) if parts else "n/a (the manifest has no automatic score)"


@dataclass(frozen=True)
class StudyFacts:
    """The study in a few numbers and words (the page header)."""

    name: str
    n_images: int
    n_gold: int
    n_raters: int
    n_ratings: int
    raters_per_image: int
    criteria: str
    accuracy_question: str

    @classmethod
    def of(cls, study: Study, ratings: pd.DataFrame) -> StudyFacts:
        gold = study.manifest["is_gold"].astype(bool)
        return cls(
            name=study.folder.name,
            n_images=int((~gold).sum()),
            n_gold=int(gold.sum()),
            n_raters=int(ratings["rater_id"].nunique()),
            n_ratings=len(ratings),
            raters_per_image=int(study.config["raters_per_image"]),
            criteria=", ".join(map(readable, study.criterion_names)),
            accuracy_question=next(
                (c["question"] for c in study.criteria if c["name"] == ACCURACY_CRITERION), ""
            ),
        )


#: The page's headers for the ranking and rater tables (their CSV files keep the column names).
DISPLAY_HEADERS = {
    "rater_id": "rater",
    "n_images": "images",
    "n_items": "images rated",
    "n_gold_answers": "gold answers",
    "gold_accuracy": "gold accuracy",
    "median_seconds": "median seconds per image",
    "outlier": "flagged",
    "reason": "why flagged",
    "human_score": "share 'yes' (people)",
    "metric_score": "metric (mean)",
    "human_rank": "rank by people",
    "metric_rank": "rank by metric",
}


def _display(frame: pd.DataFrame) -> Table:
    """Every value through :func:`_fmt` (a flag as yes or no); numbers right-aligned; no
    index; headers from :data:`DISPLAY_HEADERS`."""

    def cell(_column: str, value: object) -> Cell:
        if isinstance(value, bool) or type(value).__name__ == "bool_":
            return Cell("yes" if value else "no")
        text = _fmt(value)
        return Cell(text, cls="num" if text[:1] and text[:1] in "-0123456789" else "")

    shown = frame.reset_index(drop=True)
    return table_from_frame(shown.rename(columns=DISPLAY_HEADERS), cell)


def render_page(analysis: Analysis, facts: StudyFacts, *, plot: str = "") -> str:
    """The report page (``bench/templates/human_report.html.j2``); ``plot`` is a base64 PNG."""
    return render(
        "human_report.html.j2",
        title=f"Human study: {facts.name}",
        facts=facts,
        level=95,
        agreement=agreement_table(analysis.agreement),
        alignment=alignment_table(analysis.alignment),
        plot=plot,
        ranking=_display(analysis.ranking),
        kendall=kendall_sentence(analysis.kendall),
        raters=_display(analysis.raters),
        notes=analysis.notes,
    )


def write_report(study: Study, out: str | Path, *, n_boot: int = 1000, seed: int = 0) -> Path:
    """Write ``out/index.html`` (plus the tables as CSV) and return the HTML path."""
    out = Path(out)
    analysis = analyse(study, n_boot=n_boot, seed=seed)  # no ratings: refused, no folder made
    out.mkdir(parents=True, exist_ok=True)
    save_tables(analysis, out)
    facts = StudyFacts.of(study, anonymised_ratings(study))
    page = render_page(analysis, facts, plot=_plot(study, analysis.labels))
    path = out / "index.html"
    with atomic_open(path, "w", encoding="utf-8") as handle:
        handle.write(page)
    return path


def save_tables(analysis: Analysis, out: Path) -> None:
    """The analysis as CSV files plus a small JSON summary."""
    write_table(spreadsheet_safe(analysis.agreement), out / "agreement.csv")
    write_table(spreadsheet_safe(analysis.alignment), out / "alignment.csv")
    write_table(spreadsheet_safe(analysis.ranking), out / "ranking.csv")
    write_table(spreadsheet_safe(analysis.raters), out / "raters.csv")
    write_table(spreadsheet_safe(analysis.per_image), out / "per_image_agreement.csv")
    write_json(out / "summary.json", {"kendall": analysis.kendall, "notes": analysis.notes})
