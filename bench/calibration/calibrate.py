"""The reader calibration card: what a reader can and cannot tell on known images.

:func:`calibrate` reads the control images of a set of prompts, the text drawn
legibly (``render``), drawn with injected typos at several rates (``typo``) and
not drawn at all (``blank``), and reports, per language and per prompt kind:

* **render ceiling**: exact-match rate and mean NED on ``render`` images: the best
  score a perfect model can get through this reader;
* **typo faithfulness**: of the typos injected into the drawn text that the reader
  reported either as drawn or as the original, the share reported as drawn
  (:func:`classify_edits`; 100% for a faithful reader, near 0 for one that
  autocorrects "Dlgital" to "Digital", which lets a model that misspells score as
  if it spelled right); typos it read as neither are counted as ``misread``;
* **hallucination rate**: the share of blank images on which it read any text;
* **seconds per image** (wall time of its ``read`` calls, this machine).

Two further parts predict use on real images, where the short one-size renders do not:

* **long text** (:func:`long_text_images`): multi-word texts in three bundled fonts at
  three sizes; words returned per expected word (below 1 when a reader merges words),
  word recall and NED, overall, per size and per font;
* **real images** (:func:`load_real_set`, :func:`real_summary`): outputs of real
  text-to-image models, each transcribed by a person (the shipped set is
  ``tests/data/real_t2i``); per reader: NED and word recall against the person's
  reading, the error of the benchmark score (glyphbench NED against the intended text,
  from the reader's reading versus from the person's), the rank correlation of the
  per-model means, and whether each difference between two models is kept, lost,
  reversed or invented.

:func:`compare_readers` takes two readers' readings of one run (the run folder's
reading store) and reports their per-image agreement and how often they order
two models differently.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The typo-edit verdicts are pure text, shared with the report: they live in bench.scoring.
from bench.scoring.edits import FAITHFULNESS_FLOOR as FAITHFULNESS_FLOOR
from bench.scoring.edits import classify_edits, faithfulness, warning

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image

    from bench.readers.base import Reader

#: Typo rates of the card's ``typo`` images.
DEFAULT_RATES = (0.05, 0.1, 0.2)


# --------------------------------------------------------------------------- images


@dataclass
class ControlImage:
    """One calibration image: what was drawn, for which prompt, by which control."""

    prompt_id: str
    lang: str
    kind: str
    control: str  # render | typo?rate=R | blank
    truth: str  # the prompt's text
    drawn: str  # what the image shows ("" for blank)
    image: Image.Image


def control_images(
    frame: pd.DataFrame, rates: Sequence[float] = DEFAULT_RATES, size: int = 256, seed: int = 0
) -> list[ControlImage]:
    """Render, typo (one per rate) and blank images of every prompt of ``frame``.

    Images are drawn by the ``control`` models themselves, with image seed ``seed``.
    """
    from bench.models.base import ImageRequest
    from bench.models.controls import BlankControl, RenderControl, TypoControl

    out: list[ControlImage] = []
    render, blank = RenderControl(size), BlankControl(size)
    typos = [(rate, TypoControl(rate, size)) for rate in rates]
    for row in frame.itertuples(index=False):
        text = str(row.text)
        request = ImageRequest(prompt=str(row.prompt), text=text, seed=seed)
        lang = str(getattr(row, "lang", "") or "en")
        kind = _first_value(getattr(row, "kind", None), getattr(row, "prompt_type", None))
        base = {"prompt_id": str(row.prompt_id), "lang": lang, "kind": kind, "truth": text}
        out.append(
            ControlImage(**base, control="render", drawn=text, image=render.generate([request])[0])
        )
        for rate, typo in typos:
            drawn = typo.typo_text(request)
            out.append(
                ControlImage(
                    **base,
                    control=f"typo?rate={rate:g}",
                    drawn=drawn,
                    image=typo.generate([request])[0],
                )
            )
        out.append(
            ControlImage(**base, control="blank", drawn="", image=blank.generate([request])[0])
        )
    return out


def _first_value(*values: object) -> str:
    """The first value that is not missing, as text ("" when all are)."""
    for value in values:
        if value is not None and value == value and str(value) not in ("", "<NA>"):
            return str(value)
    return ""


# --------------------------------------------------------------------------- the card


@dataclass
class Card:
    """A reader's calibration card (see the module docstring); ``rows`` has one row per image."""

    reader: str
    version: str
    rows: pd.DataFrame
    seconds_per_image: float
    settings: dict[str, Any] = field(default_factory=dict)
    long_rows: pd.DataFrame | None = None  # long-text part (:func:`long_text_rows`)
    real_rows: pd.DataFrame | None = None  # real-image part (:func:`real_rows`)
    part_seconds: dict[str, float] = field(default_factory=dict)  # seconds/image per part

    def summary(self) -> dict[str, Any]:
        """Headline numbers, overall and per language."""
        out: dict[str, Any] = {
            "reader": self.reader,
            "version": self.version,
            "seconds_per_image": round(self.seconds_per_image, 4),
            "settings": self.settings,
            "overall": _summary(self.rows),
        }
        out["by_lang"] = {
            str(lang): _summary(part) for lang, part in self.rows.groupby("lang", sort=True)
        }
        if self.long_rows is not None:
            out["long_text"] = long_text_summary(self.long_rows)
        if self.real_rows is not None:
            out["real_images"] = real_summary(self.real_rows)
        out["part_seconds_per_image"] = {k: round(v, 4) for k, v in self.part_seconds.items()}
        return out

    def by_kind(self) -> pd.DataFrame:
        """Render ceiling and faithfulness per (language, prompt kind)."""
        import pandas as pd

        records = [
            {"lang": lang, "kind": kind, **_summary(part)}
            for (lang, kind), part in self.rows.groupby(["lang", "kind"], sort=True)
        ]
        return pd.DataFrame.from_records(records)

    def markdown(self) -> str:
        """The card as a Markdown page."""
        summary = self.summary()
        lines = [
            f"# Reader calibration card: `{self.reader}`",
            "",
            f"Version: `{self.version}`. Settings: {json.dumps(self.settings, sort_keys=True)}.",
            f"Seconds per image (this machine): {self.seconds_per_image:.3f}"
            + "".join(f"; {k} {v:.3f}" for k, v in self.part_seconds.items() if k != "controls")
            + ".",
            "",
            "| part | images | render exact | render NED | typo faithfulness | typos written / "
            "corrected / misread | blank hallucination |",
            "| --- | ---: | ---: | ---: | ---: | --- | ---: |",
        ]
        parts = [("all", summary["overall"]), *summary["by_lang"].items()]
        for name, values in parts:
            lines.append(_markdown_row(name, values))
        lines += [
            "",
            "By prompt kind:",
            "",
            "| lang | kind | render exact | render NED | typo faithfulness | blank hallucination |",
            "| --- | --- | ---: | ---: | ---: | ---: |",
        ]
        for record in self.by_kind().to_dict("records"):
            lines.append(
                f"| {record['lang']} | {record['kind']} | {_pct(record['render_exact'])} | "
                f"{_num(record['render_ned'])} | {_pct(record['typo_faithfulness'])} | "
                f"{_pct(record['blank_hallucination'])} |"
            )
        note = warning(self.reader, summary["overall"]["typo_faithfulness"])
        if note:
            lines += ["", f"**{note}**"]
        if "long_text" in summary:
            lines += ["", *_long_markdown(summary["long_text"])]
        if "real_images" in summary:
            lines += ["", *_real_markdown(summary["real_images"])]
        return "\n".join(lines) + "\n"

    def write(self, out: str | Path) -> Path:
        """Write ``card.md``, ``card.json`` and ``readings.csv`` into ``out``; returns card.md."""
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "card.json").write_text(
            json.dumps(self.summary(), indent=2, sort_keys=True, default=_json_value) + "\n",
            encoding="utf-8",
        )
        self.rows.to_csv(folder / "readings.csv", index=False)
        if self.long_rows is not None:
            self.long_rows.to_csv(folder / "long_text.csv", index=False)
        if self.real_rows is not None:
            self.real_rows.to_csv(folder / "real_images.csv", index=False)
        path = folder / "card.md"
        path.write_text(self.markdown(), encoding="utf-8")
        return path


