"""Run images through codecs, OCR before and after, and score what survived.

An evaluation is a run of the engine (:mod:`glyphbench.engine`) whose producer is an
encode/decode round trip: the first group reads the original images once (the OCR
ceiling), then each codec is a group whose batches are round-tripped in the main
thread while the worker reads and scores the previous batch.

Layout of the output folder ``OUT`` (the engine's layout; one shard)::

    OUT/vae_results.parquet        one row per (image, codec), sorted by vae then image order
    OUT/run.json                   image set, codecs, OCR engine, limit
    OUT/images/original/<id>.png   the originals as evaluated (rendered or loaded)
    OUT/images/<codec>/<id>.png    the reconstructions
    OUT/parts/shard-0-of-1/original/batch-NNNNN.parquet   OCR of the originals
    OUT/parts/shard-0-of-1/<codec>/batch-NNNNN.parquet    scored rows, one file per batch
    OUT/report/                    see :mod:`glyphbench.vae_eval.report`

Resuming: every batch is written as its own part file (atomically) as soon as it is
scored, so a crash loses at most the batches in flight. Every input (codec and reader
specs, the image set, the reader itself) is checked before ``OUT`` is touched, and one
process at a time evaluates into ``OUT`` (a second one is refused, see
:meth:`glyphbench.engine.RunFolder.hold_shard`). A rerun skips the (image,
codec) pairs already there (failed ones too, unless ``retry_errors``) and merges all
parts into ``vae_results.parquet``, the newest row of each (vae, image_id) winning.

Failures never stop the run: a codec that cannot be created, an exception or NaN in
decoding, a blank (constant) reconstruction of a non-constant image, or an OCR error
become rows with an ``error`` message ("stage: what") and NaN metrics.

Within one run, readings are cached by the SHA-256 of the image pixels (the engine's
reading cache), so an unchanged reconstruction (``identity``) is not read twice; its
row carries the time of the reading it reuses (``ocr_cached``). Codec work and timed
reading take turns unless ``overlap`` is set, and the reader is warmed up first, so
``codec_seconds`` and ``ocr_seconds`` do not depend on what ran before
(:mod:`glyphbench.vae_eval.reading`). ``RunOptions.codecs`` takes spec strings and codec objects.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench import engine
from glyphbench.core.errors import InputError
from glyphbench.core.fingerprint import recorded_fingerprints
from glyphbench.core.registry import PLUGINS
from glyphbench.readers import DEFAULT_READER
from glyphbench.scoring.table import METRICS
from glyphbench.vae_eval.codecs import (
    CodecFailure,
    check_codec_files,
    codec_fingerprint,
    get_codec,
)
from glyphbench.vae_eval.codecs.protocol import name_codecs
from glyphbench.vae_eval.config import check_out
from glyphbench.vae_eval.imageset import (
    ImageItem,
    ImageSet,
    image_set_fingerprint,
    load_image_set,
)
from glyphbench.vae_eval.metrics import image_scores, text_scores
from glyphbench.vae_eval.reading import TIMING_METHOD, TIMING_METHOD_OVERLAP, TimedReader, Turn

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image

    from glyphbench.readers.base import Reader, Reading
    from glyphbench.vae_eval.codecs import Codec

RESULTS_NAME = "vae_results.parquet"
#: Folder (images and part files) of the original images, and their progress stage.
ORIGINAL = "original"
ORIGINAL_STAGE = "original OCR"
SHARD = engine.Shard().name
KEY = ("vae", "image_id")

#: Columns every row has, in order; image attributes (font, font_size, ...) follow ``image_id``.
BASE_COLUMNS = (
    "vae",
    "vae_description",
    "image_set",
    "image_id",
    "image_index",
)


def metric_columns() -> tuple[str, ...]:
    """The ``vae`` family's columns, from the metric table: each text metric on the original
    images (the OCR ceiling), on the reconstruction and their difference (``_loss``), then
    the image metrics (``psnr_text``/``ssim_text``: inside the drawn text boxes,
    NaN when the set has none).

    >>> metric_columns()  # doctest: +NORMALIZE_WHITESPACE
    ('wr_original', 'pa_original', 'wr', 'pa', 'wr_loss', 'pa_loss', 'psnr', 'ssim',
     'psnr_text', 'ssim_text')
    """
    text = METRICS.columns(["vae"], inputs="text")
    return (
        *(f"{name}_original" for name in text),
        *text,
        *(f"{name}_loss" for name in text),
        *METRICS.columns(["vae"], inputs="image"),
    )


def tail_columns() -> tuple[str, ...]:
    """Columns every row has after its image attributes, in order (metrics: the table's)."""
    return (
        "truth",
        "truth_source",  # "metadata" (given/rendered text) or "ocr_original" (no ground truth)
        "ocr_original",
        "ocr_reconstruction",
        *metric_columns(),
        "original_path",
        "reconstruction_path",
        "codec_seconds",
        "ocr_seconds",
        "ocr_cached",  # the reading was reused (same pixels); its time is the original's
        "ocr_engine",
        "ocr_version",
        "error",
    )


def slug(name: str) -> str:
    """The folder name of a codec spec (the engine's rule with a short hash when it changed).

    >>> slug("identity")
    'identity'
    >>> slug("jpeg?quality=30")
    'jpeg_quality_30-ddfcf9'
    """
    return engine.slug(name, keep="._-", limit=60, digest=6)


def is_blank(image: Image.Image) -> bool:
    """True when every pixel has the same value (what a dead decoder produces)."""
    extrema: Any = image.convert("RGB").getextrema()  # one (low, high) pair per band
    return all(low == high for low, high in extrema)


@dataclass
class RunOptions:
    """Everything that defines one evaluation."""

    codecs: list[Any]  # spec strings, or codec objects (the glyphbench.vae_eval.codecs protocol)
    images: str = "default"
    ocr: str = DEFAULT_READER
    limit: int | None = None
    batch_size: int = 4
    save_images: bool = True
    retry_errors: bool = False  # recompute error rows (e.g. of a codec that failed to load)
    overlap: bool = False  # codec and OCR at once (GPU throughput); times then include contention


class OriginalsProducer:
    """The originals' "round trip": load them; the engine then reads them (the ceiling)."""

    def prepare(self, items: list[ImageItem]) -> list[Image.Image]:
        return [item.load() for item in items]

    def produce(self, images: list[Image.Image]) -> list[Image.Image]:
        return images

    def close(self) -> None:
        pass


class CodecProducer:
    """One codec as the engine's producer: loads the originals, round-trips them."""

    def __init__(self, codec: Codec, turn: Turn | None = None) -> None:
        self.codec: Codec | None = codec
        self.description = codec.describe()
        self.turn = turn or Turn(overlap=True)  # codec and OCR take turns

    def prepare(self, items: list[ImageItem]) -> list[Image.Image]:
        images = [item.load() for item in items]
        self.turn.acquire()  # released when produce() ends: the engine times produce() only
        return images

    def produce(self, images: list[Image.Image]) -> list[Any]:
        assert self.codec is not None, "produce() after close()"
        try:
            return self.codec.roundtrip(images)
        finally:
            self.turn.release()

    def close(self) -> None:
        self.codec = None  # free its weights before the next codec loads


class Evaluation:
    """The state the worker needs: the originals' readings, the cache, the image order."""

    def __init__(
        self, folder: engine.RunFolder, image_set: ImageSet, reader: Reader, options: RunOptions
    ) -> None:
        self.folder = folder
        self.image_set = image_set
        self.reader = reader
        self.reader_identity = (reader.name, reader.version)
        self.options = options
        self.cache = engine.ReadingCache()
        self.timed = TimedReader(reader, self.cache, overlap=options.overlap)  #
        self.order = {item.image_id: index for index, item in enumerate(image_set.items)}
        done = folder.read_parts(("image_id",), groups=[ORIGINAL])
        self.originals: dict[str, dict[str, Any]] = {
            str(record["image_id"]): record for record in done.to_dict("records")
        }

    def groups(
        self, specs: Sequence[str], preloaded: dict[str, Codec | Exception]
    ) -> list[engine.Group]:
        """The originals' group, then one group per codec, each with its jobs left."""
        items = self.image_set.items
        done = self.folder.done_keys(
            KEY, groups=[slug(s) for s in specs], with_failed=not self.options.retry_errors
        )
        originals = [item for item in items if item.image_id not in self.originals]
        groups = [engine.Group(ORIGINAL_STAGE, ORIGINAL, originals, OriginalsProducer)]
        for spec in specs:
            todo = [item for item in items if (spec, item.image_id) not in done]
            opener = _opener(spec, preloaded, self.timed.turn)
            groups.append(engine.Group(spec, slug(spec), todo, opener))
        return groups

    def finish(self, batch: engine.Batch) -> pd.DataFrame:
        import pandas as pd

        if batch.group.folder == ORIGINAL:
            return pd.DataFrame(self._original_rows(batch))
        return pd.DataFrame(self._codec_rows(batch))

    # --------------------------------------------------------------- originals
    def _original_rows(self, batch: engine.Batch) -> list[dict[str, Any]]:
        images: list[Image.Image] = batch.outputs or []
        readings = self.timed.read(images)
        rows = []
        for item, image, timed in zip(batch.jobs, images, readings, strict=True):
            outcome = timed.outcome
            if self.options.save_images:
                relpath = engine.image_path(ORIGINAL, item.image_id)
                if not (self.folder.root / relpath).exists():
                    self.folder.write_image(image, relpath)
            failed = isinstance(outcome, Exception)
            rows.append(
                {
                    "image_id": item.image_id,
                    "ocr_text": "" if isinstance(outcome, Exception) else outcome.text,
                    "ocr_error": f"ocr original: {outcome}" if failed else "",
                    "ocr_seconds": timed.seconds,
                    "blank": is_blank(image),
                }
            )
        self.originals.update({row["image_id"]: row for row in rows})
        return rows

    # ------------------------------------------------------------------ codecs
    def _codec_rows(self, batch: engine.Batch) -> list[dict[str, Any]]:

        items: list[ImageItem] = batch.jobs
        if batch.failure is not None:
            failure = CodecFailure(f"{type(batch.failure).__name__}: {batch.failure}")
            recons: list[Any] = [failure] * len(items)
        else:
            recons = batch.outputs or []
        errors = [
            self._codec_error(item, original, recon)
            for item, original, recon in zip(
                items, batch.inputs or [None] * len(items), recons, strict=True
            )
        ]
        good = [i for i, error in enumerate(errors) if not error]
        readings = self.timed.read([recons[i] for i in good])
        timed = dict(zip(good, readings, strict=True))
        outcomes: dict[int, Reading | Exception] = {i: t.outcome for i, t in timed.items()}
        if batch.stage == "Load":
            description = f"failed to load: {batch.failure}"
        else:
            description = getattr(batch.producer, "description", "")
        codec_seconds = batch.seconds / max(1, len(items)) if batch.size else 0.0
        return [
            self._row(
                batch.group.name,
                description,
                item,
                batch.inputs[index] if batch.inputs else None,
                recons[index],
                errors[index],
                outcomes.get(index),
                {
                    "codec_seconds": codec_seconds,
                    "ocr_seconds": timed[index].seconds if index in timed else 0.0,
                    "ocr_cached": timed[index].cached if index in timed else False,
                },
            )
            for index, item in enumerate(items)
        ]

    def _codec_error(self, item: ImageItem, original: Image.Image | None, recon: Any) -> str:

        if isinstance(recon, CodecFailure):
            return f"codec: {recon.message}"
        assert original is not None  # a reconstruction exists only for a loaded original
        if recon.size != original.size:
            return f"codec: reconstruction is {recon.size}, original {original.size}"
        if is_blank(recon) and not self.originals[item.image_id]["blank"]:
            return "codec: blank (constant) reconstruction"
        return ""

    def _row(
        self,
        spec: str,
        description: str,
        item: ImageItem,
        loaded: Image.Image | None,
        recon: Any,
        codec_error: str,
        outcome: Reading | Exception | None,
        seconds: dict[str, float],
    ) -> dict[str, Any]:
        original = self.originals[item.image_id]
        error = codec_error or str(original.get("ocr_error") or "")
        if isinstance(outcome, Exception):
            error = error or f"ocr reconstruction: {outcome}"
        text = None if outcome is None or isinstance(outcome, Exception) else outcome.text
        ok = not error and text is not None
        reference = item.truth if item.truth else str(original["ocr_text"])
        recon_path = ""
        if not error and self.options.save_images:
            recon_path = engine.image_path(slug(spec), item.image_id)
            self.folder.write_image(recon, recon_path)
        ceiling_read = not original.get("ocr_error")
        ceiling = text_scores(reference, str(original["ocr_text"]) if ceiling_read else None)
        scores = text_scores(reference, text if ok else None)
        tail = tail_columns()
        return {
            "vae": spec,
            "vae_description": description,
            "image_set": self.image_set.name,
            "image_id": item.image_id,
            "image_index": self.order[item.image_id],
            **{
                f"attr_{k}" if k in BASE_COLUMNS + tail else k: v
                for k, v in item.attributes.items()
            },
            "truth": reference,
            "truth_source": "metadata" if item.truth else "ocr_original",
            "ocr_original": str(original["ocr_text"]),
            "ocr_reconstruction": text if ok and text is not None else "",
            **{f"{name}_original": value for name, value in ceiling.items()},
            **scores,
            **{f"{name}_loss": ceiling[name] - scores[name] for name in scores},
            **image_scores(loaded, recon if ok else None, item.boxes),
            "original_path": engine.image_path(ORIGINAL, item.image_id)
            if self.options.save_images
            else item.source_path,
            "reconstruction_path": recon_path,
            **seconds,
            "ocr_engine": self.reader_identity[0],
            "ocr_version": self.reader_identity[1],
            "error": error,
        }


def _opener(
    spec: str, preloaded: dict[str, Codec | Exception], turn: Turn | None = None
) -> Callable[[], CodecProducer]:
    def open_codec() -> CodecProducer:

        codec = preloaded.pop(spec, None) or get_codec(spec)
        if isinstance(codec, Exception):
            raise codec
        return CodecProducer(codec, turn)

    return open_codec


def _create(spec: str) -> Codec | Exception:

    try:
        return get_codec(spec)
    except Exception as exc:  # e.g. weights missing or hub unreachable: failure rows later
        return exc


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
    total)`` is called as each stage starts and after each batch, with the images done in
    that stage (:data:`glyphbench.engine.loop.ProgressFn`).
    """

    specs, given = name_codecs(options.codecs)  # keep order, drop repeats; objects by name
    for spec in specs:  # a typo in --vae is a user error, not a failure row
        if spec not in given:
            PLUGINS.resolve("codecs", spec, where="--vae")
            check_codec_files(spec)  # e.g. a misspelt taesd: folder
    if ocr_engine is None:
        PLUGINS.resolve("readers", options.ocr, where="--ocr")
    if out.exists() and not out.is_dir():
        raise InputError(out, "exists and is not a folder (--out must be a folder)")
    check_out(out, options.images, [spec for spec in specs if spec not in given])

    # Codecs load lazily, one at a time, only when they have work (a finished run loads
    # none); "size=native" needs their resolution hints first, so it loads them upfront.
    preloaded: dict[str, Codec | Exception] = dict(given)
    native_size = None
    if image_set is None and "size=native" in options.images:
        preloaded = {spec: given.get(spec) or _create(spec) for spec in specs}
        hints = [c.native_resolution for c in preloaded.values() if not isinstance(c, Exception)]
        native_size = max((h for h in hints if h), default=None)
    if image_set is None:
        image_set = load_image_set(options.images, limit=options.limit, native_size=native_size)
    if ocr_engine is None:
        ocr_engine = engine.start_reader(options.ocr)
    # Every input is checked: from here on the folder is written, by one process at a time.
    folder = engine.RunFolder(out)
    with folder.hold_shard(SHARD):
        with folder.locked():
            _check_same_run(folder, image_set.name, ocr_engine.name)
            prints = _check_same_files(folder, image_set, [s for s in specs if s not in given])
            folder.write_manifest(
                {
                    **prints,
                    "images": image_set.name,
                    "codecs": specs,
                    "ocr_engine": ocr_engine.name,
                    "ocr_version": ocr_engine.version,
                    "limit": options.limit,
                    "notes": image_set.notes,
                    "timing": timing_method(options),
                    "png": folder.png_format,  # read before this write: a resumed run keeps its own
                }
            )
        evaluation = Evaluation(folder, image_set, ocr_engine, options)
        loop = engine.Loop(
            folder,
            SHARD,
            evaluation.finish,
            batch_size=options.batch_size,
            progress=progress,
            noun="codec",
        )
        loop.run(evaluation.groups(specs, preloaded))
        return merge_results(out, specs, [item.image_id for item in image_set.items], folder=folder)


def timing_method(options: RunOptions) -> str:
    """How ``ocr_seconds``/``codec_seconds`` were measured (run.json ``timing``)."""

    return TIMING_METHOD_OVERLAP if options.overlap else TIMING_METHOD


def _check_same_run(folder: engine.RunFolder, images: str, ocr_engine: str) -> None:
    """Refuse to resume into a folder holding a different image set or OCR engine.

    Image ids repeat across sets (``default?size=256`` and ``size=512`` share them), so
    mixing would silently reuse rows computed on other images.
    """
    expected = {"images": images, "ocr_engine": ocr_engine}
    folder.check_same_run(
        expected,
        lambda key, previous: InputError(
            folder.manifest_path,
            f"this folder holds a run with {key} {previous!r}, not {expected[key]!r}; "
            "use another --out",
            key=key,
        ),
        missing_ok=False,
    )


def _check_same_files(
    folder: engine.RunFolder, image_set: ImageSet, specs: Sequence[str]
) -> dict[str, Any]:
    """Refuse to resume when the images, their texts or a codec's weight files changed
    since the folder's run started (its rows would be kept and mixed with new ones);
    return what run.json records of them (``images_fingerprint``, ``codec_fingerprints``).
    """
    previous = folder.manifest()
    images_print = image_set_fingerprint(image_set)
    if not isinstance(previous.get("images_fingerprint"), (str, type(None))):
        raise InputError(
            folder.manifest_path,
            "'images_fingerprint' is not a fingerprint: run.json is damaged; put it back, or "
            "use another --out",
            key="images_fingerprint",
        )
    if previous.get("images_fingerprint") not in (None, images_print):
        raise InputError(
            folder.manifest_path,
            f"the images or texts of {image_set.name} changed since this folder's run "
            "started (its rows were measured on the old ones); use another --out",
            key="images_fingerprint",
        )
    codec_prints = recorded_fingerprints(previous, "codec_fingerprints", folder.manifest_path)
    for spec in specs:
        current = codec_fingerprint(spec)
        if current is None:
            continue
        if codec_prints.get(spec, current) != current:
            raise InputError(
                folder.manifest_path,
                f"the weight files of codec {spec} changed since this folder measured it; "
                "put the old files back to resume, or use another --out",
                key="codec_fingerprints",
            )
        codec_prints[spec] = current
    return {"images_fingerprint": images_print, "codec_fingerprints": codec_prints}


def merge_results(
    out: Path,
    codecs: Sequence[str] | None = None,
    image_ids: Sequence[str] | None = None,
    *,
    folder: engine.RunFolder | None = None,
) -> pd.DataFrame:
    """Merge the part files into ``vae_results.parquet`` and return the table.

    Only ``codecs`` and ``image_ids`` are kept when given (the current command's; parts
    of other codecs stay on disk for a later run). Rows are sorted by codec (in
    ``codecs`` order, else by name) and image order; of duplicate (vae, image_id)
    pairs the newest part's row is kept.
    """
    folder = folder or engine.RunFolder(out)
    groups = [slug(c) for c in codecs] if codecs is not None else folder.groups() - {ORIGINAL}

    def finish(table: pd.DataFrame) -> pd.DataFrame:
        import pandas as pd

        if not len(table.columns):
            return pd.DataFrame(columns=list(BASE_COLUMNS + tail_columns()))
        if codecs is not None:
            table = table[table["vae"].isin(list(codecs))]
        if image_ids is not None:
            table = table[table["image_id"].astype(str).isin(list(image_ids))]
        rank = {name: i for i, name in enumerate(codecs or sorted(table["vae"].unique()))}
        table = table.assign(_rank=table["vae"].map(rank)).sort_values(
            ["_rank", "image_index"], kind="stable"
        )
        table = table.drop(columns="_rank").reset_index(drop=True)
        tail = tail_columns()
        attributes = [c for c in table.columns if c not in BASE_COLUMNS + tail]
        return table[list(BASE_COLUMNS) + attributes + list(tail)]

    return folder.merge(RESULTS_NAME, KEY, finish, groups=groups)
