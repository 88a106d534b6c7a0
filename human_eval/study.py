"""A study folder: everything the rating app and the statistics need, and nothing else.

Layout::

    STUDY/
      study.json        design and app settings (criteria, scale, batch size, K, seed, ...)
      manifest.parquet  one row per image: opaque image_id, file, prompt, text, model
                        (never shown to raters), scores, cell, inclusion probability,
                        is_gold, gold_answer
      images/<id>.png   the study's own copies (re-encoded: no metadata can leak the model)
      ratings.sqlite    created by the app (see glyphbench.human_eval.store)

Once created, nothing reads outside this folder: the runs it came from can move
or disappear.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.io import (
    RUN_MARKERS,
    atomic_path,
    json_kind,
    locate_run,
    read_json,
    read_run_json,
    read_table,
    write_json,
    write_table,
)
from glyphbench.core.paths import Contained
from glyphbench.core.progress import track
from glyphbench.core.staging import staged_folder
from glyphbench.human_eval.sampling import (
    SamplingError,
    adapt_design,
    cell_labels,
    opaque_id,
    select_gold,
    stratified_sample,
)
from glyphbench.human_eval.store import DEFAULT_CLAIM_TTL_S, Store
from glyphbench.scoring.table import METRICS

MANIFEST = "manifest.parquet"
CONFIG = "study.json"
IMAGES = "images"
DATABASE = "ratings.sqlite"

#: The two TextInVision criteria; each has a question shown to raters.
DEFAULT_CRITERIA: tuple[dict[str, str], ...] = (
    {
        "name": "prompt_following",
        "question": "Does the image follow the prompt (scene, objects, style)?",
    },
    {
        "name": "text_accuracy",
        "question": "Is the requested text written correctly and clearly legible?",
    },
)

#: Answer scales: label shown -> stored integer value.
SCALES: dict[str, dict[str, int]] = {
    "yesno": {"Yes": 1, "No": 0},
    "likert5": {"1 (no)": 1, "2": 2, "3": 3, "4": 4, "5 (yes)": 5},
}

#: The criterion whose human label the automatic text scores are compared with.
ACCURACY_CRITERION = "text_accuracy"


def score_columns() -> list[str]:
    """Score columns carried into the manifest when the run has them: the metric table's
    ``study`` places (:meth:`~glyphbench.scoring.table.MetricTable.human_names`), in that order.

    >>> score_columns()
    ['ned', 'algorithm1', 'anls', 'exact_match', 'cer', 'wer', 'word_f1']
    """

    return METRICS.human_names()


REQUIRED_RESULT_COLUMNS = ("model", "prompt", "text", "image_path")


@dataclass
class Study:
    """A loaded study folder."""

    folder: Path
    config: dict[str, Any]
    manifest: pd.DataFrame

    @property
    def images_dir(self) -> Path:
        return self.folder / IMAGES

    @property
    def database(self) -> Path:
        return self.folder / DATABASE

    @property
    def criteria(self) -> list[dict[str, str]]:
        return list(self.config["criteria"])

    @property
    def criterion_names(self) -> list[str]:
        return [c["name"] for c in self.config["criteria"]]

    @property
    def scale(self) -> dict[str, int]:
        return SCALES[self.config["scale"]]

    def image_file(self, image_id: str) -> Path:
        """Absolute path of an image of this study; KeyError for any other id."""
        row = self._by_id().loc[image_id]
        return (self.folder / str(row["file"])).resolve()

    def _by_id(self) -> pd.DataFrame:
        cached = getattr(self, "_index", None)
        if cached is None:
            cached = self.manifest.set_index("image_id", drop=False)
            self._index = cached
        return cached


def load_runs(runs: Sequence[str | Path]) -> pd.DataFrame:
    """Concatenate the results tables of run folders, with ``run_folder`` (absolute path)."""
    frames = []
    for run in runs:
        folder = locate_run(run)
        results = folder / "results.parquet"
        frame = read_table(results)
        missing = [c for c in REQUIRED_RESULT_COLUMNS if c not in frame.columns]
        if missing:
            raise InputError(results, f"missing columns {missing}")
        run_id = str(read_run_json(folder).get("run_id", folder.name))
        if "run_id" not in frame.columns:
            frame["run_id"] = run_id
        frame["run_folder"] = str(folder.resolve())
        frames.append(frame)
    if not frames:
        raise InputError(None, "give at least one run folder")
    return pd.concat(frames, ignore_index=True)


def usable_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows with an image: no error and an image file that exists."""
    ok = frame["image_path"].notna() & (frame["image_path"].astype(str) != "")
    if "error" in frame.columns:
        ok &= frame["error"].fillna("").astype(str) == ""
    for folder, rows in frame[ok].groupby("run_folder", sort=False):  # each stays in its run
        Contained(folder, source=Path(folder) / "results.parquet").cells(rows["image_path"])
    exists = [
        bool(k) and (Path(folder) / str(path)).is_file()
        for k, folder, path in zip(ok, frame["run_folder"], frame["image_path"], strict=True)
    ]
    return frame[pd.Series(exists, index=frame.index)]


