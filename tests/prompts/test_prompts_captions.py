"""TextCaps and VizWiz-Captions as prompt sources, on fixtures in their formats.

tests/data/captions/README.md says how the fixtures were written: the published file
layouts, captions and tokens written here, shaped as real ones (the datasets are not in
the repository). The rules' measured precision on real captions is in docs/prompts.md.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.prompts.caption_text import textcaps_spans, vizwiz_spans
from glyphbench.prompts.captions import PRECANNED, read_textcaps, read_vizwiz
from glyphbench.prompts.sources import load_prompt_set
from tests.helpers.paths import TESTS
from tests.helpers.prompts_cli import run_main

DATA = TESTS / "data" / "captions"
TEXTCAPS = DATA / "TextCaps_0.1_fixture.json"
OCR = DATA / "TextVQA_Rosetta_OCR_fixture.json"
HUB = DATA / "textcaps_hub_fixture.jsonl"
VIZWIZ = DATA / "vizwiz_captions_fixture.json"
V1_VIZWIZ = DATA / "vizwiz_captions_v1_layout_fixture.json"  # the 1.0 layout: no is_precanned
TEXTCAPS_SPEC = f"textcaps:{TEXTCAPS}?ocr={OCR}"
VIZWIZ_SPEC = f"vizwiz:{VIZWIZ}"
runner = CliRunner()


# ---------------------------------------------------------------- the TextCaps rule


def test_textcaps_takes_one_contiguous_span_never_words_joined_from_apart() -> None:
    """Words that match OCR tokens far apart in the caption were joined ("stop STOP",
    "coffee Starbucks Coffee"): the text is one span as written, the OCR's case chosen
    where the caption repeats the words."""
    assert textcaps_spans("A red stop sign that says STOP at a street corner.", ["STOP"]) == [
        "STOP"
    ]
    coffee = textcaps_spans(
        "A coffee cup from Starbucks Coffee on a table.", ["STARBUCKS", "COFFEE"]
    )
    assert coffee == ["Starbucks Coffee"]
    # as written when the tokens have another case; lone function words are no text
    assert textcaps_spans("A bottle of Coca-Cola.", ["a", "COCA-COLA"]) == ["Coca-Cola"]
    assert textcaps_spans("a wall with a sign", ["a", "the"]) == []
    # "off" of a sign is text, not a function word to trim
    assert textcaps_spans("a sign that says 20% off", ["20%", "OFF"]) == ["20% off"]


def test_textcaps_lists_every_candidate_when_two_texts_differ() -> None:
    """Two different texts in one caption: both are candidates, none is chosen."""
    spans = textcaps_spans(
        "A bottle of Coca-Cola next to a sign for the CITY MARKET.", ["coca-cola", "city", "market"]
    )
    assert spans == ["Coca-Cola", "CITY MARKET"]


def test_textcaps_file_gives_one_prompt_per_caption_with_one_text() -> None:
    captions = read_textcaps(TEXTCAPS, OCR)
    texts = {c.caption_id: c.text for c in captions.found}
    assert texts == {"1": "Coca-Cola", "2": "coca-cola", "3": "CITY MARKET",
                     "4": "city market open 24 hours", "6": "5J41", "7": "STOP", "8": "stop",
                     "9": "Starbucks Coffee", "10": "coffee"}  # fmt: skip
    assert [c.caption_id for c in captions.not_found] == ["5"]
    assert [(c.caption_id, c.candidates) for c in captions.ambiguous] == [
        ("11", ["Coca-Cola", "CITY MARKET"])
    ]


def test_a_hub_export_row_gives_one_prompt_per_reference_caption() -> None:
    captions = read_textcaps(HUB, None)
    assert [c.text for c in captions.found] == ["5J41"]
    assert [c.caption for c in captions.not_found] == ["a cab on a street"]


def test_textcaps_words_match_tokens_by_letters_and_digits() -> None:
    """A caption word had to equal a token whole: "King's" of the token KING was no
    match (a name cut to "Stephen"), nor "20%" of 20 ("off" alone), "Coca-Cola" of COCA
    and COLA, "$5.99" of 5.99; "&" between two tokens' words split one name in two."""
    assert textcaps_spans("A book by Stephen King's on a shelf", ["STEPHEN", "KING"]) == [
        "Stephen King"
    ]
    assert textcaps_spans("a book by stephen king’s", ["STEPHEN", "KING"]) == ["stephen king"]
    assert textcaps_spans("a sign that says 20% off", ["20", "OFF"]) == ["20% off"]
    assert textcaps_spans("A can of Coca-Cola on a desk.", ["COCA", "COLA"]) == ["Coca-Cola"]
    assert textcaps_spans("a price tag of $5.99", ["5.99"]) == ["$5.99"]
    assert textcaps_spans("A Barnes & Noble store front.", ["BARNES", "NOBLE"]) == [
        "Barnes & Noble"
    ]
    # a possessive a token carries stays; a contraction is no possessive to cut
    assert textcaps_spans("A book by Stephen King's", ["STEPHEN", "KING'S"]) == ["Stephen King's"]
    assert textcaps_spans("a sign that says let's go", ["LET", "GO"]) == ["go"]
    # part of a word is no match; "&" joins only two tokens' words
    assert textcaps_spans("A can of Coca-Cola on a desk.", ["COCA"]) == []
    assert textcaps_spans("a can of Coke & a sandwich", ["COKE"]) == ["Coke"]


