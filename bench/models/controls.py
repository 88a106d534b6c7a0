"""Control models: known-quality images that validate the measurement itself.

They are not text-to-image models; they draw the expected text directly, so the
scores they get show what the OCR + scoring pipeline can measure:

``control:render``         the text, legibly: font, size, placement and colours
                           vary with the image seed (always high contrast, always
                           fitting, wrapped over lines when long). Its scores are
                           the measurement's ceiling, measured rather than assumed.
``control:typo?rate=R``    the same drawing, but each character of the text is
                           corrupted with probability R (see :func:`corrupt`).
``control:blank``          a plain image with nothing drawn: the floor.

A sound measurement orders them blank < typo(high R) < typo(low R) < render.
Every control is labelled ``is_control=True`` in results and reports.
Option ``size`` (pixels, 32 to 4096, default 512) sets the square image size;
``rate`` (0..1) is required by ``typo`` and refused by the others
(:class:`ControlOptions`, :class:`TypoOptions`).
A text of more than :data:`MAX_RENDER_CHARS` characters (4,000) is refused before a run
writes anything (:meth:`ControlModel.check_prompts`): the default 512-pixel image holds
about that many at the smallest font (6 px), and line breaking takes time in proportion
to the text's length (about 1.5 s for 2,000 characters without a space on one core,
``benchmarks/bench_render.py``).
Only PIL is used, and only the DejaVu fonts bundled with matplotlib, so the
images are the same on every machine. Text with Chinese or Japanese characters
(which DejaVu lacks) is drawn with a CJK system font instead
(:func:`glyphbench.core.fonts.cjk_fonts`: Noto Sans/Serif CJK SC, WenQuanYi Micro Hei;
Debian's ``fonts-noto-cjk`` and ``fonts-wqy-microhei``) and wraps between any two
characters; Latin text is drawn exactly as before.
"""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from glyphbench.core.errors import InputError
from glyphbench.core.fonts import MISSING_CJK, bundled_fonts, cjk_fonts
from glyphbench.core.registry import Options, Spec, register
from glyphbench.models.base import DRAWN_KEY, ImageRequest, ModelAdapter
from glyphbench.prompts.scripts import char_script

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image, ImageFont

#: Legible bundled fonts the render control chooses from (no light/math/display faces).
CONTROL_FONTS = (
    "DejaVuSans",
    "DejaVuSans-Bold",
    "DejaVuSans-Oblique",
    "DejaVuSansCondensed",
    "DejaVuSansCondensed-Bold",
    "DejaVuSansMono",
    "DejaVuSansMono-Bold",
    "DejaVuSerif",
    "DejaVuSerif-Bold",
    "DejaVuSerifCondensed",
)

#: Characters used for substitutions and insertions by :func:`corrupt`.
TYPO_ALPHABET = string.ascii_letters + string.digits

DEFAULT_SIZE = 512
#: The longest text the render and typo controls draw (LongText-Bench's longest is 482
#: characters; 4,000 fill the default 512-pixel image at the smallest font size, 6 px).
MAX_RENDER_CHARS = 4_000
MARGIN = 0.08  # fraction of the side kept free on each edge
MIN_FONT_FRACTION = 1 / 24  # smallest font size, as a fraction of the side (still legible)


def corrupt(text: str, rate: float, rng: random.Random) -> str:
    """Corrupt each non-space character of ``text`` with probability ``rate``.

    A corrupted character is, with equal probability, substituted by a different
    character, deleted, or followed by an inserted character (drawn from
    :data:`TYPO_ALPHABET`). Spaces are kept so words stay words. With
    ``rate=0`` the text is unchanged; with ``rate=1`` every character is hit.

    >>> corrupt("hello world", 0.0, random.Random(0))
    'hello world'
    >>> out = corrupt("hello world", 1.0, random.Random(0))
    >>> out != "hello world" and out.count(" ") == 1
    True
    """
    out: list[str] = []
    for char in text:
        if char.isspace() or rng.random() >= rate:
            out.append(char)
            continue
        operation = rng.randrange(3)
        if operation == 0:  # substitute with a different character
            out.append(rng.choice([c for c in TYPO_ALPHABET if c != char]))
        elif operation == 1:  # insert after the original
            out.append(char + rng.choice(TYPO_ALPHABET))
        # operation == 2: delete (append nothing)
    return "".join(out)


