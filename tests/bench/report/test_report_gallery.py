"""Gallery selection and thumbnails with OCR boxes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from PIL import Image

from glyphbench.report.gallery import (
    BOX_COLOUR,
    parse_boxes,
    select_examples,
    thumbnail_with_boxes,
    write_thumbnails,
)
from glyphbench.report.tables import latex_escape, to_latex, to_markdown


def _rows() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": ["m"] * 6 + ["n"],
            "prompt_id": ["p1", "p2", "p3", "p4", "p5", "p6", "p1"],
            "prompt_type": ["simple", "simple", "simple", "simple", "simple", "complex", "simple"],
            "ned": [0.9, 0.2, 1.0, 0.5, 0.0, 0.7, 0.4],
            "algorithm1": [1, 5, 0, 3, 9, 2, 4],
            "exact_match": [0.0, 0.0, 1.0, 0.0, None, 0.0, 0.0],
            "error": ["", "", "", "", "Generate: X", "", ""],
        }
    )


def test_select_examples_picks_best_and_worst_without_failed_rows() -> None:
    picked = select_examples(_rows(), "prompt_type", k=2)
    m_simple = picked[(picked["model"] == "m") & (picked["slice"] == "simple")]
    assert m_simple[m_simple["kind"] == "best"]["prompt_id"].tolist() == ["p3", "p1"]
    assert m_simple[m_simple["kind"] == "worst"]["prompt_id"].tolist() == [
        "p2",
        "p4",
    ]  # p5 failed: never shown
    # A slice with one row shows it once, as the only one (neither best nor worst).
    one = picked[(picked["model"] == "m") & (picked["slice"] == "complex")]
    assert one[["prompt_id", "kind"]].values.tolist() == [["p6", "only"]]
    assert not picked.duplicated(["model", "prompt_id"]).any()
    # Slices follow the attribute's natural order (simple before complex).
    assert picked[picked["model"] == "m"]["slice"].drop_duplicates().tolist() == [
        "simple",
        "complex",
    ]


def test_ties_are_labelled_ties_never_best_or_worst() -> None:
    """NED-0 images were labelled best, a perfect one worst."""
    rows = pd.DataFrame(
        {
            "model": ["blank"] * 3 + ["render"] * 3 + ["mixed"] * 4,
            "prompt_id": [f"p{i}" for i in range(3)] * 2 + [f"p{i}" for i in range(4)],
            "ned": [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
            "algorithm1": [4, 4, 4, 0, 0, 0, 0, 5, 5, 5],
            "error": [""] * 10,
        }
    )
    picked = select_examples(rows, None, k=2)
    kinds = picked.groupby("model")["kind"].apply(list).to_dict()
    assert kinds["blank"] == ["tie"] * 3 and kinds["render"] == ["tie"] * 3
    # one perfect image and three at 0: the perfect one is best; the 0s tie each other
    mixed = picked[picked["model"] == "mixed"].set_index("prompt_id")["kind"].to_dict()
    assert mixed == {"p0": "best", "p1": "tie", "p3": "tie", "p2": "tie"}


def test_thumbnail_draws_scaled_boxes_on_a_copy(tmp_path: Path) -> None:
    source = tmp_path / "image.png"
    Image.new("RGB", (640, 320), "white").save(source)
    box = [(100.0, 100.0), (300.0, 100.0), (300.0, 200.0), (100.0, 200.0)]
    target = tmp_path / "thumb.jpg"
    assert thumbnail_with_boxes(source, [box], target, side=320)
    thumb = Image.open(target).convert("RGB")
    assert thumb.size == (320, 160)
    r, g, b = thumb.getpixel((100, 50))  # the top edge (y=100) scaled by 1/2
    assert (
        abs(r - BOX_COLOUR[0]) < 40 and abs(g - BOX_COLOUR[1]) < 40 and abs(b - BOX_COLOUR[2]) < 40
    )
    assert thumb.getpixel((100, 75))[1] > 240  # inside the box: untouched white
    assert Image.open(source).getpixel((100, 100)) == (
        255,
        255,
        255,
    )  # the original is not modified
    assert not thumbnail_with_boxes(tmp_path / "missing.png", [], tmp_path / "x.jpg")
    assert parse_boxes(json.dumps([box])) == [box]


def test_gallery_without_images_shows_text_only(tmp_path: Path) -> None:
    rows = _rows().assign(
        prompt="p", text="t", ocr_text="o", image_path="images/none.png", run_dir=str(tmp_path)
    )
    items = write_thumbnails(select_examples(rows, "prompt_type", k=1), tmp_path / "report")
    assert items and all(item["image"] is None for item in items)
    assert {item["kind"] for item in items} == {"best", "worst", "only"}


def test_markdown_and_latex_tables_escape_and_mark_verdicts() -> None:
    table = pd.DataFrame(
        {"Model": ["a|b", "c_d"], "Passed": [True, False], "Score": ["0.5 [0.4, 0.6]", "–"]}
    )
    md = to_markdown(table).splitlines()
    assert md[0] == "| Model | Passed | Score |"
    assert md[2] == "| a\\|b | pass | 0.5 [0.4, 0.6] |"
    tex = to_latex(table, caption="50% done", label="tab:x")
    assert r"c\_d & fail & --" in tex and r"\caption{50\% done}" in tex and r"\toprule" in tex
    assert latex_escape("a&b") == r"a\&b"


def test_markdown_cells_show_hostile_labels_as_text() -> None:
    """``to_markdown`` escaped only ``|`` and ``\\n``: a label's tag, emphasis, link or bare
    carriage return went into the .md as markup."""
    labels = ["<script>alert(1)</script>", '"><img src=x onerror=alert(2)>', "*x* `y`",
              "[z](javascript:alert(3))", "two\rlines\x1b[2J"]  # fmt: skip
    md = to_markdown(pd.DataFrame({"Model": labels, "n": range(5)}))
    lines = md.splitlines()
    assert len(lines) == 2 + len(labels)  # no cell ended its row
    assert "<" not in md and ">" not in md and "\x1b" not in md and "\r" not in md
    assert "](" not in md and "\\*x\\*" in md and "\\`y\\`" in md
    assert lines[2] == "| &lt;script&gt;alert(1)&lt;/script&gt; | 0 |"
