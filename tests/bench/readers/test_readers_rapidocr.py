"""RapidOCR's options that act after detection: debris, Latin folding, a second box expansion,
spaces on every recogniser's lines."""

from __future__ import annotations

import pytest
from PIL import Image, ImageDraw, ImageFont

from glyphbench.core.fonts import font_by_name
from glyphbench.readers import get_reader
from glyphbench.readers.common import drop_debris, fold_latin
from glyphbench.readers.rapidocr import surer
from tests.helpers.paths import TESTS

Line = tuple[list[tuple[float, float]], str, float]


def _box(height: float, left: float = 0.0) -> list[tuple[float, float]]:
    return [(left, 0.0), (left + 50.0, 0.0), (left + 50.0, height), (left, height)]


def test_debris_drops_only_short_pieces_far_below_the_median_height() -> None:
    found: list[Line] = [
        (_box(40), "GRAND", 0.9),
        (_box(42), "SALE", 0.9),
        (_box(39), "of", 0.95),  # a short word at the text's size stays
        (_box(12), "W", 0.6),  # a speck
        (_box(11), "米", 0.9),  # a lone Han glyph beside an English title
        (_box(10), "tiny print", 0.7),  # small but long: a line of fine print stays
    ]
    kept = [text for _, text, _ in drop_debris(found, 0.5)]
    assert kept == ["GRAND", "SALE", "of", "tiny print"]
    assert drop_debris(found, 0.0) == found
    assert drop_debris([], 0.5) == []


def test_debris_counts_letters_and_digits_not_punctuation() -> None:
    found: list[Line] = [
        (_box(40), "OPEN", 0.9),
        (_box(41), "NOW", 0.9),
        (_box(39), "DAILY", 0.9),
        (_box(10), "5.", 0.9),  # two characters, one letter or digit
        (_box(10), "...!", 0.9),  # no letter or digit at all
        (_box(10), "2026", 0.9),  # four digits
    ]
    assert [text for _, text, _ in drop_debris(found, 0.5)] == ["OPEN", "NOW", "DAILY", "2026"]


def test_surer_keeps_the_reading_with_more_confident_characters() -> None:
    cut: list[Line] = [(_box(40), "RAND SAL", 0.97)]  # box too tight: ends cut
    whole: list[Line] = [(_box(40), "GRAND SALE", 0.95)]
    assert surer(cut, whole) == whole and surer(whole, cut) == whole
    assert surer(whole, list(whole)) is not whole  # a copy, first on a tie
    assert surer(whole, list(whole)) == whole
    assert surer([], whole) == whole and surer(whole, []) == whole


@pytest.fixture(scope="module")
def sale_sign() -> Image.Image:
    """A big title and a small two-letter mark in a corner, as a poster's ornament."""
    image = Image.new("RGB", (640, 240), "white")
    draw = ImageDraw.Draw(image)
    font = str(font_by_name("DejaVuSans"))
    draw.text((40, 60), "GRAND SALE", font=ImageFont.truetype(font, 64), fill="black")
    draw.text((560, 200), "ok", font=ImageFont.truetype(font, 16), fill="black")
    return image


def test_rapidocr_debris_drops_the_small_mark_and_keeps_the_title(sale_sign: Image.Image) -> None:
    (plain,) = get_reader("rapidocr?debris=0").read([sale_sign])
    (cleaned,) = get_reader("rapidocr?debris=0.5").read([sale_sign])
    assert plain.text == "GRAND SALE ok"
    assert cleaned.text == "GRAND SALE" and len(cleaned.boxes) == len(cleaned.confidences) == 1


def test_rapidocr_unclip_also_keeps_one_of_its_two_readings(sale_sign: Image.Image) -> None:
    (both,) = get_reader("rapidocr?unclip_also=1.6").read([sale_sign])
    (wide,) = get_reader("rapidocr").read([sale_sign])
    (narrow,) = get_reader("rapidocr?unclip_ratio=1.6").read([sale_sign])
    assert both.text in {wide.text, narrow.text}


def test_each_option_changes_the_version_and_the_default_names_its_own() -> None:
    default = get_reader("rapidocr").version
    assert "unclip 1.6;" in default and "debris below 0.3" in default and "Latin lines" in default
    versions = {
        get_reader(spec).version
        for spec in (
            "rapidocr",
            "rapidocr?debris=0",
            "rapidocr?latin_fold=0",
            "rapidocr?unclip_also=1.6",
            "rapidocr?space_lines=all",
            "rapidocr?order=lines",
            "rapidocr?angle_cls=1",
        )
    }
    assert len(versions) == 7  # stored readings of each setting are kept apart
    # with the later options off, a spec reads as it did before they existed
    spec = "rapidocr?debris=0&latin_fold=0&order=lines&angle_cls=1&unclip_ratio=2.0"
    earlier = get_reader(spec).version
    assert "debris" not in earlier and "Latin" not in earlier and earlier.endswith("(v4 lines)")
    assert "block" not in get_reader("rapidocr?order=lines&angle_cls=1").version
    assert get_reader("rapidocr?angle_cls=1").version.endswith("; read block by block")
    assert default.endswith("; read block by block; no angle classifier")


