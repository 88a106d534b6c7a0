"""Run images through codecs, OCR before and after, and score what survived.

Layout of the output folder ``OUT``::

    OUT/vae_results.parquet        one row per (image, codec), sorted by vae then image order
    OUT/parts/original/*.parquet   OCR of the original images (the OCR ceiling)
    OUT/parts/<codec>/*.parquet    scored rows, one file per batch
    OUT/images/original/<id>.png   the originals as evaluated (rendered or loaded)
    OUT/images/<codec>/<id>.png    the reconstructions
    OUT/run.json                   image set, codecs, OCR engine, limit
    OUT/report/                    see :mod:`vae_eval.report`

Resuming: every batch is written as its own part file (atomically) as soon as it is
scored, so a crash loses at most one batch. A rerun reads the part files, skips the
(image, codec) pairs already there and merges all parts into ``vae_results.parquet``.
Part files are named by a hash of their image ids, so a recomputed batch never
duplicates rows, and the merge drops duplicate (vae, image_id) pairs all the same.

Failures never stop the run: a codec that cannot be created, an exception or NaN in
decoding, a blank (constant) reconstruction of a non-constant image, or an OCR error
become rows with an ``error`` message ("stage: what") and NaN metrics.

Within one run, OCR results are cached by the SHA-256 of the image pixels, so an
unchanged reconstruction (``identity``) is not read twice; nothing is cached across runs.
"""

from __future__ import annotations

import hashlib
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vae_eval.imageset import ImageItem, ImageSet
from vae_eval.metrics import partial_accuracy, psnr, ssim, word_retention

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image

    from bench.readers.base import Reader
    from vae_eval.codecs import Codec

RESULTS_NAME = "vae_results.parquet"

#: Columns every row has, in order; image attributes (font, font_size, ...) follow ``image_id``.
BASE_COLUMNS = (
    "vae",
    "vae_description",
    "image_set",
    "image_id",
    "image_index",
)
TAIL_COLUMNS = (
    "truth",
    "truth_source",  # "metadata" (given/rendered text) or "ocr_original" (no ground truth)
    "ocr_original",
    "ocr_reconstruction",
    "wr_original",
    "pa_original",
    "wr",
    "pa",
    "wr_loss",
    "pa_loss",
    "psnr",
    "ssim",
    "original_path",
    "reconstruction_path",
    "codec_seconds",
    "ocr_seconds",
    "ocr_engine",
    "ocr_version",
    "error",
)
METRIC_COLUMNS = ("wr_original", "pa_original", "wr", "pa", "wr_loss", "pa_loss", "psnr", "ssim")


def slug(name: str) -> str:
    """A folder name for a codec spec: unsafe characters become ``_`` plus a short hash.

    >>> slug("identity")
    'identity'
    >>> slug("jpeg?quality=30")
    'jpeg_quality_30-bd1b8e'
    """
    clean = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:60]
    if clean == name:
        return name
    return f"{clean}-{hashlib.sha256(name.encode()).hexdigest()[:6]}"


def image_digest(image: Image.Image) -> str:
    """SHA-256 of an image's size, mode and pixels (the OCR cache key)."""
    digest = hashlib.sha256(f"{image.size}{image.mode}".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()


def is_blank(image: Image.Image) -> bool:
    """True when every pixel has the same value (what a dead decoder produces)."""
    extrema: Any = image.convert("RGB").getextrema()  # one (low, high) pair per band
    return all(low == high for low, high in extrema)


@dataclass
class RunOptions:
    """Everything that defines one evaluation."""

    codecs: list[str]
    images: str = "default"
    ocr: str = "easyocr"
    limit: int | None = None
    batch_size: int = 4
    save_images: bool = True
    retry_errors: bool = (
        False  # recompute part files holding error rows (e.g. a codec that failed to load)
    )


@dataclass
class Progress:
    """Counts reported back to the CLI."""

    computed: int = 0
    skipped: int = 0
    errors: int = 0
    notes: list[str] = field(default_factory=list)


class _OCRCache:
    """OCR of images by pixel digest, for one run only."""

    def __init__(self, engine: Reader) -> None:
        self.engine = engine
        self._texts: dict[str, str] = {}

    def read(self, images: Sequence[Image.Image]) -> tuple[list[str | Exception], float]:
        """Texts (or the exception for that image) and the seconds spent on uncached images."""
        from bench.readers import ReadError

        keys = [image_digest(image) for image in images]
        todo = [i for i, key in enumerate(keys) if key not in self._texts]
        failures: dict[int, Exception] = {}
        started = time.perf_counter()
        pending = list(todo)
        while pending:
            try:
                results = self.engine.read([images[i] for i in pending])
            except ReadError as exc:  # one image failed: record it, read the rest again
                bad = pending[exc.index]
                failures[bad] = exc
                pending = [i for i in pending if i != bad]
                continue
            for i, result in zip(pending, results, strict=True):
                self._texts[keys[i]] = result.text
            pending = []
        seconds = time.perf_counter() - started
        return [
            failures[i] if i in failures else self._texts[key] for i, key in enumerate(keys)
        ], seconds


def _read_parts(folder: Path) -> pd.DataFrame:
    import pandas as pd

    files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    if not files:
        return pd.DataFrame()
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)