@functools.cache
def control_font_paths() -> tuple[Path, ...]:
    """Paths of :data:`CONTROL_FONTS` that exist among the bundled fonts."""
    by_stem = {p.stem: p for p in bundled_fonts()}
    found = tuple(by_stem[name] for name in CONTROL_FONTS if name in by_stem)
    if not found:
        raise RuntimeError("no bundled DejaVu fonts found (is matplotlib installed?)")
    return found


@functools.lru_cache(maxsize=512)
def _font(path: Path, size: int, index: int = 0) -> ImageFont.FreeTypeFont:
    from PIL import ImageFont

    return ImageFont.truetype(str(path), size, index=index)


def needs_cjk_font(text: str) -> bool:
    """Whether ``text`` has Han, kana or Hangul, which the DejaVu fonts cannot draw.

    >>> needs_cjk_font("OPEN"), needs_cjk_font("Café ½"), needs_cjk_font("营业中")
    (False, False, True)
    """
    return not text.isascii() and any(char_script(c) in ("han", "kana", "hangul") for c in text)


def cjk_font_faces() -> tuple[tuple[Path, int], ...]:
    """The installed CJK faces (file, index); an error naming the packages when none is
    (an :class:`InputError`: a command that draws Chinese, such as ``readers calibrate``,
    says it in one line, exit 2)."""
    faces = cjk_fonts()
    if not faces:
        raise InputError(None, MISSING_CJK)
    return faces


def _text_width(font: ImageFont.FreeTypeFont, text: str) -> float:
    """The one measure of drawn text (its cost grows with ``len(text)``)."""
    return float(font.getlength(text))


def wrap(text: str, font: ImageFont.FreeTypeFont, max_width: float) -> list[str]:
    """Greedy word wrap to ``max_width`` pixels; a word too long for a line is split.

    Each line is measured a bounded number of times, so the work grows with the text's
    length times log of a line's (a word too long for a line is cut by
    :func:`_longest_start`), not with its square.
    """
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        current = ""
        for word in paragraph.split():
            candidate = f"{current} {word}" if current else word
            if _text_width(font, candidate) <= max_width:
                current = candidate
                continue
            if current:
                lines.append(current)
            while len(word) > 1 and (cut := _longest_start(word, font, max_width)) is not None:
                lines.append(word[:cut])
                word = word[cut:]
            current = word
        lines.append(current)
    return lines


def _longest_start(word: str, font: ImageFont.FreeTypeFont, max_width: float) -> int | None:
    """Characters of ``word`` that go on a line of their own (the longest start that fits,
    at least one, never all), or None when the whole word fits.

    Starts of 2, 4, 8, ... characters are measured until one is too wide, then the
    length is found by bisection between the last two: about 2 log2(n) measures of at
    most twice a line, where trying every length from the word's end took n measures of
    the whole word (quadratic: minutes for 2,000 characters without a space). A longer
    start is never narrower than a shorter one, so the result is the same.
    """
    fits, probe = 1, 2  # word[:fits] goes on the line (one character always does)
    while True:
        probe = min(probe, len(word))
        if _text_width(font, word[:probe]) > max_width:
            break
        if probe == len(word):
            return None
        fits, probe = probe, 2 * probe
    too_wide = probe
    while too_wide - fits > 1:
        middle = (fits + too_wide) // 2
        if _text_width(font, word[:middle]) <= max_width:
            fits = middle
        else:
            too_wide = middle
    return fits


def _block_size(
    lines: list[str], font: ImageFont.FreeTypeFont, spacing: float
) -> tuple[float, float]:
    ascent, descent = font.getmetrics()
    line_height = ascent + descent
    width = max((_text_width(font, line) for line in lines), default=0.0)
    return width, line_height * len(lines) + spacing * line_height * (len(lines) - 1)


