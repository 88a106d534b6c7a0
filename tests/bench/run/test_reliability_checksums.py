"""Checksummed tables (case 7): a flipped bit is an error naming the file.

results.parquet and every part file are written with Parquet page checksums and a
SHA-256 of the whole file (results: ``results.parquet.sha256`` beside it; a part
file: in its name), both checked on every read, so a damaged table is never read as
different data; ``glyphbench merge`` rebuilds a damaged results table from the parts
(docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.engine.folder import RunFolder
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import merge_run, run_benchmark
from glyphbench.run.reading_store import READINGS_DIR, readings_table
from glyphbench.run.results import RESULTS, read_results
from tests.helpers.cli_runs import run_cli
from tests.helpers.runner_helper import prompt_set, register

register()


@pytest.fixture(scope="module")
def good_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("checksums") / "run"
    config = RunConfig.from_mapping(
        {
            "models": ["control:render?size=32", "control:typo?rate=0.5&size=32"],
            "seeds": [0, 1],
            "batch_size": 4,
            "ocr": "pixelocr",
            "out": str(out),
        }
    )
    run_benchmark(config, prompt_set=prompt_set(6), progress=False)
    return out


def flipped(data: bytes, rng: random.Random) -> bytes:
    damaged = bytearray(data)
    damaged[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(damaged)


def silent_flips(run: Path, flips: int, seed: int = 32) -> tuple[int, int]:
    """(flips that read back as different data, flips that raised), over ``flips`` flips."""
    path = run / RESULTS
    original = path.read_bytes()
    expected = read_results(path)
    rng = random.Random(seed)
    silent = raised = 0
    try:
        for _ in range(flips):
            path.write_bytes(flipped(original, rng))
            try:
                got = read_results(path)
            except InputError as error:
                assert str(path) in str(error) and "\n" not in str(error)
                raised += 1
                continue
            if not got.equals(expected):
                silent += 1
    finally:
        path.write_bytes(original)
    return silent, raised


def test_results_and_parts_carry_checksums(good_run: Path) -> None:
    import pyarrow.parquet as pq

    assert (good_run / "results.parquet.sha256").is_file()
    parts = RunFolder(good_run).part_files()
    assert parts and all(len(p.stem.rsplit("-", 1)[1]) == 16 for p in parts)
    # every data page of the table has a CRC (a flip in page data fails its check)
    first = pq.ParquetFile(good_run / RESULTS).metadata.row_group(0).column(0)
    assert first.data_page_offset > 0


def test_bit_flips_in_results_never_read_as_different_data(tmp_path: Path, good_run: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    silent, raised = silent_flips(run, 60)
    assert silent == 0 and raised == 60


@pytest.mark.slow
def test_three_hundred_bit_flips_in_results_never_read_as_different_data(
    tmp_path: Path, good_run: Path
) -> None:
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    assert silent_flips(run, 300, seed=7) == (0, 300)


def test_a_flipped_part_file_is_set_aside_and_never_merged(tmp_path: Path, good_run: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    expected = read_results(run / RESULTS)
    rng = random.Random(3)
    for part in RunFolder(run).part_files():
        part.write_bytes(flipped(part.read_bytes(), rng))
        break
    # The complete table holds that part's rows: a merge does not replace it by a shorter
    # one (the rows would be lost until the run makes them again)
    before = {name: (run / name).read_bytes() for name in (RESULTS, "run.json")}
    for _ in range(2):  # and not on the next merge either, the part already set aside
        with pytest.raises(InputError, match=r"kept as it is: 1 part file\(s\) could not"):
            merge_run(run)
        assert {name: (run / name).read_bytes() for name in before} == before
    assert len(list(run.rglob("*.parquet.unreadable"))) == 1
    (run / RESULTS).unlink()  # a first merge: nothing to keep, the rest is merged
    merged = merge_run(run)
    key = ["model", "prompt_id", "seed", "sample_index"]
    both = merged.merge(expected, on=key, suffixes=("", "_was"))
    assert len(both) == len(merged) < len(expected)  # its rows are missing, none altered
    assert (both["ocr_text"] == both["ocr_text_was"]).all()


def test_merge_rebuilds_a_damaged_results_table(
    tmp_path: Path, good_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    expected = read_results(run / RESULTS)
    data = (run / RESULTS).read_bytes()
    (run / RESULTS).write_bytes(data[:100] + bytes([data[100] ^ 4]) + data[101:])
    code, err = run_cli(["report", str(run), "--out", str(tmp_path / "report")], capsys)
    assert code == 2 and err.count("\n") == 1 and "results.parquet" in err
    assert "glyphbench merge" in err
    code, err = run_cli(["merge", str(run)], capsys)
    assert code == 0, err
    pd.testing.assert_frame_equal(read_results(run / RESULTS), expected)


# ------------------------------------------------------ readings and pandas metadata
def readings_file(run: Path) -> Path:
    return sorted((run / READINGS_DIR).glob("*.parquet"))[0]


def named_by_its_sha(path: Path, data: bytes) -> Path:
    """``data`` written under ``path``'s name with its SHA-256 made to match (as anyone
    rewriting the file can); the old file removed."""
    stem, _ = path.name.rsplit("-", 1)
    renamed = path.with_name(f"{stem}-{hashlib.sha256(data).hexdigest()[:16]}.parquet")
    path.unlink()
    renamed.write_bytes(data)
    return renamed


def without_index_columns(path: Path) -> bytes:
    """The Parquet file at ``path`` with its pandas metadata lacking ``index_columns``."""
    import io
    import json

    import pyarrow.parquet as pq

    table = pq.read_table(path)
    pandas = json.loads(table.schema.metadata[b"pandas"])
    del pandas["index_columns"]
    table = table.replace_schema_metadata({b"pandas": json.dumps(pandas).encode()})
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


@pytest.mark.slow
def test_three_hundred_bit_flips_of_a_readings_file_never_read_as_different_text(
    tmp_path: Path, good_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    path = readings_file(run)
    original = path.read_bytes()
    expected = readings_table(run)
    path.unlink()
    without = readings_table(run)  # what the other readings files hold
    aside = path.with_name(path.name + ".unreadable")
    rng = random.Random(45)
    silent = set_aside = 0
    for _ in range(300):
        path.write_bytes(flipped(original, rng))
        got = readings_table(run)
        if aside.exists():  # set aside in one line: never used
            set_aside += 1
            assert got.equals(without)
            aside.unlink()
            continue
        if not got.equals(expected):
            silent += 1
    err = capsys.readouterr().err
    assert (silent, set_aside) == (0, 300)
    assert err.count("unreadable readings file") == 300 and "Traceback" not in err


@pytest.mark.parametrize("command", ["readers-list", "rescore"])
def test_a_readings_file_with_damaged_pandas_metadata_is_set_aside(
    tmp_path: Path, good_run: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """``KeyError: 'index_columns'`` was a traceback in `readers list` and `rescore`."""
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    path = readings_file(run)
    damaged = named_by_its_sha(path, without_index_columns(path))
    args = ["readers", "list", str(run)] if command == "readers-list" else [
        "rescore", str(run), "--no-progress"]  # fmt: skip
    code, err = run_cli(args, capsys)
    assert code == 0, err
    [line] = [line for line in err.splitlines() if "readings file" in line]
    assert str(damaged) in line and "set aside" in line and "Traceback" not in err
    assert damaged.with_name(damaged.name + ".unreadable").is_file()
    if command == "rescore":  # its images read again: every reading stored once more
        assert len(readings_table(run)) == len(read_results(run / RESULTS))


@pytest.mark.parametrize("command", ["merge", "read"])
def test_a_part_file_with_damaged_pandas_metadata_is_no_traceback(
    tmp_path: Path, good_run: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Its rows are merged from their Arrow data (the metadata only says how pandas
    indexes them), or the file is set aside and its rows made again: never a traceback."""
    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    expected = read_results(run / RESULTS)
    part = RunFolder(run).part_files()[0]
    named_by_its_sha(part, without_index_columns(part))
    code, err = run_cli([command, str(run), *(["--read-workers", "0"] * (command == "read"))],
                        capsys)  # fmt: skip
    assert code == 0 and "Traceback" not in err, err
    if not list(run.rglob("*.unreadable")):
        pd.testing.assert_frame_equal(read_results(run / RESULTS), expected)


def test_a_results_table_with_damaged_pandas_metadata_is_one_line(
    tmp_path: Path, good_run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from glyphbench.core.io import write_checksum

    run = tmp_path / "run"
    shutil.copytree(good_run, run)
    (run / RESULTS).write_bytes(without_index_columns(run / RESULTS))
    write_checksum(run / RESULTS)  # its checksum rewritten to match
    code, err = run_cli(["report", str(run), "--out", str(tmp_path / "report")], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "damaged table metadata" in err and "glyphbench merge" in err
