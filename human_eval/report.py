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

import pandas as pd

from bench.errors import InputError
from bench.io import atomic_open, write_table
from human_eval import stats
from human_eval.store import Store
from human_eval.study import ACCURACY_CRITERION, Study

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


def anonymised_ratings(study: Study) -> pd.DataFrame:
    """Long format: image_id, rater_id (R001...), criterion, value, seconds, times, + manifest columns."""
    if not study.database.exists():
        ratings = pd.DataFrame(
            columns=[
                "participant_id",
                "image_id",
                "criterion",
                "value",
                "seconds",
                "created_at",
                "updated_at",
                "revisions",
            ]
        )
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
    front = [
        "image_id",
        "rater_id",
        "criterion",
        "value",
        "seconds",
        "created_at",
        "updated_at",
        "revisions",
    ]
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


TEMPLATE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Human study: {{ name }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 70rem; color: #222; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.5rem 0 1.5rem; display: block; overflow-x: auto; }
th, td { border: 1px solid #ccc; padding: 0.2rem 0.5rem; text-align: right; }
th { background: #f3f3f3; } td:first-child { text-align: left; }
.note { color: #555; font-size: 0.9rem; }
</style></head><body>
<h1>Human study: {{ name }}</h1>
<p>{{ n_images }} sampled images ({{ n_gold }} gold items on top), {{ n_raters }} raters,
{{ n_ratings }} answers; target {{ k }} raters per image. Criteria: {{ criteria }}.</p>
<h2>Agreement between raters</h2>
<p class="note">Per-image agreement = share of an image's raters who agree with its majority answer,
averaged over images with at least two ratings (TextInVision's definition); pairwise agreement =
share of agreeing rater pairs. Krippendorff's alpha (nominal), Fleiss' kappa (balanced designs only)
and Gwet's AC1 correct for chance; with mostly-"yes" answers percent agreement can be high while
kappa is low. Brackets: {{ level }}% bootstrap intervals over images.</p>
{{ agreement }}
<h2>Automatic score vs people</h2>
<p class="note">Human label per image = majority answer to "{{ accuracy }}" (ties left out).
ROC-AUC: chance that an image people accept scores better than one they reject; point-biserial
with the label, Spearman with the share of "yes". Lower-is-better scores are negated first.</p>
{{ alignment }}
{% if plot %}<img alt="NED vs human share of yes" src="data:image/png;base64,{{ plot }}">{% endif %}
<h2>Model ranking</h2>
<p class="note">Per model, means weighted by 1 / inclusion probability; rank 1 = best.
Kendall tau between the ranking by people and by each metric:
{% for metric, k in kendall.items() %}{{ metric }} {{ fmt(k.tau) }} (p = {{ fmt(k.p) }}){% if not loop.last %}; {% endif %}{% endfor %}.</p>
{{ ranking }}
<h2>Raters</h2>
<p class="note">Outlier: gold accuracy below 0.6 (with at least 3 gold answers), or a median time per
image below a third of the typical rater's.</p>
{{ raters }}
{% for note in notes %}<p class="note">{{ note }}</p>{% endfor %}
</body></html>
"""


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.3f}"
    return str(value)


def _agreement_table(agreement: pd.DataFrame) -> pd.DataFrame:
    shown = agreement[["criterion", "n_images", "n_ratings", "prevalence"]].copy()
    for stat in stats.STATISTICS:
        shown[stat] = [
            "" if math.isnan(v) else f"{v:.3f} [{_fmt(lo)}, {_fmt(hi)}]"
            for v, lo, hi in zip(agreement[stat], agreement[f"{stat}_lo"], agreement[f"{stat}_hi"])
        ]
    shown["note"] = agreement["note"]
    return shown


def write_report(study: Study, out: str | Path, *, n_boot: int = 1000, seed: int = 0) -> Path:
    """Write ``out/index.html`` (plus the tables as CSV) and return the HTML path."""
    import jinja2

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    analysis = analyse(study, n_boot=n_boot, seed=seed)
    save_tables(analysis, out)
    ratings = anonymised_ratings(study)

    def html(frame: pd.DataFrame) -> str:
        return frame.to_html(
            index=False, formatters={c: _fmt for c in frame.columns}, border=0, escape=True
        )

    page = jinja2.Template(TEMPLATE, autoescape=False).render(
        name=study.folder.name,
        n_images=int((~study.manifest["is_gold"].astype(bool)).sum()),
        n_gold=int(study.manifest["is_gold"].astype(bool).sum()),
        n_raters=ratings["rater_id"].nunique(),
        n_ratings=len(ratings),
        k=study.config["raters_per_image"],
        criteria=", ".join(study.criterion_names),
        level=95,
        accuracy=next(
            (c["question"] for c in study.criteria if c["name"] == ACCURACY_CRITERION), ""
        ),
        agreement=html(_agreement_table(analysis.agreement)),
        alignment=html(analysis.alignment),
        plot=_plot(study, analysis.labels),
        ranking=html(analysis.ranking),
        kendall=analysis.kendall,
        fmt=_fmt,
        raters=html(analysis.raters),
        notes=analysis.notes,
    )
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