def _fit(
    text: str, path: Path, box: float, spacing: float, legible: int, index: int = 0
) -> tuple[int, list[str]]:
    """The largest font size (and its wrapped lines) whose block fits a ``box`` square.

    Words are split across lines only when no size of at least ``legible``
    pixels holds the longest word on one line; CJK text, written without spaces,
    may always break between characters.
    """
    words = text.split() or [""]

    def fits(size: int, keep_words: bool) -> list[str] | None:
        font = _font(path, size, index)
        if keep_words and max(_text_width(font, w) for w in words) > box:
            return None
        lines = wrap(text, font, box)
        width, height = _block_size(lines, font, spacing)
        return lines if width <= box and height <= box else None

    for keep_words in (False,) if index or needs_cjk_font(text) else (True, False):
        low, high = (legible if keep_words else 6), max(8, int(box))
        best: tuple[int, list[str]] | None = None
        while low <= high:  # binary search: the block grows with the font size
            middle = (low + high) // 2
            lines = fits(middle, keep_words)
            if lines is not None:
                best = (middle, lines)
                low = middle + 1
            else:
                high = middle - 1
        if best is not None:
            return best
    return 6, wrap(text, _font(path, 6, index), box)


def too_long(length: int) -> str:
    """Why a text of ``length`` characters is not drawn, and what to do.

    >>> too_long(5000)
    "its text has 5,000 characters; the render controls draw at most 4,000: shorten it or \
leave it out (where: 'text.str.len() <= 4000')"
    """
    return (
        f"its text has {length:,} characters; the render controls draw at most "
        f"{MAX_RENDER_CHARS:,}: shorten it or leave it out "
        f"(where: 'text.str.len() <= {MAX_RENDER_CHARS}')"
    )


