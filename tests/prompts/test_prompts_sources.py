"""Sources other than TextInVision: default-format loader on small files, user tables, sampling."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench import prompts
from glyphbench.core.errors import InputError
from glyphbench.prompts.default import load_default_pool
from glyphbench.prompts.pool import PromptPool, make_prompt_id
from glyphbench.prompts.selection import select
from glyphbench.prompts.sources import load_source
from glyphbench.prompts.stratify import allocate
from tests.helpers.prompt_sources import write_default


@pytest.fixture()
def default_dir(tmp_path: Path) -> Path:
    return write_default(tmp_path / "default")


def test_default_format_loader(default_dir: Path) -> None:
    pool = load_default_pool(default_dir)
    assert len(pool) == 3 * 8 + 3
    full = pool.to_prompt_set()
    frame = full.frame
    assert len(frame) == 27 and frame["prompt_id"].is_unique
    row = frame[(frame["template_id"] == "s1") & (frame["text_id"] == "n1")].iloc[0]
    assert row["prompt"] == 'A sign that says "50% OFF".'
    assert row["prompt_type"] == "simple" and row["has_numbers"] and row["has_special_chars"]
    assert row["prompt_id"] == make_prompt_id("default", "s1", "n1")
    # a text "None" stays the string "None"
    assert "None" in set(frame["text"])
    real = frame[frame["prompt_type"] == "real_world"]
    assert real["group"].tolist() == ["Advertisements", "Posters", "Posters"]
    assert real["subgroup"].isna().tolist() == [False, False, True]
    assert real["text_id"].tolist() == ["r1", "r2", "r3"]
    assert frame.loc[frame["text"] == "kerfuffle", "kind"].iloc[0] == "rare"
    assert full.version.startswith("default-v")
    # the same rows build the same way whichever subset is asked for
    picked = pool.rows([26, 0, 9])
    assert picked["prompt_id"].tolist() == [frame["prompt_id"].iloc[i] for i in (26, 0, 9)]


@pytest.mark.parametrize(
    ("file", "content", "message"),
    [
        ("templates.csv", "template_id,prompt_type\ns1,simple\n", "missing column(s) ['template']"),
        (
            "templates.csv",
            'template_id,prompt_type,template\ns1,fancy,"A ""{text}"""\n',
            "prompt_type 'fancy'",
        ),
        (
            "templates.csv",
            "template_id,prompt_type,template\ns1,simple,A {text} sign\n",
            'must hold "{text}"',
        ),
        ("texts.csv", "text_id,text,kind\nw1,a,word\nw1,b,word\n", "duplicate text_id 'w1'"),
        ("texts.csv", "text_id,text,kind\nw1,a,noun\n", "kind 'noun'"),
        (
            "real_world.csv",
            'prompt_id,group,subgroup,prompt,text\nr1,Cars,x,"A ""y"" sign",y\n',
            "group 'Cars'",
        ),
        (
            "real_world.csv",
            'prompt_id,group,subgroup,prompt,text\nr1,Posters,x,"A ""y"" sign",z\n',
            "not in double quotes",
        ),
    ],
)
def test_default_loader_errors(tmp_path: Path, file: str, content: str, message: str) -> None:
    folder = write_default(tmp_path / "d")
    (folder / file).write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_default_pool(folder)
    assert message in str(info.value)
    assert str(info.value).startswith(str(folder / file))
    assert "\n" not in str(info.value)


def test_default_missing_file(tmp_path: Path) -> None:
    folder = write_default(tmp_path / "d")
    (folder / "texts.csv").unlink()
    with pytest.raises(InputError, match="default prompt data missing"):
        load_default_pool(folder)