def test_textcaps_gives_back_the_ends_a_token_writes() -> None:
    """The token is evidence of the text's form: what it writes around its letters is the
    text's where the caption writes it too; a comma stays the caption's."""
    assert textcaps_spans("a sign for Yahoo! on a wall", ["YAHOO!"]) == ["Yahoo!"]
    assert textcaps_spans("a sign for Yahoo! on a wall", ["YAHOO"]) == ["Yahoo"]
    phone = textcaps_spans("a card with (555) 123-4567 on it", ["(555)", "123-4567"])
    assert phone == ["(555) 123-4567"]
    assert textcaps_spans("a sign that says sale, now", ["SALE,"]) == ["sale"]


def test_unicode_punctuation_around_a_text_is_trimmed() -> None:
    """Ellipses, dashes, inverted marks and low quotes stayed on the word: the word no
    longer equalled its OCR token (text_not_found), or the text kept them ("STOP…")."""
    assert textcaps_spans("A sign …says STOP… here", ["STOP"]) == ["STOP"]
    assert textcaps_spans("A red sign, STOP— then a road.", ["STOP"]) == ["STOP"]
    assert textcaps_spans("A card that says ¡Hola! in red.", ["hola"]) == ["Hola"]
    assert textcaps_spans("A mat saying „Hallo“ at a door.", ["HALLO"]) == ["Hallo"]
    assert vizwiz_spans("a sign that says STOP… and more", []) == ["STOP"]
    assert vizwiz_spans("a shirt that reads «Bonjour» in red", []) == ["Bonjour"]
    # a dash between words without spaces parts them ("labeled—Pepsi—on" was one word)
    assert vizwiz_spans("A can labeled—Pepsi—on a desk", []) == ["Pepsi"]
    assert textcaps_spans("A sign STOP—then a road.", ["STOP"]) == ["STOP"]
    # ASCII ones still go: a sentence's point, an ellipsis before a word, brackets around it
    assert textcaps_spans("A sign that says STOP.", ["STOP"]) == ["STOP"]
    assert vizwiz_spans("a sign that says ...STOP here", []) == ["STOP"]
    assert vizwiz_spans("a can of (Coca-Cola) on a desk", ["a Coca-Cola can"]) == ["Coca-Cola"]


