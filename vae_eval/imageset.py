"""Image sets for the VAE evaluation: what goes through each codec.

Three sources, chosen by the ``--images`` spec:

``default`` (options ``size``, ``seed``)
    A synthetic set rendered here, deterministically, with known text. The full set
    crosses 5 font sizes x 6 character classes x 3 backgrounds x 2 replicates = 180
    images; fonts rotate over :data:`FONT_CHOICES` (matplotlib's). Ground truth is
    exactly the drawn text, and every image carries its attributes so results slice
    by font size and character class. ``size`` is the square image side in pixels
    (default 512; ``size=native`` takes the largest native resolution of the codecs).
``PATH`` to a folder
    Every image in the folder (sorted by name). Ground truth and attributes come from
    ``metadata.jsonl`` (one ``{"file": ..., "text": ..., ...}`` per line, the format
    this module writes), ``metadata.json`` or ``vae_images_metadata.json`` beside the
    images, when present; else there is no ground truth.
``PATH`` to a ``.json`` / ``.jsonl`` file
    TextInVision's ``vae_images_metadata.json`` (``file name -> {image_url,
    photographer_profile, source}``, plus an optional ``text`` field with the ground
    truth) or this module's ``metadata.jsonl``. Images are looked up beside the file.

Where an image has no ground truth the original image's OCR is the reference; rows
record this in ``truth_source`` and the report says so.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.core.fingerprint import files_fingerprint
from glyphbench.core.fonts import bundled_fonts
from glyphbench.core.io import atomic_open, atomic_path, jsonl_records, read_text
from glyphbench.core.paths import Contained
from glyphbench.core.registry import Spec

if TYPE_CHECKING:
    from PIL import Image, ImageFont

#: A text box in pixels: (left, top, right, bottom), right/bottom exclusive.
Box = tuple[int, int, int, int]
#: Pixels added around each line's ink box (antialiasing and what a codec smears into it).
BOX_MARGIN = 2

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff")

#: Font sizes (pixel height passed to FreeType) of the default set, large to very small.
FONT_SIZES = (48, 32, 20, 14, 10)
#: Backgrounds, from easy to hard.
BACKGROUNDS = ("plain", "texture", "photo")
#: Images per (font size, character class, background) cell in the full default set.
REPLICATES = 2
#: The default set's fonts by file stem: those matplotlib ships, so the images are the same
#: on every machine. Fonts the system may or may not have (Liberation Sans and Serif were
#: used where installed) made the set depend on the machine: installing them changed 20 of
#: the README command's 25 images' fonts and its figures (taef2 WR 56.0 -> 54.0, the
#: ceiling 72.0 -> 71.3 with EasyOCR; resize x8 PSNR 24.2 -> 24.3 dB).
FONT_CHOICES = ("DejaVuSans", "DejaVuSerif", "DejaVuSansMono")
#: Words drawn per default-set image (wrapped to the image width) and the most lines kept.
WORDS_PER_IMAGE = 6
MAX_LINES = 6

#: Word pools per character class. Words are ASCII except in ``accented``; each word is
#: a single token without spaces, so the ground truth splits back into exactly these words.
WORD_POOLS: dict[str, tuple[str, ...]] = {
    "lower": (
        "river",
        "candle",
        "harbor",
        "pocket",
        "meadow",
        "lantern",
        "violet",
        "garden",
        "window",
        "silver",
        "market",
        "thunder",
        "basket",
        "pillow",
        "forest",
        "copper",
        "island",
        "ribbon",
        "winter",
        "marble",
        "velvet",
        "orange",
        "stone",
        "bridge",
    ),
    "upper": (
        "EXIT",
        "HOTEL",
        "OPEN",
        "SALE",
        "PHARMACY",
        "STATION",
        "BAKERY",
        "NORTH",
        "PARKING",
        "TICKETS",
        "DANGER",
        "MUSEUM",
        "GARAGE",
        "LIBRARY",
        "CINEMA",
        "HARBOR",
        "MARKET",
        "PLAZA",
        "STOP",
        "ENTRANCE",
        "THEATER",
        "DINER",
        "POLICE",
        "BRIDGE",
    ),
    "digits": (
        "2048",
        "1987",
        "31415",
        "650",
        "72",
        "80211",
        "4096",
        "1200",
        "365",
        "90210",
        "7734",
        "5150",
        "24",
        "808",
        "1066",
        "33",
        "41592",
        "3000",
        "777",
        "1492",
    ),
    "punct_symbols": (
        "$19.99",
        "50%",
        "#42",
        "(7)",
        "&",
        "@",
        "+1",
        "3/4",
        "?!",
        "...",
        "$5",
        "#1",
        "10%",
        "[9]",
        "*",
        "=",
        "1:2",
        "--",
        "<5>",
        "{0}",
    ),
    "accented": (
        "café",
        "naïve",
        "résumé",
        "façade",
        "über",
        "señor",
        "crème",
        "déjà",
        "jalapeño",
        "Zürich",
        "São",
        "Ångström",
        "fiancée",
        "piñata",
        "brûlée",
        "Müller",
        "Øresund",
        "élan",
        "smørrebrød",
        "Köln",
    ),
    "mixed": (
        "Room42B",
        "COVID-19",
        "B2B",
        "Mix3d",
        "eBay",
        "R2-D2",
        "Top10",
        "iPhone",
        "A4-Paper",
        "Gate7C",
        "MP3",
        "Route66",
        "4x4",
        "USB-C",
        "Wi-Fi",
        "K9",
        "McDonald",
        "3D-Print",
        "H2O",
        "Area51",
    ),
}
CHAR_CLASSES = tuple(WORD_POOLS)


@dataclass
class ImageItem:
    """One image of a set: how to load it, its ground truth (or None) and attributes."""

    image_id: str
    load: Callable[[], Image.Image]
    truth: str | None
    attributes: dict[str, Any] = field(default_factory=dict)
    source_path: str = ""  # file the image came from; "" for rendered images
    #: Pixel boxes (left, top, right, bottom) of the drawn text lines, when known: the
    #: text region of text-region PSNR/SSIM. None: the set does not say where text is.
    boxes: list[Box] | None = None


@dataclass
class ImageSet:
    """A named, ordered list of :class:`ImageItem`."""

    name: str
    items: list[ImageItem]
    notes: list[str] = field(default_factory=list)  # shown in the report (e.g. missing images)


def image_set_fingerprint(image_set: ImageSet) -> str:
    """``sha256:HEX`` over each image's id, ground truth, text boxes, attributes (the
    report slices by them) and file content.

    A resumed evaluation keeps its rows; if a file or a text changed in between, they
    would have been measured on other images (a rendered set is named by its size and
    seed, so its ids and texts stand for it).
    """
    digest = hashlib.sha256()
    for item in image_set.items:
        facts = [item.image_id, item.truth, item.boxes, item.attributes]
        text = json.dumps(facts, ensure_ascii=False, sort_keys=True, default=str)
        digest.update(text.encode("utf-8") + b"\0")
        if item.source_path:
            digest.update(files_fingerprint(item.source_path).encode("ascii"))
    return f"sha256:{digest.hexdigest()}"


# --------------------------------------------------------------------------- default set


def available_default_fonts() -> list[Path]:
    """The fonts of :data:`FONT_CHOICES` (matplotlib's bundled files, never the system's
    copies: the same bytes everywhere), in that order."""
    by_stem = {p.stem: p for p in bundled_fonts()}
    return [by_stem[name] for name in FONT_CHOICES if name in by_stem]


@dataclass(frozen=True)
class DefaultCell:
    """Attributes of one default-set image (everything the renderer needs)."""

    font_size: int
    char_class: str
    background: str
    replicate: int

    @property
    def image_id(self) -> str:
        return f"s{self.font_size:02d}-{self.char_class}-{self.background}-{self.replicate}"


def default_cells() -> list[DefaultCell]:
    """Every cell of the full default set, ordered size (large first), class, background."""
    return [
        DefaultCell(size, cls, bg, rep)
        for size in FONT_SIZES
        for cls in CHAR_CLASSES
        for bg in BACKGROUNDS
        for rep in range(REPLICATES)
    ]


def _rng(seed: int, *parts: object) -> random.Random:
    """A random generator seeded by a stable hash of ``parts`` (never Python's hash())."""
    digest = hashlib.sha256(repr((seed, *parts)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def pick_words(cell: DefaultCell, seed: int) -> list[str]:
    """A seeded permutation of ``cell``'s word pool; :func:`layout_lines` draws from its start."""
    rng = _rng(seed, "words", cell.image_id)
    pool = WORD_POOLS[cell.char_class]
    return rng.sample(pool, len(pool))


def layout_lines(words: Sequence[str], font: ImageFont.FreeTypeFont, size: int) -> list[str]:
    """The first :data:`WORDS_PER_IMAGE` of ``words`` that fit, wrapped into lines.

    Lines are at most 90% of ``size`` wide; a word too wide for a line on its own is
    skipped (the next one is taken instead), lines are filled greedily, and lines that
    would run past 90% of the image height are dropped, so the ground truth is always
    exactly the text drawn (at most :data:`MAX_LINES` lines). Empty when no word fits.
    """
    limit = 0.9 * size
    fitting = [w for w in words if font.getlength(w) <= limit][:WORDS_PER_IMAGE]
    lines: list[str] = []
    current: list[str] = []
    for word in fitting:
        candidate = " ".join([*current, word])
        if current and font.getlength(candidate) > limit:
            lines.append(" ".join(current))
            current = [word]
        else:
            current.append(word)
    if current:
        lines.append(" ".join(current))
    fit = int(limit // _line_step(font.size))
    return lines[: min(MAX_LINES, fit)]


def _line_step(font_size: float) -> int:
    return math.ceil(font_size * 1.6)


def make_background(kind: str, size: int, rng: random.Random) -> Image.Image:
    """``plain`` white; ``texture`` light paper with fibres; ``photo`` colour blobs and grain."""
    import numpy as np
    from PIL import Image, ImageFilter

    nprng = np.random.default_rng(rng.getrandbits(63))
    if kind == "plain":
        return Image.new("RGB", (size, size), (255, 255, 255))
    if kind == "texture":
        base = np.full((size, size, 3), (236, 228, 212), dtype=np.float64)
        grain = nprng.normal(0.0, 9.0, (size, size, 1))
        fibres = Image.fromarray(nprng.integers(0, 256, (size, size), dtype=np.uint8), "L").filter(
            ImageFilter.GaussianBlur(1.2)
        )
        fibre = (np.asarray(fibres, dtype=np.float64)[:, :, None] - 128.0) * 0.35
        return Image.fromarray(np.clip(base + grain + fibre, 0, 255).astype(np.uint8), "RGB")
    if kind == "photo":
        coarse = nprng.integers(40, 216, (6, 6, 3), dtype=np.uint8)
        smooth = Image.fromarray(coarse, "RGB").resize((size, size), Image.Resampling.BICUBIC)
        smooth = smooth.filter(ImageFilter.GaussianBlur(size / 24))
        noise = nprng.normal(0.0, 14.0, (size, size, 3))
        array = np.asarray(smooth, dtype=np.float64) + noise
        return Image.fromarray(np.clip(array, 0, 255).astype(np.uint8), "RGB")
    raise ValueError(f"unknown background {kind!r}")


@dataclass(frozen=True)
class TextLayout:
    """Where a default-set image's lines go (shared by the renderer and the text boxes)."""

    lines: list[str]
    left: float
    top: float
    step: int
    block_width: float
    font: ImageFont.FreeTypeFont


def text_layout(cell: DefaultCell, size: int, font_path: Path, seed: int) -> TextLayout:
    """Lines wrapped by :func:`layout_lines`, stacked with 1.6x font-size spacing, the block
    centred with a small seeded jitter."""
    rng = _rng(seed, "layout", cell.image_id)
    font = _font(font_path, cell.font_size)
    lines = layout_lines(pick_words(cell, seed), font, size)
    widths = [font.getlength(line) for line in lines]
    step = _line_step(cell.font_size)
    block_w, block_h = max(widths), step * len(lines)
    slack_x = max(0.0, size - block_w) / 2
    slack_y = max(0.0, size - block_h) / 2
    left = slack_x + rng.uniform(-0.5, 0.5) * slack_x
    top = slack_y + rng.uniform(-0.5, 0.5) * slack_y
    return TextLayout(lines, left, top, step, block_w, font)


def render_cell(
    cell: DefaultCell, size: int, font_path: Path, seed: int
) -> tuple[Image.Image, str]:
    """Render one default-set image; returns (image, ground truth with one line per text line).

    Positions come from :func:`text_layout`. On the ``photo`` background the text is
    black or white, whichever contrasts more with the mean luminance under the text block.
    """
    import numpy as np
    from PIL import ImageDraw

    layout = text_layout(cell, size, font_path, seed)
    image = make_background(cell.background, size, _rng(seed, "bg", cell.image_id))
    draw = ImageDraw.Draw(image)
    left, top = layout.left, layout.top
    if cell.background == "photo":
        box = (
            int(left),
            int(top),
            int(left + layout.block_width) + 1,
            int(top + layout.step * len(layout.lines)) + 1,
        )
        luminance = float(np.asarray(image.crop(box).convert("L"), dtype=np.float64).mean())
        colour = (0, 0, 0) if luminance > 128 else (255, 255, 255)
    else:
        colour = (20, 20, 20)
    for number, line in enumerate(layout.lines):
        draw.text((left, top + number * layout.step), line, font=layout.font, fill=colour)
    return image, "\n".join(layout.lines)


def text_boxes(cell: DefaultCell, size: int, font_path: Path, seed: int) -> list[Box]:
    """The ink box of each drawn line, grown by :data:`BOX_MARGIN` and clipped to the image."""
    layout = text_layout(cell, size, font_path, seed)
    boxes = []
    for number, line in enumerate(layout.lines):
        anchor = (layout.left, layout.top + number * layout.step)
        x0, y0, x1, y1 = layout.font.getbbox(line)
        boxes.append(
            (
                max(0, math.floor(anchor[0] + x0) - BOX_MARGIN),
                max(0, math.floor(anchor[1] + y0) - BOX_MARGIN),
                min(size, math.ceil(anchor[0] + x1) + BOX_MARGIN),
                min(size, math.ceil(anchor[1] + y1) + BOX_MARGIN),
            )
        )
    return boxes


def stratified_limit(cells: Sequence[DefaultCell], limit: int | None) -> list[DefaultCell]:
    """Keep an equal number of cells per font size, every size present.

    With ``S`` font sizes among ``cells``, ``limit`` keeps ``limit // S`` cells of
    every size (capped by the size with the fewest cells), so each size's statistics
    rest on the same n; the rest of ``limit`` is left out (see :func:`limit_note`).
    A ``limit`` below ``S`` keeps one cell of each of the ``limit`` largest sizes.
    Within a size, cells are dealt round-robin over the character classes (each
    size starting one class further along, so a small limit covers every class
    across sizes), and each class takes every background before a second
    replicate. Cells keep their set order; a larger limit keeps every cell of a
    smaller one.

    >>> [c.image_id for c in stratified_limit(default_cells(), 5)]
    ['s48-lower-plain-0', 's32-upper-texture-0', 's20-digits-photo-0', \
's14-punct_symbols-plain-0', 's10-accented-texture-0']
    """
    if limit is None or limit >= len(cells):
        return list(cells)
    by_size: dict[int, dict[str, list[DefaultCell]]] = {}
    for cell in cells:
        by_size.setdefault(cell.font_size, {}).setdefault(cell.char_class, []).append(cell)

    # Within a class, take every background before a second replicate, and start each
    # (size, class) group's background rotation one further along.
    def rotation(cell: DefaultCell, offset: int) -> tuple[int, int]:
        return cell.replicate, (BACKGROUNDS.index(cell.background) - offset) % len(BACKGROUNDS)

    queues: list[list[DefaultCell]] = []
    group = 0
    for s, classes in enumerate(by_size.values()):
        ordered = [
            sorted(members, key=functools.partial(rotation, offset=group + g))
            for g, members in enumerate(classes.values())
        ]
        group += len(ordered)
        ordered = ordered[s % len(ordered) :] + ordered[: s % len(ordered)]
        queue = []
        for depth in range(max(len(q) for q in ordered)):
            queue += [q[depth] for q in ordered if depth < len(q)]
        queues.append(queue)
    per_size = min(limit // len(queues), min(len(q) for q in queues))
    keep = {id(c) for q in queues for c in q[:per_size]} if per_size else set()
    if not per_size:  # fewer images than sizes: one of each of the largest sizes
        largest = sorted(queues, key=lambda q: -q[0].font_size)[:limit]
        keep = {id(q[0]) for q in largest}
    return [c for c in cells if id(c) in keep]


def limit_note(picked: Sequence[DefaultCell], limit: int | None, available: int) -> str | None:
    """What a ``--limit`` left out of the per-size balance (None when nothing).

    >>> limit_note(stratified_limit(default_cells(), 22), 22, 180)
    '--limit 22: 20 images drawn, 4 per font size (an equal number per size).'
    >>> limit_note(stratified_limit(default_cells(), 2), 2, 180)
    '--limit 2: fewer images than the 5 font sizes, so only 48, 32 px are covered.'
    """
    if limit is None or limit >= available:
        return None
    sizes = sorted({c.font_size for c in picked}, reverse=True)
    every = sorted({c.font_size for c in default_cells()}, reverse=True)
    if len(sizes) < len(every):
        shown = ", ".join(str(size) for size in sizes)
        return (
            f"--limit {limit}: fewer images than the {len(every)} font sizes, "
            f"so only {shown} px are covered."
        )
    if len(picked) == limit:
        return None
    per_size = len(picked) // len(sizes)
    return (
        f"--limit {limit}: {len(picked)} images drawn, {per_size} per font size "
        "(an equal number per size)."
    )


def default_set(size: int = 512, seed: int = 0, limit: int | None = None) -> ImageSet:
    """The synthetic default set (see the module docstring); ``limit`` subsamples stratified."""
    fonts = available_default_fonts()
    if not fonts:
        raise InputError(
            None, "no fonts found for the default image set (DejaVu ships with matplotlib)"
        )
    items = []
    dropped = []
    for index, cell in enumerate(default_cells()):
        font = fonts[index % len(fonts)]  # rotates over the full set: a limit never changes fonts
        truth = "\n".join(layout_lines(pick_words(cell, seed), _font(font, cell.font_size), size))
        if not truth:
            dropped.append(cell)
            continue
        items.append(
            ImageItem(
                image_id=cell.image_id,
                load=_renderer(cell, size, font, seed),
                truth=truth,
                attributes={
                    "font": font.stem,
                    "font_size": cell.font_size,
                    "char_class": cell.char_class,
                    "background": cell.background,
                    "width": size,
                    "height": size,
                },
                boxes=text_boxes(cell, size, font, seed),
            )
        )
    present = {item.image_id for item in items}
    candidates = [c for c in default_cells() if c.image_id in present]
    picked = stratified_limit(candidates, limit)
    keep = {c.image_id for c in picked}
    notes = []
    note = limit_note(picked, limit, len(candidates))
    if note:
        notes.append(note)
    if dropped:
        sizes = sorted({c.font_size for c in dropped}, reverse=True)
        notes.append(
            f"{len(dropped)} images left out: no word fits a {size}px image at font size {sizes}."
        )
    return ImageSet(
        name=f"default?size={size}&seed={seed}",
        items=[item for item in items if item.image_id in keep],  # set order
        notes=notes,
    )


@functools.cache
def _font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    from PIL import ImageFont

    return ImageFont.truetype(str(path), size)


def _renderer(cell: DefaultCell, size: int, font: Path, seed: int) -> Callable[[], Image.Image]:
    return lambda: render_cell(cell, size, font, seed)[0]


def write_default_set(out: Path, size: int = 512, seed: int = 0, limit: int | None = None) -> Path:
    """Render the default set into ``out`` as PNGs plus ``metadata.jsonl``; returns that file."""
    image_set = default_set(size, seed, limit)
    out.mkdir(parents=True, exist_ok=True)
    records = []
    for item in image_set.items:
        name = f"{item.image_id}.png"
        with atomic_path(out / name) as tmp:
            item.load().save(tmp, format="PNG")
        records.append({"file": name, "text": item.truth, **item.attributes, "boxes": item.boxes})
    with atomic_open(out / "metadata.jsonl", "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return out / "metadata.jsonl"


# ------------------------------------------------------------------ folders and metadata files


def read_metadata(path: Path) -> dict[str, dict[str, Any]]:
    """File name -> record from TextInVision's JSON object or this module's JSONL.

    TextInVision's ``vae_images_metadata.json`` maps file names to
    ``{image_url, photographer_profile, source}``; a ``text`` field, when present,
    is the ground truth. A JSON list of records with a ``file`` key, or JSONL with
    one such record per line, is read the same way.
    """
    raw = read_text(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        records: list[_NumberedRecord] = list(jsonl_records(raw.splitlines(), path))
    else:
        records = _json_records(path, raw)
    out: dict[str, dict[str, Any]] = {}
    for line, record in records:
        _check_record(path, line, record)
        out[record["file"]] = record
    return out


# A record with the line it came from (JSONL) or None (one JSON document).
_NumberedRecord = tuple[int | None, Any]


def _json_records(path: Path, raw: str) -> list[_NumberedRecord]:
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON: {exc.msg}", line=exc.lineno) from None
    if isinstance(data, dict):
        records: list[_NumberedRecord] = []
        for name, record in data.items():
            if not isinstance(record, dict):
                raise InputError(path, f"entry for {name!r} is not an object", key=name)
            records.append((None, {"file": name, **record}))
        return records
    if isinstance(data, list):
        return [(None, record) for record in data]
    raise InputError(path, "expected a JSON object (file name -> record) or a list of records")


def _check_record(path: Path, line: int | None, record: Any) -> None:
    if (
        not isinstance(record, dict)
        or not isinstance(record.get("file"), str)
        or not record["file"]
    ):
        raise InputError(path, "every record needs a non-empty 'file' field", line=line)
    text = record.get("text")
    if text is not None and not isinstance(text, str):
        raise InputError(
            path, f"'text' of {record['file']!r} is not a string", line=line, key=record["file"]
        )


def parse_boxes(value: Any) -> list[Box] | None:
    """A metadata ``boxes`` field (a list of [left, top, right, bottom]) or None when absent
    or not of that shape (text-region metrics are then n/a for the image).

    >>> parse_boxes([[1, 2, 30, 12]])
    [(1, 2, 30, 12)]
    >>> parse_boxes("somewhere") is None
    True
    """
    if not isinstance(value, list) or not value:
        return None
    boxes = []
    for box in value:
        if not (isinstance(box, list | tuple) and len(box) == 4):
            return None
        if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in box):
            return None
        left, top, right, bottom = (int(v) for v in box)
        boxes.append((left, top, right, bottom))
    return boxes


METADATA_NAMES = ("metadata.jsonl", "metadata.json", "vae_images_metadata.json")


def _load_file(path: Path) -> Callable[[], Image.Image]:
    def load() -> Image.Image:
        from PIL import Image, ImageOps

        with Image.open(path) as opened:
            # Apply EXIF rotation so OCR sees the photo upright, as a viewer would.
            return ImageOps.exif_transpose(opened).convert("RGB")

    return load


def _check_opens(path: Path) -> None:
    """Refuse a file PIL cannot identify as an image (its header only: cheap), naming it."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path):
            pass
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise InputError(
            path, f"not an image PIL can open ({type(exc).__name__}); replace or remove it"
        ) from None


def _items_from_files(
    folder: Path,
    files: Iterable[str],
    metadata: dict[str, dict[str, Any]],
    source: Path | None = None,
) -> tuple[list[ImageItem], list[str]]:
    items, missing = [], []
    contained = Contained(folder, source=source or folder, column="file")
    for name in files:
        contained(name)  # a listed (or linked) file stays inside the image folder
        path = folder / name
        if not path.is_file():
            missing.append(name)
            continue
        _check_opens(path)  # before the run writes anything: not at its first batch
        record = metadata.get(name, {})
        text = record.get("text")
        attributes = {
            key: value
            for key, value in record.items()
            if key not in ("file", "text", "boxes") and isinstance(value, (str, int, float, bool))
        }
        # The file name (not the stem) is the id: "a.png" and "a.jpg" may both exist.
        items.append(
            ImageItem(
                name,
                _load_file(path),
                text if text else None,
                attributes,
                str(path),
                boxes=parse_boxes(record.get("boxes")),
            )
        )
    return items, missing


def folder_set(folder: Path, metadata_path: Path | None = None) -> ImageSet:
    """Images of ``folder``; with metadata, only the listed images (missing ones noted)."""
    if metadata_path is None:
        metadata_path = next((folder / n for n in METADATA_NAMES if (folder / n).is_file()), None)
    notes: list[str] = []
    if metadata_path is not None:
        metadata = read_metadata(metadata_path)
        files: list[str] = list(metadata)
        if not any(record.get("text") for record in metadata.values()):
            notes.append(
                f"{metadata_path.name} has no ground-truth 'text'; "
                "the original image's OCR is the reference."
            )
    else:
        metadata = {}
        files = sorted(p.name for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        notes.append("no metadata file; the original image's OCR is the reference.")
    items, missing = _items_from_files(folder, files, metadata, metadata_path)
    if missing:
        notes.append(
            f"{len(missing)} of {len(files)} listed images are not in {folder} "
            "(fetch them with `glyphbench vae-eval download`)."
        )
    if not items and missing and metadata_path is not None:
        raise InputError(
            metadata_path,
            f"none of its {len(missing)} listed images is in {folder} (the first: "
            f"{missing[0]}); put the images beside it, or fetch them with `glyphbench "
            "vae-eval download`",
        )
    if not items:
        raise InputError(folder, "no images found")
    return ImageSet(name=str(folder), items=items, notes=notes)


def is_default_set(spec: str) -> bool:
    """Whether an ``--images`` spec names the built-in set (``default``, ``default?size=..``);
    anything else is a path.

    >>> is_default_set("default?size=256"), is_default_set("imgs/metadata.jsonl")
    (True, False)
    """
    return spec.partition("?")[0].strip() == "default"


def load_image_set(
    spec: str, *, limit: int | None = None, native_size: int | None = None
) -> ImageSet:
    """Resolve an ``--images`` spec (see the module docstring) and apply ``limit``.

    ``native_size`` is what ``default?size=native`` becomes (512 when None).
    Non-default sets are limited to their first ``limit`` images (in set order).
    """
    if is_default_set(spec):
        parsed = Spec.parse(spec)
        unknown = sorted(set(parsed.options) - {"size", "seed"})
        if unknown:
            raise InputError(
                None, f"unknown option {unknown[0]!r} in image set {spec!r}; known: seed, size"
            )
        size_text = parsed.options.get("size", "512")
        try:
            size = (native_size or 512) if size_text == "native" else int(size_text)
            seed = int(parsed.options.get("seed", "0"))
        except ValueError:
            raise InputError(
                None, f"image set {spec!r}: size and seed must be integers (or size=native)"
            ) from None
        if not 64 <= size <= 4096:
            raise InputError(None, f"image set {spec!r}: size must be between 64 and 4096")
        return default_set(size, seed, limit)
    path = Path(spec)
    if path.is_dir():
        image_set = folder_set(path)
    elif path.is_file() and path.suffix.lower() in (".json", ".jsonl", ".ndjson"):
        image_set = folder_set(path.parent, path)
    elif path.exists():
        raise InputError(path, "expected a folder of images or a .json/.jsonl metadata file")
    else:
        raise InputError(
            path, "image set not found (use 'default', a folder, or a metadata .json/.jsonl)"
        )
    if limit is not None:
        image_set.items = image_set.items[:limit]
    return image_set