def _json_value(value: Any) -> Any:
    return None if isinstance(value, float) and value != value else str(value)


def _pct(value: Any) -> str:
    return "n/a" if value is None or value != value else f"{100 * float(value):.1f}%"


def _num(value: Any) -> str:
    return "n/a" if value is None or value != value else f"{float(value):.3f}"


def _markdown_row(name: str, values: dict[str, Any]) -> str:
    counts = f"{values['typos_written']} / {values['typos_corrected']} / {values['typos_misread']}"
    return (
        f"| {name} | {values['images']} | {_pct(values['render_exact'])} | "
        f"{_num(values['render_ned'])} | {_pct(values['typo_faithfulness'])} | {counts} | "
        f"{_pct(values['blank_hallucination'])} |"
    )


def _summary(rows: pd.DataFrame) -> dict[str, Any]:
    from bench.scoring.table import METRICS

    render = rows[rows["control"] == "render"]
    typo = rows[rows["control"].str.startswith("typo")]
    blank = rows[rows["control"] == "blank"]
    verdicts: Counter[str] = Counter(
        written=int(typo["written"].sum()),
        corrected=int(typo["corrected"].sum()),
        misread=int(typo["misread"].sum()),
    )
    # the metric table's aggregates; reading anything on a blank image is no metric of it
    scores = METRICS.aggregate(render, ["exact_match", "ned"])
    return {
        "images": len(rows),
        "render_exact": scores["exact_match"],
        "render_ned": scores["ned"],
        "typo_faithfulness": faithfulness(verdicts),
        "typos_written": verdicts["written"],
        "typos_corrected": verdicts["corrected"],
        "typos_misread": verdicts["misread"],
        "blank_hallucination": float(blank["read_anything"].mean()) if len(blank) else float("nan"),
    }


