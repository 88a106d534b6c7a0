"""Block reading order (``glyphbench.readers.order.block_order``) on layouts built to break it.

Each layout is the boxes a detector gives for a page a person reads in a known order
(the real set's rule, ``tests/data/real_t2i/SOURCES.md``: blocks one after another, a
table row by row); the line order (``reading_order``) is checked beside it where the two
must differ, so each test shows what the block order changes.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from glyphbench.readers import reading_order
from glyphbench.readers.common import assemble
from glyphbench.readers.order import block_order

Box = list[tuple[float, float]]


def box(left: float, top: float, width: float = 80, height: float = 20) -> Box:
    return [(left, top), (left + width, top), (left + width, top + height), (left, top + height)]


def lines(left: float, top: float, count: int, step: float = 28) -> list[Box]:
    """A paragraph: ``count`` lines of one column, 8 px (0.4 of a line) apart."""
    return [box(left, top + n * step) for n in range(count)]


def test_two_cards_side_by_side_are_read_card_by_card() -> None:
    left, right = lines(0, 0, 4), lines(200, 0, 2)
    boxes = left + right
    assert reading_order(boxes) == [0, 4, 1, 5, 2, 3]  # lines interleave the cards
    assert block_order(boxes) == [0, 1, 2, 3, 4, 5]


def test_a_title_over_two_columns_is_read_first_then_each_column() -> None:
    title = [box(0, 0, width=280, height=30)]
    boxes = title + lines(0, 40, 3) + lines(200, 40, 1)
    assert block_order(boxes) == [0, 1, 2, 3, 4]
    assert reading_order(boxes) == [0, 1, 4, 2, 3]


def test_a_grid_of_cards_is_read_row_of_cards_by_row_of_cards() -> None:
    top_row = lines(0, 0, 3) + lines(200, 0, 1)  # cards 1 and 2
    bottom_row = lines(0, 150, 1) + lines(200, 150, 3)  # cards 3 and 4, 60 px below
    boxes = top_row + bottom_row
    assert block_order(boxes) == list(range(8))
    # the columns are not read first: card 3 comes after card 2
    assert block_order(boxes).index(4) > block_order(boxes).index(3)


def test_cards_of_one_layout_are_read_card_by_card_by_their_headings() -> None:
    # a heading 30 px high over two lines of 20 px: the lines align across the cards as a
    # table's would, and the heading tells them apart
    cards = [box(x, 0, height=30) for x in (0, 200, 400)]
    cards += [box(x, y) for x in (0, 200, 400) for y in (40, 68)]
    order = block_order(cards)
    assert order == [0, 3, 4, 1, 5, 6, 2, 7, 8]
    assert reading_order(cards) == [0, 1, 2, 3, 5, 7, 4, 6, 8]


def test_a_tilted_page_is_read_in_line_order() -> None:
    def tilted(left: float, top: float) -> Box:  # a stamp's line, 20 degrees off level
        return [(left, top), (left + 94, top + 34), (left + 87, top + 53), (left - 7, top + 19)]

    boxes = [*lines(0, 0, 3), tilted(300, 0)]
    assert block_order(boxes) == reading_order(boxes)
    assert block_order([*lines(0, 0, 3), box(300, 0)]) == [0, 1, 2, 3]


def test_a_table_is_read_row_by_row() -> None:
    boxes = [box(x, y) for y in (0, 28, 56) for x in (0, 200, 400)]
    assert block_order(boxes) == reading_order(boxes) == list(range(9))


def test_a_table_with_one_empty_cell_is_still_read_row_by_row() -> None:
    boxes = [box(0, 0), box(200, 0), box(0, 28), box(200, 28), box(0, 56)]
    assert block_order(boxes) == list(range(5))


def test_a_line_broken_at_a_wide_space_is_read_across() -> None:
    boxes = [box(300, 0), box(0, 2), box(0, 28, width=380)]  # "OPEN ... 24/7", then a line
    assert block_order(boxes) == reading_order(boxes) == [1, 0, 2]


def test_blocks_apart_are_read_top_to_bottom() -> None:
    boxes = [box(0, 200), box(0, 0), box(0, 100)]
    assert block_order(boxes) == [1, 2, 0]


def test_assemble_joins_pieces_in_the_order_asked_for() -> None:
    words = ["Card", "one", "Two", "body"]
    boxes = [box(0, 0), box(0, 28), box(200, 0), box(0, 56)]
    detections = [(b, w, 0.9) for b, w in zip(boxes, words, strict=True)]
    assert assemble(detections).text == "Card Two one body"
    assert assemble(detections, "blocks").text == "Card one body Two"


def test_empty() -> None:
    assert block_order([]) == []


column_boxes = st.lists(
    st.builds(box, st.integers(0, 40), st.integers(0, 600), st.integers(60, 200)),
    max_size=12,
)
any_boxes = st.lists(
    st.builds(
        box, st.integers(0, 500), st.integers(0, 500), st.integers(1, 80), st.integers(1, 40)
    ),
    max_size=12,
)


@given(any_boxes)
def test_block_order_is_a_permutation(boxes: list[Box]) -> None:
    assert sorted(block_order(boxes)) == list(range(len(boxes)))


@given(column_boxes)
def test_one_column_reads_as_the_line_order(boxes: list[Box]) -> None:
    # boxes of one height that overlap in x: no column to find, so nothing changes
    assert block_order(boxes) == reading_order(boxes)


@given(any_boxes, st.randoms(use_true_random=False))
def test_block_order_ignores_input_order(boxes: list[Box], rnd) -> None:
    shuffled = boxes[:]
    rnd.shuffle(shuffled)
    assert [boxes[i] for i in block_order(boxes)] == [shuffled[i] for i in block_order(shuffled)]


def test_a_page_of_many_lines_is_read_without_deep_recursion() -> None:
    # each cut parts one line from the rest: 1500 lines would nest 1500 calls
    boxes = [box(0, n * 28) for n in range(1500)]
    assert block_order(boxes) == list(range(1500))
