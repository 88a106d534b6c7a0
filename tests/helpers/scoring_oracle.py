"""oracle, oracle_drop_common_once, oracle_smart_lev: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

from tests.helpers.dp_reference import dp_lcs, dp_levenshtein, dp_longest_common_substring


def oracle_drop_common_once(a: str, b: str) -> tuple[str, str]:
    a_words, b_words = a.split(), b.split()
    common = set(a_words) & set(b_words)

    def drop_last(words: list[str]) -> list[str]:
        out = list(words)
        for word in common:
            last = len(out) - 1 - out[::-1].index(word)
            del out[last]
        return out

    return " ".join(drop_last(a_words)), " ".join(drop_last(b_words))


def oracle_smart_lev(a: str, b: str) -> int:
    a_rest, b_rest = oracle_drop_common_once(a.lower(), b.lower())
    if not a_rest and not b_rest:
        return 0
    return dp_levenshtein(a_rest.replace(" ", ""), b_rest.replace(" ", ""))


def oracle(expected: str, ocr: str) -> dict[str, int]:
    if ocr in expected:  # swapped arguments, case-sensitive
        alg1 = 0
    elif len(ocr.split()) == 1:
        best, best_len = "", 0
        for word in expected.split():
            length = dp_lcs(word.lower(), ocr.lower())
            if length > best_len:
                best, best_len = word, length
        alg1 = oracle_smart_lev(best, ocr)
    else:
        alg1 = oracle_smart_lev(expected, ocr)
    return {
        "score_longest_match": dp_longest_common_substring(expected.lower(), ocr.lower()),
        "score_lcs": dp_lcs(expected.lower(), ocr.lower()),
        "score_levenshtein": oracle_smart_lev(expected, ocr),
        "score_algorithm1": alg1,
    }