def _drop_error_parts(folder: Path) -> None:
    """Delete part files that hold an error row, so their images are computed again."""
    import pandas as pd

    for path in sorted(folder.glob("*.parquet")) if folder.is_dir() else []:
        if (pd.read_parquet(path, columns=["error"])["error"].astype(str) != "").any():
            path.unlink()


def _write_part(folder: Path, rows: list[dict[str, Any]]) -> None:
    import pandas as pd

    from bench.io import write_table

    ids = ",".join(str(row["image_id"]) for row in rows)
    name = f"part-{hashlib.sha256(ids.encode()).hexdigest()[:16]}.parquet"
    write_table(pd.DataFrame(rows), folder / name)


def _save_png(image: Image.Image, path: Path) -> None:
    from bench.io import atomic_path

    with atomic_path(path) as tmp:
        image.save(tmp, format="PNG")


def _batches(items: Sequence[Any], size: int) -> list[list[Any]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def evaluate(
    options: RunOptions,
    out: Path,
    *,
    image_set: ImageSet | None = None,
    ocr_engine: Reader | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> pd.DataFrame:
    """Run (or resume) an evaluation into ``out``; returns the merged results table.

    ``image_set`` and ``ocr_engine`` override ``options.images`` / ``options.ocr``
    (tests and notebooks pass objects they already have). ``progress(stage, done,
    total)`` is called after each batch.
    """
    from bench.io import write_json
    from vae_eval.codecs import CodecFailure, get_codec
    from vae_eval.imageset import load_image_set

    out.mkdir(parents=True, exist_ok=True)
    specs = list(dict.fromkeys(options.codecs))  # keep order, drop repeats
    for spec in specs:
        get_codec_kind_or_fail(spec)  # a typo in --vae is a user error, not a failure row

    def create(spec: str) -> Codec | Exception:
        try:
            return get_codec(spec)
        except Exception as exc:  # e.g. weights missing or hub unreachable: failure rows
            return exc

    # Codecs load lazily, one at a time, only when they have work (a finished run loads
    # none); "size=native" needs their resolution hints first, so it loads them upfront.
    loaded_codecs: dict[str, Codec | Exception] = {}
    native_size = None
    if image_set is None and "size=native" in options.images:
        loaded_codecs = {spec: create(spec) for spec in specs}
        hints = [
            c.native_resolution for c in loaded_codecs.values() if not isinstance(c, Exception)
        ]
        native_size = max((h for h in hints if h), default=None)
    if image_set is None:
        image_set = load_image_set(options.images, limit=options.limit, native_size=native_size)
    if ocr_engine is None:
        from bench.readers import get_reader

        ocr_engine = get_reader(options.ocr)
    _check_same_run(out / "run.json", image_set.name, ocr_engine.name)
    write_json(
        out / "run.json",
        {
            "images": image_set.name,
            "codecs": specs,
            "ocr_engine": ocr_engine.name,
            "ocr_version": ocr_engine.version,
            "limit": options.limit,
            "notes": image_set.notes,
        },
    )
    cache = _OCRCache(ocr_engine)
    originals = _original_ocr(image_set, out, cache, options, progress)
    order = {item.image_id: index for index, item in enumerate(image_set.items)}

    for spec in specs:
        folder = out / "parts" / slug(spec)
        if options.retry_errors:
            _drop_error_parts(folder)
        done = _read_parts(folder)
        done_ids = set(done["image_id"].astype(str)) if len(done) else set()
        todo = [item for item in image_set.items if item.image_id not in done_ids]
        if not todo:
            continue
        codec = loaded_codecs.pop(spec, None) or create(spec)
        batches = _batches(todo, options.batch_size)
        for number, batch in enumerate(batches, start=1):
            loaded = [item.load() for item in batch]
            started = time.perf_counter()
            if isinstance(codec, Exception):
                recons: list[Image.Image | CodecFailure] = [
                    CodecFailure(f"{type(codec).__name__}: {codec}") for _ in batch
                ]
            else:
                try:
                    recons = codec.roundtrip(loaded)
                except Exception as exc:
                    recons = [CodecFailure(f"{type(exc).__name__}: {exc}") for _ in batch]
            codec_seconds = (time.perf_counter() - started) / max(1, len(batch))
            rows = _score_batch(
                spec,
                codec,
                image_set,
                batch,
                loaded,
                recons,
                originals,
                cache,
                out,
                options,
                codec_seconds,
                order,
            )
            _write_part(folder, rows)
            if progress:
                progress(spec, number, len(batches))
        del codec  # free one model's memory before the next loads

    return merge_results(out, specs, [item.image_id for item in image_set.items])


def _check_same_run(path: Path, images: str, ocr_engine: str) -> None:
    """Refuse to resume into a folder holding a different image set or OCR engine.

    Image ids repeat across sets (``default?size=256`` and ``size=512`` share them), so
    mixing would silently reuse rows computed on other images.
    """
    import json

    from bench.errors import InputError

    if not path.is_file():
        return
    previous = json.loads(path.read_text(encoding="utf-8"))
    for key, value in (("images", images), ("ocr_engine", ocr_engine)):
        if previous.get(key) != value:
            raise InputError(
                path,
                f"this folder holds a run with {key} {previous.get(key)!r}, not {value!r}; use another --out",
                key=key,
            )


def get_codec_kind_or_fail(spec: str) -> None:
    """Raise InputError when ``spec`` names no registered codec (checked before any loading)."""
    from bench.errors import InputError
    from bench.registry import Spec
    from vae_eval.codecs import CODECS

    kind = Spec.parse(spec).kind
    if kind not in CODECS.names():
        raise InputError(
            None, f"unknown codec {kind!r} in {spec!r}; known: {', '.join(CODECS.names())}"
        )


def _original_ocr(
    image_set: ImageSet,
    out: Path,
    cache: _OCRCache,
    options: RunOptions,
    progress: Callable[[str, int, int], None] | None,
) -> dict[str, dict[str, Any]]:
    """OCR of every original image (resumable like the codec rows); image_id -> record."""
    folder = out / "parts" / "original"
    done = _read_parts(folder)
    records: dict[str, dict[str, Any]] = {}
    if len(done):
        for record in done.to_dict("records"):
            records[str(record["image_id"])] = record
    todo = [item for item in image_set.items if item.image_id not in records]
    batches = _batches(todo, options.batch_size)
    for number, batch in enumerate(batches, start=1):
        images = [item.load() for item in batch]
        texts, seconds = cache.read(images)
        rows = []
        for item, image, text in zip(batch, images, texts, strict=True):
            path = out / "images" / "original" / f"{item.image_id}.png"
            if options.save_images and not path.exists():
                _save_png(image, path)
            rows.append(
                {
                    "image_id": item.image_id,
                    "ocr_text": "" if isinstance(text, Exception) else text,
                    "ocr_error": f"ocr original: {text}" if isinstance(text, Exception) else "",
                    "ocr_seconds": seconds / max(1, len(batch)),
                    "blank": is_blank(image),
                }
            )
        _write_part(folder, rows)
        records.update({row["image_id"]: row for row in rows})
        if progress:
            progress("original OCR", number, len(batches))
    return records


def _score_batch(
    spec: str,
    codec: Codec | Exception,
    image_set: ImageSet,
    batch: list[ImageItem],
    loaded: list[Image.Image],
    recons: list[Any],
    originals: dict[str, dict[str, Any]],
    cache: _OCRCache,
    out: Path,
    options: RunOptions,
    codec_seconds: float,
    order: dict[str, int],
) -> list[dict[str, Any]]:
    from vae_eval.codecs import CodecFailure

    errors: list[str] = []
    good: list[int] = []
    for index, (image, recon) in enumerate(zip(loaded, recons, strict=True)):
        if isinstance(recon, CodecFailure):
            errors.append(f"codec: {recon.message}")
        elif recon.size != image.size:
            errors.append(f"codec: reconstruction is {recon.size}, original {image.size}")
        elif is_blank(recon) and not originals[batch[index].image_id]["blank"]:
            errors.append("codec: blank (constant) reconstruction")
        else:
            errors.append("")
            good.append(index)
    texts: list[str | Exception | None] = [None] * len(batch)
    ocr_seconds = 0.0
    if good:
        read, ocr_seconds = cache.read([recons[i] for i in good])
        for i, read_text in zip(good, read, strict=True):
            texts[i] = read_text
    description = (
        codec.describe() if not isinstance(codec, Exception) else f"failed to load: {codec}"
    )
    rows = []
    for index, item in enumerate(batch):
        original = originals[item.image_id]
        got = texts[index]
        error = errors[index] or str(original.get("ocr_error") or "")
        if isinstance(got, Exception):
            error = error or f"ocr reconstruction: {got}"
        text = got if isinstance(got, str) else None
        reference = item.truth if item.truth else str(original["ocr_text"])
        truth_source = "metadata" if item.truth else "ocr_original"
        recon = recons[index]
        recon_path = ""
        if not error and options.save_images:
            recon_file = out / "images" / slug(spec) / f"{item.image_id}.png"
            _save_png(recon, recon_file)
            recon_path = str(recon_file.relative_to(out))
        ok = not error and text is not None
        wr_original = (
            word_retention(reference, str(original["ocr_text"]))
            if not original.get("ocr_error")
            else math.nan
        )
        pa_original = (
            partial_accuracy(reference, str(original["ocr_text"]))
            if not original.get("ocr_error")
            else math.nan
        )
        wr = word_retention(reference, text) if ok and text is not None else math.nan
        pa = partial_accuracy(reference, text) if ok and text is not None else math.nan
        rows.append(
            {
                "vae": spec,
                "vae_description": description,
                "image_set": image_set.name,
                "image_id": item.image_id,
                "image_index": order[item.image_id],
                **{
                    f"attr_{k}" if k in BASE_COLUMNS + TAIL_COLUMNS else k: v
                    for k, v in item.attributes.items()
                },
                "truth": reference,
                "truth_source": truth_source,
                "ocr_original": str(original["ocr_text"]),
                "ocr_reconstruction": text if ok and text is not None else "",
                "wr_original": wr_original,
                "pa_original": pa_original,
                "wr": wr,
                "pa": pa,
                "wr_loss": wr_original - wr,
                "pa_loss": pa_original - pa,
                "psnr": psnr(loaded[index], recon) if ok else math.nan,
                "ssim": ssim(loaded[index], recon) if ok else math.nan,
                "original_path": f"images/original/{item.image_id}.png"
                if options.save_images
                else item.source_path,
                "reconstruction_path": recon_path,
                "codec_seconds": codec_seconds,
                "ocr_seconds": ocr_seconds / max(1, len(good)) if index in good else 0.0,
                "ocr_engine": cache.engine.name,
                "ocr_version": cache.engine.version,
                "error": error,
            }
        )
    return rows


def merge_results(
    out: Path, codecs: Sequence[str] | None = None, image_ids: Sequence[str] | None = None
) -> pd.DataFrame:
    """Merge the part files into ``vae_results.parquet`` and return the table.

    Only ``codecs`` and ``image_ids`` are kept when given (the current command's; parts
    of other codecs stay on disk for a later run). Rows are sorted by codec (in
    ``codecs`` order, else by name) and image order; duplicate (vae, image_id) pairs
    keep the last part read.
    """
    import pandas as pd

    from bench.io import write_table

    parts = out / "parts"
    frames = (
        [
            _read_parts(folder)
            for folder in sorted(parts.iterdir())
            if folder.is_dir() and folder.name != "original"
        ]
        if parts.is_dir()
        else []
    )
    frames = [f for f in frames if len(f)]
    if not frames:
        table = pd.DataFrame(columns=list(BASE_COLUMNS + TAIL_COLUMNS))
    else:
        table = pd.concat(frames, ignore_index=True).drop_duplicates(
            ["vae", "image_id"], keep="last"
        )
        if codecs is not None:
            table = table[table["vae"].isin(list(codecs))]
        if image_ids is not None:
            table = table[table["image_id"].astype(str).isin(list(image_ids))]
        rank = {name: i for i, name in enumerate(codecs or sorted(table["vae"].unique()))}
        table = table.assign(_rank=table["vae"].map(rank)).sort_values(
            ["_rank", "image_index"], kind="stable"
        )
        table = table.drop(columns="_rank").reset_index(drop=True)
        attributes = [c for c in table.columns if c not in BASE_COLUMNS + TAIL_COLUMNS]
        table = table[list(BASE_COLUMNS) + attributes + list(TAIL_COLUMNS)]
    write_table(table, out / RESULTS_NAME)
    return table
