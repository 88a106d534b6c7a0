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
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image

    from bench.readers.base import Reader

#: Typo rates of the card's ``typo`` images.
DEFAULT_RATES = (0.05, 0.1, 0.2)

#: A report warns when its reader's typo faithfulness is below this.
FAITHFULNESS_FLOOR = 0.9


# --------------------------------------------------------------------------- typo edits


def _matched_positions(reading: str, target: str) -> set[int]:
    """Positions of ``target`` that a minimal alignment with ``reading`` keeps unchanged."""
    from rapidfuzz.distance import Levenshtein

    kept: set[int] = set()
    for block in Levenshtein.opcodes(reading, target):
        if block.tag == "equal":
            kept.update(range(block.dest_start, block.dest_end))
    return kept


def classify_edits(truth: str, drawn: str, reading: str) -> Counter[str]:
    """How a reader reported each typo injected into ``truth`` to give ``drawn``.

    The injected edits are the non-equal blocks of a minimal alignment of the
    normalised truth with the normalised drawn text (case and whitespace are
    normalised away first, so an edit that only changes case is not counted).
    Each edit, covering positions ``[i1, i2)`` of the truth and ``[j1, j2)`` of the
    drawn text, is:

    * ``written``: the reading keeps the drawn side: every drawn character of the
      edit (for a deletion: the drawn neighbours of the gap) is matched in the
      alignment of the reading with the drawn text, and (for a deletion) none of
      the deleted truth characters is matched in the alignment with the truth;
    * ``corrected``: otherwise, if every truth character of the edit (for an
      insertion: its truth neighbours) is matched in the alignment of the reading
      with the truth, and none of the inserted drawn characters is matched;
    * ``misread``: neither.

    >>> classify_edits("Digital", "Dlgital", "Dlgital")
    Counter({'written': 1})
    >>> classify_edits("Digital", "Dlgital", "DIGITAL")
    Counter({'corrected': 1})
    >>> classify_edits("Digital", "Dlgital", "Dxgitl")
    Counter({'misread': 1})
    >>> classify_edits("欢迎光临", "欢k光临", "欢迎光临")
    Counter({'corrected': 1})
    """
    from rapidfuzz.distance import Levenshtein

    from bench.scoring.normalize import normalize

    t, d, r = normalize(truth), normalize(drawn), normalize(reading)
    on_drawn, on_truth = _matched_positions(r, d), _matched_positions(r, t)
    verdicts: Counter[str] = Counter()
    for block in Levenshtein.opcodes(t, d):
        if block.tag == "equal":
            continue
        truth_span = range(block.src_start, block.src_end)
        drawn_span = range(block.dest_start, block.dest_end)
        verdicts[_verdict(truth_span, drawn_span, on_truth, on_drawn, len(t), len(d))] += 1
    return verdicts


def _neighbours(start: int, end: int, length: int) -> list[int]:
    return [p for p in (start - 1, end) if 0 <= p < length]


def _verdict(
    truth_span: range,
    drawn_span: range,
    on_truth: set[int],
    on_drawn: set[int],
    truth_length: int,
    drawn_length: int,
) -> str:
    drawn_side = list(drawn_span) or _neighbours(drawn_span.start, drawn_span.stop, drawn_length)
    truth_side = list(truth_span) or _neighbours(truth_span.start, truth_span.stop, truth_length)
    drawn_kept = all(p in on_drawn for p in drawn_side)
    if drawn_kept and not any(p in on_truth for p in truth_span):
        return "written"
    truth_kept = all(p in on_truth for p in truth_side)
    if truth_kept and not any(p in on_drawn for p in drawn_span):
        return "corrected"
    return "misread"