def _is_control(frame: pd.DataFrame) -> pd.Series:
    if "is_control" in frame.columns:
        return frame["is_control"].fillna(False).astype(bool)
    return frame["model"].astype(str).str.startswith("control:")


def create_study(
    runs: Sequence[str | Path],
    out: str | Path,
    *,
    n: int | None = None,
    cells: Sequence[str] = ("group", "model"),
    min_per_cell: int | None = None,
    raters_per_image: int = 3,
    overlap: int = 0,
    seed: int = 0,
    n_gold: int = 20,
    batch_size: int = 30,
    gold_per_batch: int = 2,
    scale: str = "yesno",
    include_controls: bool = False,
    criteria: Sequence[dict[str, str]] = DEFAULT_CRITERIA,
    progress: bool = True,
) -> Study:
    """Sample images from ``runs`` into a new study folder ``out`` and return it.

    Controls are left out of the sample unless ``include_controls``; they supply
    the gold items instead (added on top of ``n``). ``n`` and ``min_per_cell`` left
    out (None) adapt to the run (see :func:`glyphbench.human_eval.sampling.adapt_design`); the
    study.json key ``design_notes`` says how.
    """
    out = Path(out)
    check_options(
        n=n,
        min_per_cell=min_per_cell,
        raters_per_image=raters_per_image,
        overlap=overlap,
        seed=seed,
        n_gold=n_gold,
        batch_size=batch_size,
        gold_per_batch=gold_per_batch,
        scale=scale,
    )
    check_new_folder(out)
    frame = usable_rows(load_runs(runs))
    for column in cells:
        if column not in frame.columns:
            known = ", ".join(sorted(map(str, frame.columns)))
            raise InputError("--cells", f"unknown column {column!r}; the runs have: {known}")
    control = _is_control(frame)
    pool = frame if include_controls else frame[~control]
    if pool.empty and len(frame):
        raise InputError(
            None,
            f"every usable image of the runs is a control's ({len(frame)}); controls are "
            "gold items, not the sample: add a model's run, or pass --include-controls",
        )
    sizes = cell_labels(pool, cells).value_counts().to_dict() if len(pool) else {}
    n, min_per_cell, design_notes = adapt_design(
        {str(k): int(v) for k, v in sizes.items()}, n, min_per_cell
    )
    try:
        sample = stratified_sample(pool, cells, n, min_per_cell, seed)
    except SamplingError as exc:
        raise InputError(None, str(exc)) from None
    left = frame[control & ~frame.index.isin(sample.index)]
    gold = select_gold(left, n_gold, seed)
    if len(gold) < n_gold:  # said, as the other adaptations are
        design_notes.append(
            f"--gold {n_gold} -> {len(gold)} (the control images with a known answer "
            "outside the sample"
            + ("; --include-controls put the others in it)" if include_controls else ")")
        )
    sample["is_gold"] = False
    sample["gold_answer"] = ""
    gold = gold.assign(
        is_gold=True,
        cell="gold",
        cell_size=len(gold),
        cell_sampled=len(gold),
        inclusion_prob=float("nan"),
        weight=float("nan"),
    )
    chosen = pd.concat([sample, gold])
    manifest = _manifest(chosen, seed, _is_control(chosen))
    _check_images(chosen)  # a damaged image is named before anything is written
    config = {
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "runs": [str(Path(r).resolve()) for r in runs],
        "n": n,
        "cells": list(cells),
        "min_per_cell": min_per_cell,
        "raters_per_image": raters_per_image,
        "overlap": overlap,
        "seed": seed,
        "n_gold": int(manifest["is_gold"].sum()),
        "batch_size": batch_size,
        "gold_per_batch": gold_per_batch,
        "claim_ttl_seconds": DEFAULT_CLAIM_TTL_S,
        "scale": scale,
        "criteria": [dict(c) for c in criteria],
        "include_controls": include_controls,
        "design_notes": design_notes,
    }
    # All or nothing: the study is written into a hidden folder beside ``out`` and renamed
    # into place when whole, so an error or Ctrl-C part-way leaves no half study behind.
    with staged_folder(out, (), "rating study", [Path(r) for r in runs]) as staged:
        _copy_images(chosen, manifest, staged, progress)
        write_table(manifest, staged / MANIFEST)
        write_json(staged / CONFIG, config)
        load_study(staged)  # what was written reads back as a study
    return load_study(out)