def calibrate(
    reader: Reader,
    frame: pd.DataFrame,
    *,
    rates: Sequence[float] = DEFAULT_RATES,
    size: int = 256,
    batch_size: int = 8,
    settings: dict[str, Any] | None = None,
    long_text: bool = False,
    real: pd.DataFrame | None = None,
) -> Card:
    """Read the control images of the prompts of ``frame`` with ``reader``: its card.

    ``long_text`` adds the long-text part (:func:`long_text_images`); ``real`` (rows of
    :func:`load_real_set`) adds the real-image part.
    """
    images = control_images(frame, rates, size)
    readings, seconds = _read_all(reader, [item.image for item in images], batch_size)
    card = Card(reader.name, reader.version, _rows(images, readings), seconds, dict(settings or {}))
    card.part_seconds["controls"] = seconds
    if long_text:
        long_images = long_text_images()
        texts, seconds = _read_all(reader, [item.image for item in long_images], batch_size)
        card.long_rows, card.part_seconds["long_text"] = long_text_rows(long_images, texts), seconds
    if real is not None:
        card.real_rows, card.part_seconds["real_images"] = read_real_set(reader, real, batch_size)
    return card


def read_real_set(
    reader: Reader, frame: pd.DataFrame, batch_size: int = 8
) -> tuple[pd.DataFrame, float]:
    """Read the images of a real-image manifest: :func:`real_rows` and seconds per image."""
    from PIL import Image

    texts: list[str] = []
    total = 0.0
    paths = frame["path"].tolist()
    for start in range(0, len(paths), batch_size):
        batch = []
        for path in paths[start : start + batch_size]:
            with Image.open(path) as image:
                batch.append(image.convert("RGB"))
        read, seconds = _read_all(reader, batch, batch_size)
        texts.extend(read)
        total += seconds * len(batch)
    return real_rows(frame, texts), total / max(1, len(paths))


def _read_all(reader: Reader, images: list[Image.Image], step: int) -> tuple[list[str], float]:
    from bench.engine.reading import failure_cause, read_batch

    texts: list[str] = []
    started = time.perf_counter()
    for start in range(0, len(images), step):
        for outcome in read_batch(reader, images[start : start + step]):
            if isinstance(outcome, Exception):
                raise failure_cause(outcome)
            texts.append(outcome.text)
    return texts, (time.perf_counter() - started) / max(1, len(images))


def _rows(images: list[ControlImage], readings: list[str]) -> pd.DataFrame:
    import pandas as pd

    from bench.scoring import score_pairs
    from bench.scoring.normalize import normalize

    records = []
    for item, reading in zip(images, readings, strict=True):
        verdicts = (
            classify_edits(item.truth, item.drawn, reading)
            if item.control.startswith("typo")
            else Counter()
        )
        records.append(
            {
                "prompt_id": item.prompt_id,
                "lang": item.lang,
                "kind": item.kind,
                "control": item.control,
                "truth": item.truth,
                "drawn": item.drawn,
                "reading": reading,
                "read_anything": bool(normalize(reading)),
                "written": verdicts["written"],
                "corrected": verdicts["corrected"],
                "misread": verdicts["misread"],
            }
        )
    rows = pd.DataFrame.from_records(records)
    scores = score_pairs(rows["truth"].tolist(), rows["reading"].tolist())
    rows["ned"] = scores["ned"].to_numpy()
    rows["exact_match"] = scores["exact_match"].to_numpy()
    return rows


