"""What a metric receives: one (expected, read) pair and the work metrics share.

Every text metric is a function of a :class:`Pair`. The pair holds the two raw
texts and the run's :class:`~glyphbench.scoring.normalize.Normalization`; everything
derived from them (normalised texts, word lists, the edit distance, Algorithm 1's
common-word removal, ...) is a :class:`lazy` attribute: computed the first time
a metric asks, then kept, so twelve metrics normalise and split once and compute
the edit distance once. Metrics that reproduce another benchmark's scorer read
``expected_raw`` and ``read_raw`` and apply that scorer's own rules.

>>> pair = Pair("Digital  Dreamscapes", "DIGITAL dreams")
>>> pair.expected, pair.read
('digital dreamscapes', 'digital dreams')
>>> pair.distance, pair.matched_words
(5, 1)

Scripts written without spaces count per character: each Han or kana character
is one token of the word-level metrics, and spaces beside them are ignored.

>>> cjk = Pair("欢迎光临", "欢迎 光顾")
>>> cjk.read, cjk.read_words, cjk.distance, cjk.matched_words
('欢迎光顾', ['欢', '迎', '光', '顾'], 1, 3)

Image metrics (PSNR, SSIM) receive an :class:`ImagePair` instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from rapidfuzz.distance import LCSseq, Levenshtein

from glyphbench.core.images import to_rgb_array
from glyphbench.scoring.normalize import Normalization, tokens

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from glyphbench.core.images import ImageLike

T = TypeVar("T")

#: The default normalisation ("paper" mode).
PAPER = Normalization()


class lazy(Generic[T]):
    """An attribute computed on first access, then stored on the instance.

    :func:`functools.cached_property` does the same but takes a lock on every
    first access in Python 3.11, a noticeable share of a metric that costs well
    under a microsecond; scoring never shares a pair between threads.

    >>> class Box:
    ...     @lazy
    ...     def area(self) -> int:
    ...         print("computing")
    ...         return 6
    >>> box = Box()
    >>> box.area
    computing
    6
    >>> box.area
    6
    """

    def __init__(self, function: Callable[[Any], T]) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> lazy[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | lazy[T]:
        if instance is None:
            return self
        # A non-data descriptor: once the value is in the instance dict, later
        # lookups find it there and never call this method again.
        value = self.function(instance)
        setattr(instance, self.name, value)
        return value


def remove_common_words(e_words: list[str], o_words: list[str]) -> tuple[list[str], list[str]]:
    """Algorithm 1's step 3: drop each expected word's first remaining match from both lists.

    The number of words removed is the multiset intersection size, which the
    word-level precision/recall (and the VAE's word retention) also need.

    >>> remove_common_words(["the", "the", "cat"], ["the", "hat"])
    (['the', 'cat'], ['hat'])
    """
    rest_o = list(o_words)
    rest_e = []
    for word in e_words:
        if word in rest_o:
            rest_o.remove(word)
        else:
            # Matches of a word always take its earliest occurrences, so keeping the
            # unmatched ones in order equals removing "the first remaining occurrence".
            rest_e.append(word)
    return rest_e, rest_o


class Pair:
    """The expected text and the text a reader returned, with lazily shared results.

    ``normalization=None`` means the texts are already normalised (used as given).
    Missing values are the caller's business: :func:`glyphbench.scoring.score_pairs`
    turns None/NaN into empty strings before building pairs.
    """

    def __init__(
        self,
        expected_raw: str,
        read_raw: str,
        normalization: Normalization | None = PAPER,
        expected: str | None = None,
        read: str | None = None,
        expected_words: list[str] | None = None,
        read_words: list[str] | None = None,
    ) -> None:
        self.expected_raw = expected_raw
        self.read_raw = read_raw
        self.normalization = normalization
        # Callers that computed these already pass them (score_pairs normalises and
        # splits all texts in one pass); they must equal what the pair would compute.
        if expected is not None:
            self.expected = expected
        if read is not None:
            self.read = read
        if expected_words is not None:
            self.expected_words = expected_words
        if read_words is not None:
            self.read_words = read_words

    def __repr__(self) -> str:
        return f"Pair({self.expected_raw!r}, {self.read_raw!r})"

    @lazy
    def expected(self) -> str:
        """The expected text, normalised."""
        norm = self.normalization
        return self.expected_raw if norm is None else norm(self.expected_raw)

    @lazy
    def read(self) -> str:
        """The read text, normalised."""
        norm = self.normalization
        return self.read_raw if norm is None else norm(self.read_raw)

    @lazy
    def expected_words(self) -> list[str]:
        """Tokens of the normalised expected text: words, and each Han/kana character alone.

        See :func:`glyphbench.scoring.normalize.tokens`; for Latin text, ``str.split()``.
        """
        return tokens(self.expected)

    @lazy
    def read_words(self) -> list[str]:
        """Tokens of the normalised read text (as :attr:`expected_words`)."""
        return tokens(self.read)

    @lazy
    def distance(self) -> int:
        """Character Levenshtein distance between the normalised texts."""
        return Levenshtein.distance(self.expected, self.read)

    @lazy
    def distance_ratio(self) -> float:
        """``distance / max(len)``: the normalised edit distance (0.0 for two empty texts)."""
        longest = max(len(self.expected), len(self.read))
        return self.distance / longest if longest else 0.0

    @lazy
    def lcs(self) -> int:
        """Length of the longest common subsequence of the normalised texts."""
        return LCSseq.similarity(self.expected, self.read)

    @lazy
    def unmatched_words(self) -> tuple[list[str], list[str]]:
        """(expected, read) words left after :func:`remove_common_words`."""
        return remove_common_words(self.expected_words, self.read_words)

    @lazy
    def matched_words(self) -> int:
        """Words common to both texts, counted as a multiset (each as often as in both)."""
        expected_words = self.expected_words
        if len(expected_words) == 1:  # most texts are one word: no need to remove anything
            return int(expected_words[0] in self.read_words)
        return len(expected_words) - len(self.unmatched_words[0])


class ImagePair:
    """An original image and its reconstruction, as float64 RGB arrays on demand.

    Images are PIL images or uint8 arrays (anything
    :func:`glyphbench.core.images.to_rgb_array` accepts).
    """

    def __init__(self, original: ImageLike, reconstruction: ImageLike) -> None:
        self.original = original
        self.reconstruction = reconstruction

    @lazy
    def original_rgb(self) -> npt.NDArray[np.float64]:
        return float_rgb(self.original)

    @lazy
    def reconstruction_rgb(self) -> npt.NDArray[np.float64]:
        return float_rgb(self.reconstruction)


def float_rgb(image: ImageLike) -> npt.NDArray[np.float64]:
    """An image as an HxWx3 float64 RGB array on the 0..255 scale.

    >>> import numpy as np
    >>> float_rgb(np.zeros((1, 2, 3), np.uint8)).dtype.name
    'float64'
    """
    import numpy as np

    return np.asarray(to_rgb_array(image), dtype=np.float64)