def faithfulness(verdicts: Counter[str]) -> float:
    """``written / (written + corrected)``; NaN when no typo was read either way.

    >>> faithfulness(Counter(written=9, corrected=1, misread=5))
    0.9
    """
    decided = verdicts["written"] + verdicts["corrected"]
    return verdicts["written"] / decided if decided else float("nan")


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
            f"Seconds per image (this machine): {self.seconds_per_image:.3f}.",
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
    render = rows[rows["control"] == "render"]
    typo = rows[rows["control"].str.startswith("typo")]
    blank = rows[rows["control"] == "blank"]
    verdicts: Counter[str] = Counter(
        written=int(typo["written"].sum()),
        corrected=int(typo["corrected"].sum()),
        misread=int(typo["misread"].sum()),
    )
    return {
        "images": len(rows),
        "render_exact": float(render["exact_match"].mean()) if len(render) else float("nan"),
        "render_ned": float(render["ned"].mean()) if len(render) else float("nan"),
        "typo_faithfulness": faithfulness(verdicts),
        "typos_written": verdicts["written"],
        "typos_corrected": verdicts["corrected"],
        "typos_misread": verdicts["misread"],
        "blank_hallucination": float(blank["read_anything"].mean()) if len(blank) else float("nan"),
    }


def warning(reader: str, value: float) -> str | None:
    """The note a report puts next to its headline when the reader corrects typos.


    >>> print(warning("vlm", 0.42))  # doctest: +ELLIPSIS
    Reader vlm reports only 42% of injected typos as written (< 90%): it corrects ...
    >>> warning("rapidocr", 0.97) is None
    True
    """
    if value != value or value >= FAITHFULNESS_FLOOR:
        return None
    return (
        f"Reader {reader} reports only {100 * value:.0f}% of injected typos as written "
        f"(< {100 * FAITHFULNESS_FLOOR:.0f}%): it corrects misspellings, so misspelled text "
        "can score as correct."
    )


def calibrate(
    reader: Reader,
    frame: pd.DataFrame,
    *,
    rates: Sequence[float] = DEFAULT_RATES,
    size: int = 256,
    batch_size: int = 8,
    settings: dict[str, Any] | None = None,
) -> Card:
    """Read the control images of the prompts of ``frame`` with ``reader``: its card."""
    images = control_images(frame, rates, size)
    readings, seconds = _read_all(reader, [item.image for item in images], batch_size)
    return Card(reader.name, reader.version, _rows(images, readings), seconds, dict(settings or {}))


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


# --------------------------------------------------------------------------- two readers


def compare_readers(
    root: str | Path, first: str, second: str, metric: str = "ned"
) -> dict[str, Any]:
    """Two stored readers on one run: per-image agreement and model-ranking disagreement.

    ``agreement``: share of images whose two normalised readings are identical;
    ``mean_ned_between``: mean NED of one reading against the other; ``rank_flips``:
    of all pairs of (non-control) models, the share that the two readers order
    differently by the mean of ``metric`` (ties count as neither order).
    """
    from itertools import combinations

    from bench.engine.reading_store import results_with_reader
    from bench.scoring import score_pairs
    from bench.scoring.normalize import normalize

    a, b = results_with_reader(root, first), results_with_reader(root, second)
    both = a["ocr_text"].notna() & b["ocr_text"].notna()
    text_a = a.loc[both, "ocr_text"].astype(str).tolist()
    text_b = b.loc[both, "ocr_text"].astype(str).tolist()
    same = [normalize(x) == normalize(y) for x, y in zip(text_a, text_b, strict=True)]
    between = score_pairs(text_a, text_b)["ned"] if text_a else None
    models = a.loc[~a["is_control"].astype(bool), "model"].unique().tolist()
    mean_a = a.groupby("model")[metric].mean()
    mean_b = b.groupby("model")[metric].mean()
    pairs = list(combinations(models, 2))
    flips = sum(1 for x, y in pairs if (mean_a[x] - mean_a[y]) * (mean_b[x] - mean_b[y]) < 0)
    return {
        "readers": [first, second],
        "images": int(both.sum()),
        "agreement": sum(same) / len(same) if same else float("nan"),
        "mean_ned_between": float(between.mean()) if between is not None else float("nan"),
        "model_pairs": len(pairs),
        "rank_flips": flips / len(pairs) if pairs else float("nan"),
        "metric": metric,
        "means": {first: mean_a.to_dict(), second: mean_b.to_dict()},
    }