def test_what_the_text_itself_carries_at_its_ends_is_kept() -> None:
    """Every end character was trimmed: "<script>alert(1)</script>" became
    "script>alert(1)</script", "../../etc/passwd" "etc/passwd", "U.S.A." "U.S.A"."""
    script = "<script>alert(1)</script>"
    assert textcaps_spans(f"A screen showing {script} in a browser", [script]) == [script]
    assert vizwiz_spans("a screen that reads <b>hello</b>", []) == ["<b>hello</b>"]
    assert vizwiz_spans("a screen that reads ../../etc/passwd", []) == ["../../etc/passwd"]
    assert textcaps_spans("A flag reading U.S.A.", ["U.S.A."]) == ["U.S.A."]
    assert textcaps_spans("The word 'Dr.' on a door.", ["Dr."]) == ["Dr."]
    # a bracket the word opens is closed, a minus kept; a caption's point after them goes
    assert vizwiz_spans("a screen that reads alert(1).", []) == ["alert(1)"]
    assert vizwiz_spans("a thermometer that reads -5 degrees", []) == ["-5 degrees"]
    assert vizwiz_spans("a sign that says 18+ only", []) == ["18+ only"]
    # a title's point joins the name and compares as the bare title with other captions
    assert vizwiz_spans("A can of Dr. Pepper.", ["a can of Dr Pepper soda"]) == ["Dr. Pepper"]
    # an initialism's point still ends the sentence: no name runs on across it
    assert vizwiz_spans("A flag of the U.S.A. The flag is red.", []) == ["U.S.A."]


def test_the_known_textcaps_failure_the_docs_name() -> None:
    """docs/prompts.md names it: an ordinary word that is also an OCR token is taken as text."""
    assert textcaps_spans("an open door next to a sign", ["open"]) == ["open"]


# ---------------------------------------------------------------- the VizWiz rule
# Captions shaped as the real ones of the hand check (docs/prompts.md); the issue's own
# examples are quoted where a test pins them.


def test_vizwiz_quoted_text_comes_first() -> None:
    assert vizwiz_spans("A mug that reads “Best Dad” in blue.", []) == ["Best Dad"]
    assert vizwiz_spans("It's a can of Pepsi.", []) == []  # an apostrophe is no quote


def test_a_cue_of_writing_beats_other_names_and_a_first_word() -> None:
    """The first-word rule turned "PlayStation 2 ... titled NASCAR 07" into "2 NASCAR 07"."""
    others = [
        "the PlayStation game NASCAR 07 on a table",
        "A PlayStation 2 game, called NASCAR 07.",
    ]
    assert vizwiz_spans("PlayStation 2 video game case titled NASCAR 07.", others) == ["NASCAR 07"]
    assert vizwiz_spans("A hat with the word Star in script.", []) == ["Star"]
    assert vizwiz_spans("a surface that reads cheese balls with other text", []) == ["cheese balls"]
    # lower-case words that run into a verb are a clause, not a text
    assert vizwiz_spans("Poster that reads age is one way to keep score", []) == []
    # "reading" after an article is an adjective, no cue
    assert vizwiz_spans("A reading comprehension checklist.", ["a checklist"]) == []


def test_a_caption_in_capitals_reads_its_cued_words_as_lower_case_ones() -> None:
    """Its capitals say nothing, yet they were read as a copied name: "STOP ON"."""
    assert vizwiz_spans("A SIGN THAT SAYS STOP ON A STREET", []) == ["STOP"]
    assert vizwiz_spans("A CAN THAT READS COCA COLA.", []) == ["COCA COLA"]
    assert vizwiz_spans("A SIGN THAT SAYS SALE. A MAN WALKS BY", []) == ["SALE"]
    # words that run into a verb are a clause: no text, as in lower case
    assert vizwiz_spans("A SIGN THAT SAYS THE END IS NEAR", []) == []
    # a preposition before no article may be the text's own: undecided, not "HANDLE"
    assert vizwiz_spans("A BOX THAT READS HANDLE WITH CARE", []) == []
    # quotes and mixed case still decide; a caption in capitals in part is not one
    assert vizwiz_spans('A SIGN THAT SAYS "STOP ON RED" ON A POLE', []) == ["STOP ON RED"]
    assert vizwiz_spans("A SIGN THAT SAYS iPhone ON A TABLE", []) == ["iPhone"]
    assert vizwiz_spans("A box labeled NASCAR 07 in red.", []) == ["NASCAR 07"]


