"""Build small, realistic run folders for report tests (and anyone else who needs one).

A run folder is written the way the runner writes one, through the engine's
:class:`~glyphbench.engine.RunFolder` (images with their SHA-256, the rows as a part file
merged into the results table, the manifest)::

    RUN/results.parquet        one row per image, columns glyphbench.run.results.RESULT_COLUMNS
    RUN/run.json               {"run_id": ..., "config": {...}, ...}
    RUN/images/<model>/<prompt_id>_s<seed>_i0.png
    RUN/parts/fixture/all/batch-00001.parquet

:func:`build_run` draws each image with PIL (the "model" writes the text with some
typos), simulates what OCR read (with boxes around the drawn text) and scores it
with the real scoring engine, so every score column is consistent with its texts.
Models include the three controls (render, typo at two rates, blank) and a few
error rows (failed generations: scores are NaN, ``error`` says why).

Example::

    from tests.helpers.report_fixtures import build_run
    run_dir = build_run(tmp_path / "run_a", n_prompts=24)
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pandas as pd

from glyphbench.core.schema import ROW_KEY
from glyphbench.engine import RunFolder, encode_png, slug
from glyphbench.prompts.schema import PROMPT_COLUMNS
from glyphbench.run.results import RESULT_COLUMNS, RESULTS, conform_results, image_relpath
from glyphbench.scoring import score_pairs

WORDS = (
    "open",
    "sale",
    "coffee",
    "exit",
    "bakery",
    "hello world",
    "fresh bread daily",
    "stop",
    "library",
    "grand opening today",
    "quantum",
    "zephyr",
    "welcome home",
    "no parking any time",
    "jazz night",
    "the quick brown fox jumps",
    "summer",
    "Café 24/7",
    "50% off everything",
    "museum of modern art and design",
)
CEFR = ("A1", "A2", "B1", "B2", "C1", "C2", None)
GROUPS = ("Advertisements", "Signs", "Book covers")

#: Default models: two "real" models of different quality plus the controls.
DEFAULT_MODELS: dict[str, float] = {
    "toy-good": 0.04,  # per-character typo probability
    "toy-bad": 0.25,
    "control:render": 0.0,
    "control:typo?rate=0.1": 0.1,
    "control:typo?rate=0.3": 0.3,
    "control:blank": 1.0,
}


def _garble(text: str, rate: float, rng: random.Random) -> str:
    """Replace, drop or double characters with probability ``rate`` each."""
    out = []
    for ch in text:
        roll = rng.random()
        if roll < rate / 3:
            out.append(rng.choice("abcdefghijklmnopqrstuvwxyz"))
        elif roll < 2 * rate / 3:
            continue
        elif roll < rate:
            out.append(ch + ch)
        else:
            out.append(ch)
    return "".join(out)


def make_prompts(n_prompts: int, seed: int = 0) -> pd.DataFrame:
    """An attributed prompt frame (the columns of PROMPT_COLUMNS) with varied attributes."""
    rng = random.Random(seed)
    rows = []
    for i in range(n_prompts):
        text = WORDS[i % len(WORDS)]
        ptype = ("simple", "complex", "real_world")[i % 3]
        group = GROUPS[(i // 3) % len(GROUPS)] if ptype == "real_world" else None
        prompt = {
            "simple": f'A sign that says "{text}"',
            "complex": f'A watercolor street at dusk, a neon sign reading "{text}" above a door',
            "real_world": f'A {str(group).lower()} photo with the text "{text}"',
        }[ptype]
        words = text.split()
        rows.append(
            {
                "prompt_id": f"p{i:04d}",
                "prompt": prompt,
                "text": text,
                "prompt_type": ptype,
                "group": group,
                "subgroup": None,
                "template_id": f"t{i % 4}",
                "text_id": f"x{i % len(WORDS):03d}",
                "source": "fixture",
                "char_length": len(text),
                "word_count": len(words),
                "cefr": CEFR[i % len(CEFR)],
                "rare": text in ("quantum", "zephyr"),
                "gibberish": False,
                "has_special_chars": any(not (c.isalnum() or c.isspace()) for c in text),
                "has_numbers": any(c.isdigit() for c in text),
                "is_sentence": len(words) >= 4,
                "script": "latin",
                "lang": "en",
                "char_band": None,
                "hsk_level": None,
                "laion_freq": rng.choice([None, 0, 7, 85, 950, 12_000, 250_000]),
                "coco_freq": rng.choice([None, 0, 3, 40]),
                "prompt_char_length": len(prompt),
                "prompt_word_count": len(prompt.split()),
            }
        )
    frame = pd.DataFrame(rows)
    for column, dtype in PROMPT_COLUMNS.items():
        frame[column] = frame[column].astype(dtype)
    return frame


def _draw(text: str, size: tuple[int, int], rng: random.Random):
    """A small PNG with ``text`` drawn on it; returns (image, box as 4 points)."""
    from PIL import Image, ImageDraw, ImageFont

    from glyphbench.core.fonts import font_by_name

    height = size[1]
    image = Image.new("RGB", size, (rng.randint(200, 255), rng.randint(200, 255), 235))
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(font_by_name("DejaVuSans")), 14)
    left, top = 6, height // 2 - 8
    if text:
        draw.text((left, top), text, fill=(20, 20, 60), font=font)
        x0, y0, x1, y1 = draw.textbbox((left, top), text, font=font)
    else:
        x0, y0, x1, y1 = left, top, left, top
    box = [[x0 - 2, y0 - 2], [x1 + 2, y0 - 2], [x1 + 2, y1 + 2], [x0 - 2, y1 + 2]]
    return image, box


def build_run(
    run_dir: str | Path,
    *,
    n_prompts: int = 24,
    models: dict[str, float] | None = None,
    seeds: tuple[int, ...] = (0,),
    run_id: str | None = None,
    n_errors: int = 3,
    with_images: bool = True,
    image_size: tuple[int, int] = (240, 64),
    seed: int = 0,
) -> Path:
    """Write a synthetic run folder and return its path.

    ``models`` maps model name -> per-character typo rate of what it "draws"
    (1.0 means it draws nothing: a blank image). OCR then reads the drawn text
    back with a small extra error rate (0.02), except for blank images.
    The first ``n_errors`` rows of model ``toy-bad`` are failed generations.
    """
    run_dir = Path(run_dir)
    folder = RunFolder(run_dir)
    models = dict(DEFAULT_MODELS if models is None else models)
    run_id = run_id or run_dir.name
    rng = random.Random(seed)
    prompts = make_prompts(n_prompts, seed=seed)
    rows: list[dict[str, object]] = []
    errors_left = n_errors
    for model, rate in models.items():
        is_control = model.startswith("control:")
        for prompt in prompts.to_dict("records"):
            for s in seeds:
                row: dict[str, object] = {
                    "run_id": run_id,
                    "model": model,
                    "is_control": is_control,
                    "seed": s,
                    "sample_index": 0,
                    "image_seed": s * 1000 + int(str(prompt["prompt_id"])[1:]),
                    **prompt,
                    "width": image_size[0],
                    "height": image_size[1],
                    "batch_size": 4,
                    "gen_seconds": round(rng.uniform(0.5, 3.0), 3),
                    "ocr_engine": "fixture",
                    "ocr_version": "fixture-1",
                    "error": "",
                }
                if model == "toy-bad" and errors_left > 0:
                    errors_left -= 1
                    row.update(
                        image_path="",
                        image_sha256="",
                        ocr_text="",
                        ocr_pieces="[]",
                        ocr_boxes="[]",
                        ocr_confidences="[]",
                        ocr_raw="[]",
                        ocr_seconds=0.0,
                        error="Generate: RuntimeError: CUDA out of memory",
                    )
                    rows.append(row)
                    continue
                text = str(prompt["text"])
                drawn = "" if rate >= 1.0 else _garble(text, rate, rng)
                read = _garble(drawn, 0.02, rng) if drawn else ""
                rel = image_relpath(slug(model), str(prompt["prompt_id"]), s, 0)
                image, box = _draw(drawn, image_size, rng)
                sha256 = folder.write_image(image, rel) if with_images else encode_png(image)[1]
                row.update(
                    image_path=rel,
                    image_sha256=sha256,
                    drawn_text=drawn if str(model).startswith("control:") else None,
                    ocr_text=read,
                    ocr_pieces=json.dumps([read] if read else []),
                    ocr_boxes=json.dumps([box] if read else []),
                    ocr_confidences=json.dumps([round(rng.uniform(0.6, 1.0), 3)] if read else []),
                    ocr_raw=json.dumps([read] if read else []),  # the engine's raw text
                    ocr_seconds=round(rng.uniform(0.01, 0.2), 3),
                )
                rows.append(row)
    frame = pd.DataFrame(rows)
    scores = score_pairs(frame["text"], frame["ocr_text"])
    failed = frame["error"] != ""
    scores = scores.astype("float64")
    scores.loc[failed.to_numpy(), :] = np.nan
    for column in scores.columns:
        frame[column] = scores[column].to_numpy()
    columns = [*RESULT_COLUMNS, *(["drawn_text"] if "drawn_text" in frame.columns else [])]
    folder.write_part(conform_results(frame[columns]), "fixture", "all")
    folder.merge(RESULTS, ROW_KEY, lambda rows: rows)  # rows stay in the order made here
    meta = {
        "run_id": run_id,
        "config": {
            "models": list(models),
            "seeds": list(seeds),
            "prompts": "fixture",
            "ocr": "fixture",
        },
        "created": "2026-11-22T03:00:00Z",
        "n_rows": len(frame),
    }
    folder.write_manifest(meta)
    return run_dir


#: Models of :func:`build_wide_run`: name -> per-character typo rate of what it "draws".
WIDE_MODELS: dict[str, float] = {
    "alpha": 0.02,
    "beta": 0.1,
    "gamma": 0.3,
    "delta": 0.6,
    "control:render": 0.0,
}


def build_wide_run(
    run_dir: str | Path,
    *,
    n_prompts: int = 2000,
    models: dict[str, float] | None = None,
    failed_every: int = 97,
    image_size: tuple[int, int] = (48, 20),
    seed: int = 0,
) -> Path:
    """A run of ``len(models) * n_prompts`` rows, made in seconds for tests of scale.

    Prompts come from :func:`make_prompts` (every attribute varied); each model's reading
    is the text with typos at its rate, scored by the real scoring engine; every
    ``failed_every``-th row of the last model failed (no image, NaN scores). Each image is
    a real small PNG (a flat colour per model with a dark bar as long as the reading),
    written straight to ``images/`` without the run engine's checksums, so 10,000 rows
    take a few seconds.
    """
    from PIL import Image, ImageDraw

    run_dir = Path(run_dir)
    models = dict(WIDE_MODELS if models is None else models)
    rng = random.Random(seed)
    prompts = make_prompts(n_prompts, seed=seed)
    frames = []
    for number, (model, rate) in enumerate(models.items()):
        frame = prompts.copy()
        frame["model"] = model
        frame["is_control"] = model.startswith("control:")
        frame["ocr_text"] = [_garble(str(t), rate, rng) for t in frame["text"]]
        frame["error"] = ""
        if number == len(models) - 1 and failed_every:
            failed = np.arange(len(frame)) % failed_every == 0
            frame.loc[failed, "error"] = "Generate: RuntimeError: CUDA out of memory"
            frame.loc[failed, "ocr_text"] = ""
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    frame["run_id"], frame["seed"], frame["sample_index"] = run_dir.name, 0, 0
    frame["image_seed"] = np.arange(len(frame))
    frame["width"], frame["height"] = image_size
    failed = (frame["error"] != "").to_numpy()
    paths = []
    for model, prompt_id, reading, bad in zip(
        frame["model"], frame["prompt_id"], frame["ocr_text"], failed, strict=True
    ):
        if bad:
            paths.append("")
            continue
        rel = image_relpath(slug(model), str(prompt_id), 0, 0)
        colour = _WIDE_COLOURS[list(models).index(model) % len(_WIDE_COLOURS)]
        image = Image.new("RGB", image_size, colour)
        bar = min(image_size[0] - 2, 2 + 2 * len(reading))
        ImageDraw.Draw(image).rectangle((1, 7, bar, 12), fill=(20, 20, 60))
        (run_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        image.save(run_dir / rel)
        paths.append(rel)
    frame["image_path"] = paths
    scores = score_pairs(frame["text"], frame["ocr_text"]).astype("float64")
    scores.loc[failed, :] = np.nan
    for column in scores.columns:
        frame[column] = scores[column].to_numpy()
    conform_results(frame).to_parquet(run_dir / RESULTS, index=False)
    meta = {"run_id": run_dir.name, "config": {"models": list(models), "seeds": [0]}}
    (run_dir / "run.json").write_text(json.dumps(meta), encoding="utf-8")
    return run_dir


_WIDE_COLOURS = (
    (236, 226, 250),
    (226, 244, 236),
    (252, 236, 222),
    (224, 236, 252),
    (246, 246, 232),
)