def test_lazy_sampling_never_builds_the_cross_product(
    default_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def forbidden(self: PromptPool) -> None:
        raise AssertionError("materialised the whole pool")

    monkeypatch.setattr(PromptPool, "to_prompt_set", forbidden)
    monkeypatch.setattr(PromptPool, "iter_chunks", forbidden)
    chosen = prompts.select(
        f"default:{default_dir}", sample=6, stratify=["prompt_type", "group"], seed=0
    )
    strata = chosen.frame.groupby(["prompt_type", "group"], dropna=False).size().to_dict()
    # 4 strata: simple (16 rows), complex (8), Advertisements (1), Posters (2): at least one each
    assert len(chosen) == 6
    assert sum(strata.values()) == 6 and len(strata) == 4
    # stratify by a text attribute too (kind), still lazily
    by_kind = select(load_source(f"default:{default_dir}"), sample=10, stratify=["kind"], seed=1)
    assert len(by_kind) == 10
    assert set(by_kind.frame["kind"].dropna()) <= {
        "word",
        "rare",
        "phrase",
        "sentence",
        "gibberish",
        "numeric",
    }


def test_sampling_matches_allocation(default_dir: Path) -> None:
    pool = load_default_pool(default_dir)
    chosen = select(pool, sample=6, stratify=["prompt_type", "group"], seed=0)
    got = chosen.frame.groupby(["prompt_type", "group"], dropna=False).size()
    # strata sorted by key: complex (8), real_world/Advertisements (1),
    # real_world/Posters (2), simple (16)
    # floor 1 each; the other 2 in proportion: 2*8/26 = 0.62, 2*2/26 = 0.15, 2*16/26 = 1.23
    # -> simple gets 1, the leftover unit goes to the largest remainder (complex, 0.62)
    assert allocate([8, 1, 2, 16], 6) == [2, 1, 1, 2]
    counts = {(t, None if pd.isna(g) else g): n for (t, g), n in got.items()}
    assert counts == {
        ("complex", None): 2,
        ("real_world", "Advertisements"): 1,
        ("real_world", "Posters"): 1,
        ("simple", None): 2,
    }


def test_materialised_sampling_is_order_independent(default_dir: Path) -> None:
    full = load_default_pool(default_dir).to_prompt_set()
    shuffled = prompts.schema.PromptSet(full.frame.sample(frac=1, random_state=7), source="x")
    a = select(full, sample=7, stratify=["prompt_type"], seed=5)
    b = select(shuffled, sample=7, stratify=["prompt_type"], seed=5)
    assert sorted(a.frame["prompt_id"]) == sorted(b.frame["prompt_id"])
    assert select(full, where="kind == 'rare'", sample=2, seed=0).frame["kind"].eq("rare").all()
    assert len(select(full, limit=4)) == 4


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=500), min_size=1, max_size=12),
    st.integers(min_value=0, max_value=3000),
    st.integers(min_value=0, max_value=3),
)
def test_allocate_properties(sizes: list[int], n: int, floor: int) -> None:
    floors = [min(floor, s) for s in sizes]
    if sum(floors) > n:
        with pytest.raises(InputError):
            allocate(sizes, n, floor)
        return
    alloc = allocate(sizes, n, floor)
    assert sum(alloc) == min(n, sum(sizes))
    assert all(f <= a <= s for f, a, s in zip(floors, alloc, sizes, strict=True))
    # proportional (largest remainder): each stratum is within one unit of its exact share
    extra = min(n, sum(sizes)) - sum(floors)
    total = sum(sizes)
    if total and extra and all(a < s for a, s in zip(alloc, sizes, strict=True)):
        for f, a, s in zip(floors, alloc, sizes, strict=True):
            assert abs((a - f) - extra * s / total) < 1


def test_allocate_hand_computed() -> None:
    assert allocate([100, 300], 10) == [3, 7]  # 1 + floor(8/4), 1 + floor(8*3/4)
    assert allocate([10, 10, 10], 4) == [
        2,
        1,
        1,
    ]  # one leftover unit: ties go to the earlier stratum
    assert allocate([0, 5], 3) == [0, 3]
    assert allocate([2, 2], 10) == [2, 2]


