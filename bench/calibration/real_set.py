"""The calibration card's real-image part: outputs of real text-to-image models, each
transcribed by a person, and how a reader's readings of them compare.

:func:`load_real_set` checks and loads a set's manifest (the shipped one:
:func:`shipped_real_set`, ``tests/data/real_t2i``; its ``tune``/``score`` parts:
:func:`real_parts`); :func:`real_rows` scores a reader's readings against the person's
and the intended text; :func:`real_summary` gives NED and word recall against the
person, the benchmark score's error, the rank correlation of per-model means and each
model pair's verdict (kept, lost, reversed, invented: :func:`pair_verdict`). Reading
the images is the card's (:func:`glyphbench.calibration.calibrate.read_real_set`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.calibration.long_text import word_counts
from glyphbench.core.bootstrap import (
    mean_interval,
    percentile_interval,
    resampled_means,
    seeded_rng,
)
from glyphbench.core.errors import InputError
from glyphbench.core.paths import Contained
from glyphbench.scoring import score_pairs
from glyphbench.scoring.table import METRICS

if TYPE_CHECKING:
    import pandas as pd


#: Columns a real-image manifest must have.
MANIFEST_COLUMNS = (
    "file",
    "model",
    "source_repo",
    "path_in_repo",
    "commit",
    "licence",
    "intended_text",
    "human_reading",
)

#: Bootstrap resamples of the real-image intervals.
REAL_BOOTSTRAP = 2000


def shipped_real_set() -> Path | None:
    """The manifest of the real-image set shipped in the source tree, if present."""
    path = Path(__file__).resolve().parents[2] / "tests" / "data" / "real_t2i" / "manifest.csv"
    return path if path.is_file() else None


#: Parts of a real-image set (:func:`real_parts`): images a reader may be tuned on, images
#: only scored.
REAL_PARTS = ("tune", "score")


def real_parts(files: Sequence[str], models: Sequence[str]) -> list[str]:
    """The part of each image: ``tune`` (a reader's settings may be chosen on it) or ``score``.

    Within each model, images are ordered by the SHA-256 of their file's base name and
    dealt alternately, the first to ``score``: each model with two images or more is on
    both sides, a model with one image is scored only, and adding an image to the set
    moves no other model's images. A glyphbench convention (no source prescribes one).

    >>> real_parts(["a/x.jpg", "a/y.jpg", "a/z.jpg"], ["m", "m", "n"])
    ['score', 'tune', 'score']
    """
    keys = [hashlib.sha256(Path(name).name.encode("utf-8")).hexdigest() for name in files]
    parts = [""] * len(keys)
    for model in dict.fromkeys(models):
        members = sorted((keys[i], i) for i, m in enumerate(models) if m == model)
        for turn, (_, i) in enumerate(members):
            parts[i] = REAL_PARTS[(turn + 1) % 2]
    return parts


def load_real_set(
    path: str | Path, limit: int | None = None, part: str | None = None
) -> pd.DataFrame:
    """Rows of a real-image manifest (a CSV, or a folder holding ``manifest.csv``).

    Checks every row (an :class:`~glyphbench.core.errors.InputError` names the file and line):
    the columns of :data:`MANIFEST_COLUMNS`, a non-empty ``file``, ``model``,
    ``licence`` and ``human_reading``, and an image file that exists (``file`` is
    relative to the manifest's folder). Adds ``path`` (the absolute image path) and
    ``part`` (:func:`real_parts`); ``part`` (``tune`` or ``score``) keeps that part only.
    ``limit`` keeps the first rows of each model in turn (round-robin over models
    in manifest order), so a small subset still holds several models.
    """
    import pandas as pd

    manifest = Path(path)
    if manifest.is_dir():
        manifest = manifest / "manifest.csv"
    if not manifest.is_file():
        raise InputError(manifest, "no such real-image manifest")
    frame = pd.read_csv(manifest, dtype=str, keep_default_na=False)
    missing = [column for column in MANIFEST_COLUMNS if column not in frame.columns]
    if missing:
        raise InputError(manifest, f"missing column(s) {', '.join(missing)}", line=1)
    paths = []
    contained = Contained(manifest.parent, source=manifest, column="file")
    for number, row in enumerate(frame.itertuples(index=False), start=2):
        for column in ("file", "model", "licence", "human_reading"):
            if not str(getattr(row, column)).strip():
                raise InputError(manifest, f"empty {column!r}", line=number)
        image = contained(str(row.file), f"line {number}")  # stays in the manifest's folder
        if not image.is_file():
            raise InputError(manifest, f"image {row.file!r} not found", line=number)
        paths.append(str(image.resolve()))
    frame["path"] = paths
    frame["part"] = real_parts(frame["file"].tolist(), frame["model"].tolist())
    if part is not None:
        if part not in REAL_PARTS:
            raise ValueError(f"part must be one of {', '.join(REAL_PARTS)}, not {part!r}")
        frame = frame[frame["part"] == part]
    if limit is not None and limit < len(frame):
        order = frame.groupby("model", sort=False).cumcount()
        frame = frame.assign(_turn=order).sort_values(["_turn"], kind="stable").head(limit)
        frame = frame.drop(columns="_turn").sort_index()
    return frame.reset_index(drop=True)


def real_rows(frame: pd.DataFrame, readings: Sequence[str]) -> pd.DataFrame:
    """Per image: the reader against the person's reading, and both as benchmark scores.

    ``ned_vs_human`` and ``word_recall_vs_human``: the reading scored against the
    person's reading (glyphbench NED and word recall); ``words_per_word``: words read
    per word the person read. Where the intended text is known, ``score_reader`` and
    ``score_human`` are glyphbench NED against it computed from the reader's and from
    the person's reading, and ``score_error`` their absolute difference (NaN elsewhere).
    """
    import numpy as np

    columns = ["file", "model", "part", "intended_text", "human_reading"]
    rows = frame[[c for c in columns if c in frame.columns]].copy()
    rows["reading"] = list(readings)
    human, read = rows["human_reading"].tolist(), rows["reading"].tolist()
    versus_human = score_pairs(human, read)
    rows["ned_vs_human"] = versus_human["ned"].to_numpy()
    rows["word_recall_vs_human"] = versus_human["word_recall"].to_numpy()
    human_words, read_words = word_counts(human, read)
    rows["human_words"], rows["read_words"] = human_words, read_words
    known = rows["intended_text"].str.strip() != ""
    intended = rows["intended_text"].tolist()
    by_reader = score_pairs(intended, read)["ned"].to_numpy()
    by_human = score_pairs(intended, human)["ned"].to_numpy()
    rows["score_reader"] = np.where(known, by_reader, np.nan)
    rows["score_human"] = np.where(known, by_human, np.nan)
    rows["score_error"] = (rows["score_reader"] - rows["score_human"]).abs()
    return rows


def _interval(values: Any, rng: Any) -> list[float]:
    lo, hi = mean_interval(values, n_boot=REAL_BOOTSTRAP, rng=rng)
    return [lo, hi]


def _difference(a: Any, b: Any, rng: Any) -> tuple[float, list[float]]:
    """Mean of ``a`` minus mean of ``b`` (two models' images, resampled independently)."""
    boot = (
        resampled_means(a, n_boot=REAL_BOOTSTRAP, rng=rng)[:, 0]
        - resampled_means(b, n_boot=REAL_BOOTSTRAP, rng=rng)[:, 0]
    )
    lo, hi = percentile_interval(boot)
    return float(a.mean() - b.mean()), [float(lo), float(hi)]


def _excludes_zero(interval: list[float]) -> int:
    """+1 / -1 when the interval lies above / below zero, 0 when it holds zero."""
    return 1 if interval[0] > 0 else -1 if interval[1] < 0 else 0


#: How a reader treats a difference between two models (see :func:`pair_verdict`).
VERDICTS = ("kept", "lost", "reversed", "invented", "none")


def pair_verdict(human: list[float], reader: list[float]) -> str:
    """Compare the 95% intervals of one model difference under the person and the reader.

    ``kept``: the person's interval excludes zero and the reader's excludes it on the
    same side; ``lost``: the reader's holds zero; ``reversed``: the reader's excludes it
    on the other side; ``invented``: the person's holds zero but the reader's does not;
    ``none``: both hold zero.

    >>> pair_verdict([0.1, 0.3], [0.05, 0.2]), pair_verdict([0.1, 0.3], [-0.1, 0.2])
    ('kept', 'lost')
    >>> pair_verdict([-0.1, 0.1], [0.05, 0.2]), pair_verdict([-0.1, 0.1], [-0.2, 0.3])
    ('invented', 'none')
    """
    person, read = _excludes_zero(human), _excludes_zero(reader)
    if person == 0:
        return "none" if read == 0 else "invented"
    return "kept" if read == person else "lost" if read == 0 else "reversed"


def model_pairs(scored: pd.DataFrame, seed: int = 0) -> list[dict[str, Any]]:
    """Every pair of models with intended text: their score difference by person and reader.

    Each model's images are resampled on their own (the models drew different
    prompts, so nothing pairs them); ``verdict`` is :func:`pair_verdict` of the two
    95% intervals.
    """
    out = []
    groups = {str(k): part for k, part in scored.groupby("model", sort=True)}
    for a, b in combinations(sorted(groups), 2):
        rng = seeded_rng(seed, ("real-pair", a, b))
        human = _difference(
            groups[a]["score_human"].to_numpy(), groups[b]["score_human"].to_numpy(), rng
        )
        reader = _difference(
            groups[a]["score_reader"].to_numpy(), groups[b]["score_reader"].to_numpy(), rng
        )
        out.append(
            {
                "models": [a, b],
                "images": [len(groups[a]), len(groups[b])],
                "human": {"difference": human[0], "interval": human[1]},
                "reader": {"difference": reader[0], "interval": reader[1]},
                "verdict": pair_verdict(human[1], reader[1]),
            }
        )
    return out


def real_summary(rows: pd.DataFrame, seed: int = 0) -> dict[str, Any]:
    """The real-image figures of a card (see :func:`real_rows` for the per-image columns).

    ``ned_vs_human`` / ``word_recall_vs_human``: means over all images with a
    bootstrap interval; ``words_per_word``: pooled words read / words the person read;
    on the images whose intended text is known: ``score_mae`` (mean absolute error of
    the benchmark score, with interval), ``score_bias`` (mean reader minus person),
    ``spearman`` (rank correlation of the per-model mean scores, NaN below 3 models),
    ``pairs`` (:func:`model_pairs`) and ``pair_verdicts`` (how many pairs got each
    verdict of :func:`pair_verdict`).
    """
    import pandas as pd
    from scipy.stats import spearmanr

    rng = seeded_rng(seed, ("real",))
    scored = rows[rows["score_reader"].notna()]
    # both scores are NED against the intended text: the table's NED aggregate per model
    means = pd.DataFrame(
        {
            column: METRICS.aggregate_groups(
                scored[["model", column]].rename(columns={column: "ned"}), "model", "ned", sort=True
            )
            for column in ("score_reader", "score_human")
        }
    )
    spearman = math.nan
    if (
        len(means) >= 3
        and means["score_human"].nunique() > 1
        and means["score_reader"].nunique() > 1
    ):
        spearman = float(spearmanr(means["score_reader"], means["score_human"]).statistic)
    pairs = model_pairs(scored, seed)
    human_words = int(rows["human_words"].sum())
    return {
        "images": len(rows),
        "models": int(rows["model"].nunique()),
        "ned_vs_human": METRICS.aggregate_column(rows, "ned", "ned_vs_human"),
        "ned_vs_human_interval": _interval(rows["ned_vs_human"].to_numpy(), rng),
        "word_recall_vs_human": METRICS.aggregate_column(
            rows, "word_recall", "word_recall_vs_human"
        ),
        "word_recall_vs_human_interval": _interval(rows["word_recall_vs_human"].to_numpy(), rng),
        "words_per_word": float(rows["read_words"].sum() / human_words)
        if human_words
        else math.nan,
        "scored_images": len(scored),
        "scored_models": len(means),
        "score_mae": float(scored["score_error"].mean()) if len(scored) else math.nan,
        "score_mae_interval": _interval(scored["score_error"].to_numpy(), rng),
        "score_bias": float((scored["score_reader"] - scored["score_human"]).mean())
        if len(scored)
        else math.nan,
        "model_means": {
            str(model): {"reader": float(r.score_reader), "human": float(r.score_human)}
            for model, r in means.iterrows()
        },
        "spearman": spearman,
        "pairs": pairs,
        "pair_verdicts": {v: sum(p["verdict"] == v for p in pairs) for v in VERDICTS},
    }
