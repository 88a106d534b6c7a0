"""Plain dynamic-programming implementations used as test oracles and benchmark baseline.

Written for clarity, not speed: no rapidfuzz, no shortcuts. ``glyphbench.scoring``
must agree with these exactly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence


def dp_levenshtein(a: Sequence, b: Sequence) -> int:
    previous = list(range(len(b) + 1))
    for i, item_a in enumerate(a, start=1):
        current = [i]
        for j, item_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (item_a != item_b))
            )
        previous = current
    return previous[-1]


def dp_lcs(a: str, b: str) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, ca in enumerate(a, start=1):
        for j, cb in enumerate(b, start=1):
            table[i][j] = (
                table[i - 1][j - 1] + 1 if ca == cb else max(table[i - 1][j], table[i][j - 1])
            )
    return table[-1][-1]


def dp_longest_common_substring(a: str, b: str) -> int:
    best = 0
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, ca in enumerate(a, start=1):
        for j, cb in enumerate(b, start=1):
            if ca == cb:
                table[i][j] = table[i - 1][j - 1] + 1
                best = max(best, table[i][j])
    return best


#: Code point ranges scored per character (Han, kana and their punctuation), listed plainly.
DP_PER_CHARACTER_RANGES = (
    (0x2E80, 0x2FDF),
    (0x3001, 0x303F),
    (0x3040, 0x30FF),
    (0x3100, 0x312F),
    (0x3190, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F),
    (0x20000, 0x3FFFF),
)


def dp_per_character(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in DP_PER_CHARACTER_RANGES)


def dp_normalize(text: str) -> str:
    """Collapse whitespace, case-fold, then drop each space that touches a Han/kana character."""
    joined = " ".join(text.split()).casefold()
    kept = []
    for i, char in enumerate(joined):
        before = joined[i - 1] if i > 0 else ""
        after = joined[i + 1] if i + 1 < len(joined) else ""
        touches = (before and dp_per_character(before)) or (after and dp_per_character(after))
        if char == " " and touches:
            continue
        kept.append(char)
    return "".join(kept)


def dp_tokens(text: str) -> list[str]:
    """Words split on spaces, every Han/kana character a token of its own."""
    out: list[str] = []
    word = ""
    for char in text:
        if char.isspace() or dp_per_character(char):
            if word:
                out.append(word)
            word = ""
            if not char.isspace():
                out.append(char)
        else:
            word += char
    if word:
        out.append(word)
    return out


def dp_join(words: list[str]) -> str:
    """Tokens back to text: spaces between words, none beside a Han/kana character."""
    text = ""
    for i, word in enumerate(words):
        if i and not (dp_per_character(words[i - 1][-1]) or dp_per_character(word[0])):
            text += " "
        text += word
    return text


def dp_algorithm1(expected: str, ocr: str) -> int:
    e, o = dp_normalize(expected), dp_normalize(ocr)
    if e in o:
        return 0
    e_words, o_words = dp_tokens(e), dp_tokens(o)
    if len(e_words) == 1:
        best, best_lcs = "", 0
        for word in o_words:
            length = dp_lcs(word, e)
            if length > best_lcs:
                best, best_lcs = word, length
        return dp_levenshtein(best, e)
    rest_e, rest_o = list(e_words), list(o_words)
    for word in e_words:
        if word in rest_o:
            rest_o.remove(word)
            rest_e.remove(word)
    return dp_levenshtein(dp_join(rest_e), dp_join(rest_o))


def dp_scores(expected: str, ocr: str) -> dict[str, float]:
    """Every paper-mode score of one pair, computed the slow, obvious way."""
    e, o = dp_normalize(expected), dp_normalize(ocr)
    d = dp_levenshtein(e, o)
    longest = max(len(e), len(o))
    nl = d / longest if longest else 0.0
    e_words, o_words = dp_tokens(e), dp_tokens(o)
    matched = sum((Counter(e_words) & Counter(o_words)).values())
    precision = matched / len(o_words) if o_words else float(not e_words)
    recall = matched / len(e_words) if e_words else float(not o_words)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "algorithm1": dp_algorithm1(expected, ocr),
        "edit_distance": d,
        "lcs_len": dp_lcs(e, o),
        "lom_len": dp_longest_common_substring(e, o),
        "ned": 1.0 - nl,
        "anls": 1.0 - nl if nl < 0.5 else 0.0,
        "exact_match": e == o,
        "word_precision": precision,
        "word_recall": recall,
        "word_f1": f1,
        "cer": d / len(e) if e else (0.0 if not o else 1.0),
        "wer": dp_levenshtein(e_words, o_words) / len(e_words)
        if e_words
        else (0.0 if not o_words else 1.0),
    }
