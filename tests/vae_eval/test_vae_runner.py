"""End-to-end VAE evaluation with real EasyOCR on a few small rendered images.

One module-scoped run (3 images x identity, JPEG q90/q5, resize f2/f8, a NaN VAE and
a missing VAE) feeds the checks from the issue: identity keeps the OCR ceiling, JPEG
and resize lose text as quality/size falls, failures become rows, and a resumed run
recomputes deleted batches to identical rows without duplicates.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from PIL import Image

from glyphbench.core.errors import InputError
from glyphbench.engine import encode_png
from glyphbench.readers.base import Reader
from glyphbench.vae_eval.imageset import ImageSet, default_set
from glyphbench.vae_eval.runner import RESULTS_NAME, SHARD, RunOptions, evaluate, slug
from tests.helpers.vae_fixtures import tiny_autoencoder_kl

IMAGE_IDS = ("s14-lower-plain-0", "s20-upper-plain-0", "s32-digits-plain-0")
CODECS = [
    "identity",
    "jpeg?quality=90",
    "jpeg?quality=5",
    "resize?factor=2",
    "resize?factor=8",
]


def _image_set() -> ImageSet:
    full = default_set(size=256)
    return ImageSet(full.name, [item for item in full.items if item.image_id in IMAGE_IDS])


def _broken_vae(folder: Path, bias: float) -> Path:
    """A tiny AutoencoderKL whose decoder's last conv outputs only ``bias`` (NaN or 0)."""
    import torch

    # No mid-block attention keeps 256 px inputs cheap; the codec tests cover attention.
    vae: Any = tiny_autoencoder_kl(mid_block_add_attention=False)
    with torch.no_grad():
        vae.decoder.conv_out.weight.zero_()
        vae.decoder.conv_out.bias.fill_(bias)
    vae.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def broken_vaes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("broken_vaes")
    return {
        "nan": f"diffusers:{_broken_vae(root / 'nan', float('nan'))}",
        "blank": f"diffusers:{_broken_vae(root / 'blank', 0.0)}",
        # a hub id the unreachable hub cannot give: rows fail (a missing local folder is
        # refused before the run instead, test_a_missing_local_vae_folder_is_refused)
        "missing": "diffusers:nobody/no-such-vae",
    }


@pytest.fixture(scope="module")
def ocr_engine() -> Reader:
    from glyphbench.readers import get_reader

    return get_reader("easyocr?gpu=0")


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory, broken_vaes: dict[str, str], ocr_engine: Reader
) -> tuple[Path, pd.DataFrame, list[str]]:
    out = tmp_path_factory.mktemp("vae_run")
    codecs = [*CODECS, *broken_vaes.values()]
    options = RunOptions(codecs=codecs, batch_size=2)
    table = evaluate(options, out, image_set=_image_set(), ocr_engine=ocr_engine)
    return out, table, codecs


def _means(table: pd.DataFrame, column: str) -> dict[str, float]:
    return table.groupby("vae")[column].mean().to_dict()


@pytest.mark.slow
def test_table_shape_and_columns(run: tuple[Path, pd.DataFrame, list[str]]) -> None:
    out, table, codecs = run
    assert len(table) == len(codecs) * len(IMAGE_IDS)
    assert not table.duplicated(["vae", "image_id"]).any()
    for column in (
        "vae",
        "image_id",
        "font",
        "font_size",
        "char_class",
        "background",
        "truth",
        "ocr_original",
        "ocr_reconstruction",
        "wr",
        "pa",
        "psnr",
        "ssim",
        "error",
    ):
        assert column in table.columns
    assert list(dict.fromkeys(table["vae"])) == codecs  # codecs in the order given
    assert (out / RESULTS_NAME).is_file()
    reread = pd.read_parquet(out / RESULTS_NAME)
    pd.testing.assert_frame_equal(reread, table)
    assert (table["truth_source"] == "metadata").all()
    # reconstructions were saved for successful rows
    ok = table[table["error"] == ""]
    assert all((out / path).is_file() for path in ok["reconstruction_path"])


@pytest.mark.slow
def test_ocr_ceiling_is_high_and_identity_keeps_it(
    run: tuple[Path, pd.DataFrame, list[str]],
) -> None:
    _, table, _ = run
    identity = table[table["vae"] == "identity"]
    assert identity["wr_original"].mean() >= 80.0  # rendered black-on-white text at >= 14 px
    assert (identity["error"] == "").all()
    assert (identity["wr"] == identity["wr_original"]).all()
    assert (identity["ocr_reconstruction"] == identity["ocr_original"]).all()
    assert (identity["psnr"] == math.inf).all()
    assert identity["ssim"].tolist() == pytest.approx([1.0] * len(IMAGE_IDS))


