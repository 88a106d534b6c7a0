"""Pixel digests of the render controls' images on the demo's prompts and on real texts.

``tests/data/render_control_digests.json`` holds the digests the renderer gave before
its line breaking was made linear (the quadratic renderer, run once with
``python tests/helpers/render_reference.py``); ``tests/bench/models/test_render_linear.py``
compares today's images with them, so the demo's results (and every run's) stay as they were. Pixels
are hashed, not PNG bytes (zlib versions differ), and the fonts, Pillow, FreeType and
raqm that drew them are recorded: another set draws other pixels, and the comparison is
skipped there with the reason.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DIGESTS = Path(__file__).resolve().parents[1] / "data" / "render_control_digests.json"
LONGTEXT = REPO.parent / "shared" / "longtext-bench"


def drawing_setup() -> dict[str, Any]:
    """What the pixels depend on besides the code: the font files and the text stack."""
    from PIL import __version__ as pillow
    from PIL import features

    from glyphbench.core.fonts import cjk_fonts
    from glyphbench.models.controls import control_font_paths

    fonts = [*control_font_paths(), *(path for path, _ in cjk_fonts())]
    return {
        "pillow": pillow,
        "freetype": features.version("freetype2"),
        "raqm": features.version("raqm"),
        "fonts": {
            path.name: hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            for path in sorted(set(fonts))
        },
    }


def demo_requests() -> Iterator[tuple[str, str, int, str]]:
    """(model spec, prompt id, image seed, text) of the demo's control images."""
    from glyphbench.cli.demo import DEMO_CONTROLS, demo_config
    from glyphbench.run.config import RunConfig
    from glyphbench.run.image_jobs import build_jobs
    from glyphbench.run.operations import load_prompts

    mapping = demo_config(Path("demo_out"), Path("tiny"))
    mapping["models"] = [m for m in mapping["models"] if m["spec"].startswith("control:")]
    config = RunConfig.from_mapping(mapping, "demo")
    frame = load_prompts(config).frame
    texts = dict(zip(frame["prompt_id"].astype(str), frame["text"].astype(str), strict=True))
    specs = dict((label, spec) for spec, label in DEMO_CONTROLS)
    for label, jobs in build_jobs(config, frame).items():
        for job in jobs:
            yield specs[label], job.prompt_id, job.image_seed, texts[job.prompt_id]


def real_requests() -> Iterator[tuple[str, str, int, str]]:
    """Every LongText-Bench text (English and Chinese), rendered at the default size."""
    for name in ("text_prompts.jsonl", "text_prompts_zh.jsonl"):
        path = LONGTEXT / name
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            text = row["text"] if isinstance(row["text"], str) else "\n".join(row["text"])
            yield "control:render", f"{name}:{number}", number, text


#: Alphabets of the synthetic texts: scripts whose shaping differs (kerning, ligatures,
#: joining, marks) and CJK, which breaks between any two characters.
ALPHABETS = {
    "latin": "AVTWYaveyo.,fiflffiLT'-rjgq0123456789ÀéñüŁ",
    "cyrillic": "АБВГДЕЖЗИЙКЛМНОПРСТУФХЦЧШЩЫЭЮЯабвгдежз",
    "greek": "ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩαβγδεζηθικλμνξοπρστυφχψω",
    "arabic": "ابتثجحخدذرزسشصضطظعغفقكلمنهوي",
    "hebrew": "אבגדהוזחטיכלמנסעפצקרשת",
    "cjk": "营业中欢迎光临咖啡店出口入口停车场禁止吸烟",
}


def synthetic_requests() -> Iterator[tuple[str, str, int, str]]:
    """Seeded texts of every alphabet, 20 to 300 characters, with and without spaces, at
    three sizes: long unbroken words are where line breaking works hardest."""
    import random

    rng = random.Random(45)
    for script, alphabet in ALPHABETS.items():
        for number in range(8):
            length = rng.choice((20, 60, 120, 300))
            spaced = number % 2 == 0
            chars = [rng.choice(alphabet + (" " * 6 if spaced else "")) for _ in range(length)]
            size = (64, 256, 512)[number % 3]
            spec = (
                f"control:render?size={size}"
                if number % 4
                else f"control:typo?rate=0.2&size={size}"
            )
            yield spec, f"{script}-{number}", rng.randrange(10**6), "".join(chars)


def digest(spec: str, text: str, seed: int) -> str:
    """SHA-256 of the pixels the control ``spec`` draws for ``text`` and ``seed``."""
    from glyphbench.core.registry import PLUGINS
    from glyphbench.models.base import ImageRequest

    model = PLUGINS.create("models", spec)
    image = model.generate([ImageRequest(prompt=text, text=text, seed=seed)])[0]
    pixels = image.convert("RGB")
    return hashlib.sha256(f"{pixels.size}".encode() + pixels.tobytes()).hexdigest()


def all_digests(requests: Iterator[tuple[str, str, int, str]]) -> dict[str, str]:
    return {f"{spec}|{pid}|{seed}": digest(spec, text, seed) for spec, pid, seed, text in requests}


if __name__ == "__main__":
    data = {
        "setup": drawing_setup(),
        "demo": all_digests(demo_requests()),
        "longtext": all_digests(real_requests()),
        "synthetic": all_digests(synthetic_requests()),
    }
    DIGESTS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print({name: len(values) for name, values in data.items()}, file=sys.stderr)