def _contrasting_colours(rng: random.Random) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(background, ink): a light and a dark colour, in either role."""
    light = tuple(rng.randint(215, 255) for _ in range(3))
    dark = tuple(rng.randint(0, 50) for _ in range(3))
    pair = (light, dark) if rng.random() < 0.8 else (dark, light)
    return pair  # type: ignore[return-value]


def render_text(
    text: str, seed: int, size: int = DEFAULT_SIZE, *, max_chars: int = MAX_RENDER_CHARS
) -> Image.Image:
    """Draw ``text`` legibly on a ``size`` x ``size`` RGB image; layout varies with ``seed``.

    The font is picked from :data:`CONTROL_FONTS`, the size between 60% and 100%
    of the largest that fits (never below ``size/24`` unless the text cannot fit
    otherwise), the block placed anywhere inside the margins, lines centred or
    left-aligned; ink and background always contrast strongly.
    """
    from PIL import Image, ImageDraw

    if len(text) > max_chars:
        raise InputError(None, too_long(len(text)))
    rng = random.Random(seed)
    path = rng.choice(control_font_paths())
    index = 0
    cjk = needs_cjk_font(text)
    background, ink = _contrasting_colours(rng)
    spacing = rng.uniform(0.15, 0.4)
    align = rng.choice(("left", "center"))
    shrink = rng.uniform(0.6, 1.0)
    image = Image.new("RGB", (size, size), background)
    if not text.strip():
        return image
    margin = MARGIN * size
    box = size - 2 * margin
    legible = max(6, int(size * MIN_FONT_FRACTION))
    if cjk:  # drawn after the Latin draws, so Latin images stay as they were
        path, index = rng.choice(cjk_font_faces())
    largest, _ = _fit(text, path, box, spacing, legible, index)
    font_size = max(int(largest * shrink), min(largest, legible))
    font = _font(path, font_size, index)
    lines = wrap(text, font, box)
    width, height = _block_size(lines, font, spacing)
    left = margin + rng.uniform(0, max(0.0, box - width))
    top = margin + rng.uniform(0, max(0.0, box - height))
    ascent, descent = font.getmetrics()
    step = (ascent + descent) * (1 + spacing)
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        offset = (width - _text_width(font, line)) / 2 if align == "center" else 0.0
        draw.text((left + offset, top + number * step), line, font=font, fill=ink)
    return image


class ControlOptions(Options):
    """Options of ``control:render`` and ``control:blank``."""

    size: int = Field(
        default=DEFAULT_SIZE,
        ge=32,
        le=4096,  # 60,000 passed and the run failed on 10.8 GB per image
        description="side of the square image, in pixels",
    )


class TypoOptions(ControlOptions):
    """Options of ``control:typo``: the render options plus the corruption rate."""

    rate: float = Field(ge=0, le=1, description="probability that a character is corrupted")


class ControlModel(ModelAdapter):
    """Base of the three controls: size, spec and describe()."""

    is_control = True
    kind = ""

    def __init__(self, size: int = DEFAULT_SIZE, *, spec: str = "") -> None:
        self.spec = spec or f"control:{self.kind}"
        self.size = size

    def check_prompts(self, frame: pd.DataFrame, source: str) -> None:
        """Refuse a prompt whose text is longer than :data:`MAX_RENDER_CHARS`, or that needs a
        CJK font where none is installed (blank draws nothing, so any text goes): in a
        batch, one such prompt failed every other prompt of the batch with its error."""
        if self.kind == "blank" or "text" not in frame:
            return
        texts = frame["text"].fillna("").astype(str)
        lengths = texts.str.len()

        def prompt_id(row: int) -> object:
            return frame["prompt_id"].iloc[row] if "prompt_id" in frame else row

        if lengths.max() > MAX_RENDER_CHARS:
            row = int(lengths.to_numpy().argmax())
            raise InputError(
                source, f"prompt {prompt_id(row)!r}: {too_long(int(lengths.iloc[row]))}"
            )
        cjk = texts.map(needs_cjk_font).to_numpy()
        if cjk.any() and not cjk_fonts():
            row = int(cjk.argmax())
            raise InputError(
                source,
                f"prompt {prompt_id(row)!r} ({int(cjk.sum())} such): {MISSING_CJK}, or leave "
                "them out (--where \"lang == 'en'\")",
            )

    def describe(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "is_control": True,
            "control": self.kind,
            "size": self.size,
            "fonts": [p.stem for p in control_font_paths()],
        }


class RenderControl(ControlModel):
    kind = "render"

    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        return [drawn(render_text(r.text, r.seed, self.size), r.text) for r in requests]


class TypoControl(ControlModel):
    kind = "typo"

    def __init__(self, rate: float, size: int = DEFAULT_SIZE, *, spec: str = "") -> None:
        super().__init__(size, spec=spec)
        self.rate = rate

    def typo_text(self, request: ImageRequest) -> str:
        """The corrupted text drawn for ``request`` (its own random stream, seeded)."""
        return corrupt(request.text, self.rate, random.Random(f"typo|{request.seed}"))

    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        # Same layout as render for the same seed: only the text differs.
        texts = [self.typo_text(r) for r in requests]
        return [  # the limit is the prompt's (checked): its typos may add a few characters
            drawn(render_text(t, r.seed, self.size, max_chars=max(len(t), MAX_RENDER_CHARS)), t)
            for t, r in zip(texts, requests, strict=True)
        ]

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "rate": self.rate}


class BlankControl(ControlModel):
    kind = "blank"

    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        from PIL import Image

        return [
            drawn(Image.new("RGB", (self.size, self.size), (255, 255, 255)), "") for _ in requests
        ]


def drawn(image: Image.Image, text: str) -> Image.Image:
    """``image`` carrying the text a control drew (the results' ``drawn_text`` column)."""

    image.info[DRAWN_KEY] = text
    return image


@register(
    "models",
    "control",
    targets={"render": ControlOptions, "typo": TypoOptions, "blank": ControlOptions},
    usage="control:render|typo|blank[?size=N][&rate=R]",
    summary="Control images that validate the measurement: the text drawn legibly (render), "
    "with typos (typo) or not at all (blank).",
)
def create_control(spec: Spec, options: ControlOptions) -> ControlModel:
    """Factory for ``control:render|typo|blank`` (options already validated)."""
    if isinstance(options, TypoOptions):
        return TypoControl(options.rate, options.size, spec=spec.text)
    if spec.target == "blank":
        return BlankControl(options.size, spec=spec.text)
    return RenderControl(options.size, spec=spec.text)
