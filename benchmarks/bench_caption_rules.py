"""The VizWiz caption rule against a person's reading of real captions.

Draws the samples of ``benchmarks/caption_judgements/README.md`` from the "VizWiz Captions
1.0" val file (not in the repository: give its path), runs the ``vizwiz:`` source's rule
on every caption of each sample and compares the one text it gives a caption with the
texts the person judged the caption names:

* ``precision``: captions given a text whose text is one the caption names, of all
  captions given a text (each such caption has exactly one span);
* ``recall``: captions that name text and get one of their texts, of all captions that
  name text; captions left out as ambiguous (several candidates) count as missed.

Each with n and a 95% Wilson interval. Quote the ``heldout2`` row: it is the only sample
judged after the rule was frozen and played no part in writing it.

    .venv/bin/python benchmarks/bench_caption_rules.py --vizwiz VizWiz_Captions_v1_val_updated.json
"""

from __future__ import annotations

import argparse
import random
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

from glyphbench.core.bootstrap import wilson_interval
from glyphbench.prompts.captions import Caption, read_vizwiz

JUDGEMENTS = Path(__file__).parent / "caption_judgements"
#: Images whose captions the report that asked for this check quotes: kept out of the
#: held-out samples, since the rule was written knowing them.
QUOTED_IMAGES = frozenset({31122, 29026, 34555, 28769, 30958, 28545})
_END_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~“”‘’"  # noqa: RUF001


def samples(images: list[int]) -> dict[str, list[int]]:
    """The samples of the README, drawn as they were (seeds 4701, 4703, 4702, 4704)."""
    tune = random.Random(4701).sample(images, 80)
    looked_at = random.Random(4703).sample([i for i in images if i not in set(tune)], 120)
    seen = set(tune) | set(looked_at) | QUOTED_IMAGES
    pool = [i for i in images if i not in seen]
    heldout1 = random.Random(4702).sample(pool, 100)
    heldout2 = random.Random(4704).sample([i for i in pool if i not in set(heldout1)], 100)
    return {"tune": tune, "heldout1": heldout1, "heldout2": heldout2}


def load_judgements(path: Path) -> dict[str, set[str]]:
    """caption_id -> the texts the person judged it names (normalised)."""
    judged: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        caption_id, _, texts = line.partition("|")
        judged[caption_id.strip()] = {_norm(t) for t in texts.split("||") if t.strip()}
    return judged


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().strip(_END_PUNCT).lower())


def score(captions: list[Caption], judged: dict[str, set[str]]) -> dict[str, float]:
    given = [c for c in captions if c.text is not None]
    right = sum(_norm(c.text or "") in judged[c.caption_id] for c in given)
    naming = [c for c in captions if judged[c.caption_id]]
    got = sum(c.text is not None and _norm(c.text) in judged[c.caption_id] for c in naming)
    (p_lo, r_lo), (p_hi, r_hi) = wilson_interval(
        np.array([right, got], float), np.array([len(given), len(naming)], float)
    )
    return {
        "captions": len(captions),
        "given": len(given),
        "precision": right / max(len(given), 1),
        "p_lo": p_lo,
        "p_hi": p_hi,
        "naming": len(naming),
        "recall": got / max(len(naming), 1),
        "r_lo": r_lo,
        "r_hi": r_hi,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vizwiz", type=Path, required=True, help="the 1.0 val annotation file")
    args = parser.parse_args()
    result = read_vizwiz(args.vizwiz)
    by_image: dict[int, list[Caption]] = defaultdict(list)
    for caption in result.found + result.not_found + result.ambiguous:
        by_image[int(caption.image_id)].append(caption)
    print("sample     captions  given  precision [95% CI]      naming  recall [95% CI]")
    for name, images in samples(sorted(by_image)).items():
        judged = load_judgements(JUDGEMENTS / f"vizwiz_val_{name}.txt")
        captions = [c for image in images for c in by_image[image]]
        if {c.caption_id for c in captions} != set(judged):
            raise SystemExit(f"{name}: the sample drawn is not the one judged (another file?)")
        s = score(captions, judged)
        print(
            f"{name:<10} {s['captions']:>8}  {s['given']:>5}  {s['precision']:.3f} "
            f"[{s['p_lo']:.3f}, {s['p_hi']:.3f}]  {s['naming']:>6}  {s['recall']:.3f} "
            f"[{s['r_lo']:.3f}, {s['r_hi']:.3f}]"
        )


if __name__ == "__main__":
    main()