def test_csv_jsonl_parquet_sources(tmp_path: Path) -> None:
    rows = pd.DataFrame(
        {
            "caption_text": ["OPEN", "Sale 50%", "OPEN"],
            "instruction": ['A door sign "OPEN"', 'A banner "Sale 50%"', 'A shop "OPEN"'],
            "char_length": [4, 99, 4],
            "kind": ["word", "numeric", "word"],
        }
    )
    rows.to_csv(tmp_path / "mine.csv", index=False)
    rows.to_json(tmp_path / "mine.jsonl", orient="records", lines=True)
    rows.to_parquet(tmp_path / "mine.parquet", index=False)
    for kind in ("csv", "jsonl", "parquet"):
        spec = (
            f"{kind}:{tmp_path / f'mine.{kind}'}"
            "?text=caption_text&prompt=instruction&prompt_type=simple"
        )
        loaded = prompts.load_prompt_set(spec)
        frame = loaded.frame
        assert frame["text"].tolist() == ["OPEN", "Sale 50%", "OPEN"]
        assert frame["char_length"].tolist() == [4, 8, 4]
        assert frame["stated_char_length"].astype(int).tolist() == [4, 99, 4]
        assert set(frame["prompt_type"]) == {"simple"}
        assert frame["kind"].tolist() == ["word", "numeric", "word"]
        assert loaded.version.startswith(f"{kind}-")
        assert frame["prompt_id"].is_unique
        assert (
            frame["prompt_id"].tolist() == prompts.load_prompt_set(spec).frame["prompt_id"].tolist()
        )
        assert frame["prompt_id"].iloc[0] == make_prompt_id(kind, 'A door sign "OPEN"', "OPEN")
    # a template instead of a prompt column; a bare path infers the format
    templated = prompts.load_prompt_set(
        f'{tmp_path / "mine.csv"}?text=caption_text&template=A cake with "{{text}}" in icing'
    )
    assert templated.frame["prompt"].iloc[1] == 'A cake with "Sale 50%" in icing'


def test_export_round_trip(default_dir: Path, tmp_path: Path) -> None:
    from glyphbench.core.io import write_table

    full = load_default_pool(default_dir).to_prompt_set()
    for suffix in ("parquet", "jsonl", "csv"):
        path = tmp_path / f"export.{suffix}"
        write_table(full.frame, path)
        back = prompts.load_prompt_set(str(path))
        assert back.content_hash == full.content_hash
        assert back.frame["cefr"].fillna("-").tolist() == full.frame["cefr"].fillna("-").tolist()
        assert not any(c.startswith("stated_") for c in back.frame.columns)