def test_lower_case_brands_marked_as_a_brand_are_found() -> None:
    """Lower-case brands ("fanta") were never found."""
    assert vizwiz_spans("an orange and blue can of fanta brand soda", []) == ["fanta"]
    assert vizwiz_spans("a small red package of banquet brand ready made food", []) == ["banquet"]
    assert vizwiz_spans("a box of crackers on a shelf, brand hollins, blue box.", []) == ["hollins"]


def test_a_name_only_one_caption_gives_is_found_when_it_is_coined() -> None:
    """Names no other caption repeats failed the sibling test."""
    assert vizwiz_spans("A bottle of Robitussin cough syrup.", ["a bottle of syrup"]) == [
        "Robitussin"
    ]
    assert vizwiz_spans("iTunes being displayed on a screen.", ["a screen"]) == ["iTunes"]


def test_capitalised_words_that_are_not_text_are_not_names() -> None:
    """Shared capitalised non-text words passed ("Bottle", "French", "Halloween")."""
    bottle = ["a bottle of water on a desk", "A plastic bottle of water."]
    assert vizwiz_spans("18 oz Bottle of water on a desk.", bottle) == []
    cookies = ["A package of Halloween cookies on a tray.", "A tray of cookies."]
    assert vizwiz_spans("A package of Halloween cookies with ghosts.", cookies) == []
    creamer = ["a bottle of French vanilla creamer", "A bottle of creamer."]
    assert vizwiz_spans("A bottle of creamer in the flavor French vanilla.", creamer) == []
    assert vizwiz_spans("A red Body tube on a shelf.", ["A body lotion tube"]) == []


def test_a_name_is_never_kept_in_part() -> None:
    """A run next to a word the caption capitalises, or that another caption writes
    capitalised with it, is a fragment: undecided, not a text."""
    others = ["a single Wii game for NASCAR kart racing", "NASCAR racing game for the Wii"]
    assert vizwiz_spans("A Wii Video Game of NASCAR Kart Racing.", others) == []
    assert vizwiz_spans("Pictured is a coca cola pendant.", ["A Coca Cola pin", "a pin"]) == []
    # a possessive the other captions do not write is no part of the name
    humanwise = ["a paper of contact information for Humanwise", "Part of a Humanwise pamphlet."]
    assert vizwiz_spans("A page with Humanwise's contact information.", humanwise) == ["Humanwise"]


def test_a_possessive_no_other_caption_decides_leaves_two_candidates() -> None:
    """docs/prompts.md said "Humanware's contact information" gives Humanware, the code
    gave "Humanware's": with no other caption to say, the caption cannot tell an owner's
    possessive from a brand's own ("Hellmann's"), so both are candidates, and the caption
    is left out rather than given either."""
    assert vizwiz_spans("Humanware's contact information", []) == ["Humanware's", "Humanware"]
    assert vizwiz_spans("A jar of Hellmann's mayonnaise.", ["A jar of mayo"]) == [
        "Hellmann's",
        "Hellmann",
    ]
    # another caption decides: its possessive keeps it, its bare name drops it
    assert vizwiz_spans("A jar of Hellmann's mayonnaise.", ["A jar of Hellmann's mayo"]) == [
        "Hellmann's"
    ]
    assert vizwiz_spans("A box of Kellogg's cereal.", ["a Kellogg cereal box"]) == ["Kellogg"]
    # "'s" of a verb is no possessive
    assert vizwiz_spans("It's a can of Robitussin.", []) == ["Robitussin"]


