"""Labelled scene-text photos in the ICDAR 2015 format, for calibrating readers on real photos.

The format (ICDAR 2015 Robust Reading, Challenge 4, "Incidental Scene Text"): a
folder of images ``img_N.jpg`` and, beside them or in another folder, one
``gt_img_N.txt`` per image, UTF-8 (a byte-order mark is allowed), one word per line::

    x1,y1,x2,y2,x3,y3,x4,y4,transcription

eight integer corner coordinates (clockwise from the top left) and the
transcription, which may itself hold commas (everything after the eighth comma).
A transcription of ``###`` marks a "do not care" region: text too small or
blurred to read, which a reader is neither credited nor blamed for.

:func:`load_icdar2015` returns one :class:`LabelledImage` per image;
:func:`calibrate_on_photos` reads them with a reader and reports the share of
cared-for words it found (a word counts as found when it appears among the
reading's tokens, case-folded, as a hand measurement counted them), its
seconds per image, and per image the words, the words found and the words missed.

Word units. Some ICDAR 2015 transcriptions hold a space (``Genaxis Theatre``:
``gt_img_1.txt`` of the training set), though the reading is compared token by
token. The unit is chosen by ``multiword``:

``split`` (default)  such a transcription counts as its words (``Genaxis`` and
                     ``Theatre``), each found or missed on its own, as a person
                     counting words would;
``dontcare``         such a transcription is a "do not care" region, as the ICDAR
                     2015 end-to-end evaluation script does in its word-spotting
                     mode (``include_in_dictionary`` in the Robust Reading
                     Competition's ``script.py``, e.g. as copied in
                     aim-uofa/AdelaiDet ``adet/evaluation/text_eval_script.py``:
                     special characters ``'!?.:,*"()·[]/`` become spaces, and a
                     transcription that still holds a space after stripping is
                     not cared for).

The ICDAR script does not split: outside word spotting a transcription must match
one detection whole. Splitting is glyphbench's choice, because its reading is a
bag of tokens with no box to match a phrase against.

No ICDAR images ship with glyphbench (their licence is the competition's);
``tests/data/icdar2015_mini`` is a small fixture in the exact format, with
photo-like images drawn by the test-suite itself.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.scoring.normalize import normalize, tokens

if TYPE_CHECKING:
    from glyphbench.readers.base import Reader

DO_NOT_CARE = "###"
#: How a transcription holding a space counts (see the module docstring).
MULTIWORD = ("split", "dontcare")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")
_NUMBER = re.compile(r"(\d+)$")


@dataclass(frozen=True)
class Word:
    """One labelled word: its quadrilateral (4 corner points) and transcription."""

    points: tuple[tuple[int, int], ...]
    text: str

    @property
    def cared(self) -> bool:
        """False for a ``###`` (do not care) region."""
        return self.text != DO_NOT_CARE

    def units(self, multiword: str = "split") -> list[str]:
        """The word units this transcription counts as (see the module docstring).

        >>> word = Word(((0, 0),) * 4, "Genaxis Theatre")
        >>> word.units(), word.units("dontcare"), Word(((0, 0),) * 4, "###").units()
        (['Genaxis', 'Theatre'], [], [])
        """
        if not self.cared:
            return []
        words = self.text.split()
        if len(words) > 1 and multiword == "dontcare":
            return []
        return words


@dataclass(frozen=True)
class LabelledImage:
    """One photo and its words."""

    image_path: Path
    words: tuple[Word, ...]

    @property
    def cared_words(self) -> list[str]:
        """The cared-for word units, multi-word transcriptions split into their words."""
        return self.word_units("split")

    def word_units(self, multiword: str = "split") -> list[str]:
        """The cared-for word units under the ``multiword`` rule."""
        return [unit for word in self.words for unit in word.units(multiword)]


def parse_gt_line(line: str, path: Path | None = None, number: int | None = None) -> Word:
    """One ground-truth line: eight coordinates, then the transcription (commas allowed).

    >>> parse_gt_line("377,117,463,117,465,130,378,130,Genaxis Theatre")
    Word(points=((377, 117), (463, 117), (465, 130), (378, 130)), text='Genaxis Theatre')
    >>> parse_gt_line("1,2,3,4,5,6,7,8,###").cared, parse_gt_line("0,0,9,0,9,9,0,9,a,b").text
    (False, 'a,b')
    """
    fields = line.rstrip("\r\n").split(",", 8)
    if len(fields) < 9:
        raise InputError(path, "expected 8 coordinates and a transcription", line=number)
    try:
        values = [int(float(value)) for value in fields[:8]]
    except ValueError:
        raise InputError(path, "coordinates must be numbers", line=number) from None
    points = tuple((values[i], values[i + 1]) for i in range(0, 8, 2))
    return Word(points=points, text=fields[8])


