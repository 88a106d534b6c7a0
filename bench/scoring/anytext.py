"""AnyText-benchmark's OCR accuracy: sentence accuracy and NED, as AnyText scores them.

AnyText (``eval/eval_dgocr.py``) reads every text line of an image on its own: it
crops the line's polygon, recognises the crop and compares the result with that
line's ground truth. Two numbers per line, averaged over all lines of all images:

* **Sentence accuracy**: 1 when the recognised string equals the ground truth
  exactly: case-sensitive, whitespace compared as it is, no normalisation.
* **NED** (a similarity, higher is better): both strings become sequences of
  character ids through the recogniser's dictionary, then
  ``1 - d / (max(len(pred), len(gt)) + 1e-5)`` with ``d`` their Levenshtein
  distance. Every character outside the dictionary gets the id of the space, so
  all of them count as the same character as each other and as a space. The
  ``+ 1e-5`` means a perfect pair scores exactly 1, two empty strings score 1 and
  one empty side scores a little above 0.

The dictionary depends on the subset: laion_word (English, family ``anytext``)
uses ``en_dict.txt``, whose characters that own an id are the printable ASCII
characters without the space; wukong_word (Chinese, family ``anytext-zh``) uses
PaddleOCR's ``ppocr_keys_v1.txt`` (6,623 characters, printable ASCII without the
space included, the ideographic space U+3000 included). glyphbench reads that set from
the recogniser model that ``rapidocr-onnxruntime`` installs (``ch_PP-OCRv4_rec_infer.onnx``,
metadata key ``character``), which holds the same 6,623 characters. Both families
write the same columns, ``anytext_sen_acc`` and ``anytext_ned``: a run or a
``--compat`` choice scores with one of them.

Pair mapping: one glyphbench pair is one text line when the suite crops lines
(exact reproduction). When a pair is a whole image, the read cell's lines are
joined with single spaces and the image is scored as one line (the expected cell
already joins its spans with single spaces); the set value is then a mean over
images, not over lines. See ``docs/scorers/anytext.md``.

>>> anytext_sen_acc("Hello World", "Hello\\nWorld"), anytext_sen_acc("Hello", "hello")
(1.0, 0.0)
>>> round(anytext_ned("Hello", "hello"), 9)
0.8000004
>>> anytext_ned("a b", "a中b")
1.0
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from typing import Literal

from rapidfuzz.distance import Levenshtein

from glyphbench.scoring.primitives import exact_mean
from glyphbench.scoring.table import Mean, Metric, ReaderUnits, register_metric, register_units
from glyphbench.scoring.units import one_line

#: Which recogniser dictionary maps characters to ids: laion_word ("en") or wukong_word ("zh").
Dictionary = Literal["en", "zh"]

REFERENCE = "tyxsspa/AnyText@3d4a260c67d92c0e27d6e18ed69990e19a40de6d eval/eval_dgocr.py"

#: AnyText keeps the first 20 characters of a line and the first 20 lines of an image
#: (eval/anytext_singleGPU.py, get_item): the suite applies both when it builds pairs.
MAX_LINE_CHARS = 20
MAX_LINES = 20

#: The installed recogniser whose metadata holds PaddleOCR's ``ppocr_keys_v1`` character set.
ZH_DICTIONARY_MODEL = "rapidocr_onnxruntime/models/ch_PP-OCRv4_rec_infer.onnx"
# The space is the dictionary's last entry and the id of every unknown character.
_UNKNOWN = " "
# en_dict.txt: the 95 printable ASCII characters; the space among them shares the unknown id.
_EN_KNOWN = frozenset(chr(code) for code in range(0x21, 0x7F))


@functools.cache
def known_characters(dictionary: Dictionary) -> frozenset[str]:
    """The characters that own an id in ``dictionary`` (the space never does).

    >>> len(known_characters("en"))
    94
    """
    if dictionary == "en":
        return _EN_KNOWN
    return frozenset(_zh_dictionary_entries()) - {"", _UNKNOWN}


def _zh_dictionary_entries() -> list[str]:
    """The lines of PaddleOCR's character list, read from the installed PP-OCRv4 recogniser."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("rapidocr_onnxruntime")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "the anytext-zh scorer reads its dictionary from rapidocr-onnxruntime's "
            "recogniser; install it (pip install 'glyphbench[ocr]')"
        )
    model = Path(spec.origin).parent / "models" / Path(ZH_DICTIONARY_MODEL).name
    import onnxruntime

    session = onnxruntime.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    characters: str = session.get_modelmeta().custom_metadata_map["character"]
    return characters.split("\n")


