"""OCR engines on rendered text, and the reading-order rule.

Each available engine reads one mixed-size batch once (module-scoped fixtures), and
the tests check different parts of that reading, so real models run in the default
suite without loading or reading twice.
"""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image, ImageDraw, ImageFont

from glyphbench.core.errors import InputError
from glyphbench.core.fonts import font_by_name
from glyphbench.core.registry import PLUGINS
from glyphbench.readers import (
    ReadError,
    available_engines,
    get_reader,
    read_or_errors,
    reading_order,
)
from glyphbench.readers.base import Reader, Reading
from glyphbench.scoring import ned

# ---------------------------------------------------------------- reading order


def rect(
    left: float, top: float, width: float = 40, height: float = 20
) -> list[tuple[float, float]]:
    return [(left, top), (left + width, top), (left + width, top + height), (left, top + height)]


def test_reading_order_two_lines_given_shuffled() -> None:
    boxes = [rect(100, 52), rect(0, 0), rect(0, 50), rect(50, 3), rect(100, -2)]
    # line 1: x=0 (1), x=50 (3), x=100 (4); line 2: x=0 (2), x=100 (0)
    assert reading_order(boxes) == [1, 3, 4, 2, 0]


def test_reading_order_tall_box_does_not_merge_distant_lines() -> None:
    # Median height is 20, so the tolerance is 10: centres 10 and 35 are separate lines.
    boxes = [rect(0, 25), rect(0, 0), rect(60, 1)]
    assert reading_order(boxes) == [1, 2, 0]


def test_reading_order_accepts_rotated_polygons() -> None:
    tilted = [(0.0, 5.0), (40.0, 0.0), (42.0, 20.0), (2.0, 25.0)]
    assert reading_order([rect(60, 2), tilted]) == [1, 0]


def test_reading_order_empty() -> None:
    assert reading_order([]) == []


box_strategy = st.builds(
    rect,
    st.integers(0, 500),
    st.integers(0, 500),
    st.integers(1, 80),
    st.integers(1, 40),
)


@given(st.lists(box_strategy, max_size=12))
def test_reading_order_is_a_permutation(boxes: list[list[tuple[float, float]]]) -> None:
    order = reading_order(boxes)
    assert sorted(order) == list(range(len(boxes)))


@given(st.lists(st.integers(0, 2000), min_size=1, max_size=10, unique=True), st.integers(0, 300))
def test_reading_order_keeps_an_ordered_single_line(lefts: list[int], top: int) -> None:
    boxes = [rect(x, top) for x in sorted(lefts)]
    assert reading_order(boxes) == list(range(len(boxes)))


@given(st.lists(box_strategy, max_size=10), st.randoms(use_true_random=False))
def test_reading_order_ignores_input_order(boxes: list[list[tuple[float, float]]], rnd) -> None:
    shuffled = boxes[:]
    rnd.shuffle(shuffled)
    assert [boxes[i] for i in reading_order(boxes)] == [
        shuffled[i] for i in reading_order(shuffled)
    ]


# ---------------------------------------------------------------- registry, import cost


def test_import_is_light() -> None:
    code = (
        "import sys, glyphbench.readers; "
        "heavy = [m for m in ('torch', 'easyocr', 'onnxruntime', 'rapidocr_onnxruntime', 'cv2') "
        "if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_available_engines_lists_every_registered_engine() -> None:
    found = available_engines()
    assert {"easyocr", "rapidocr", "tesseract"} <= set(found)
    assert all(value is True or (isinstance(value, str) and value) for value in found.values())


def test_unknown_engine_and_option_are_input_errors() -> None:
    with pytest.raises(InputError, match=r"unknown reader 'nope'; known: .*easyocr, .*tesseract"):
        get_reader("nope")
    with pytest.raises(InputError, match="unknown option 'colour'"):
        get_reader("easyocr?colour=red")
    with pytest.raises(InputError, match="batch_size"):
        get_reader("easyocr?batch_size=zero")


# ---------------------------------------------------------------- rendered images


@cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(font_by_name("DejaVuSans-Bold")), size)


