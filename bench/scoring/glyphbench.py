"""The ``glyphbench`` family: the scores of every run, on the normalised texts.

Each metric is a function of a :class:`~glyphbench.scoring.pair.Pair` and one
:class:`~glyphbench.scoring.table.Metric` record. ``docs/metrics.md`` has the
definitions with a worked example; ``tests/bench/scoring/test_scoring_metrics.py`` checks every
column against hand-computed values and plain dynamic programming.

Han and kana are scored per character (:mod:`glyphbench.scoring.normalize`): spaces
beside them are dropped and each such character is one "word" of the word-level
metrics, so every metric below also has a worked Chinese example.
"""

from __future__ import annotations

from rapidfuzz.distance import LCSseq, Levenshtein

from glyphbench.scoring.normalize import join_tokens
from glyphbench.scoring.pair import Pair
from glyphbench.scoring.primitives import lom_len as longest_common_substring
from glyphbench.scoring.table import Metric, register_metric

#: ANLS counts a reading only when its normalised edit distance is below this.
ANLS_THRESHOLD = 0.5

WORD_MATCHING = "MARIO-Eval style word matching, per pair"


def algorithm1(pair: Pair) -> int:
    """TextInVision's Algorithm 1 score (an edit distance: 0 is perfect, lower is better).

    1. If the expected text is a substring of the read text: 0.
    2. If the expected text is one word: scan the read words in order, keeping the
       first word whose LCS length with the expected word is strictly greater than
       the best so far (the best starts as the empty string with LCS 0). Return the
       edit distance between that word and the expected word.
    3. Otherwise: for each expected word in order that is among the remaining read
       words, remove its first remaining occurrence from both word lists; return the
       edit distance between the two remainders joined with single spaces.

    >>> algorithm1(Pair("Hello", "the sign says HELLO there"))
    0
    >>> algorithm1(Pair("hello", "hallo world"))  # best word "hallo" (LCS 4)
    1
    >>> algorithm1(Pair("Digital Dreamscapes", "Dlgitoi Draseampes"))  # 3 + 4 edits
    7
    >>> algorithm1(Pair("欢迎光临", "欢迎光顾本店"))  # 临 against 顾本店 after 欢迎光 match
    3
    """
    expected = pair.expected
    if expected in pair.read:
        return 0
    if len(pair.expected_words) == 1:
        best, best_lcs = "", 0
        for word in pair.read_words:
            score = LCSseq.similarity(word, expected)
            if score > best_lcs:
                best, best_lcs = word, score
        return Levenshtein.distance(best, expected)
    rest_expected, rest_read = pair.unmatched_words
    return Levenshtein.distance(join_tokens(rest_expected), join_tokens(rest_read))


register_metric(
    Metric(
        "algorithm1",
        algorithm1,
        label="Algorithm 1 distance",
        higher_is_better=False,
        doc="0 if the expected text occurs in the read text, else the edit distance of the "
        "best-matching read word (one expected word) or of the words left after removing "
        "common words (several).",
        unit="edits",
        reference="TextInVision, Algorithm 1",
        dtype="int64",
        summary=1,
        digits=2,
        study=2,
        human=2,
    )
)


def edit_distance(pair: Pair) -> int:
    """Character Levenshtein distance between the normalised texts.

    >>> edit_distance(Pair("Kitten", "sitting"))
    3
    >>> edit_distance(Pair("北京欢迎你", "北京 欢迎您"))  # the space beside Han is ignored
    1
    """
    return pair.distance


register_metric(
    Metric(
        "edit_distance",
        edit_distance,
        label="Edit distance",
        higher_is_better=False,
        doc="Character Levenshtein distance (unit costs) between the normalised texts.",
        unit="edits",
        dtype="int64",
        digits=2,
    )
)


def lcs_len(pair: Pair) -> int:
    """Length of the longest common subsequence of the normalised texts.

    >>> lcs_len(Pair("Dreamscapes", "draseampes"))
    8
    >>> lcs_len(Pair("春节快乐", "新春快乐"))  # 春快乐
    3
    """
    return pair.lcs


register_metric(
    Metric(
        "lcs_len",
        lcs_len,
        label="LCS length",
        higher_is_better=True,
        doc="Length of the longest common subsequence (in order, gaps allowed).",
        unit="characters",
        reference="TextInVision",
        dtype="int64",
        digits=2,
    )
)


def lom_len(pair: Pair) -> int:
    """Length of the longest common contiguous substring of the normalised texts.

    >>> lom_len(Pair("Digital", "dlgitoi"))  # "git"
    3
    >>> lom_len(Pair("春节快乐", "新春快乐"))  # 快乐
    2
    """
    return longest_common_substring(pair.expected, pair.read)


register_metric(
    Metric(
        "lom_len",
        lom_len,
        label="Longest match length",
        higher_is_better=True,
        doc="Length of the longest common contiguous substring (longest ordered match).",
        unit="characters",
        reference="TextInVision",
        dtype="int64",
        digits=2,
    )
)


def ned(pair: Pair) -> float:
    """``1 - d / max(len)`` on the normalised texts; 1.0 for two empty texts.

    >>> ned(Pair("hello", "hallo"))
    0.8
    >>> ned(Pair("", ""))
    1.0
    >>> ned(Pair("北京欢迎你", "北京欢迎您"))  # one character of five
    0.8
    """
    return 1.0 - pair.distance_ratio


