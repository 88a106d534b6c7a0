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

Those two parts are computed in :mod:`glyphbench.calibration.long_text` and
:mod:`glyphbench.calibration.real_set`; this module draws and reads the images and renders
the card (Markdown, JSON, CSV).

:func:`compare_readers` takes two readers' readings of one run (the run folder's
reading store) and reports their per-image agreement and how often they order
two models differently.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.calibration.error_page import PAGE_NAME, error_page
from glyphbench.calibration.long_text import (
    LONG_FONTS,
    LONG_SIZES,
    LONG_TEXTS,
    LONG_WIDTH,
    long_text_images,
    long_text_rows,
    long_text_summary,
)
from glyphbench.calibration.reader_error import SECTION as READER_ERROR
from glyphbench.calibration.reader_error import from_real_rows
from glyphbench.calibration.real_set import real_rows, real_summary
from glyphbench.core.staging import staged_folder
from glyphbench.engine.reading import failure_cause, read_batch
from glyphbench.models.base import ImageRequest
from glyphbench.models.controls import BlankControl, RenderControl, TypoControl
from glyphbench.run.reading_store import results_with_reader
from glyphbench.scoring import score_pairs

# The typo-edit verdicts are pure text, shared with the report: they live in glyphbench.scoring.
from glyphbench.scoring.edits import FAITHFULNESS_FLOOR as FAITHFULNESS_FLOOR
from glyphbench.scoring.edits import classify_edits, faithfulness, warning
from glyphbench.scoring.normalize import normalize
from glyphbench.scoring.table import METRICS

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image

    from glyphbench.readers.base import Reader

#: Typo rates of the card's ``typo`` images.
DEFAULT_RATES = (0.05, 0.1, 0.2)
#: What makes an existing folder a calibration card that a new card may replace.
CARD_MARKERS = ("card.json", "card.md")
#: Everything a card writes; a card folder holding anything else is not replaced.
CARD_FILES = (
    *CARD_MARKERS,
    "readings.csv",
    "long_text.csv",
    "real_images.csv",
    PAGE_NAME,
)

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
    real_paths: list[str] | None = None  # the real images, one per row of ``real_rows``
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
            out["real_images"][READER_ERROR] = from_real_rows(
                self.real_rows,
                self.reader,
                self.version,
                part=self.settings.get("real_part"),
                manifest=str(self.settings.get("real") or ""),
            ).to_json()
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
        """Write ``card.md``, ``card.json`` and ``readings.csv`` into ``out`` (with the real-image
        part ``real_images.csv`` and its page, :mod:`~glyphbench.calibration.error_page`);
        returns card.md."""
        page = None  # made first: an image that cannot be opened stops the card before a file
        if self.real_rows is not None and self.real_paths is not None:
            page = error_page(self.real_rows, self.real_paths, self.reader, self.version)
        # The whole folder is replaced: a card without the real set leaves no real_images.*
        # of an earlier card beside it, and a failed write leaves the earlier card whole.
        with staged_folder(out, CARD_MARKERS, "calibration card", (), CARD_FILES) as folder:
            self._write_files(folder, page)
        return Path(out) / "card.md"

    def _write_files(self, folder: Path, page: str | None) -> None:
        (folder / "card.json").write_text(
            json.dumps(self.summary(), indent=2, sort_keys=True, default=_json_value) + "\n",
            encoding="utf-8",
        )
        self.rows.to_csv(folder / "readings.csv", index=False)
        if self.long_rows is not None:
            self.long_rows.to_csv(folder / "long_text.csv", index=False)
        if self.real_rows is not None:
            self.real_rows.to_csv(folder / "real_images.csv", index=False)
        if page is not None:
            (folder / PAGE_NAME).write_text(page, encoding="utf-8")
        (folder / "card.md").write_text(self.markdown(), encoding="utf-8")


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
        card.real_paths = real["path"].astype(str).tolist()
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
    for by, records in summary.get("score_error_by", {}).items():
        lines += ["", *score_error_markdown(by, records)]
    return lines


def score_error_markdown(by: str, records: list[dict[str, Any]]) -> list[str]:
    """The benchmark-score error per value of ``by`` (:func:`~glyphbench.calibration.
    real_set.score_error_table`) as a Markdown table."""
    lines = [
        f"Benchmark NED error by {by} (mean |reader - person| on images with intended text; "
        "95% intervals over images, and over repositories where there are 5 or more):",
        "",
        f"| {by} | images | repositories | mean abs error [95% CI] | by repository | bias |",
        "| --- | ---: | ---: | --- | --- | ---: |",
    ]
    for record in _without_a_second_all(by, records):
        lines.append(
            f"| {record[by]} | {record['images']} | {record['repositories']} | "
            f"{_num(record['score_mae'])} {_span(record['interval'])} | "
            f"{_span(record['interval_by_repository'])} | {_num(record['score_bias'])} |"
        )
    return lines


def _without_a_second_all(by: str, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records less ``all`` where one value holds every image (a card of the held-out
    part alone). The card's JSON keeps both rows, with the same figures
    (:func:`glyphbench.calibration.real_set.score_error_table`); a table of two equal rows
    would read as two measurements.

    >>> rows = [{"part": "all", "images": 45}, {"part": "held-out", "images": 45}]
    >>> [r["part"] for r in _without_a_second_all("part", rows)]
    ['held-out']
    """
    one_value = len(records) == 2 and records[0][by] == "all"
    return records[1:] if one_value and records[1]["images"] == records[0]["images"] else records


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