def as_line(read: str) -> str:
    """The read cell as one line: its lines joined by single spaces.

    >>> as_line("OPEN\\n24 HOURS")
    'OPEN 24 HOURS'
    """
    return read.replace("\n", " ")


def dictionary_view(text: str, dictionary: Dictionary) -> str:
    """``text`` as the recogniser's ids see it: unknown characters become spaces.

    >>> dictionary_view("Café\\t5€", "en")
    'Caf  5 '
    """
    known = known_characters(dictionary)
    return "".join(char if char in known else _UNKNOWN for char in text)


def anytext_sen_acc(expected: str, read: str) -> float:
    """1.0 when the read line equals the expected line exactly, else 0.0.

    >>> anytext_sen_acc("Hello World", "Hello  World")
    0.0
    """
    return float(as_line(read) == expected)


def anytext_ned(expected: str, read: str, dictionary: Dictionary = "en") -> float:
    """AnyText's NED similarity of one line under ``dictionary`` (see the module docstring).

    >>> anytext_ned("", ""), round(anytext_ned("Hello", ""), 12)
    (1.0, 1.999996e-06)
    >>> anytext_ned("é", "ü")  # both outside the dictionary: the same id
    1.0
    """
    truth = dictionary_view(expected, dictionary)
    predicted = dictionary_view(as_line(read), dictionary)
    distance = Levenshtein.distance(predicted, truth)
    return 1 - distance / (max(len(predicted), len(truth)) + 1e-5)


def anytext_zh_ned(expected: str, read: str) -> float:
    """:func:`anytext_ned` with the wukong_word (Chinese) dictionary.

    >>> round(anytext_zh_ned("北京欢迎你", "北京欢迎您"), 9)
    0.8000004
    >>> round(anytext_zh_ned("a b", "a中b"), 9)  # 中 owns an id in the Chinese dictionary
    0.666667778
    """
    return anytext_ned(expected, read, "zh")


def summary(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """The set values: the mean over pairs (lines) of each per-pair value, as AnyText prints.

    >>> summary([{"anytext_sen_acc": 1.0, "anytext_ned": 1.0},
    ...          {"anytext_sen_acc": 0.0, "anytext_ned": 0.5}])
    {'anytext_sen_acc': 0.5, 'anytext_ned': 0.75}
    """
    table = list(rows)
    names = ("anytext_sen_acc", "anytext_ned")
    if not table:
        return {name: float("nan") for name in names}
    return {name: exact_mean([row[name] for row in table]) for name in names}


def _records(dictionary: Dictionary, family: str, subset: str) -> list[Metric]:
    return [
        Metric(
            "anytext_sen_acc",
            lambda pair: anytext_sen_acc(pair.expected_raw, pair.read_raw),
            label="AnyText sentence accuracy",
            higher_is_better=True,
            doc="1 when the read line (lines joined by spaces) equals the expected line "
            "exactly: case and whitespace count; mean over lines.",
            family=family,
            reference=REFERENCE,
            aggregate=Mean(),
            summary=1,
        ),
        Metric(
            "anytext_ned",
            lambda pair: anytext_ned(pair.expected_raw, pair.read_raw, dictionary),
            label="AnyText NED",
            higher_is_better=True,
            doc=f"1 - d / (max length + 1e-5) over {subset}'s dictionary ids; characters "
            "outside the dictionary count as spaces; mean over lines.",
            family=family,
            reference=REFERENCE,
            aggregate=Mean(),
            summary=2,
        ),
    ]


_ANYTEXT_RULE = (
    "the reader's words on one line, single ASCII spaces between (AnyText recognises one "
    "crop per line polygon and gets one string back); blank lines and end spaces vanish"
)
_ANYTEXT_SOURCE = (
    "eval/eval_dgocr.py:114-126 (one crop per polygon, rst['text'][0] its one string), "
    ":131 (compared with == against the line's ground truth)"
)
UNITS = [
    register_units(ReaderUnits(family, one_line, rule=_ANYTEXT_RULE, source=_ANYTEXT_SOURCE))
    for family in ("anytext", "anytext-zh")
]

ANYTEXT = [register_metric(m) for m in _records("en", "anytext", "laion_word")]
ANYTEXT_ZH = [register_metric(m) for m in _records("zh", "anytext-zh", "wukong_word")]