@pytest.mark.slow
def test_jpeg_and_resize_lose_text_as_quality_falls(
    run: tuple[Path, pd.DataFrame, list[str]],
) -> None:
    _, table, _ = run
    ok = table[table["error"] == ""]
    wr, pa, psnr = _means(ok, "wr"), _means(ok, "pa"), _means(ok, "psnr")
    assert wr["identity"] >= wr["jpeg?quality=90"] >= wr["jpeg?quality=5"]
    assert pa["jpeg?quality=90"] > pa["jpeg?quality=5"]
    assert wr["resize?factor=2"] > wr["resize?factor=8"]
    assert pa["resize?factor=2"] > pa["resize?factor=8"]
    assert psnr["jpeg?quality=90"] > psnr["jpeg?quality=5"]
    assert psnr["resize?factor=2"] > psnr["resize?factor=8"]
    # losses are measured against the ceiling, row by row
    row = ok[ok["vae"] == "resize?factor=8"].iloc[0]
    assert row["wr_loss"] == pytest.approx(row["wr_original"] - row["wr"])


@pytest.mark.slow
def test_failures_become_rows(
    run: tuple[Path, pd.DataFrame, list[str]], broken_vaes: dict[str, str]
) -> None:
    _, table, _ = run
    nan_rows = table[table["vae"] == broken_vaes["nan"]]
    assert nan_rows["error"].str.contains("NaN").all()
    assert nan_rows["wr"].isna().all() and nan_rows["psnr"].isna().all()
    assert nan_rows["wr_original"].notna().all()  # the ceiling is still known
    blank = table[table["vae"] == broken_vaes["blank"]]
    assert (blank["error"] == "codec: blank (constant) reconstruction").all()
    assert (blank["ocr_reconstruction"] == "").all() and blank["wr"].isna().all()
    missing = table[table["vae"] == broken_vaes["missing"]]
    assert missing["error"].str.startswith("codec: InputError").all()
    assert missing["vae_description"].str.startswith("failed to load").all()


@pytest.mark.slow
def test_resume_recomputes_deleted_batches_identically(
    run: tuple[Path, pd.DataFrame, list[str]], tmp_path: Path, ocr_engine: Reader
) -> None:
    out, table, codecs = run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    parts = sorted((copy / "parts" / SHARD / slug("jpeg?quality=5")).glob("batch-*.parquet"))
    assert len(parts) == 2  # batches of 2 and 1 image
    parts[0].unlink()
    (copy / RESULTS_NAME).unlink()
    calls: list[str] = []
    again = evaluate(
        RunOptions(codecs=codecs, batch_size=2),
        copy,
        image_set=_image_set(),
        ocr_engine=ocr_engine,
        progress=lambda stage, done, total: calls.append(stage),
    )
    assert set(calls) == {"jpeg?quality=5"}  # only the deleted batch's codec ran again
    assert len(calls) == 2  # once as its group starts (for the ETA), once after the batch
    columns = [c for c in table.columns if c not in ("codec_seconds", "ocr_seconds")]
    pd.testing.assert_frame_equal(again[columns], table[columns])  # deterministic, no duplicates

    calls.clear()
    evaluate(
        RunOptions(codecs=codecs, batch_size=2),
        copy,
        image_set=_image_set(),
        ocr_engine=ocr_engine,
        progress=lambda stage, done, total: calls.append(stage),
    )
    assert calls == []  # a finished run does nothing


@pytest.mark.slow
def test_a_resumed_run_keeps_the_png_format_of_its_run_json(
    run: tuple[Path, pd.DataFrame, list[str]], tmp_path: Path, ocr_engine: Reader
) -> None:
    """Reconstructions are PNG format 2; a run.json without ``png`` (written before format
    2) is resumed in format 1 and keeps saying so."""
    out, _table, codecs = run
    assert json.loads((out / "run.json").read_text())["png"] == 2
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    manifest = json.loads((copy / "run.json").read_text())
    del manifest["png"]
    (copy / "run.json").write_text(json.dumps(manifest))
    stem = slug("jpeg?quality=5")
    for part in (copy / "parts" / SHARD / stem).glob("batch-*.parquet"):
        part.unlink()
    (copy / RESULTS_NAME).unlink()
    again = evaluate(
        RunOptions(codecs=codecs, batch_size=2), copy, image_set=_image_set(), ocr_engine=ocr_engine
    )
    assert json.loads((copy / "run.json").read_text())["png"] == 1
    redone = again[(again["vae"] == "jpeg?quality=5") & (again["error"] == "")]
    assert len(redone) == len(IMAGE_IDS)
    for path in redone["reconstruction_path"]:
        data = (copy / path).read_bytes()
        with Image.open(copy / path) as image:
            image.load()
            assert data == encode_png(image, 1)[0] != encode_png(image, 2)[0], path
            assert (out / path).read_bytes() == encode_png(image, 2)[0]