def render(
    lines: list[str], size: tuple[int, int] = (400, 100), font_size: int = 36
) -> Image.Image:
    """Black DejaVu Sans Bold on white, one line every 1.7 font sizes from (20, 20)."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    for n, line in enumerate(lines):
        draw.text((20, 20 + n * int(font_size * 1.7)), line, font=_font(font_size), fill="black")
    return image


# One mixed-size batch (kept small: OCR time grows with pixels). Sizes alternate so
# any mix-up of results shows; "small" goes in as a numpy array.
BATCH: list[tuple[str, str]] = [
    ("hello", "HELLO WORLD"),
    ("two_lines", "OPEN DAILY FRESH BREAD"),
    ("bread", "Fresh Bread 24/7"),
    ("small", "SALE"),
    ("blank", ""),
]


def batch_images() -> list[Any]:  # PIL images and one numpy array
    return [
        render(["HELLO WORLD"]),
        render(["OPEN DAILY", "FRESH BREAD"], size=(400, 160)),
        render(["Fresh Bread 24/7"]),
        np.asarray(render(["SALE"], size=(200, 90))),  # engines also take HxWx3 uint8 arrays
        Image.new("RGB", (400, 100), "white"),
    ]


ENGINE_SPECS = {"easyocr": "easyocr?gpu=auto", "rapidocr": "rapidocr", "tesseract": "tesseract"}


@pytest.fixture(scope="module", params=sorted(ENGINE_SPECS))
def engine(request: pytest.FixtureRequest) -> Reader:
    name = request.param
    status = available_engines().get(name, f"{name} is not registered")
    if status is not True:
        pytest.skip(str(status))
    return get_reader(ENGINE_SPECS[name])


@pytest.fixture(scope="module")
def readings(engine: Reader) -> dict[str, Reading]:
    results = engine.read(batch_images())
    assert len(results) == len(BATCH)
    return {key: result for (key, _), result in zip(BATCH, results, strict=True)}


@pytest.mark.slow
def test_engine_identity(engine: Reader) -> None:
    assert engine.name in ENGINE_SPECS
    assert engine.version.strip()


@pytest.mark.parametrize("key", ["hello", "bread", "small"])
def test_engine_reads_clear_text(readings: dict[str, Reading], key: str) -> None:
    expected = dict(BATCH)[key]
    got = readings[key].text
    assert ned(expected, got) >= 0.8, (expected, got)


def test_engine_reads_lines_in_order(readings: dict[str, Reading]) -> None:
    text = readings["two_lines"].text.lower()
    assert ned("OPEN DAILY FRESH BREAD", text) >= 0.8, text
    assert text.find("open") < text.find("bread"), text


def test_blank_image_gives_empty_text(readings: dict[str, Reading]) -> None:
    blank = readings["blank"]
    assert blank.text == ""
    assert blank.pieces == blank.boxes == blank.confidences == []


def test_result_shapes(readings: dict[str, Reading]) -> None:
    for result in readings.values():
        assert len(result.pieces) == len(result.boxes) == len(result.confidences)
        assert result.text == " ".join(result.pieces)
        for box in result.boxes:
            assert len(box) == 4
            assert all(isinstance(c, float) for point in box for c in point)
        assert all(isinstance(c, float) and 0.0 <= c <= 1.0 for c in result.confidences)
    hello = readings["hello"]
    xs = [x for box in hello.boxes for x, _ in box]
    assert 0 <= min(xs) < 60 and 250 < max(xs) <= 400  # the text spans x 20..~313


def test_failing_image_raises_with_its_index(engine: Reader) -> None:
    with pytest.raises(ReadError) as caught:
        engine.read([Image.new("RGB", (64, 32), "white"), Image.new("RGB", (0, 0))])
    assert caught.value.index == 1
    assert caught.value.engine == engine.name


@pytest.mark.slow
def test_read_or_errors_isolates_the_failing_image(engine: Reader) -> None:
    white = Image.new("RGB", (64, 32), "white")
    outcomes = read_or_errors(engine, [white, Image.new("RGB", (0, 0)), white])
    assert [type(o) for o in outcomes] == [Reading, ReadError, Reading]
    assert outcomes[0].text == outcomes[2].text == ""  # type: ignore[union-attr]


# ---------------------------------------------------------------- EasyOCR specifics


def test_easyocr_reuses_loaded_weights() -> None:
    if available_engines()["easyocr"] is not True:
        pytest.skip(str(available_engines()["easyocr"]))
    first = get_reader("easyocr?gpu=auto")
    second = get_reader("easyocr?gpu=auto&batch_size=1")
    assert first._reader is second._reader  # type: ignore[attr-defined]


@pytest.mark.slow
def test_easyocr_batched_matches_one_by_one(readings: dict[str, Reading], engine: Reader) -> None:
    if engine.name != "easyocr":
        pytest.skip("EasyOCR batching only")
    one_by_one = get_reader("easyocr?gpu=auto&batch_size=1")
    # "hello", "bread" and "blank" share a size, so the module reading batched them.
    single = one_by_one.read([batch_images()[2]])
    assert single[0].text == readings["bread"].text
    assert single[0].boxes == readings["bread"].boxes


def test_rapidocr_options_are_checked() -> None:
    with pytest.raises(InputError, match="'det_limit': Input should be 'max' or 'min'"):
        get_reader("rapidocr?det_limit=sideways")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("easyocr?gpu=maybe", "'gpu': Input should be 'auto' or Input should be a valid boolean"),
        ("easyocr?batch_size=0", "'batch_size': Input should be greater than or equal to 1"),
        ("rapidocr?det_side=8", "'det_side': Input should be greater than or equal to 32"),
        ("rapidocr?debris=1.5", "'debris': Input should be less than 1"),
        ("rapidocr?space_lines=some", "'space_lines': Input should be 'v4' or 'all'"),
        ("rapidocr?unclip_also=-1", "'unclip_also': Input should be greater than or equal to 0"),
        ("tesseract?workers=0", "'workers': Input should be greater than or equal to 1"),
        ("tesseract?psm=sparse", "'psm': Input should be a valid integer"),
    ],
)
def test_reader_options_are_typed(spec: str, message: str) -> None:
    """Bad options fail when the spec resolves, before any engine (or its weights) loads."""
    with pytest.raises(InputError, match=message):
        PLUGINS.resolve("readers", spec)


def test_reader_options_convert_strings() -> None:
    options = PLUGINS.resolve("readers", "easyocr?gpu=0&batch_size=4").options
    assert (options.gpu, options.batch_size) == (False, 4)
    assert PLUGINS.resolve("readers", "easyocr").options.gpu == "auto"
    tesseract = PLUGINS.resolve("readers", "tesseract?lang=eng+deu&timeout=5").options
    assert (tesseract.lang, tesseract.timeout, tesseract.psm) == ("eng+deu", 5.0, 11)


def test_tesseract_without_binary_is_a_clear_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import glyphbench.readers.tesseract as tesseract_engine

    monkeypatch.setattr(tesseract_engine.shutil, "which", lambda name: None)
    with pytest.raises(InputError, match="apt-get install tesseract-ocr"):
        get_reader("tesseract")


def test_available_engines_gives_the_reason_when_tesseract_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import glyphbench.readers.tesseract as tesseract_engine

    monkeypatch.setattr(tesseract_engine.shutil, "which", lambda name: None)
    assert (
        available_engines()["tesseract"]
        == "tesseract binary not found; apt-get install tesseract-ocr"
    )


def test_easyocr_gpu_1_without_cuda_is_an_input_error() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(InputError, match="gpu=1"):
        get_reader("easyocr?gpu=1")


def test_tesseract_parallel_workers_keep_input_order() -> None:
    if available_engines()["tesseract"] is not True:
        pytest.skip(str(available_engines()["tesseract"]))
    engine = get_reader("tesseract?workers=2")
    texts = [
        r.text for r in engine.read([render(["SALE"], size=(200, 90)), render(["HELLO WORLD"])])
    ]
    assert ned("SALE", texts[0]) >= 0.8 and ned("HELLO WORLD", texts[1]) >= 0.8, texts