def test_two_different_names_are_both_candidates() -> None:
    others = ["A black BlackBerry phone", "an iPhone 4S box"]
    assert vizwiz_spans("A BlackBerry phone next to an iPhone 4S box.", others) == [
        "BlackBerry",
        "iPhone 4S",
    ]


def test_names_joined_by_and_or_plus_stay_one_span() -> None:
    assert vizwiz_spans("A gift card to Barnes and Noble.", ["a Barnes & Noble card"]) == [
        "Barnes and Noble"
    ]
    assert vizwiz_spans("A yellow Barnes & Noble card.", ["A Barnes and Noble card"]) == [
        "Barnes & Noble"
    ]
    # "&" alone is a word: it joins, it is not punctuation dropped from between them
    assert vizwiz_spans("A Dalton & Pike card.", ["A Dalton and Pike card"]) == ["Dalton & Pike"]


def test_vizwiz_keeps_text_captions_that_are_neither_precanned_nor_rejected() -> None:
    captions = read_vizwiz(VIZWIZ)
    texts = {c.caption_id: c.text for c in captions.found}
    assert texts == {"10": "Honey Nut Cheerios", "11": "Honey Nut Cheerios", "20": "Diet Coke",
                     "21": "Diet Coke"}  # fmt: skip
    assert [c.caption_id for c in captions.not_found] == ["22"]


def test_v1_records_skip_the_unflagged_precanned_caption_and_flag_two_names() -> None:
    """Records in the VizWiz-Captions 1.0 val layout (written here, shaped as real captions).
    That release has no is_precanned flag: its canned caption is recognised by its text."""
    captions = read_vizwiz(V1_VIZWIZ)
    texts = {c.caption_id: c.text for c in captions.found}
    assert texts["9030"] == "Dalton and Pike"
    # "Dalton & Pike thank you card": another caption writes "Dalton and Pike Thank You",
    # so the name may go on past "Pike": undecided, left out
    assert "9032" in {c.caption_id for c in captions.not_found}
    assert texts["9040"] == "MADDEN 09"  # the cue, not the first word
    assert texts["9050"] == "zesta"  # "zesta brand"
    assert texts["9080"] == "Humanwise"  # not "Humanwise's"
    assert {"9060", "9070"} <= {c.caption_id for c in captions.not_found}  # Bottle, Halloween
    assert {c.caption_id: c.candidates for c in captions.ambiguous} == {
        "9041": ["Xbox", "MADDEN 09"]
    }
    every = captions.found + captions.not_found + captions.ambiguous
    assert "9010" not in {c.caption_id for c in every}  # the canned caption, no flag
    assert all(c.caption != PRECANNED for c in every)
    # the known failure the docs name: a lower-case text after a cue runs on to a verb
    assert texts["9033"] == "thank you held"


# ---------------------------------------------------------------- as a prompt source


@pytest.mark.parametrize(("spec", "rows"), [(TEXTCAPS_SPEC, 9), (VIZWIZ_SPEC, 4)])
def test_prompt_set_has_every_attribute_and_the_source_ids(spec: str, rows: int) -> None:
    frame = load_prompt_set(spec).frame
    assert len(frame) == rows
    assert (frame["prompt_type"] == "real_world").all()
    assert frame["prompt"].str.len().gt(0).all()
    for column in ("char_length", "word_count", "cefr", "has_numbers", "source_image_id",
                   "source_caption_id"):  # fmt: skip
        assert column in frame.columns and frame[column].notna().all(), column
    assert frame["prompt_id"].is_unique


