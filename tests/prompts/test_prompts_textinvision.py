"""The textinvision:DIR source against the public files: counts, selection, sampling, audit."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from glyphbench import prompts
from glyphbench.prompts.audit import audit, summarize
from glyphbench.prompts.pool import PromptPool
from glyphbench.prompts.selection import select
from glyphbench.prompts.sources import load_source


@pytest.fixture(scope="module")
def pool(textinvision_dir: Path) -> PromptPool:
    loaded = load_source(f"textinvision:{textinvision_dir}")
    assert isinstance(loaded, PromptPool)
    return loaded


@pytest.fixture(scope="module")
def findings(textinvision_dir: Path) -> list:
    return audit(f"textinvision:{textinvision_dir}")


@pytest.mark.slow
def test_row_counts(pool: PromptPool) -> None:
    assert len(pool.texts) == 6805
    assert len(pool.templates) == 205
    assert len(pool.singles) == 1981
    assert len(pool) == 205 * 6805 + 1981
    assert pool.templates["prompt_type"].value_counts().to_dict() == {"complex": 200, "simple": 5}
    assert pool.version.startswith("textinvision-")


def test_stated_columns_kept_beside_computed(pool: PromptPool) -> None:
    texts = pool.texts
    for column in (
        "stated_cefr",
        "stated_char_length",
        "stated_rare",
        "stated_has_special_chars",
        "stated_laion_freq",
    ):
        assert column in texts.columns
    assert set(texts["stated_cefr"].dropna()) == {"A1", "A2", "B1", "B2", "C1", "none", "None"}
    # glyphbench's own char_length is len(text); the file's disagrees for about a quarter of rows
    assert (texts["char_length"] == texts["text"].str.len()).all()
    share = (texts["char_length"] != texts["stated_char_length"]).mean()
    assert 0.15 < share < 0.35
    # corpus counts stay unknown until `prompts freq`; the file's are stated_*
    row = pool.rows([0])
    assert row["laion_freq"].isna().all() and row["stated_laion_freq"].notna().all()


def test_real_world_groups_are_canonical(pool: PromptPool) -> None:
    groups = pool.singles["group"].value_counts().to_dict()
    assert groups == {
        "Objects and scenes": 770,
        "Advertisements": 471,
        "Educational content": 288,
        "Posters": 181,
        "Logos and branding": 171,
        "Maps and flowcharts": 100,
    }
    assert set(pool.singles["stated_group"]) >= {"Map and Flowchart", "Objects and Scenes"}


def _expected_reference_selection(folder: Path) -> set[str]:
    """An independent expectation of the reference selection with the shipped config:
    simple templates x texts with stated word_length >= 50 and rare == False, the
    first quoted span of each template replaced by str.find/slicing (no regex)."""
    prompts_csv = pd.read_csv(folder / "all_prompts.csv")
    texts_csv = pd.read_csv(folder / "all_texts.csv")
    templates = prompts_csv.loc[prompts_csv["type"] == "simple", "prompts"]
    texts = texts_csv.loc[(texts_csv["word_length"] >= 50) & (~texts_csv["rare"]), "words"]
    expected = set()
    for template in templates:
        start = template.index('"')
        end = template.index('"', start + 1)
        for text in texts:
            expected.add(template[:start] + f'"{text}"' + template[end + 1 :])
    return expected


@pytest.mark.slow
def test_select_with_reference_config_gives_105(textinvision_dir: Path, pool: PromptPool) -> None:
    chosen = select(pool, config=textinvision_dir / "config.json")
    assert len(chosen) == 105
    assert set(chosen.frame["prompt"]) == _expected_reference_selection(textinvision_dir)
    assert set(chosen.frame["prompt_type"]) == {"simple"}
    assert (chosen.frame["stated_word_count"] >= 50).all()
    # same through the public entry point and a spec string; deterministic ids
    again = prompts.select(
        f"textinvision:{textinvision_dir}", config=str(textinvision_dir / "config.json")
    )
    assert sorted(again.frame["prompt_id"]) == sorted(chosen.frame["prompt_id"])
    assert again.content_hash == chosen.content_hash


def test_config_operators_and_nulls(pool: PromptPool) -> None:
    texts = pool.texts
    f = lambda value, op="and": {"operator": op, "value": value}  # noqa: E731
    # "or": A1 texts or texts of 30+ stated words; a null filter in between is skipped
    config = {
        "prompts": {"prompts_type": f("simple")},
        "texts": {
            "oxford_category": f("A1"),
            "contains_rare": f(None),
            "word_length_min": f(30, "OR"),
        },
    }
    chosen = select(pool, config=config)
    n_texts = int(((texts["stated_cefr"] == "A1") | (texts["stated_word_count"] >= 30)).sum())
    unique_prompts = n_texts * 5  # texts are unique here except exact duplicates collapsing
    assert len(chosen) <= unique_prompts
    assert len(chosen) >= unique_prompts - 5 * 4  # at most the 4 duplicated texts collapse
    # the reference reads "None" as missing: it matches nothing; "none" matches
    none_lower = select(
        pool,
        config={"texts": {"oxford_category": f("none")}, "prompts": {"prompts_type": f("simple")}},
    )
    none_upper = select(
        pool,
        config={"texts": {"oxford_category": f("None")}, "prompts": {"prompts_type": f("simple")}},
    )
    assert len(none_upper) == 0 and len(none_lower) > 0
    # prompt length filters work (the reference crashes on them: its file lacks the columns)
    short = select(
        pool,
        config={"prompts": {"prompt_word_length_max": f(9)}, "texts": {"oxford_category": f("A1")}},
    )
    assert len(short) > 0
    assert (short.frame["template_word_count"] <= 9).all()


def test_stratified_sample_reproducible_and_floored(pool: PromptPool) -> None:
    a = select(pool, sample=40, stratify=["prompt_type", "group"], seed=3)
    b = select(pool, sample=40, stratify="prompt_type,group", seed=3)
    c = select(pool, sample=40, stratify=["prompt_type", "group"], seed=4)
    assert len(a) == 40
    assert a.frame["prompt_id"].tolist() == b.frame["prompt_id"].tolist()
    assert a.frame["prompt_id"].tolist() != c.frame["prompt_id"].tolist()
    strata = a.frame.groupby(["prompt_type", "group"], dropna=False).size()
    assert len(strata) == 8  # simple, complex, and six real-world groups: each at least once
    assert a.frame["prompt_id"].is_unique


def test_where_scans_the_pool(pool: PromptPool) -> None:
    chosen = select(pool, where="prompt_type == 'simple' and has_numbers and word_count <= 1")
    expected = 5 * int(((pool.texts["has_numbers"]) & (pool.texts["word_count"] <= 1)).sum())
    assert len(chosen) == expected > 0


def test_audit_finds_known_defects(findings: list, textinvision_dir: Path) -> None:
    counts = summarize(findings)
    by_kind: dict[str, list] = {}
    for f in findings:
        by_kind.setdefault(f.kind, []).append(f)
    # apostrophes turned into double quotes in 284 real-world prompts
    assert counts["ambiguous_slot"] == 284
    assert all(
        f.file.endswith("real_world_prompts.json") and f.key.startswith("r")
        for f in by_kind["ambiguous_slot"]
    )
    # mojibake, e.g. "résumé" read as Latin-1
    mojibake = {f.detail.split("'")[1] for f in by_kind["mojibake"]}
    assert "rÃ©sumÃ©" in mojibake
    # zero-width space
    assert any("ZERO WIDTH SPACE" in f.detail for f in by_kind["invisible_char"])
    # stray spaces and duplicates, with their lines
    assert any(
        f.file.endswith("all_texts.csv") and f.detail.startswith("text ' m & m'")
        for f in by_kind["whitespace"]
    )
    assert counts["duplicate"] >= 1
    # "None" vs "none": every "None" row, pointing at the more frequent spelling
    spelling = by_kind["category_spelling"]
    assert len(spelling) == 318 and all(
        "'None'" in f.detail and "'none'" in f.detail for f in spelling
    )
    # stated lengths disagree in about a quarter of the 6,805 rows
    assert 1000 < counts["stated_mismatch"] < 2500
    assert any(
        "spec_char stated False vs computed True" in f.detail for f in by_kind["stated_mismatch"]
    )
    # lines point at the right row: check one against the raw file
    raw_lines = (textinvision_dir / "all_texts.csv").read_text(encoding="utf-8-sig").splitlines()
    resume = next(f for f in by_kind["mojibake"] if "rÃ©sumÃ©" in f.detail)
    assert raw_lines[resume.line - 1].startswith("rÃ©sumÃ©,")


def test_audit_json_fields(findings: list) -> None:
    record = json.loads(json.dumps(findings[0].to_dict()))
    assert set(record) == {"kind", "file", "line", "key", "detail"}


# ---------------------------------------------------------------- malformed files (no ../shared)

_TEXTS_HEADER = (
    "words,oxford_category,char_length,rare,gibberish,spec_char,number,sentence,word_length,"
    "LAION_freq,CoCo_freq,source\n"
)


def _tiny_textinvision(
    folder: Path, templates: str = '"A sign that says ""x"".",simple\n', real: object = "OPEN"
) -> Path:
    """A TextInVision folder of one template, two texts and one real-world prompt."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "all_prompts.csv").write_text("prompts,type\n" + templates, encoding="utf-8")
    (folder / "all_texts.csv").write_text(
        _TEXTS_HEADER
        + "act,A2,3,FALSE,FALSE,FALSE,FALSE,FALSE,1,592,23,x\n"
        + "add,A1,3,FALSE,FALSE,FALSE,FALSE,FALSE,1,1091,21,x\n",
        encoding="utf-8",
    )
    entry = {"group": "Posters", "text": real, "char_length": 4, "word_count": 1, "id": 1}
    data = {'A poster that reads "OPEN".': entry}
    (folder / "real_world_prompts.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_a_tiny_folder_loads(tmp_path: Path) -> None:
    pool = load_source(f"textinvision:{_tiny_textinvision(tmp_path / 't')}")
    assert len(pool) == 3
    assert pool.to_prompt_set().frame["text"].tolist() == ["act", "add", "OPEN"]


@pytest.mark.parametrize(
    "text, said",
    [(None, "is null"), ("", "is empty"), ("  ", "is empty"), (["OPEN"], "is a JSON array")],
)
def test_a_real_world_entry_without_a_string_text_is_refused_naming_it(
    tmp_path: Path, text: object, said: str
) -> None:
    """``"text": null`` became the text "None", asked of the model."""
    folder = _tiny_textinvision(tmp_path / "t", real=text)
    from glyphbench.core.errors import InputError

    with pytest.raises(InputError) as info:
        select(f"textinvision:{folder}", where="prompt_type == 'real_world'", limit=1)
    assert str(info.value) == (
        f"{folder / 'real_world_prompts.json'} [A poster that reads \"OPEN\".]: 'text' {said}; "
        "give the entry its text as a non-empty string (in quotes), or remove it"
    )


@pytest.mark.parametrize(
    "templates, problem",
    [
        (
            '"A sign that says ""x"".",simple\n"no quote here",complex\n',
            ":3: template has no slot for the text",
        ),
        ('"A sign that says ""x"".",weird\n', ":2: type 'weird' is not one of simple, complex"),
        ('"A sign that says ""x"".",\n', ":2: type '' is not one of simple, complex"),
    ],
)
def test_a_template_without_a_slot_or_with_an_unknown_type_is_refused(
    tmp_path: Path, templates: str, problem: str
) -> None:
    """Each template is crossed with every text: one without a slot made thousands of
    prompts that never ask for their text."""
    from glyphbench.core.errors import InputError

    folder = _tiny_textinvision(tmp_path / "t", templates=templates)
    with pytest.raises(InputError) as info:
        load_source(f"textinvision:{folder}")
    assert str(info.value).startswith(f"{folder / 'all_prompts.csv'}{problem}")
