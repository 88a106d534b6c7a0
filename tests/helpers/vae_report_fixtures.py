"""Hand-made result tables of ``glyphbench vae-eval`` for the VAE report tests (no OCR, no
models): the columns ``glyphbench.vae_eval`` writes, one row per image and codec.

Example::

    from tests.helpers.vae_report_fixtures import vae_results
    write_report(vae_results(), tmp_path)
"""

from __future__ import annotations

import math

import pandas as pd


def vae_rows(
    vae: str, wr_by_size: dict[int, float], ceiling: float = 100.0
) -> list[dict[str, object]]:
    """One row per font size for codec ``vae``: word recall ``wr`` (and the same position
    accuracy) on its reconstruction, ``ceiling`` on the original."""
    return [
        {
            "vae": vae,
            "image_id": f"img{size}",
            "image_index": index,
            "font_size": size,
            "char_class": "lower" if index % 2 else "upper",
            "truth": "a b",
            "truth_source": "metadata",
            "ocr_original": "a b",
            "ocr_reconstruction": "a",
            "wr_original": ceiling,
            "pa_original": ceiling,
            "wr": wr,
            "pa": wr,
            "wr_loss": ceiling - wr,
            "pa_loss": ceiling - wr,
            "psnr": 30.0,
            "ssim": 0.9,
            "original_path": "",
            "reconstruction_path": "",
            "ocr_engine": "easyocr",
            "ocr_version": "test",
            "error": "",
        }
        for index, (size, wr) in enumerate(wr_by_size.items())
    ]


def vae_results() -> pd.DataFrame:
    """Three codecs (identity, taef2, JPEG at quality 10) at four font sizes, three images
    each, losing more text as the size shrinks; the last row failed (the report's banner)."""
    rows = []
    for k in range(3):
        for vae, loss in (("identity", 0.0), ("taef2", 12.0), ("jpeg?quality=10", 30.0)):
            sizes = {
                48: 100.0 - loss / 2,
                32: 96.0 - loss,
                20: 90.0 - 2 * loss,
                14: 80.0 - 2 * loss,
            }
            for row in vae_rows(vae, {size: wr - 5 * k for size, wr in sizes.items()}):
                row.update(image_id=f"{row['image_id']}-{k}", psnr_text=25.0, ssim_text=0.8)
                rows.append(row)
    rows[-1].update(error="codec: blank (constant) reconstruction", wr=math.nan, pa=math.nan)
    return pd.DataFrame(rows)