@pytest.mark.parametrize(("spec", "rows"), [(TEXTCAPS_SPEC, 9), (VIZWIZ_SPEC, 4)])
def test_prompts_stats_works(spec: str, rows: int) -> None:
    result = runner.invoke(app, ["prompts", "stats", spec, "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert stats["rows"] == rows and stats["prompt_type"]["real_world"] == rows


def _findings(spec: str) -> list[dict[str, object]]:
    result = runner.invoke(app, ["prompts", "validate", spec, "--json"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.strip()]


@pytest.mark.parametrize(
    ("spec", "not_found", "ambiguous"), [(TEXTCAPS_SPEC, 1, 1), (f"vizwiz:{V1_VIZWIZ}", 18, 1)]
)
def test_validate_lists_what_matters_for_captions_and_no_quote_slot(
    spec: str, not_found: int, ambiguous: int
) -> None:
    """Captions have no quotes by design: the quote-slot check buried the findings that
    matter under one ``ambiguous_slot`` per caption."""
    findings = _findings(spec)
    kinds = [f["kind"] for f in findings]
    assert kinds.count("text_not_found") == not_found
    assert kinds.count("ambiguous_span") == ambiguous
    assert "ambiguous_slot" not in kinds
    listed = next(f for f in findings if f["kind"] == "ambiguous_span")
    assert str(listed["key"]).startswith(("data[", "annotations["))
    assert "left out" in str(listed["detail"]) and "'" in str(listed["detail"])


def test_validate_still_checks_the_quotes_a_caption_holds(tmp_path: Path) -> None:
    """A caption with double quotes whose text is not the quoted span keeps its slot finding."""
    path = tmp_path / "hub.jsonl"
    row = {"image_id": "a", "reference_strs": ['A "Zesta" can by a SALE sign', "a SALE sign"],
           "ocr_tokens": ["SALE"]}  # fmt: skip
    path.write_text(json.dumps(row) + "\n")
    findings = _findings(f"textcaps:{path}")
    # named by its line in the file, as docs/prompts.md promises (it said [row 0])
    assert [(f["kind"], f["line"], f["key"]) for f in findings] == [("ambiguous_slot", 1, None)]
    assert "text 'SALE' not found verbatim between quotes" in str(findings[0]["detail"])


def test_textcaps_without_ocr_tokens_is_one_line_naming_the_option() -> None:
    from glyphbench.core.errors import InputError

    with pytest.raises(InputError, match=r"\?ocr=PATH"):
        load_prompt_set(f"textcaps:{TEXTCAPS}")


# ---------------------------------------------------------------- hostile caption files
# Each gave a traceback, a wrong prompt or a wrong flag before the files were checked
# against their layout: now one line naming the file and key, exit 2, nothing written.

_IMAGE = {"id": 1, "text_detected": 1}
_NOTE = {"id": 7, "image_id": 1, "caption": 'A can labeled "Zesta".'}
_DEEP = "[" * 100_000 + "]" * 100_000


def _vizwiz(**changes: object) -> str:
    images = [dict(_IMAGE)]
    note = dict(_NOTE)
    for key, value in changes.items():
        target = images[0] if key == "image_text_detected" else note
        target["text_detected" if key == "image_text_detected" else key] = value
    return json.dumps({"images": images, "annotations": [note]})


HOSTILE = {
    # a caption that is an object became its Python repr as the prompt
    "caption_object": ("vizwiz", ".json", _vizwiz(caption={"text": "Zesta"}),
                       "[annotations[0].caption]: expected a string, got object"),
    # "false" as a string counted as true
    "flag_string_on_image": ("vizwiz", ".json", _vizwiz(image_text_detected="false"),
                             "[images[0].text_detected]: expected true/false or 0/1, got string"),
    "flag_string_on_caption": ("vizwiz", ".json", _vizwiz(text_detected="false"),
                               "[annotations[0].text_detected]: expected true/false or 0/1"),
    "rejected_string": ("vizwiz", ".json", _vizwiz(is_rejected="no"),
                        "[annotations[0].is_rejected]: expected true/false or 0/1"),
    # reference_strs given as a string became one caption per character
    "references_string": ("textcaps", ".jsonl",
                          json.dumps({"image_id": "a", "reference_strs": "A sign for ZESTA",
                                      "ocr_tokens": ["ZESTA"]}),
                          ":1 [reference_strs]: expected an array, got string"),
    "tokens_string": ("textcaps", ".json",
                      json.dumps({"data": [{"image_id": "a", "caption_str": "A ZESTA sign",
                                            "ocr_tokens": "ZESTA"}]}),
                      "[data[0].ocr_tokens]: expected an array, got string"),
    "image_id_array": ("vizwiz", ".json", _vizwiz(image_id=[1]),
                       "[annotations[0].image_id]: expected a string or an integer, got array"),
    "annotations_not_a_list": ("vizwiz", ".json", json.dumps({"annotations": {"0": _NOTE}}),
                               "[annotations]: expected an array, got object"),
    "top_level_array": ("vizwiz", ".json", "[]", "expected a JSON object, got array"),
    # deep nesting gave a RecursionError traceback
    "deep_json": ("vizwiz", ".json", '{"annotations": ' + _DEEP + "}", "JSON nested too deeply"),
    "deep_jsonl": ("textcaps", ".jsonl", '{"image_id": "a", "reference_strs": ' + _DEEP + "}",
                   ":1: JSON nested too deeply"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_caption_file_is_one_line_naming_file_and_key_and_writes_nothing(
    case: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kind, suffix, content, expected = HOSTILE[case]
    path = tmp_path / f"captions{suffix}"
    path.write_text(content, encoding="utf-8")
    out = tmp_path / "run"
    code, _, err = run_main(
        monkeypatch, capsys, "run", "-m", "control:render", "--prompts", f"{kind}:{path}",
        "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(path) in err and expected in err, err
    assert not out.exists()


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 1 GiB file took 2.2 GB of memory before failing: now its size refuses it, unread
    (a sparse file: no disk used; reading it would fail this test)."""
    import glyphbench.prompts.captions as captions

    big = tmp_path / "annotations.json"
    with big.open("wb") as handle:
        handle.truncate(1 << 30)
    if os.stat(big).st_size != 1 << 30:  # pragma: no cover - a file system without sizes
        pytest.skip("cannot make a sparse file here")

    def never(*args: object, **kwargs: object) -> str:
        raise AssertionError("the file was read")

    monkeypatch.setattr(captions, "read_text", never)
    code, _, err = run_main(monkeypatch, capsys, "prompts", "validate", f"vizwiz:{big}")
    assert code == 2 and err.count("\n") == 1, err
    assert f"{big}: file too large (1,073,741,824 bytes; at most 512 MiB)" in err, err


def test_the_size_limit_is_an_option(tmp_path: Path) -> None:
    from glyphbench.core.errors import InputError

    path = tmp_path / "captions.json"
    content = {"images": [_IMAGE], "annotations": [_NOTE], "pad": "x" * (1 << 20)}
    path.write_text(json.dumps(content))
    with pytest.raises(InputError, match=r"at most 1 MiB\): give \?max_mb=N"):
        load_prompt_set(f"vizwiz:{path}?max_mb=1")
    assert len(load_prompt_set(f"vizwiz:{path}?max_mb=2").frame) == 1


def test_flags_written_as_0_and_1_are_read() -> None:
    """VizWiz-Captions 1.0 writes flags as 0/1 (the v1 fixture): read as false/true."""
    captions = read_vizwiz(V1_VIZWIZ)
    assert captions.found and all(c.image_id.startswith("90") for c in captions.found)


@pytest.mark.slow
def test_a_run_on_caption_prompts_scores_as_any_other_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from glyphbench.cli import main

    out = tmp_path / "run"
    saved = sys.argv
    sys.argv = ["glyphbench", "run", "-m", "control:render?size=256", "--prompts", VIZWIZ_SPEC,
                "--ocr", "rapidocr", "--out", str(out), "--no-progress"]  # fmt: skip
    try:
        with pytest.raises(SystemExit) as info:
            main()
            raise SystemExit(0)
    finally:
        sys.argv = saved
    assert info.value.code in (0, None), capsys.readouterr().err
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 4 and (rows["error"] == "").all()
    assert sorted(rows["text"].unique()) == ["Diet Coke", "Honey Nut Cheerios"]
    # the render control draws the text; RapidOCR reads it back: scored, and exact
    assert rows["algorithm1"].notna().all() and (rows["ned"] == 1.0).all()


@pytest.mark.parametrize("name", ["textcaps", "ocr", "hub"])
def test_a_caption_file_with_a_byte_order_mark_reads_as_without(tmp_path: Path, name: str) -> None:
    """CSV and JSONL with a BOM loaded while a caption JSON file was refused
    ("Unexpected UTF-8 BOM"): every caption file accepts it."""
    paths = {"textcaps": TEXTCAPS, "ocr": OCR, "hub": HUB}
    marked = tmp_path / paths[name].name
    marked.write_bytes(b"\xef\xbb\xbf" + paths[name].read_bytes())
    textcaps = marked if name == "textcaps" else TEXTCAPS
    ocr = marked if name == "ocr" else OCR
    if name == "hub":
        assert read_textcaps(marked, None) == read_textcaps(HUB, None)
    else:
        assert read_textcaps(textcaps, ocr) == read_textcaps(TEXTCAPS, OCR)


def _fixture(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_repeated_textcaps_caption_id_is_refused_naming_both_positions(tmp_path: Path) -> None:
    """Two records with one caption_id gave two rows with one prompt id (select wrote both,
    exit 0; run then refused with no position)."""
    data = _fixture(TEXTCAPS)
    data["data"].append(data["data"][0])
    last = len(data["data"]) - 1
    path = tmp_path / "caps.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_textcaps(path, OCR)
    assert str(info.value) == (
        f"{path} [data[{last}]]: caption id '1' repeats the one at data[0]; remove the "
        "repeated record or give it its own id"
    )


def test_a_repeated_ocr_image_is_refused_unless_the_records_are_the_same(tmp_path: Path) -> None:
    data = _fixture(OCR)
    same = dict(data, data=[*data["data"], data["data"][0]])
    path = tmp_path / "ocr.json"
    path.write_text(json.dumps(same), encoding="utf-8")
    assert read_textcaps(TEXTCAPS, path) == read_textcaps(TEXTCAPS, OCR)
    other = dict(data["data"][0], ocr_tokens=["Pepsi"], ocr_info=None)
    path.write_text(json.dumps(dict(data, data=[*data["data"], other])), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_textcaps(TEXTCAPS, path)
    assert str(info.value) == (
        f"{path} [data[{len(data['data'])}]]: image_id '0a1b' repeats the one at data[0] with "
        "other OCR; keep one of the two records"
    )


def test_an_image_missing_from_the_given_ocr_file_names_that_file(tmp_path: Path) -> None:
    data = _fixture(OCR)
    path = tmp_path / "ocr.json"
    path.write_text(json.dumps(dict(data, data=data["data"][1:])), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_textcaps(TEXTCAPS, path)
    assert f"image '0a1b' has no record in the OCR file {path}" in str(info.value)
    assert "?ocr=" not in str(info.value)


def test_validate_names_a_caption_by_its_place_in_the_file(tmp_path: Path) -> None:
    """Keys of caption rows said [row 1]; the docs promise data[i] / annotations[i]."""
    from glyphbench.prompts.audit import audit

    data = _fixture(TEXTCAPS)
    quoted = dict(data["data"][0], caption_id=99, caption_str='A "Zesta" can by a SALE sign')
    data["data"].append(dict(quoted, ocr_tokens=["SALE"]))
    path = tmp_path / "caps.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    slot = [f for f in audit(f"textcaps:{path}?ocr={OCR}") if f.kind == "ambiguous_slot"]
    assert [(f.line, f.key) for f in slot] == [(None, f"data[{len(data['data']) - 1}]")]
