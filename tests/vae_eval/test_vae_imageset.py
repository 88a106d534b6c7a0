"""glyphbench.vae_eval.imageset: the rendered default set, folder/metadata sets, TextInVision
metadata."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from glyphbench.core.errors import InputError
from glyphbench.vae_eval.imageset import (
    BACKGROUNDS,
    CHAR_CLASSES,
    FONT_SIZES,
    REPLICATES,
    WORD_POOLS,
    default_cells,
    default_set,
    load_image_set,
    read_metadata,
    stratified_limit,
    write_default_set,
)


def test_full_default_set_crosses_every_attribute() -> None:
    image_set = default_set(size=256)
    assert (
        len(image_set.items) == len(FONT_SIZES) * len(CHAR_CLASSES) * len(BACKGROUNDS) * REPLICATES
    )
    assert len({item.image_id for item in image_set.items}) == len(image_set.items)
    cells = Counter(
        (i.attributes["font_size"], i.attributes["char_class"]) for i in image_set.items
    )
    assert set(cells.values()) == {len(BACKGROUNDS) * REPLICATES}
    assert (
        len({i.attributes["font"] for i in image_set.items}) >= 3
    )  # DejaVu Sans/Serif/Mono at least


def test_truth_is_drawn_from_the_class_pool_and_fits() -> None:
    for item in default_set(size=256).items:
        assert item.truth
        pool = set(WORD_POOLS[item.attributes["char_class"]])
        assert set(item.truth.split()) <= pool
        # big fonts in a small image drop words that do not fit, never all of them
        assert 1 <= len(item.truth.split()) <= 6
    assert len(default_set(size=512).items) == 180  # at 512 px every cell has text


@pytest.mark.slow
def test_rendering_is_deterministic_and_seeded() -> None:
    first = default_set(size=128, limit=3)
    second = default_set(size=128, limit=3)
    other_seed = default_set(size=128, seed=1, limit=3)
    for a, b, c in zip(first.items, second.items, other_seed.items, strict=True):
        pa, pb, pc = (np.asarray(x.load()) for x in (a, b, c))
        assert pa.shape == (128, 128, 3)
        assert np.array_equal(pa, pb)
        assert a.truth == b.truth
        assert not np.array_equal(pa, pc)


def test_text_is_actually_drawn() -> None:
    item = next(i for i in default_set(size=128).items if i.attributes["background"] == "plain")
    pixels = np.asarray(item.load().convert("L"))
    assert (pixels < 100).sum() > 50  # dark glyph pixels on white


def test_stratified_limit_spreads_over_size_and_class() -> None:
    picked = stratified_limit(default_cells(), len(FONT_SIZES) * len(CHAR_CLASSES))
    assert {(c.font_size, c.char_class) for c in picked} == {
        (s, k) for s in FONT_SIZES for k in CHAR_CLASSES
    }
    # a larger limit keeps every image of a smaller one
    small = {c.image_id for c in stratified_limit(default_cells(), 7)}
    large = {c.image_id for c in stratified_limit(default_cells(), 40)}
    assert small <= large and len(small) == 5 and len(large) == 40


@pytest.mark.parametrize("limit", [5, 20, 22, 30, 64, 179])
def test_limit_draws_an_equal_number_per_font_size_with_every_size(limit: int) -> None:
    """`--limit 20` drew 6/6/6/2 images at 48/32/20/14 px and none at 10 px."""
    picked = stratified_limit(default_cells(), limit)
    per_size = Counter(c.font_size for c in picked)
    assert set(per_size) == set(FONT_SIZES)
    assert set(per_size.values()) == {limit // len(FONT_SIZES)}
    assert len(picked) == limit - limit % len(FONT_SIZES)


@pytest.mark.slow
def test_limit_20_of_the_rendered_set_and_its_note() -> None:
    image_set = default_set(size=512, limit=20)
    sizes = Counter(item.attributes["font_size"] for item in image_set.items)
    assert sizes == {size: 4 for size in FONT_SIZES}
    assert not image_set.notes  # 20 is a multiple of the 5 sizes: nothing left out
    rounded = default_set(size=512, limit=22)
    assert len(rounded.items) == 20
    assert rounded.notes == [
        "--limit 22: 20 images drawn, 4 per font size (an equal number per size)."
    ]
    tiny = default_set(size=512, limit=2)
    assert {item.attributes["font_size"] for item in tiny.items} == {48, 32}
    assert "only 48, 32 px are covered" in tiny.notes[0]


@pytest.mark.slow
def test_write_default_set_round_trips_through_folder_loader(tmp_path: Path) -> None:
    metadata = write_default_set(tmp_path / "set", size=96, limit=4)
    lines = metadata.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4
    loaded = load_image_set(str(tmp_path / "set"))
    rendered = default_set(size=96, limit=4)
    assert [i.image_id for i in loaded.items] == [f"{i.image_id}.png" for i in rendered.items]
    for a, b in zip(loaded.items, rendered.items, strict=True):
        assert a.truth == b.truth
        assert a.attributes["font_size"] == b.attributes["font_size"]
        assert np.array_equal(np.asarray(a.load()), np.asarray(b.load()))


def test_folder_without_metadata_has_no_truth(tmp_path: Path) -> None:
    Image.new("RGB", (32, 32), "white").save(tmp_path / "b.png")
    Image.new("RGB", (32, 32), "black").save(tmp_path / "a.jpg")
    (tmp_path / "notes.txt").write_text("not an image")
    image_set = load_image_set(str(tmp_path))
    assert [i.image_id for i in image_set.items] == ["a.jpg", "b.png"]
    assert all(i.truth is None for i in image_set.items)
    assert any("reference" in note for note in image_set.notes)


def test_textinvision_style_metadata_with_optional_text(tmp_path: Path) -> None:
    Image.new("RGB", (32, 32), "white").save(tmp_path / "one.jpg")
    meta = {
        "one.jpg": {"image_url": "https://example.org/1", "source": "Pixabay", "text": "OPEN 24"},
        "two.jpg": {"image_url": "https://example.org/2", "source": "Unsplash"},
    }
    (tmp_path / "vae_images_metadata.json").write_text(json.dumps(meta))
    image_set = load_image_set(str(tmp_path / "vae_images_metadata.json"))
    assert [i.image_id for i in image_set.items] == ["one.jpg"]
    assert image_set.items[0].truth == "OPEN 24"
    assert image_set.items[0].attributes["source"] == "Pixabay"
    assert any("1 of 2 listed images" in note for note in image_set.notes)


def test_real_textinvision_metadata_parses(textinvision_dir: Path) -> None:
    metadata = read_metadata(textinvision_dir / "vae_images_metadata.json")
    assert len(metadata) == 1027
    assert all(record["image_url"].startswith("http") for record in metadata.values())
    assert {record["source"] for record in metadata.values()} <= {
        "Pixabay",
        "Unsplash",
        "unsplash",
    }  # case as shipped
    assert not any(record.get("text") for record in metadata.values())  # no transcriptions shipped


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "malformed JSON"),
        ('{"a.jpg": 3}', "not an object"),
        ('[{"text": "x"}]', "'file'"),
        ('{"a.jpg": {"text": 5}}', "not a string"),
        ("42", "expected a JSON object"),
    ],
)
def test_bad_metadata_is_one_line_input_error(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "meta.json"
    path.write_text(content)
    with pytest.raises(InputError, match=problem):
        read_metadata(path)


def test_bad_jsonl_metadata_names_its_line(tmp_path: Path) -> None:
    """JSONL metadata goes through glyphbench.core.io.jsonl_records: the bad line is named."""
    path = tmp_path / "meta.jsonl"
    path.write_text('{"file": "a.png"}\n\n{"file": \n')
    with pytest.raises(InputError, match="malformed JSON") as caught:
        read_metadata(path)
    assert caught.value.line == 3
    path.write_text('{"file": "a.png", "text": "Hi"}\n["b.png"]\n')
    with pytest.raises(InputError, match="expected a JSON object") as caught:
        read_metadata(path)
    assert caught.value.line == 2
    path.write_text('{"file": "a.png", "text": "Hi"}\n')
    assert read_metadata(path) == {"a.png": {"file": "a.png", "text": "Hi"}}


def test_bad_image_set_specs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_image_set(str(tmp_path / "missing"))
    with pytest.raises(InputError, match="unknown option"):
        load_image_set("default?sise=3")
    with pytest.raises(InputError, match="between 64"):
        load_image_set("default?size=8")
    with pytest.raises(InputError, match="no images found"):
        load_image_set(str(tmp_path))


def test_native_size_option() -> None:
    image_set = load_image_set("default?size=native", native_size=128, limit=1)
    assert image_set.items[0].attributes["width"] == 128


@pytest.mark.slow
def test_text_boxes_hold_all_the_ink_and_survive_metadata(tmp_path: Path) -> None:
    from glyphbench.vae_eval.imageset import folder_set

    items = [
        item for item in default_set(size=256).items if item.attributes["background"] == "plain"
    ]
    for item in items[:12]:
        assert item.boxes and len(item.boxes) == len((item.truth or "").splitlines())
        ink = np.asarray(item.load().convert("L")) < 255
        mask = np.zeros_like(ink)
        for left, top, right, bottom in item.boxes:
            assert 0 <= left < right <= 256 and 0 <= top < bottom <= 256
            mask[top:bottom, left:right] = True
        assert ink.any() and not (ink & ~mask).any()  # no drawn pixel outside the boxes
        assert mask.mean() < 0.6  # and the boxes are the text, not the image
    write_default_set(tmp_path / "set", size=128, limit=3)
    written = folder_set(tmp_path / "set")
    assert [item.boxes for item in written.items] == [
        item.boxes for item in default_set(size=128, limit=3).items
    ]
    plain = tmp_path / "plain"
    plain.mkdir()
    Image.new("RGB", (32, 32)).save(plain / "a.png")
    assert folder_set(plain).items[0].boxes is None  # no boxes: text-region metrics are n/a


def test_a_metadata_file_whose_images_are_all_missing_is_named_with_the_first(
    tmp_path: Path,
) -> None:
    """The error named the folder (".") and neither the metadata file nor an image."""
    import json

    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps([{"file": "nope.png", "text": "Hi"}]), encoding="utf-8")
    with pytest.raises(InputError, match=r"meta\.json: none of its 1 listed images .*nope\.png"):
        load_image_set(str(meta))