def check_options(
    *,
    n: int | None,
    min_per_cell: int | None,
    raters_per_image: int,
    overlap: int,
    seed: int,
    n_gold: int,
    batch_size: int,
    gold_per_batch: int,
    scale: str,
) -> None:
    """Every option of ``human sample`` in range, before anything is read or written: an
    :class:`InputError` naming the option.

    >>> check_options(n=None, min_per_cell=None, raters_per_image=3, overlap=0, seed=0,
    ...               n_gold=20, batch_size=30, gold_per_batch=-1, scale="yesno")
    Traceback (most recent call last):
    ...
    glyphbench.core.errors.InputError: --gold-per-batch -1: must be 0 or more
    """
    lowest = {
        "--n": (n, 1),
        "--min-per-cell": (min_per_cell, 0),
        "--raters-per-image": (raters_per_image, 1),
        "--overlap": (overlap, 0),
        "--seed": (seed, 0),
        "--gold": (n_gold, 0),
        "--batch-size": (batch_size, 1),
        "--gold-per-batch": (gold_per_batch, 0),
    }
    for option, (value, least) in lowest.items():
        if value is not None and value < least:
            raise InputError(None, f"{option} {value}: must be {least} or more")
    if overlap > raters_per_image:
        raise InputError(
            None,
            f"--overlap {overlap}: must be between 0 and --raters-per-image ({raters_per_image})",
        )
    if scale not in SCALES:
        raise InputError(None, f"--scale {scale!r}: unknown; use one of {sorted(SCALES)}")


def check_new_folder(out: Path) -> None:
    """``--out`` names a new (or empty) folder: never a study, a run or any folder with files.

    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> check_new_folder(folder / "new"); check_new_folder(folder)  # absent, empty: fine
    >>> _ = (folder / "notes.txt").write_text("mine")
    >>> check_new_folder(folder)
    Traceback (most recent call last):
    ...
    glyphbench.core.errors.InputError: ...: --out folder is not empty (notes.txt); ...
    """
    if not out.exists():
        return
    if not out.is_dir():
        raise InputError(out, "--out exists and is not a folder; choose a new --out folder")
    if (out / MANIFEST).exists() or (out / CONFIG).exists() or (out / DATABASE).exists():
        raise InputError(out, "already holds a study; choose a new --out folder")
    if any((out / marker).exists() for marker in RUN_MARKERS):
        raise InputError(
            out, "is a run folder; a study is a folder of its own: choose a new --out folder"
        )
    entries = sorted(entry.name for entry in out.iterdir())
    if entries:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise InputError(
            out, f"--out folder is not empty ({shown}); choose a new or empty --out folder"
        )