@pytest.mark.slow
def test_retry_errors_recomputes_failed_batches(
    run: tuple[Path, pd.DataFrame, list[str]], tmp_path: Path, ocr_engine: Reader
) -> None:
    out, _, codecs = run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    calls: list[str] = []
    evaluate(
        RunOptions(codecs=codecs, batch_size=2, retry_errors=True),
        copy,
        image_set=_image_set(),
        ocr_engine=ocr_engine,
        progress=lambda stage, done, total: calls.append(stage),
    )
    assert set(calls) == set(codecs[len(CODECS) :])  # only the failing codecs ran again


@pytest.mark.slow
def test_rerun_with_fewer_codecs_or_another_set(
    run: tuple[Path, pd.DataFrame, list[str]], tmp_path: Path, ocr_engine: Reader
) -> None:
    out, table, _ = run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    calls: list[str] = []
    subset = evaluate(
        RunOptions(codecs=["resize?factor=8"]),
        copy,
        image_set=_image_set(),
        ocr_engine=ocr_engine,
        progress=lambda stage, done, total: calls.append(stage),
    )
    assert calls == []  # everything is already on disk
    expected = table[table["vae"] == "resize?factor=8"].reset_index(drop=True)
    pd.testing.assert_frame_equal(subset, expected)  # the table holds the current command's codecs

    other = ImageSet("default?size=512&seed=0", _image_set().items)  # same ids, other images
    with pytest.raises(InputError, match="holds a run with images"):
        evaluate(RunOptions(codecs=["identity"]), copy, image_set=other, ocr_engine=ocr_engine)
    with pytest.raises(InputError, match="unknown codec 'jpg'"):
        evaluate(
            RunOptions(codecs=["identity", "jpg?quality=3"]),
            copy,
            image_set=_image_set(),
            ocr_engine=ocr_engine,
        )


class _Fixed(Reader):
    """Reads the same text on every image (no OCR needed)."""

    name = "fixed"

    @property
    def version(self) -> str:
        return "fixed 1"

    def read(self, images: Any) -> list[Any]:
        from glyphbench.readers.base import Reading

        return [Reading("TEN EXIT") for _ in images]


def test_columns_and_scores_follow_the_vae_metric_family(tmp_path: Path) -> None:
    """A metric registered in the ``vae`` family is computed on the original and
    the reconstruction, with its loss, in the table's order; removed, it is gone."""
    from glyphbench.scoring.table import METRICS, Metric
    from glyphbench.vae_eval.runner import metric_columns

    toy = Metric(
        "toy_chars",
        lambda pair: float(len(pair.read_raw)),
        label="Characters read",
        higher_is_better=True,
        doc="Characters the reader returned.",
        family="vae",
    )
    full = default_set(size=96)
    images = ImageSet(full.name, full.items[:2])
    METRICS.add(toy)
    try:
        columns = metric_columns()
        table = evaluate(
            RunOptions(codecs=["identity"]), tmp_path / "a", image_set=images, ocr_engine=_Fixed()
        )
    finally:
        METRICS.remove("toy_chars", "vae")
    assert columns == (
        *("wr_original", "pa_original", "toy_chars_original", "wr", "pa", "toy_chars"),
        *("wr_loss", "pa_loss", "toy_chars_loss", "psnr", "ssim", "psnr_text", "ssim_text"),
    )
    assert table["toy_chars"].tolist() == [8.0, 8.0]
    assert table["toy_chars_original"].tolist() == [8.0, 8.0]
    assert table["toy_chars_loss"].tolist() == [0.0, 0.0]
    assert list(table.columns).index("toy_chars") == list(table.columns).index("pa") + 1
    again = evaluate(
        RunOptions(codecs=["identity"]), tmp_path / "b", image_set=images, ocr_engine=_Fixed()
    )
    assert "toy_chars" not in again.columns and "toy_chars_loss" not in metric_columns()
