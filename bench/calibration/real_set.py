"""The calibration card's real-image part: outputs of real text-to-image models, each
transcribed by a person, and how a reader's readings of them compare.

:func:`load_real_set` checks and loads a set's manifest (the shipped one:
:func:`shipped_real_set`, ``tests/data/real_t2i``; its ``tune``/``held-out`` parts, by
repository: :func:`repository_part`); :func:`real_rows` scores a reader's readings against
the person's and the intended text; :func:`real_summary` gives NED and word recall against the
person, the benchmark score's error, the rank correlation of per-model means and each
model pair's verdict (kept, lost, reversed, invented: :func:`pair_verdict`). Reading
the images is the card's (:func:`glyphbench.calibration.calibrate.read_real_set`).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.calibration.long_text import word_counts
from glyphbench.core.bootstrap import (
    MIN_UNITS,
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


#: Parts of a real-image set (:func:`repository_part`): images a reader's settings may be
#: chosen on, and images held out from every choice (only reported).
REAL_PARTS = ("tune", "held-out")

#: The repositories whose images chose the default reader before the set was split by
#: repository: they are ``tune`` whatever their hash says.
TUNE_REPOSITORIES = frozenset(
    {
        "microsoft/unilm",
        "AIGText/GlyphControl-release",
        "tyxsspa/AnyText",
        "tyxsspa/AnyText2",
        "AIGText/Glyph-ByT5",
        "QwenLM/Qwen-Image",
        "black-forest-labs/flux",
        "black-forest-labs/flux2",
    }
)

#: Repositories kept for a check of the readers outside the project: never in the set.
RESERVED_REPOSITORIES = frozenset({"liranmarkin/crewai-hack", "comfyanonymous/ComfyUI_examples"})


def repository_part(repository: str) -> str:
    """The part of every image of ``repository`` (its ``owner/name``): ``tune`` or ``held-out``.

    The repositories of :data:`TUNE_REPOSITORIES` are ``tune``. Any other goes by its name
    alone: ``held-out`` when the first byte of the SHA-256 of its lower-cased ``owner/name``
    is below 128, else ``tune``; so about half of the new repositories are held out, the
    part is fixed before any reader reads the images, and images of one repository (one
    model's gallery, one evaluation's outputs) never sit on both sides. A glyphbench
    convention (no source prescribes one).

    >>> [repository_part(r) for r in ["microsoft/unilm", "someone/gallery", "example/gallery"]]
    ['tune', 'held-out', 'tune']
    """
    name = repository.strip()
    if name in TUNE_REPOSITORIES:
        return "tune"
    first = hashlib.sha256(name.lower().encode("utf-8")).digest()[0]
    return "held-out" if first < 128 else "tune"


#: Model lines named by their maker, by the start of a model's name (lower case; first match
#: wins): variants, sizes and fine-tunes of one line are one family.
FAMILY_PREFIXES = (
    ("flux", "FLUX"),
    ("gpt-image", "GPT-image"),
    ("gpt-4o", "GPT-image"),
    ("gemini", "Gemini/Imagen"),
    ("nano banana", "Gemini/Imagen"),
    ("imagen", "Gemini/Imagen"),
    ("hidream", "HiDream"),
    ("infinity", "Infinity"),
    ("kandinsky", "Kandinsky"),
    ("krea", "Krea"),
    ("z-image", "Z-Image"),
    ("stable diffusion 3", "Stable Diffusion 3"),
    ("sd3", "Stable Diffusion 3"),
    ("lumina", "Lumina"),
    ("sana", "Sana"),
    ("stable diffusion xl", "SDXL"),
    ("chroma", "Chroma"),
    ("lex-", "LeX"),
    ("textdiffuser", "TextDiffuser"),
    ("anytext", "AnyText"),
    ("glyph-byt5", "Glyph-ByT5"),
)


def model_family(model: str) -> str:
    """A model's family: its maker's model line (:data:`FAMILY_PREFIXES`), else its name
    without a size, a version suffix or a bracketed variant.

    A size is a parameter count after a space or ``-`` (``Janus-Pro-7B``, ``Ovis-Image 7B``);
    a suffix is a version after a space, ``.`` or ``-`` (``Imagen 4``, ``Kandinsky 5.0``);
    a name whose digits belong to it stays whole (``Glyph-ByT5``). A manifest's ``family``
    column, where given, overrides it. A glyphbench convention (no source prescribes one).

    >>> [model_family(m) for m in ["FLUX.1 [schnell]", "TextDiffuser-2", "AnyText2", "SD 3.5"]]
    ['FLUX', 'TextDiffuser', 'AnyText', 'SD']
    >>> model_family("Nano Banana Pro (Gemini 3 Pro Image)"), model_family("Sana 1600M")
    ('Gemini/Imagen', 'Sana')
    >>> model_family("Janus-Pro-7B"), model_family("Janus-Pro"), model_family("Ovis-Image 7B")
    ('Janus-Pro', 'Janus-Pro', 'Ovis-Image')
    """
    lowered = model.strip().lower()
    for prefix, family in FAMILY_PREFIXES:
        if lowered.startswith(prefix):
            return family
    name = re.split(r"\s[\[(]", model.strip(), maxsplit=1)[0]
    name = re.sub(r"[\s\-]\d+(?:\.\d+)?[BM]$", "", name) or name  # a size is no model line
    return re.sub(r"[\s.\-]v?\d+(?:\.\d+)*$", "", name) or name


def load_real_set(
    path: str | Path,
    limit: int | None = None,
    part: str | None = None,
    collections: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rows of a real-image manifest (a CSV, or a folder holding ``manifest.csv``).

    Checks every row (an :class:`~glyphbench.core.errors.InputError` names the file and line):
    the columns of :data:`MANIFEST_COLUMNS`, a non-empty ``file``, ``model``,
    ``source_repo``, ``licence`` and ``human_reading``, no repository of
    :data:`RESERVED_REPOSITORIES`, and an image file that exists (``file`` is relative to
    the manifest's folder) and that no earlier row lists under another name. Adds ``path``
    (the absolute image path), ``part`` (:func:`repository_part` of ``source_repo``) and
    ``family`` (:func:`model_family`, unless the manifest has one); ``part`` (``tune`` or
    ``held-out``) keeps that part only,
    and ``collections`` the rows of those values of the manifest's ``collection`` column
    (when the row was added, ``tests/data/real_t2i/SOURCES.md``) only.
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
    frame["path"] = _image_paths(frame, manifest)
    frame["part"] = frame["source_repo"].map(repository_part)
    frame["family"] = _families(frame)
    if collections is not None:  # checked on the whole manifest: a typo is not an empty part
        wanted = _known_collections(frame, manifest, collections)
        frame = frame[frame["collection"].isin(wanted)]
    if part is not None:
        if part not in REAL_PARTS:
            raise ValueError(f"part must be one of {', '.join(REAL_PARTS)}, not {part!r}")
        frame = frame[frame["part"] == part]
    if (part is not None or collections is not None) and frame.empty:
        asked = [f"part {part}"] if part is not None else []
        asked += [f"collection {', '.join(map(str, collections))}"] if collections else []
        raise InputError(manifest, f"no image is in {' and '.join(asked)}: nothing to measure")
    if limit is not None and limit < len(frame):
        order = frame.groupby("model", sort=False).cumcount()
        frame = frame.assign(_turn=order).sort_values(["_turn"], kind="stable").head(limit)
        frame = frame.drop(columns="_turn").sort_index()
    return frame.reset_index(drop=True)


def _known_collections(frame: pd.DataFrame, manifest: Path, asked: Sequence[str]) -> list[str]:
    """``asked`` as the manifest's ``collection`` values; an unknown one is an error that
    lists the known ones (a typo must not measure an empty set)."""
    if "collection" not in frame.columns:
        raise InputError(manifest, "no 'collection' column to select collections by", line=1)
    known = sorted(set(frame["collection"].astype(str).str.strip()) - {""}, key=_natural_key)
    unknown = [str(c) for c in asked if str(c) not in known]
    if unknown:
        raise InputError(
            manifest,
            f"no collection {', '.join(unknown)} in it; its collections: {', '.join(known)}",
        )
    return [str(c) for c in asked]


def _image_paths(frame: pd.DataFrame, manifest: Path) -> list[str]:
    """Each row's absolute image path, after checking the row (see :func:`load_real_set`)."""
    for number, repository in enumerate(frame["source_repo"].astype(str), start=2):
        if repository.strip() in RESERVED_REPOSITORIES:  # said first: the rows must go
            raise InputError(
                manifest,
                f"{repository} is kept for a check outside the project; remove its rows",
                line=number,
            )
    paths = []
    contained = Contained(manifest.parent, source=manifest, column="file")
    first_line: dict[str, int] = {}  # an image's SHA-256 -> the line that lists it first
    for number, row in enumerate(frame.itertuples(index=False), start=2):
        for column in ("file", "model", "source_repo", "licence", "human_reading"):
            if not str(getattr(row, column)).strip():
                raise InputError(manifest, f"empty {column!r}", line=number)
        image = contained(str(row.file), f"line {number}")  # stays in the manifest's folder
        if not image.is_file():
            raise InputError(manifest, f"image {row.file!r} not found", line=number)
        # one picture listed twice would count its error twice in every mean and choice
        digest = hashlib.sha256(image.read_bytes()).hexdigest()
        if digest in first_line:
            raise InputError(
                manifest,
                f"image {row.file!r} is byte for byte the image of line "
                f"{first_line[digest]}; list each picture once",
                line=number,
            )
        first_line[digest] = number
        paths.append(str(image.resolve()))
    return paths