register_metric(
    Metric(
        "ned",
        ned,
        label="NED similarity (1 = exact)",
        higher_is_better=True,
        doc="1 - d / max(len(expected), len(read)); 1.0 when both are empty.",
        reference="AnyText NED",
        summary=3,
        study=1,
        human=1,
    )
)


def anls(pair: Pair) -> float:
    """``1 - nl`` when the normalised edit distance ``nl = d / max(len)`` is below 0.5, else 0.

    >>> anls(Pair("hello", "hallo"))  # nl = 0.2
    0.8
    >>> anls(Pair("hello", "help me"))  # nl = 4/7
    0.0
    >>> anls(Pair("北京欢迎你", "北京欢迎您"))  # nl = 1/5
    0.8
    """
    ratio = pair.distance_ratio
    return (1.0 - ratio) if ratio < ANLS_THRESHOLD else 0.0


register_metric(
    Metric(
        "anls",
        anls,
        label="ANLS",
        higher_is_better=True,
        doc="1 - nl when nl = d / max(len) < 0.5, else 0.",
        reference="ST-VQA ANLS, threshold 0.5",
        summary=4,
        study=3,
    )
)


def exact_match(pair: Pair) -> bool:
    """Whether the normalised texts are identical.

    >>> exact_match(Pair("Hello  World", "hello world"))
    True
    >>> exact_match(Pair("你好 世界", "你好世界"))
    True
    """
    return pair.expected == pair.read


register_metric(
    Metric(
        "exact_match",
        exact_match,
        label="Exact match",
        higher_is_better=True,
        doc="The normalised texts are identical.",
        reference="AnyText sentence accuracy",
        dtype="bool",
        summary=2,
        study=4,
    )
)


def word_precision(pair: Pair) -> float:
    """Matched words / read words (multiset matching); both empty: 1.0, read empty: 0.0.

    >>> word_precision(Pair("the cat the hat", "the the cat sat dog"))  # 3 of 5
    0.6
    >>> word_precision(Pair("天天向上", "天天向下看"))  # 天 天 向 of 5 characters
    0.6
    """
    n_read = len(pair.read_words)
    return pair.matched_words / n_read if n_read else float(not pair.expected_words)


register_metric(
    Metric(
        "word_precision",
        word_precision,
        label="Word precision",
        higher_is_better=True,
        doc="Matched words (multiset intersection) / read words; an empty side scores 1.0 "
        "if the other is empty too, else 0.0.",
        reference=WORD_MATCHING,
    )
)


def word_recall(pair: Pair) -> float:
    """Matched words / expected words (multiset matching); both empty: 1.0, expected empty: 0.0.

    >>> word_recall(Pair("the cat the hat", "the the cat sat dog"))  # 3 of 4
    0.75
    >>> word_recall(Pair("天天向上", "天天向下看"))  # 3 of 4 characters
    0.75
    """
    n_expected = len(pair.expected_words)
    return pair.matched_words / n_expected if n_expected else float(not pair.read_words)


register_metric(
    Metric(
        "word_recall",
        word_recall,
        label="Word recall",
        higher_is_better=True,
        doc="Matched words (multiset intersection) / expected words; an empty side scores "
        "1.0 if the other is empty too, else 0.0.",
        reference=WORD_MATCHING,
    )
)


def word_f1(pair: Pair) -> float:
    """Harmonic mean of word precision and recall (0 when both are 0).

    >>> word_f1(Pair("the cat the hat", "the the cat sat dog"))
    0.6666666666666665
    >>> word_f1(Pair("天天向上", "天天向下看"))
    0.6666666666666665
    """
    precision, recall = word_precision(pair), word_recall(pair)
    if precision + recall == 0:
        return 0.0
    return 2 * precision * recall / (precision + recall)


register_metric(
    Metric(
        "word_f1",
        word_f1,
        label="Word F1",
        higher_is_better=True,
        doc="Harmonic mean of word precision and recall (0 when both are 0).",
        reference=WORD_MATCHING,
        summary=5,
        study=7,
    )
)


def cer(pair: Pair) -> float:
    """Character error rate ``d / len(expected)`` (can exceed 1); empty expected: 0.0 or 1.0.

    >>> cer(Pair("hello", "hallo"))
    0.2
    >>> cer(Pair("", "x"))
    1.0
    >>> cer(Pair("北京欢迎你", "北京欢迎您"))
    0.2
    """
    length = len(pair.expected)
    if not length:
        return 0.0 if not pair.read else 1.0
    return pair.distance / length


register_metric(
    Metric(
        "cer",
        cer,
        label="CER",
        higher_is_better=False,
        doc="d / len(expected), can exceed 1; empty expected: 0.0 if the read is empty, else 1.0.",
        study=5,
    )
)


def wer(pair: Pair) -> float:
    """Word-level Levenshtein distance / expected words; no expected words: 0.0 or 1.0.

    >>> wer(Pair("the cat sat", "the bat sat down"))
    0.6666666666666666
    >>> wer(Pair("好好学习", "好好学"))  # one of four characters missing
    0.25
    """
    expected_words = pair.expected_words
    if not expected_words:
        return 0.0 if not pair.read_words else 1.0
    return Levenshtein.distance(expected_words, pair.read_words) / len(expected_words)


register_metric(
    Metric(
        "wer",
        wer,
        label="WER",
        higher_is_better=False,
        doc="Word-level Levenshtein distance / expected words; no expected words: 0.0 if "
        "none were read, else 1.0.",
        study=6,
    )
)