def _long_markdown(summary: dict[str, Any]) -> list[str]:
    lines = [
        "## Long text",
        "",
        f"{len(LONG_TEXTS)} multi-word texts ({', '.join(LONG_FONTS)}; "
        f"{', '.join(str(s) for s in LONG_SIZES)} px; black on white, {LONG_WIDTH} px wide).",
        "",
        "| part | images | words read per word | word recall | NED |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    parts = [("all", summary["overall"])]
    parts += [(f"{size} px", values) for size, values in summary["by_size"].items()]
    parts += list(summary["by_font"].items())
    for name, values in parts:
        lines.append(
            f"| {name} | {values['images']} | {_num(values['words_per_word'])} | "
            f"{_pct(values['word_recall'])} | {_num(values['ned'])} |"
        )
    return lines


def _span(values: list[float], percent: bool = False) -> str:
    show = _pct if percent else _num
    return f"[{show(values[0])}, {show(values[1])}]"


def _real_markdown(summary: dict[str, Any]) -> list[str]:
    lines = [
        "## Real text-to-image outputs",
        "",
        f"{summary['images']} images of {summary['models']} models, each read by a person.",
        "",
        "| figure | value |",
        "| --- | --- |",
        f"| NED to the person's reading | {_num(summary['ned_vs_human'])} "
        f"{_span(summary['ned_vs_human_interval'])} |",
        f"| word recall of the person's words | {_pct(summary['word_recall_vs_human'])} "
        f"{_span(summary['word_recall_vs_human_interval'], percent=True)} |",
        f"| words read per word the person read | {_num(summary['words_per_word'])} |",
        f"| benchmark NED error vs person-read NED (mean abs, {summary['scored_images']} "
        f"images with intended text) | {_num(summary['score_mae'])} "
        f"{_span(summary['score_mae_interval'])} |",
        f"| mean reader minus person (bias) | {_num(summary['score_bias'])} |",
        f"| Spearman of per-model means ({summary['scored_models']} models) | "
        f"{_num(summary['spearman'])} |",
        f"| model differences (of {len(summary['pairs'])} pairs) | "
        + ", ".join(f"{k} {v}" for k, v in summary["pair_verdicts"].items())
        + " |",
        "",
        "| models | person: A - B [95% CI] | reader: A - B [95% CI] | verdict |",
        "| --- | --- | --- | --- |",
    ]
    for pair in summary["pairs"]:
        a, b = pair["models"]
        lines.append(
            f"| {a} ({pair['images'][0]}) - {b} ({pair['images'][1]}) | "
            f"{pair['human']['difference']:+.3f} {_span(pair['human']['interval'])} | "
            f"{pair['reader']['difference']:+.3f} {_span(pair['reader']['interval'])} | "
            f"{pair['verdict']} |"
        )
    return lines


# --------------------------------------------------------------------------- two readers


def compare_readers(
    root: str | Path, first: str, second: str, metric: str = "ned"
) -> dict[str, Any]:
    """Two stored readers on one run: per-image agreement and model-ranking disagreement.

    ``agreement``: share of images whose two normalised readings are identical;
    ``mean_ned_between``: mean NED of one reading against the other; ``rank_flips``:
    of all pairs of (non-control) models, the share that the two readers order
    differently by the aggregate of ``metric`` (the metric table's: a mean for NED; ties
    count as neither order).
    """
    from itertools import combinations

    from bench.run.reading_store import results_with_reader
    from bench.scoring import score_pairs
    from bench.scoring.normalize import normalize
    from bench.scoring.table import METRICS

    a, b = results_with_reader(root, first), results_with_reader(root, second)
    both = a["ocr_text"].notna() & b["ocr_text"].notna()
    text_a = a.loc[both, "ocr_text"].astype(str).tolist()
    text_b = b.loc[both, "ocr_text"].astype(str).tolist()
    same = [normalize(x) == normalize(y) for x, y in zip(text_a, text_b, strict=True)]
    between = METRICS.aggregate(score_pairs(text_a, text_b), ["ned"])["ned"] if text_a else None
    models = a.loc[~a["is_control"].astype(bool), "model"].unique().tolist()
    mean_a = METRICS.aggregate_groups(a, "model", metric, sort=True)
    mean_b = METRICS.aggregate_groups(b, "model", metric, sort=True)
    pairs = list(combinations(models, 2))
    flips = sum(1 for x, y in pairs if (mean_a[x] - mean_a[y]) * (mean_b[x] - mean_b[y]) < 0)
    return {
        "readers": [first, second],
        "images": int(both.sum()),
        "agreement": sum(same) / len(same) if same else float("nan"),
        "mean_ned_between": between if between is not None else float("nan"),
        "model_pairs": len(pairs),
        "rank_flips": flips / len(pairs) if pairs else float("nan"),
        "metric": metric,
        "means": {first: mean_a.to_dict(), second: mean_b.to_dict()},
    }


# --------------------------------------------------------------------------- long text

#: Multi-word texts of the long-text part (written for glyphbench: shop signs, notices and
#: a sentence; 9 to 17 words each, with digits, punctuation and mixed case).
LONG_TEXTS = (
    "Fresh Local Produce and Farmers Market every Saturday from 8 AM to 2 PM",
    "Please keep this door closed at all times, the cat is not allowed outside",
    "Grand Opening Sale: twenty percent off all winter coats until March 31",
    "The quick brown fox jumps over the lazy dog near the quiet river bank",
)

#: Bundled fonts of the long-text part (file stems of matplotlib's DejaVu TTFs).
LONG_FONTS = ("DejaVuSans", "DejaVuSerif", "DejaVuSansMono")

#: Font sizes (pixels) of the long-text part.
LONG_SIZES = (14, 20, 28)

#: Width of a long-text image, pixels (its height follows from the wrapped lines).
LONG_WIDTH = 640


@dataclass
class LongTextImage:
    """One long-text image: ``text`` wrapped in font ``font`` at ``size`` pixels."""

    text: str
    font: str
    size: int
    image: Image.Image


def long_text_images(
    texts: Sequence[str] = LONG_TEXTS,
    fonts: Sequence[str] = LONG_FONTS,
    sizes: Sequence[int] = LONG_SIZES,
    width: int = LONG_WIDTH,
) -> list[LongTextImage]:
    """Every text in every font at every size: black on white, wrapped, left-aligned.

    >>> [(i.font, i.size) for i in long_text_images(["a b"], ["DejaVuSans"], [14, 20])]
    [('DejaVuSans', 14), ('DejaVuSans', 20)]
    """
    from PIL import Image, ImageDraw, ImageFont

    from bench.core.fonts import bundled_fonts
    from bench.models.controls import wrap

    by_stem = {path.stem: path for path in bundled_fonts()}
    missing = [name for name in fonts if name not in by_stem]
    if missing:
        raise RuntimeError(f"bundled fonts not found: {', '.join(missing)}")
    out = []
    for text in texts:
        for name in fonts:
            for size in sizes:
                font = ImageFont.truetype(str(by_stem[name]), size)
                margin = max(8, size)
                lines = wrap(text, font, width - 2 * margin)
                ascent, descent = font.getmetrics()
                step = int((ascent + descent) * 1.3)
                image = Image.new("RGB", (width, 2 * margin + step * len(lines)), "white")
                draw = ImageDraw.Draw(image)
                for number, line in enumerate(lines):
                    draw.text((margin, margin + number * step), line, font=font, fill="black")
                out.append(LongTextImage(text, name, size, image))
    return out


def _word_counts(expected: Sequence[str], read: Sequence[str]) -> tuple[list[int], list[int]]:
    """Words of each expected and each read text, as glyphbench's word metrics count them."""
    from bench.scoring import Pair

    pairs = [Pair(e, r) for e, r in zip(expected, read, strict=True)]
    return [len(p.expected_words) for p in pairs], [len(p.read_words) for p in pairs]


def long_text_rows(images: Sequence[LongTextImage], readings: Sequence[str]) -> pd.DataFrame:
    """One row per long-text image: its reading, word counts, word recall and NED."""
    import pandas as pd

    from bench.scoring import score_pairs

    texts = [item.text for item in images]
    expected_words, read_words = _word_counts(texts, readings)
    rows = pd.DataFrame(
        {
            "font": [item.font for item in images],
            "size": [item.size for item in images],
            "text": texts,
            "reading": list(readings),
            "expected_words": expected_words,
            "read_words": read_words,
        }
    )
    scores = score_pairs(texts, list(readings))
    rows["word_recall"] = scores["word_recall"].to_numpy()
    rows["ned"] = scores["ned"].to_numpy()
    return rows


def _long_summary(rows: pd.DataFrame) -> dict[str, Any]:
    from bench.scoring.table import METRICS

    expected = int(rows["expected_words"].sum())
    return {
        "images": len(rows),
        "words_per_word": float(rows["read_words"].sum() / expected) if expected else math.nan,
        **METRICS.aggregate(rows, ["word_recall", "ned"]),
    }


def long_text_summary(rows: pd.DataFrame) -> dict[str, Any]:
    """Words returned per expected word (pooled), mean word recall and NED: all, per size, font.

    A reader that merges words returns fewer words than expected (words per word < 1)
    and loses word recall while its NED stays high (NED ignores spaces only partly).
    """
    return {
        "overall": _long_summary(rows),
        "by_size": {int(k): _long_summary(part) for k, part in rows.groupby("size", sort=True)},
        "by_font": {str(k): _long_summary(part) for k, part in rows.groupby("font", sort=True)},
    }


# --------------------------------------------------------------------------- real images

#: Columns a real-image manifest must have.
MANIFEST_COLUMNS = (
    "file",
    "model",
    "source_repo",
    "path_in_repo",
    "commit",
    "licence",
    "intended_text",
    "human_reading",
)

#: Bootstrap resamples of the real-image intervals.
REAL_BOOTSTRAP = 2000


def shipped_real_set() -> Path | None:
    """The manifest of the real-image set shipped in the source tree, if present."""
    path = Path(__file__).resolve().parents[2] / "tests" / "data" / "real_t2i" / "manifest.csv"
    return path if path.is_file() else None


#: Parts of a real-image set (:func:`real_parts`): images a reader may be tuned on, images
#: only scored.
REAL_PARTS = ("tune", "score")


def real_parts(files: Sequence[str], models: Sequence[str]) -> list[str]:
    """The part of each image: ``tune`` (a reader's settings may be chosen on it) or ``score``.

    Within each model, images are ordered by the SHA-256 of their file's base name and
    dealt alternately, the first to ``score``: each model with two images or more is on
    both sides, a model with one image is scored only, and adding an image to the set
    moves no other model's images. A glyphbench convention (no source prescribes one).

    >>> real_parts(["a/x.jpg", "a/y.jpg", "a/z.jpg"], ["m", "m", "n"])
    ['score', 'tune', 'score']
    """
    import hashlib

    keys = [hashlib.sha256(Path(name).name.encode("utf-8")).hexdigest() for name in files]
    parts = [""] * len(keys)
    for model in dict.fromkeys(models):
        members = sorted((keys[i], i) for i, m in enumerate(models) if m == model)
        for turn, (_, i) in enumerate(members):
            parts[i] = REAL_PARTS[(turn + 1) % 2]
    return parts


def load_real_set(
    path: str | Path, limit: int | None = None, part: str | None = None
) -> pd.DataFrame:
    """Rows of a real-image manifest (a CSV, or a folder holding ``manifest.csv``).

    Checks every row (an :class:`~bench.core.errors.InputError` names the file and line):
    the columns of :data:`MANIFEST_COLUMNS`, a non-empty ``file``, ``model``,
    ``licence`` and ``human_reading``, and an image file that exists (``file`` is
    relative to the manifest's folder). Adds ``path`` (the absolute image path) and
    ``part`` (:func:`real_parts`); ``part`` (``tune`` or ``score``) keeps that part only.
    ``limit`` keeps the first rows of each model in turn (round-robin over models
    in manifest order), so a small subset still holds several models.
    """
    import pandas as pd

    from bench.core.errors import InputError

    manifest = Path(path)
    if manifest.is_dir():
        manifest = manifest / "manifest.csv"
    if not manifest.is_file():
        raise InputError(manifest, "no such real-image manifest")
    frame = pd.read_csv(manifest, dtype=str, keep_default_na=False)
    missing = [column for column in MANIFEST_COLUMNS if column not in frame.columns]
    if missing:
        raise InputError(manifest, f"missing column(s) {', '.join(missing)}", line=1)
    paths = []
    for number, row in enumerate(frame.itertuples(index=False), start=2):
        for column in ("file", "model", "licence", "human_reading"):
            if not str(getattr(row, column)).strip():
                raise InputError(manifest, f"empty {column!r}", line=number)
        image = manifest.parent / str(row.file)
        if not image.is_file():
            raise InputError(manifest, f"image {row.file!r} not found", line=number)
        paths.append(str(image.resolve()))
    frame["path"] = paths
    frame["part"] = real_parts(frame["file"].tolist(), frame["model"].tolist())
    if part is not None:
        if part not in REAL_PARTS:
            raise ValueError(f"part must be one of {', '.join(REAL_PARTS)}, not {part!r}")
        frame = frame[frame["part"] == part]
    if limit is not None and limit < len(frame):
        order = frame.groupby("model", sort=False).cumcount()
        frame = frame.assign(_turn=order).sort_values(["_turn"], kind="stable").head(limit)
        frame = frame.drop(columns="_turn").sort_index()
    return frame.reset_index(drop=True)


def real_rows(frame: pd.DataFrame, readings: Sequence[str]) -> pd.DataFrame:
    """Per image: the reader against the person's reading, and both as benchmark scores.

    ``ned_vs_human`` and ``word_recall_vs_human``: the reading scored against the
    person's reading (glyphbench NED and word recall); ``words_per_word``: words read
    per word the person read. Where the intended text is known, ``score_reader`` and
    ``score_human`` are glyphbench NED against it computed from the reader's and from
    the person's reading, and ``score_error`` their absolute difference (NaN elsewhere).
    """
    import numpy as np

    from bench.scoring import score_pairs

    columns = ["file", "model", "part", "intended_text", "human_reading"]
    rows = frame[[c for c in columns if c in frame.columns]].copy()
    rows["reading"] = list(readings)
    human, read = rows["human_reading"].tolist(), rows["reading"].tolist()
    versus_human = score_pairs(human, read)
    rows["ned_vs_human"] = versus_human["ned"].to_numpy()
    rows["word_recall_vs_human"] = versus_human["word_recall"].to_numpy()
    human_words, read_words = _word_counts(human, read)
    rows["human_words"], rows["read_words"] = human_words, read_words
    known = rows["intended_text"].str.strip() != ""
    intended = rows["intended_text"].tolist()
    by_reader = score_pairs(intended, read)["ned"].to_numpy()
    by_human = score_pairs(intended, human)["ned"].to_numpy()
    rows["score_reader"] = np.where(known, by_reader, np.nan)
    rows["score_human"] = np.where(known, by_human, np.nan)
    rows["score_error"] = (rows["score_reader"] - rows["score_human"]).abs()
    return rows


def _interval(values: Any, rng: Any) -> list[float]:
    from bench.scoring.bootstrap import mean_interval

    lo, hi = mean_interval(values, n_boot=REAL_BOOTSTRAP, rng=rng)
    return [lo, hi]


def _difference(a: Any, b: Any, rng: Any) -> tuple[float, list[float]]:
    """Mean of ``a`` minus mean of ``b`` (two models' images, resampled independently)."""
    from bench.scoring.bootstrap import percentile_interval, resampled_means

    boot = (
        resampled_means(a, n_boot=REAL_BOOTSTRAP, rng=rng)[:, 0]
        - resampled_means(b, n_boot=REAL_BOOTSTRAP, rng=rng)[:, 0]
    )
    lo, hi = percentile_interval(boot)
    return float(a.mean() - b.mean()), [float(lo), float(hi)]


def _excludes_zero(interval: list[float]) -> int:
    """+1 / -1 when the interval lies above / below zero, 0 when it holds zero."""
    return 1 if interval[0] > 0 else -1 if interval[1] < 0 else 0


#: How a reader treats a difference between two models (see :func:`pair_verdict`).
VERDICTS = ("kept", "lost", "reversed", "invented", "none")


def pair_verdict(human: list[float], reader: list[float]) -> str:
    """Compare the 95% intervals of one model difference under the person and the reader.

    ``kept``: the person's interval excludes zero and the reader's excludes it on the
    same side; ``lost``: the reader's holds zero; ``reversed``: the reader's excludes it
    on the other side; ``invented``: the person's holds zero but the reader's does not;
    ``none``: both hold zero.

    >>> pair_verdict([0.1, 0.3], [0.05, 0.2]), pair_verdict([0.1, 0.3], [-0.1, 0.2])
    ('kept', 'lost')
    >>> pair_verdict([-0.1, 0.1], [0.05, 0.2]), pair_verdict([-0.1, 0.1], [-0.2, 0.3])
    ('invented', 'none')
    """
    person, read = _excludes_zero(human), _excludes_zero(reader)
    if person == 0:
        return "none" if read == 0 else "invented"
    return "kept" if read == person else "lost" if read == 0 else "reversed"


def model_pairs(scored: pd.DataFrame, seed: int = 0) -> list[dict[str, Any]]:
    """Every pair of models with intended text: their score difference by person and reader.

    Each model's images are resampled on their own (the models drew different
    prompts, so nothing pairs them); ``verdict`` is :func:`pair_verdict` of the two
    95% intervals.
    """
    from itertools import combinations

    from bench.scoring.bootstrap import seeded_rng

    out = []
    groups = {str(k): part for k, part in scored.groupby("model", sort=True)}
    for a, b in combinations(sorted(groups), 2):
        rng = seeded_rng(seed, ("real-pair", a, b))
        human = _difference(
            groups[a]["score_human"].to_numpy(), groups[b]["score_human"].to_numpy(), rng
        )
        reader = _difference(
            groups[a]["score_reader"].to_numpy(), groups[b]["score_reader"].to_numpy(), rng
        )
        out.append(
            {
                "models": [a, b],
                "images": [len(groups[a]), len(groups[b])],
                "human": {"difference": human[0], "interval": human[1]},
                "reader": {"difference": reader[0], "interval": reader[1]},
                "verdict": pair_verdict(human[1], reader[1]),
            }
        )
    return out


def real_summary(rows: pd.DataFrame, seed: int = 0) -> dict[str, Any]:
    """The real-image figures of a card (see :func:`real_rows` for the per-image columns).

    ``ned_vs_human`` / ``word_recall_vs_human``: means over all images with a
    bootstrap interval; ``words_per_word``: pooled words read / words the person read;
    on the images whose intended text is known: ``score_mae`` (mean absolute error of
    the benchmark score, with interval), ``score_bias`` (mean reader minus person),
    ``spearman`` (rank correlation of the per-model mean scores, NaN below 3 models),
    ``pairs`` (:func:`model_pairs`) and ``pair_verdicts`` (how many pairs got each
    verdict of :func:`pair_verdict`).
    """
    import pandas as pd
    from scipy.stats import spearmanr

    from bench.scoring.bootstrap import seeded_rng
    from bench.scoring.table import METRICS

    rng = seeded_rng(seed, ("real",))
    scored = rows[rows["score_reader"].notna()]
    # both scores are NED against the intended text: the table's NED aggregate per model
    means = pd.DataFrame(
        {
            column: METRICS.aggregate_groups(
                scored[["model", column]].rename(columns={column: "ned"}), "model", "ned", sort=True
            )
            for column in ("score_reader", "score_human")
        }
    )
    spearman = math.nan
    if (
        len(means) >= 3
        and means["score_human"].nunique() > 1
        and means["score_reader"].nunique() > 1
    ):
        spearman = float(spearmanr(means["score_reader"], means["score_human"]).statistic)
    pairs = model_pairs(scored, seed)
    human_words = int(rows["human_words"].sum())
    return {
        "images": len(rows),
        "models": int(rows["model"].nunique()),
        "ned_vs_human": METRICS.aggregate_column(rows, "ned", "ned_vs_human"),
        "ned_vs_human_interval": _interval(rows["ned_vs_human"].to_numpy(), rng),
        "word_recall_vs_human": METRICS.aggregate_column(
            rows, "word_recall", "word_recall_vs_human"
        ),
        "word_recall_vs_human_interval": _interval(rows["word_recall_vs_human"].to_numpy(), rng),
        "words_per_word": float(rows["read_words"].sum() / human_words)
        if human_words
        else math.nan,
        "scored_images": len(scored),
        "scored_models": len(means),
        "score_mae": float(scored["score_error"].mean()) if len(scored) else math.nan,
        "score_mae_interval": _interval(scored["score_error"].to_numpy(), rng),
        "score_bias": float((scored["score_reader"] - scored["score_human"]).mean())
        if len(scored)
        else math.nan,
        "model_means": {
            str(model): {"reader": float(r.score_reader), "human": float(r.score_human)}
            for model, r in means.iterrows()
        },
        "spearman": spearman,
        "pairs": pairs,
        "pair_verdicts": {v: sum(p["verdict"] == v for p in pairs) for v in VERDICTS},
    }
