"""A small synthetic run folder for the human-study tests.

It has every column of ``glyphbench.run.results.RESULT_COLUMNS`` and real PNG images
drawn with PIL, written through the engine's :class:`~glyphbench.engine.RunFolder` the
way the runner writes them, so the study code sees what a real run would give it: three
models plus the three control models, prompts in a few categories, OCR text
with some mistakes and the scores the scoring engine computes from them.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pandas as pd
from PIL import Image, ImageDraw, ImageFont

from glyphbench.core.fonts import bundled_fonts
from glyphbench.core.schema import ROW_KEY
from glyphbench.engine import RunFolder, slug
from glyphbench.run.results import RESULT_COLUMNS, RESULTS, conform_results, image_relpath
from glyphbench.scoring import score_pairs

MODELS = ("diffusers:tiny/alpha", "diffusers:tiny/beta", "diffusers:tiny/gamma")
CONTROLS = ("control:render", "control:typo?rate=0.5", "control:blank")
GROUPS = ("Advertisements", "Street signs", None)
WORDS = ("SALE", "OPEN", "COFFEE", "EXIT", "HELLO", "GARDEN", "PIZZA", "HOTEL", "MUSEUM", "TAXI")
#: How often each model garbles its text (drives both the image and the OCR).
ERROR_RATE = {"diffusers:tiny/alpha": 0.1, "diffusers:tiny/beta": 0.4, "diffusers:tiny/gamma": 0.7}


def _garble(text: str, rng: random.Random) -> str:
    chars = list(text)
    i = rng.randrange(len(chars))
    chars[i] = "X" if chars[i] != "X" else "Q"
    return "".join(chars)


def _draw(text: str, size: int, colour: tuple[int, int, int]) -> Image.Image:
    image = Image.new("RGB", (size, size), colour)
    if text:
        font = ImageFont.truetype(str(bundled_fonts()[0]), size // 6)
        ImageDraw.Draw(image).text(
            (size // 10, size // 2 - size // 12), text, fill=(0, 0, 0), font=font
        )
    return image


def make_run(
    folder: Path,
    *,
    per_cell: int = 4,
    models: tuple[str, ...] = MODELS,
    controls: tuple[str, ...] = CONTROLS,
    groups: tuple[str | None, ...] = GROUPS,
    seed: int = 0,
    run_id: str = "run-test",
    image_size: int = 96,
) -> Path:
    """Write ``folder/results.parquet``, ``folder/run.json`` and images; return ``folder``.

    Each (group, model) cell gets ``per_cell`` images; each control gets
    ``per_cell`` images per group too. One extra failed row (error set, no
    image) checks that such rows are skipped.
    """
    rng = random.Random(seed)
    run = RunFolder(folder)
    rows = []
    for model in models + controls:
        for g, group in enumerate(groups):
            for k in range(per_cell):
                word = WORDS[(g * per_cell + k) % len(WORDS)]
                prompt_id = f"p{g}{k:02d}"
                prompt = f'A photo of a {"sign" if group else "wall"} that says "{word}"'
                if model == "control:blank":
                    drawn = ""
                elif model.startswith("control:typo"):
                    drawn = _garble(word, rng)
                elif model == "control:render":
                    drawn = word
                else:
                    drawn = _garble(word, rng) if rng.random() < ERROR_RATE[model] else word
                path = image_relpath(slug(model), prompt_id, 0, 0)
                colour = (200 + g * 20, 230, 255 - k * 10)
                sha256 = run.write_image(_draw(drawn, image_size, colour), path)
                ocr = drawn if rng.random() < 0.85 else drawn.lower()[:-1]
                rows.append(
                    {
                        "run_id": run_id,
                        "model": model,
                        "is_control": model.startswith("control:"),
                        "prompt_id": prompt_id,
                        "seed": 0,
                        "sample_index": 0,
                        "image_seed": rng.randrange(2**31),
                        "prompt": prompt,
                        "text": word,
                        "prompt_type": "real_world" if group else "simple",
                        "group": group,
                        "image_path": path,
                        "image_sha256": sha256,
                        "width": image_size,
                        "height": image_size,
                        "batch_size": 1,
                        "gen_seconds": 0.01,
                        "ocr_text": ocr,
                        "ocr_pieces": json.dumps([ocr]),
                        "ocr_boxes": "[]",
                        "ocr_confidences": "[0.9]",
                        "ocr_engine": "fake",
                        "ocr_version": "0",
                        "ocr_seconds": 0.01,
                        "error": "",
                    }
                )
    rows.append(
        {
            **rows[0],
            "prompt_id": "failed",
            "image_path": "",
            "image_sha256": "",
            "error": "Generate: RuntimeError: boom",
        }
    )
    frame = pd.DataFrame(rows)
    frame = frame.join(score_pairs(frame["text"], frame["ocr_text"]))
    run.write_part(conform_results(frame), "fixture", "all")
    run.merge(RESULTS, ROW_KEY, lambda rows: rows[list(RESULT_COLUMNS)])  # in the order made here
    run.write_manifest({"run_id": run_id, "models": list(models + controls)})
    return folder


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def launch_app(study_dir: Path, auth_file: Path | None = None, **options: Any):  # -> (demo, url)
    """Launch the rating app in this process on a free localhost port, without blocking.

    Requests from 127.0.0.1 may name their client in X-Forwarded-For (a reverse proxy on
    this host, ``--trusted-proxy 127.0.0.1``), so tests speak for raters at many addresses;
    ``options`` go to :func:`glyphbench.human_eval.serve.launch`.
    """
    import os

    os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
    from glyphbench.human_eval.serve import launch
    from glyphbench.human_eval.study import load_study

    port = free_port()
    if auth_file is not None:
        auth_file.chmod(0o600)  # the server refuses a password file others may read
    options.setdefault("trusted_proxies", ("127.0.0.1",))
    demo = launch(
        load_study(study_dir), port=port, auth_file=auth_file, block=False, quiet=True, **options
    )
    return demo, f"http://127.0.0.1:{port}/"


def rate_by_truth(service: Any, raters: int = 9) -> list[Any]:
    """``raters`` people each rate a whole batch: two in three answer text accuracy as the
    reader's exact match says, every third answers by rote (yes or no by turns); every
    prompt is followed. Returns each rater's last view (the batch's review screen)."""
    manifest = service.study.manifest
    truth = dict(zip(manifest["image_id"], manifest["exact_match"], strict=False))
    views = []
    for rater in range(raters):
        view = service.start(True)
        while view.screen == "item":
            correct = bool(truth[view.image_id]) if rater % 3 else rater % 2 == 0
            answers = {"prompt_following": "Yes", "text_accuracy": "Yes" if correct else "No"}
            view = service.submit(view.code, view.image_id, answers)
        views.append(view)
    return views


def rated_study(root: Path) -> Path:
    """``root/study``: a five-point study of a run in ``root/run``, rated by seven raters
    (each a whole batch, by the reader's exact match, some by rote), with images left for
    the rating app to show."""
    from glyphbench.human_eval.service import RatingService
    from glyphbench.human_eval.study import create_study, load_study

    run = make_run(root / "run", per_cell=3, image_size=160)
    study_dir = root / "study"
    create_study(
        [run], study_dir, n=18, min_per_cell=1, raters_per_image=3, seed=2, batch_size=6,
        gold_per_batch=1, n_gold=4, scale="likert5", progress=False,
    )  # fmt: skip
    study = load_study(study_dir)
    service = RatingService(study)
    truth = dict(zip(study.manifest["image_id"], study.manifest["exact_match"], strict=False))
    labels = list(study.scale)
    for rater in range(7):
        view = service.start(True)
        while view.screen == "item":
            good = bool(truth[view.image_id]) != (rater % 4 == 0)
            answer = labels[-1 - rater % 2] if good else labels[rater % 2]
            answers = {"prompt_following": labels[-1], "text_accuracy": answer}
            view = service.submit(view.code, view.image_id, answers)
        service.finish(view.code)
    return study_dir