def read_gt_file(path: Path) -> tuple[Word, ...]:
    """Every word of one ``gt_img_N.txt`` (blank lines skipped)."""
    text = path.read_text(encoding="utf-8-sig")
    return tuple(
        parse_gt_line(line, path, number)
        for number, line in enumerate(text.splitlines(), start=1)
        if line.strip()
    )


def load_icdar2015(images: str | Path, labels: str | Path | None = None) -> list[LabelledImage]:
    """The labelled images of an ICDAR 2015 folder, by image number.

    ``labels`` is the folder of ``gt_img_N.txt`` files (default: ``images``). An
    image without its label file, or a label file without its image, is an error
    naming it.
    """
    image_dir = Path(images)
    label_dir = Path(labels) if labels is not None else image_dir
    if not image_dir.is_dir():
        raise InputError(image_dir, "image folder not found")
    if not label_dir.is_dir():
        raise InputError(label_dir, "label folder not found (--labels: the gt_img_N.txt files)")
    found = {
        _image_number(path): path
        for path in image_dir.iterdir()
        if path.suffix.lower() in IMAGE_SUFFIXES and path.stem.startswith("img_")
    }
    gts = {_image_number(path): path for path in label_dir.glob("gt_img_*.txt")}
    if found and not gts:  # the wrong folder, not a label missing for the first image
        raise InputError(label_dir, "no gt_img_N.txt label files here")
    for number in sorted(set(found) ^ set(gts)):
        lonely = found.get(number) or gts[number]
        partner = "label file" if number in found else "image"
        raise InputError(lonely, f"no matching {partner} for image number {number}")
    if not found:
        raise InputError(image_dir, "no img_N images with gt_img_N.txt labels")
    return [LabelledImage(found[n], read_gt_file(gts[n])) for n in sorted(found)]


def _image_number(path: Path) -> int:
    match = _NUMBER.search(path.stem)
    if match is None:
        raise InputError(path, "expected a name ending in a number, e.g. img_12.jpg")
    return int(match.group(1))


def missed_words(truth: list[str], reading: str) -> list[str]:
    """The cared-for words not among the reading's tokens (case-folded, as a multiset).

    >>> missed_words(["EXIT", "Open", "open", "Genaxis"], "open EXIT now")
    ['open', 'Genaxis']
    """
    from collections import Counter

    read = Counter(tokens(normalize(reading)))
    missed = []
    for word in truth:
        key = normalize(word)
        if read[key] > 0:
            read[key] -= 1
        else:
            missed.append(word)
    return missed


def words_found(truth: list[str], reading: str) -> int:
    """How many cared-for words appear among the reading's tokens (case-folded, as a multiset).

    >>> words_found(["EXIT", "Open", "open"], "open EXIT now")
    2
    """
    return len(truth) - len(missed_words(truth, reading))


def calibrate_on_photos(
    reader: Reader, items: list[LabelledImage], multiword: str = "split"
) -> dict[str, Any]:
    """Word recall of ``reader`` on labelled photos, its seconds per image, and per image
    (``per_image``) the words, how many were found, which were missed and the reading.
    """
    from PIL import Image

    if multiword not in MULTIWORD:
        raise InputError(
            None, f"multiword must be one of {', '.join(MULTIWORD)}, not {multiword!r}"
        )
    found = total = 0
    seconds = 0.0
    per_image = []
    for item in items:
        with Image.open(item.image_path) as opened:
            image = opened.convert("RGB")
        started = time.perf_counter()
        reading = reader.read([image])[0].text
        elapsed = time.perf_counter() - started
        seconds += elapsed
        units = item.word_units(multiword)
        missed = missed_words(units, reading)
        hits = len(units) - len(missed)
        found, total = found + hits, total + len(units)
        per_image.append(
            {
                "image": item.image_path.name,
                "words": len(units),
                "found": hits,
                "recall": hits / len(units) if units else float("nan"),
                "missed": " ".join(missed),
                "reading": reading,
                "seconds": elapsed,
            }
        )
    return {
        "reader": reader.name,
        "version": reader.version,
        "multiword": multiword,
        "images": len(items),
        "words": total,
        "word_recall": found / total if total else float("nan"),
        "seconds_per_image": seconds / len(items) if items else float("nan"),
        "per_image": per_image,
    }