def _manifest(chosen: pd.DataFrame, seed: int, control: pd.Series) -> pd.DataFrame:
    def text(column: str) -> list[str]:
        if column not in chosen.columns:
            return [""] * len(chosen)
        return ["" if pd.isna(v) else str(v) for v in chosen[column]]

    keys = [
        "|".join(parts)
        for parts in zip(
            text("run_folder"),
            text("run_id"),
            text("model"),
            text("prompt_id"),
            text("seed"),
            text("sample_index"),
            text("image_path"),
            strict=True,
        )
    ]
    ids = [opaque_id(seed, key) for key in keys]
    if len(set(ids)) != len(ids):
        raise InputError(None, "two sampled rows share one identity (duplicate results rows?)")
    manifest = pd.DataFrame(
        {
            "image_id": ids,
            "file": [f"{IMAGES}/{i}.png" for i in ids],
            "prompt": text("prompt"),
            "text": text("text"),
            "model": text("model"),
            "is_control": control.to_numpy(dtype=bool),
            "run_id": text("run_id"),
            "prompt_id": text("prompt_id"),
            "group": text("group"),
            "prompt_type": text("prompt_type"),
            "source_image": text("image_path"),
            "cell": chosen["cell"].astype(str).to_numpy(),
            "cell_size": chosen["cell_size"].astype(int).to_numpy(),
            "cell_sampled": chosen["cell_sampled"].astype(int).to_numpy(),
            "inclusion_prob": chosen["inclusion_prob"].astype(float).to_numpy(),
            "weight": chosen["weight"].astype(float).to_numpy(),
            "is_gold": chosen["is_gold"].astype(bool).to_numpy(),
            "gold_answer": chosen["gold_answer"].fillna("").astype(str).to_numpy(),
        }
    )
    for column in score_columns():
        if column in chosen.columns:
            manifest[column] = (
                pd.to_numeric(chosen[column], errors="coerce").astype(float).to_numpy()
            )
    return manifest


def _check_images(chosen: pd.DataFrame) -> None:
    """InputError naming the first sampled image that cannot be decoded."""
    from PIL import Image

    for folder, source in zip(chosen["run_folder"], chosen["image_path"], strict=True):
        path = Path(folder) / str(source)
        try:
            with Image.open(path) as image:
                image.load()
        except Exception as exc:
            problem = " ".join(str(exc).split())[:160]
            raise InputError(
                path, f"cannot read the sampled image ({type(exc).__name__}: {problem})"
            ) from None


def _copy_images(chosen: pd.DataFrame, manifest: pd.DataFrame, out: Path, progress: bool) -> None:
    """Re-encode each image as a metadata-free PNG named by its opaque id."""
    from PIL import Image

    (out / IMAGES).mkdir(parents=True, exist_ok=True)
    pairs = list(zip(chosen["run_folder"], chosen["image_path"], manifest["file"], strict=True))
    for folder, source, target in track(pairs, "copying images", disable=not progress):
        destination = out / target
        if destination.exists():
            continue
        with Image.open(Path(folder) / str(source)) as image:
            image.load()
            clean = image if image.mode in ("RGB", "RGBA", "L") else image.convert("RGB")
            with atomic_path(destination) as tmp:
                clean.save(tmp, format="PNG")  # no pnginfo/exif: nothing but pixels