def test_hf_source_from_local_folder(tmp_path: Path) -> None:
    folder = tmp_path / "hfdata"
    folder.mkdir()
    pd.DataFrame({"t": ["Hello", "World"], "p": ['Say "Hello"', 'Say "World"']}).to_csv(
        folder / "train.csv", index=False
    )
    loaded = prompts.load_prompt_set(f"hf:{folder}:train?text=t&prompt=p")
    assert loaded.frame["text"].tolist() == ["Hello", "World"]
    assert loaded.version.startswith("hf-")
    dataset = loaded.to_dataset()
    assert dataset.num_rows == 2 and "prompt_id" in dataset.column_names


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("csv:{dir}/nope.csv", "file not found"),
        ("csv:{dir}/t.csv?text=missing_col", "missing column 'missing_col'"),
        ("csv:{dir}/t.csv", "missing column 'text'"),
        ("jsonl:{dir}/bad.jsonl?text=a&prompt=a", "malformed JSON"),
        ("bogus:thing", "unknown prompt source"),
        ("textinvision:", "needs a target"),
    ],
)
def test_source_errors(tmp_path: Path, spec: str, message: str) -> None:
    pd.DataFrame({"a": ["x"]}).to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "bad.jsonl").write_text('{"a": "x"}\n{"a": \n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        prompts.load_prompt_set(spec.format(dir=tmp_path))
    assert message in str(info.value)
    if "bad.jsonl" in spec:
        assert info.value.line == 2


def test_filter_config_errors(tmp_path: Path, default_dir: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{\n  // comment\n  "texts": {\n    "char_length_min": {"value": 3,}\n  ,,\n}\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as info:
        select(f"default:{default_dir}", config=bad)
    assert "malformed JSON" in str(info.value) and info.value.line == 5
    unknown = tmp_path / "unknown.json"
    unknown.write_text(
        json.dumps({"texts": {"colour": {"operator": "and", "value": 1}}}), encoding="utf-8"
    )
    with pytest.raises(InputError, match="unknown texts filter 'colour'"):
        select(f"default:{default_dir}", config=unknown)


def test_config_on_default_uses_computed_columns(default_dir: Path) -> None:
    config = {
        "prompts": {"prompts_type": {"operator": "and", "value": "simple"}},
        "texts": {
            "contains_number": {"operator": "and", "value": True},
            "contains_rare": {"operator": "or", "value": True},
        },
    }
    chosen = select(f"default:{default_dir}", config=config)
    assert sorted(set(chosen.frame["text"])) == ["50% OFF", "kerfuffle"]
    assert len(chosen) == 4 and set(chosen.frame["prompt_type"]) == {"simple"}


def test_audit_user_table(tmp_path: Path) -> None:
    from glyphbench.prompts.audit import audit

    path = tmp_path / "u.csv"
    path.write_text(
        "text,prompt,group,char_length\n"
        'OPEN ,"A sign ""OPEN """,Posters,5\n'
        'sale,"A ""sale"" and ""more""",posters,4\n'
        'sale,"A ""sale"" and ""more""",Posters,9\n'
        'rÃ©sumÃ©,"A ""rÃ©sumÃ©""",Posters,8\n'
        'zero\u200bwidth,"A ""zero\u200bwidth""",Posters,10\n',
        encoding="utf-8",
    )
    found = {(f.kind, f.line) for f in audit(f"csv:{path}")}
    assert found == {
        ("whitespace", 2),
        ("ambiguous_slot", 3),
        ("category_spelling", 3),  # "posters" (1 row) vs "Posters" (4 rows)
        ("ambiguous_slot", 4),
        ("duplicate", 4),
        ("stated_mismatch", 4),  # stated char_length 9, "sale" has 4
        ("mojibake", 5),  # the text and the prompt
        ("invisible_char", 6),
    }


@pytest.mark.parametrize(
    "where",
    [
        "has_numbers",
        "prompt_type == 'complex' and word_count >= 3",
        "group == 'Posters' or kind == 'rare'",
        "prompt_char_length > 40 and not is_sentence",
        "prompt.str.contains('mug')",
        "template_id == 's2' and text_id in ['w1', 'g1']",
    ],
)
def test_where_on_pool_equals_where_on_all_rows(default_dir: Path, where: str) -> None:
    pool = load_default_pool(default_dir)
    lazy = select(pool, where=where).frame
    full = pool.to_prompt_set().frame.query(where, engine="python")
    assert sorted(lazy["prompt_id"]) == sorted(full["prompt_id"])
    assert len(lazy) > 0


# ---------------------------------------------------------------- values a row must hold


@pytest.mark.parametrize(
    "name, content, place",
    [
        # a JSONL row without "prompt" (a blank line before it still counts)
        ("p.jsonl", '{"text": "a", "prompt": "say \\"a\\""}\n\n{"text": "b"}\n', ":3:"),
        ("p.jsonl", '{"text": "a", "prompt": "  "}\n', ":1:"),
        ("p.csv", 'prompt,text\n"say ""a""",a\n,b\n', ":3:"),
    ],
)
@pytest.mark.parametrize(
    "command", [["prompts", "select", "--out"], ["prompts", "stats"], ["prompts", "validate"]]
)
def test_a_row_without_a_prompt_is_one_line_naming_its_line_and_nothing_is_written(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: str,
    place: str,
    command: list[str],
) -> None:
    from tests.helpers.cli_errors import glyphbench, one_line

    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    out = tmp_path / "o.csv"
    args = [command[0], command[1], f"{path.suffix[1:]}:{path}", *command[2:]]
    code, err = glyphbench([*args, out] if command[-1] == "--out" else args, capsys)
    assert code == 2
    assert one_line(err).startswith(f"error: {path}{place} empty prompt; ")
    assert not out.exists()


def test_a_run_dry_run_refuses_a_row_without_a_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers.cli_errors import glyphbench, one_line

    path = tmp_path / "p.jsonl"
    path.write_text('{"text": "a", "prompt": "say a"}\n{"text": "b"}\n', encoding="utf-8")
    args = ["run", "--prompts", f"jsonl:{path}", "-m", "control:render", "--out", tmp_path / "r"]
    code, err = glyphbench([*args, "--dry-run"], capsys)
    assert code == 2 and one_line(err) == (
        f"error: {path}:2: empty prompt; give each row the instruction sent to the model, "
        "or remove it"
    )


@pytest.mark.parametrize(
    "record, problem",
    [
        ({"text": ["a"], "prompt": "x"}, "text is a list, not a string; give one string per row"),
        ({"text": "a", "prompt": ["x", "y"]}, "prompt is a list, not a string"),
        ({"text": {"a": 1}, "prompt": "x"}, "text is an object, not a string"),
        ({"text": 42, "prompt": "x"}, "text is a number, not a string; write it as a string"),
        ({"text": True, "prompt": "x"}, "text is a boolean, not a string"),
        ({"text": "a", "prompt": "x", "group": ["g"]}, "group is a list, not a string"),
        ({"text": "a", "prompt": "x", "template_id": {"k": 1}}, "template_id is an object"),
    ],
)
def test_a_value_that_is_no_string_is_refused_not_turned_into_its_repr(
    tmp_path: Path, record: dict[str, object], problem: str
) -> None:
    path = tmp_path / "t.jsonl"
    lines = [json.dumps({"text": "ok", "prompt": "say ok"}), json.dumps(record)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_source(f"jsonl:{path}")
    assert str(info.value).startswith(f"{path}:2: {problem}")


def test_a_list_column_in_parquet_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pd.DataFrame({"text": [["a", "b"]], "prompt": ["x"]}).to_parquet(path)
    with pytest.raises(InputError, match=r"\[row 0\]: text is a list, not a string"):
        load_source(f"parquet:{path}")


def test_a_numeric_id_column_still_loads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"prompt_id": 7, "text": "a", "prompt": "say \\"a\\""}\n', encoding="utf-8")
    assert load_source(f"jsonl:{path}").frame["prompt_id"].tolist() == ["7"]


def test_longtext_bench_files_are_pointed_to_their_suite(tmp_path: Path) -> None:
    path = tmp_path / "text_prompts.jsonl"
    record = {"prompt": 'reads "A" and "B"', "text": ["A", "B"], "prompt_id": 0}
    path.write_text(json.dumps(record) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_source(f"jsonl:{path}")
    assert str(info.value) == (
        f"{path}:1: text is a list, not a string (also line 2); this looks like LongText-Bench, "
        "whose text is a list of pieces: run it with its suite "
        "(glyphbench run --suite longtext --data DIR, docs/suites.md)"
    )


def test_a_runaway_text_is_one_line_never_echoed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 20-million-character text was a MemoryError traceback (wordfreq) printing it whole."""
    from glyphbench.prompts.sources import MAX_TEXT_CHARS
    from tests.helpers.cli_errors import glyphbench, one_line

    path = tmp_path / "huge.jsonl"
    rows = [{"text": "ok", "prompt": "say ok"}, {"text": "x" * 20_000_000, "prompt": "say x"}]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    code, err = glyphbench(["prompts", "show", f"jsonl:{path}"], capsys)
    assert code == 2
    assert one_line(err) == (
        f"error: {path}:2: text of 20,000,000 characters, over the {MAX_TEXT_CHARS:,} a text "
        "to render may have; shorten it or leave the row out"
    )


def test_a_text_at_the_length_limit_loads(tmp_path: Path) -> None:
    from glyphbench.prompts.sources import MAX_TEXT_CHARS

    path = tmp_path / "big.jsonl"
    text = ("word " * MAX_TEXT_CHARS)[:MAX_TEXT_CHARS].strip() + "s"
    path.write_text(json.dumps({"text": text, "prompt": "say it"}) + "\n", encoding="utf-8")
    assert load_source(f"jsonl:{path}").frame["char_length"].tolist() == [MAX_TEXT_CHARS]


def test_validate_names_a_jsonl_rows_line_with_blank_lines_counted(tmp_path: Path) -> None:
    """Load errors counted blank lines; validate's findings said line 2 for line 4."""
    from glyphbench.prompts.audit import audit

    row = json.dumps({"prompt": 'A sign "A"', "text": "A"})
    path = tmp_path / "blank.jsonl"
    path.write_text(f"{row}\n\n\n{row}\n", encoding="utf-8")
    found = {(f.kind, f.line) for f in audit(f"jsonl:{path}")}
    assert ("duplicate", 4) in found and ("duplicate", 2) not in found
