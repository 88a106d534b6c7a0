"""Export ratings and write the study report (agreement, alignment, rater quality).

Everything is read from the study folder. Rater ids in exports and reports are
anonymised as ``R001``, ``R002``, ... in order of sign-up; resume codes and
logins never leave the database.
"""

from __future__ import annotations

import base64
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from bench.errors import InputError
from bench.io import atomic_open, write_table
from human_eval import stats
from human_eval.store import Store
from human_eval.study import ACCURACY_CRITERION, Study

if TYPE_CHECKING:
    from bench.templates import Table

#: Manifest columns joined onto exported ratings (the model is revealed only here).
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
    "ned",
    "algorithm1",
)

#: Automatic scores whose model ranking is compared with people's.
RANKING_METRICS = ("ned", "algorithm1")


def open_store(study: Study) -> Store:
    return Store(
        study.database,
        raters_per_image=int(study.config["raters_per_image"]),
        claim_ttl=float(study.config.get("claim_ttl_seconds", 7200)),
    )


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
    keep = ["image_id"] + [c for c in EXPORT_MANIFEST_COLUMNS if c in study.manifest.columns]
    out = out.merge(study.manifest[keep], on="image_id", how="left")
    front = ["image_id", "rater_id", *_RATING_COLUMNS]
    return out[front + [c for c in out.columns if c not in front]]


def export_ratings(study: Study, path: str | Path) -> Path:
    """Write the anonymised long-format ratings (.csv or .parquet by suffix)."""
    path = Path(path)
    write_table(anonymised_ratings(study), path)
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
        raise InputError(study.folder, "no ratings yet: serve the study and collect some first")
    manifest = study.manifest
    sample_ids = set(manifest.loc[~manifest["is_gold"].astype(bool), "image_id"])
    rated = ratings if include_gold else ratings[ratings["image_id"].isin(sample_ids)]
    categories = sorted(study.scale.values())
    agreement = stats.agreement(rated, categories=categories, n_boot=n_boot, seed=seed)
    positive = 1 if study.config["scale"] == "yesno" else 4
    labels = stats.human_labels(rated, ACCURACY_CRITERION, positive=positive)
    alignment = stats.metric_alignment(labels, manifest)
    blocks, kendall = [], {}
    for metric in RANKING_METRICS:
        if metric in manifest.columns:
            table, tau, p = stats.model_ranking(labels, manifest, metric=metric)
            blocks.append(table.assign(metric=metric))
            kendall[metric] = {"tau": tau, "p": p}
    ranking = pd.concat(blocks, ignore_index=True) if blocks else pd.DataFrame()
    raters = stats.rater_quality(ratings, manifest)
    notes = []
    if positive != 1:
        notes.append("five-point scale: an answer of 4 or 5 counts as 'yes' for alignment")
    per_image = stats.per_image_agreement(rated)
    return Analysis(agreement, alignment, ranking, kendall, raters, labels, per_image, notes)


def _plot(study: Study, labels: pd.DataFrame) -> str:
    """Metric vs human share of 'yes' per image, as a base64 PNG (empty when nothing to plot)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    data = labels.merge(study.manifest[["image_id", "model", "ned"]], on="image_id")
    data = data[data["ned"].notna()]
    if data.empty:
        return ""
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    rng = np.random.default_rng(0)
    for model, part in sorted(data.groupby("model")):
        jitter = rng.uniform(-0.02, 0.02, len(part))
        ax.scatter(part["ned"], part["human_share"] + jitter, label=str(model), alpha=0.7, s=18)
    ax.set_xlabel("NED (automatic, 1 = text exactly right)")
    ax.set_ylabel(f"share of raters saying yes ({ACCURACY_CRITERION})")
    ax.set_ylim(-0.08, 1.08)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def _agreement_table(agreement: pd.DataFrame) -> pd.DataFrame:
    shown = agreement[["criterion", "n_images", "n_ratings", "prevalence"]].copy()
    for stat in stats.STATISTICS:
        shown[stat] = [
            "" if math.isnan(v) else f"{v:.3f} [{_fmt(lo)}, {_fmt(hi)}]"
            for v, lo, hi in zip(
                agreement[stat], agreement[f"{stat}_lo"], agreement[f"{stat}_hi"], strict=True
            )
        ]
    shown["note"] = agreement["note"]
    return shown


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
            criteria=", ".join(study.criterion_names),
            accuracy_question=next(
                (c["question"] for c in study.criteria if c["name"] == ACCURACY_CRITERION), ""
            ),
        )


def _display(frame: pd.DataFrame) -> Table:
    """Every value through :func:`_fmt`; numbers right-aligned; no index."""
    from bench.templates import Cell, table_from_frame

    def cell(_column: str, value: object) -> Cell:
        text = _fmt(value)
        return Cell(text, cls="num" if text[:1] and text[:1] in "-0123456789" else "")

    return table_from_frame(frame.reset_index(drop=True), cell)


def render_page(analysis: Analysis, facts: StudyFacts, *, plot: str = "") -> str:
    """The report page (``bench/templates/human_report.html.j2``); ``plot`` is a base64 PNG."""
    from bench import templates

    return templates.render(
        "human_report.html.j2",
        title=f"Human study: {facts.name}",
        facts=facts,
        level=95,
        agreement=_display(_agreement_table(analysis.agreement)),
        alignment=_display(analysis.alignment),
        plot=plot,
        ranking=_display(analysis.ranking),
        kendall=analysis.kendall,
        fmt=_fmt,
        raters=_display(analysis.raters),
        notes=analysis.notes,
    )


def write_report(study: Study, out: str | Path, *, n_boot: int = 1000, seed: int = 0) -> Path:
    """Write ``out/index.html`` (plus the tables as CSV) and return the HTML path."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    analysis = analyse(study, n_boot=n_boot, seed=seed)
    save_tables(analysis, out)
    facts = StudyFacts.of(study, anonymised_ratings(study))
    page = render_page(analysis, facts, plot=_plot(study, analysis.labels))
    path = out / "index.html"
    with atomic_open(path, "w", encoding="utf-8") as handle:
        handle.write(page)
    return path


def save_tables(analysis: Analysis, out: Path) -> None:
    """The analysis as CSV files plus a small JSON summary."""
    write_table(analysis.agreement, out / "agreement.csv")
    write_table(analysis.alignment, out / "alignment.csv")
    write_table(analysis.ranking, out / "ranking.csv")
    write_table(analysis.raters, out / "raters.csv")
    write_table(analysis.per_image, out / "per_image_agreement.csv")
    with atomic_open(out / "summary.json", "w", encoding="utf-8") as handle:
        json.dump(
            {"kendall": analysis.kendall, "notes": analysis.notes}, handle, indent=2, default=str
        )