def load_study(folder: str | Path) -> Study:
    """Read ``study.json``, the manifest and (if present) check the stored ratings.

    Every problem is a one-line :class:`InputError` naming the file: a folder that is
    not a study, malformed or mistyped settings, a manifest without its columns, a
    ratings file that is not a SQLite database, a stored rating off the study's scale.
    """
    folder = Path(folder)
    config_path = folder / CONFIG
    if not config_path.exists():
        raise InputError(folder, "not a study folder: study.json is missing")
    config = read_json(config_path)
    check_config(config, config_path)
    manifest = read_table(folder / MANIFEST)
    missing = [c for c in MANIFEST_REQUIRED if c not in manifest.columns]
    if missing:
        raise InputError(folder / MANIFEST, f"missing columns {missing}")
    # the app shows and serves these files: each stays inside the study folder
    Contained(folder, source=folder / MANIFEST, column="file").cells(manifest["file"])
    study = Study(folder=folder.resolve(), config=config, manifest=manifest)
    if study.database.exists():
        check_ratings(study)
    return study


#: Manifest columns the app and the statistics rely on.
MANIFEST_REQUIRED = ("image_id", "file", "prompt", "is_gold")

#: study.json settings: key -> (accepted types, required, lowest value).
_SETTINGS: dict[str, tuple[tuple[type, ...], bool, float | None]] = {
    "raters_per_image": ((int,), True, 1),
    "batch_size": ((int,), True, 1),
    "scale": ((str,), True, None),
    "criteria": ((list,), True, None),
    "gold_per_batch": ((int,), False, 0),
    "claim_ttl_seconds": ((int, float), False, 1),
    "max_claims_per_address": ((int,), False, 1),
    "overlap": ((int,), False, 0),
}


def check_config(config: dict[str, Any], path: Path) -> None:
    """study.json's settings have the right types and values (InputError naming the key)."""
    for key, (types, required, lowest) in _SETTINGS.items():
        if key not in config:
            if required:
                raise InputError(path, f"missing required key {key!r}", key=key)
            continue
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, types):
            wanted = " or ".join(json_kind(t) for t in types)
            raise InputError(path, f"expected a {wanted}, got {value!r}", key=key)
        if lowest is not None and config[key] < lowest:
            raise InputError(path, f"must be >= {lowest:g}, got {value!r}", key=key)
    if config["scale"] not in SCALES:
        raise InputError(path, f"unknown scale {config['scale']!r}", key="scale")
    names = [c.get("name") if isinstance(c, dict) else None for c in config["criteria"]]
    questions = [c.get("question") if isinstance(c, dict) else None for c in config["criteria"]]
    if not names or not all(isinstance(n, str) and n for n in names + questions):
        raise InputError(path, "expected a list of {name, question} mappings", key="criteria")
    if len(set(names)) != len(names):
        raise InputError(path, f"criterion names repeat: {names}", key="criteria")


def check_ratings(study: Study) -> None:
    """Every stored rating is a known criterion with a value on the study's scale."""
    import sqlite3
    from contextlib import closing

    path = study.database
    try:
        uri = f"{path.resolve().as_uri()}?mode=ro"  # percent-encoded: any folder name works
        with closing(sqlite3.connect(uri, uri=True)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if "ratings" not in tables:
                return
            rows = db.execute(
                "SELECT criterion, value, COUNT(*) FROM ratings GROUP BY criterion, value"
            ).fetchall()
    except sqlite3.DatabaseError as exc:
        raise InputError(path, f"not a usable ratings database (SQLite: {exc})") from None
    allowed = set(study.scale.values())
    names = set(study.criterion_names)
    for criterion, value, count in rows:
        if criterion not in names:
            raise InputError(path, f"{count} stored rating(s) for unknown criterion {criterion!r}")
        if value not in allowed:
            raise InputError(
                path,
                f"{count} stored rating(s) of {criterion!r} = {value!r}, not on the "
                f"{study.config['scale']} scale {sorted(allowed)}",
            )


def open_store(study: Study) -> Store:
    """The study's ratings database, with the study's raters per image and claim lifetime."""
    return Store(
        study.database,
        raters_per_image=int(study.config["raters_per_image"]),
        claim_ttl=float(study.config.get("claim_ttl_seconds", DEFAULT_CLAIM_TTL_S)),
        overlap=int(study.config.get("overlap", 0)),
    )
