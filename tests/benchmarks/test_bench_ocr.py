"""benchmarks/bench_ocr.py: an installed reader whose weights are not here (the VLM offline)
is skipped with its reason, and the readers after it are still measured, so `make bench`
runs to its end offline."""

from __future__ import annotations

import sys

import pytest

from benchmarks import bench_ocr


@pytest.mark.slow
def test_a_reader_without_its_weights_is_skipped_and_the_next_is_measured(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("transformers")
    pytest.importorskip("rapidocr_onnxruntime")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = "vlm:glyphbench-test/no-such-model"
    monkeypatch.setattr(
        sys, "argv", ["bench_ocr.py", "--images", "2", "--engines", f"{spec},rapidocr"]
    )
    bench_ocr.main()
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith(spec) and "skipped: " in line for line in lines), lines
    measured = next(line for line in lines if line.startswith("rapidocr "))
    assert measured.split()[3] == "1.000"  # mean NED of two drawn signs, read right