def test_the_angle_classifier_turns_upright_display_type_over() -> None:
    """Glyph-ByT5's Halloween poster (a real output in tests/data/real_t2i): PP-OCR's
    0/180-degree classifier turns its upright display lines over, and they are read upside
    down; the default reads every line as detected."""
    poster = Image.open(TESTS / "data" / "real_t2i" / "images" / "glyphbyt5_03.jpg")
    turned, default = (
        get_reader(spec).read([poster])[0].text for spec in ("rapidocr?angle_cls=1", "rapidocr")
    )
    assert "3JNO" in turned and "HALLOWEEN" not in turned  # "ONCE", read upside down
    assert "HALLOWEEN SALE" in default and "ONCE" in default and "3JNO" not in default


def test_a_line_truly_upside_down_needs_the_angle_classifier() -> None:
    """The price of the default: a line drawn upside down is misread without the
    classifier, and read with ``angle_cls=1`` (docs/readers/rapidocr.md says so)."""
    image = Image.new("RGB", (480, 120), "white")
    font = ImageFont.truetype(str(font_by_name("DejaVuSans")), 48)
    ImageDraw.Draw(image).text((20, 30), "Welcome Home", font=font, fill="black")
    upside_down = image.rotate(180)
    (turned,) = get_reader("rapidocr?angle_cls=1").read([upside_down])
    (as_detected,) = get_reader("rapidocr").read([upside_down])
    assert turned.text == "Welcome Home"
    assert as_detected.text != "Welcome Home"


FULLWIDTH_COLON, LAMBDA, CYRILLIC_O = "\uff1a", "\u039b", "\u041e"


@pytest.mark.parametrize(
    ("read", "person"),
    [
        (f"WATER {FULLWIDTH_COLON} 92℃", "WATER : 92°C"),  # the recogniser's Chinese forms
        (f"VECTR{LAMBDA}", "VECTRA"),  # a crossbar-less A
        (f"{CYRILLIC_O}PEN", "OPEN"),
        ("\uff33\uff21\uff2c\uff25\uff15\uff10", "SALE50"),  # fullwidth letters and digits
        ("Thank you\u3002", "Thank you."),
    ],
)
def test_fold_latin_writes_latin_lines_as_a_person_reads_them(read: str, person: str) -> None:
    assert fold_latin([read]) == [person]


@pytest.mark.parametrize(
    "text",
    [
        f"价格{FULLWIDTH_COLON}25元",  # Chinese keeps its own punctuation
        f"OPEN 营业中{FULLWIDTH_COLON}",  # any Han letter: the line is left as read
        "\u0391\u0398\u0397\u039d\u0391",  # Greek written in Greek stays Greek
        "\u041c\u041e\u0421\u041a\u0412\u0410",  # and Russian in Cyrillic
    ],
)
def test_fold_latin_leaves_other_writing_alone(text: str) -> None:
    assert fold_latin([text, f"{FULLWIDTH_COLON}25"]) == [text, f"{FULLWIDTH_COLON}25"]


def test_fold_latin_decides_on_the_whole_reading() -> None:
    digits = f"{FULLWIDTH_COLON}25"
    assert fold_latin(["PRICE", digits]) == ["PRICE", ":25"]  # the digits of an English line
    assert fold_latin(["价格", digits]) == ["价格", digits]  # and of a Chinese one
    assert fold_latin([digits]) == [digits]  # no letters: nothing to decide by


def test_rapidocr_latin_fold_is_applied_to_every_piece(monkeypatch: pytest.MonkeyPatch) -> None:
    reader = get_reader("rapidocr?latin_fold=1")
    lines: list[Line] = [(_box(40), f"VECTR{LAMBDA}", 0.9), (_box(40, 80), FULLWIDTH_COLON, 0.9)]
    monkeypatch.setattr(type(reader), "_lines", lambda self, rgb, gray, unclip: list(lines))
    (reading,) = reader.read([Image.new("RGB", (64, 64), "white")])
    assert reading.pieces == ["VECTRA", ":"]
    (unfolded,) = get_reader("rapidocr?latin_fold=0").read([Image.new("RGB", (64, 64), "white")])
    assert unfolded.pieces == ["VECTR" + LAMBDA, FULLWIDTH_COLON]