def _families(frame: pd.DataFrame) -> list[str]:
    """Each row's model family: the manifest's ``family`` where given, else :func:`model_family`."""
    given = frame["family"].tolist() if "family" in frame.columns else [""] * len(frame)
    return [
        str(family).strip() or model_family(str(model))
        for family, model in zip(given, frame["model"], strict=True)
    ]


def real_rows(frame: pd.DataFrame, readings: Sequence[str]) -> pd.DataFrame:
    """Per image: the reader against the person's reading, and both as benchmark scores.

    ``ned_vs_human`` and ``word_recall_vs_human``: the reading scored against the
    person's reading (glyphbench NED and word recall); ``words_per_word``: words read
    per word the person read. Where the intended text is known, ``score_reader`` and
    ``score_human`` are glyphbench NED against it computed from the reader's and from
    the person's reading, and ``score_error`` their absolute difference (NaN elsewhere).
    """
    import numpy as np

    columns = ["file", "model", "family", "setting", "collection", "source_repo", "part"]
    columns += ["intended_text", "human_reading"]
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
    95% intervals. Only models with at least :data:`~glyphbench.core.bootstrap.MIN_UNITS`
    such images take part (below it an interval is the range of the data).
    """

    out = []
    groups = {
        str(k): part for k, part in scored.groupby("model", sort=True) if len(part) >= MIN_UNITS
    }
    for a, b in combinations(sorted(groups), 2):
        # the same resamples for person and reader, so a reader that reads like the
        # person gets the person's interval, not a second draw that may cross zero
        key = ("real-pair", a, b)
        human = _difference(
            groups[a]["score_human"].to_numpy(),
            groups[b]["score_human"].to_numpy(),
            seeded_rng(seed, key),
        )
        reader = _difference(
            groups[a]["score_reader"].to_numpy(),
            groups[b]["score_reader"].to_numpy(),
            seeded_rng(seed, key),
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


#: Columns a card's score error is broken down by, where the rows have them (``collection``:
#: when the manifest's row was added, see ``tests/data/real_t2i/SOURCES.md``).
BREAKDOWNS = ("part", "family", "setting", "collection")


def _natural_key(value: str) -> tuple[int, int, str]:
    """Sorts numbers by value and before words: ``9`` before ``11``, both before ``tune``."""
    return (0, int(value), "") if value.isdigit() else (1, 0, value)


#: Fewer images than this get no interval in :func:`score_error_table`.
MIN_IMAGES = 3


def score_error_table(rows: pd.DataFrame, by: str, seed: int = 0) -> list[dict[str, Any]]:
    """Mean |NED(reader) - NED(person)| per value of ``by``, on images with intended text.

    One record per value (sorted, numbers as numbers: collection 11 after 9; ``all``
    first): ``images`` (n), ``repositories``,
    ``score_mae`` with its 95% bootstrap ``interval`` over images (NaN below
    :data:`MIN_IMAGES`; a value holding every image gets the figures of ``all``), and
    ``interval_by_repository``, the same with each repository's images resampled
    together (NaN below :data:`~glyphbench.core.bootstrap.MIN_UNITS` repositories:
    images of one gallery share a model and a style, so they are not independent), and
    ``score_bias`` (mean reader minus person).
    """

    scored = rows[rows["score_reader"].notna()]
    groups = [("all", scored)]
    if by in scored.columns:
        values = [(str(k), part) for k, part in scored.groupby(by, sort=False)]
        groups += sorted(values, key=lambda pair: _natural_key(pair[0]))
    out: list[dict[str, Any]] = []
    for value, part in groups:
        if value != "all" and len(part) == len(scored):  # the same images as "all":
            out.append({**out[0], by: value})  # the same figures, not a second draw
            continue
        # "all" is one figure whatever the breakdown: the same draw in every table
        rng = seeded_rng(seed, ("score-error",) if value == "all" else ("score-error", by, value))
        errors = part["score_error"].to_numpy(dtype="float64")
        repositories = (  # without repositories, each image is its own
            part["source_repo"] if "source_repo" in part.columns else part.index.to_series()
        )
        clustered = [math.nan, math.nan]
        if repositories.nunique() >= MIN_UNITS:
            clustered = list(
                mean_interval(errors, n_boot=REAL_BOOTSTRAP, rng=rng, clusters=repositories)
            )
        out.append(
            {
                by: value,
                "images": len(part),
                "repositories": int(repositories.nunique()),
                "score_mae": float(errors.mean()) if len(part) else math.nan,
                # none below MIN_IMAGES: one image's "interval" is the image itself
                "interval": _interval(errors, rng)
                if len(part) >= MIN_IMAGES
                else [math.nan, math.nan],
                "interval_by_repository": clustered,
                "score_bias": float((part["score_reader"] - part["score_human"]).mean())
                if len(part)
                else math.nan,
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
        "score_mae_interval": score_error_table(rows, "all", seed)[0]["interval"],
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
        "score_error_by": {
            by: score_error_table(rows, by, seed) for by in BREAKDOWNS if by in rows.columns
        },
    }
