"""A prompt set kept as its parts: templates x texts (lazy) plus ready-made rows.

The default set and TextInVision both pair every template with every text;
the full cross product has over a million rows for TextInVision, so a
:class:`PromptPool` keeps the two tables apart and builds rows only for the
(template, text) pairs asked for. Row ``i`` of the pool is, in order:

* ``i < n_templates * n_texts``: template ``i // n_texts`` with text ``i % n_texts``;
* otherwise: ready-made row ``i - n_templates * n_texts`` (real-world prompts).

:meth:`PromptPool.rows` builds any subset of rows; :meth:`PromptPool.to_prompt_set`
builds them all.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from glyphbench.prompts.attributes import Stored, char_length, compute_attributes, word_count
from glyphbench.prompts.schema import PROMPT_COLUMNS, PromptSet, conform

#: The first double-quoted span of a template: TextInVision's text slot.
FIRST_QUOTED = re.compile(r'".*?"')


def make_prompt_id(kind: str, template_id: object, text_id: object) -> str:
    """Stable prompt id: 12 hex digits of SHA-256 over (source kind, template id, text id).

    The same source kind, template and text always give the same id, on any
    machine and in any row order; the path a source was read from is not part of it.

    >>> make_prompt_id("default", "c001", "w0001")
    '153b006058be'
    >>> hashlib.sha256("default\x1fc001\x1fw0001".encode()).hexdigest()[:12]
    '153b006058be'
    >>> make_prompt_id("default", "c001", "w0001") == make_prompt_id("default", "c001", "w0002")
    False
    """
    key = "\x1f".join(str(part) for part in (kind, template_id, text_id))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def real_world_rows(
    frame: pd.DataFrame, kind: str, source: str, key_column: str, stored: Stored | None = None
) -> pd.DataFrame:
    """Finish a table of ready-written (real-world) prompts: type, source, ids, attributes.

    ``key_column`` holds the source's own id; it becomes ``text_id`` and, hashed with
    ``kind``, the stable ``prompt_id``. ``stored``: lexicon attributes given, not derived
    (:func:`glyphbench.prompts.attributes.compute_attributes`).
    """
    rows = frame.copy()
    rows["prompt_type"] = "real_world"
    rows["source"] = source
    rows["text_id"] = rows[key_column]
    rows["prompt_id"] = [make_prompt_id(kind, "real_world", key) for key in rows[key_column]]
    return compute_attributes(rows, stored)


def fill_placeholder(template: str, text: str) -> str:
    """Default-set rule: replace the ``{text}`` placeholder (the text is inserted verbatim).

    >>> fill_placeholder('A sign that says "{text}".', "OPEN")
    'A sign that says "OPEN".'
    """
    return template.replace("{text}", text)


def fill_first_quoted(template: str, text: str) -> str:
    """TextInVision rule: replace the first double-quoted span (non-greedy) by ``"text"``.

    A function replacement is used, so backslashes and ``\\1`` in a text are
    inserted literally (the reference passed the text as an ``re.sub``
    replacement string, which would interpret them). A template with no quotes
    is returned unchanged, as the reference does.

    >>> fill_first_quoted('A sign with the text "hello" written on it.', "C:\\\\new")
    'A sign with the text "C:\\\\new" written on it.'
    >>> fill_first_quoted('Say "a" and "b".', "x")
    'Say "x" and "b".'
    """
    return FIRST_QUOTED.sub(lambda _match: f'"{text}"', template, count=1)


_StringLists = tuple[list[str], list[str], list[str], list[str]]


@dataclass
class PromptPool:
    """Templates x texts, built on demand, plus ready-made rows.

    ``templates`` needs ``template_id``, ``prompt_type``, ``template`` (and may
    carry ``group``/``subgroup`` and any extra column, e.g. ``stated_*``);
    ``texts`` needs ``text_id``, ``text`` and its attribute columns (computed
    once per text); ``singles`` holds whole rows (schema columns and extras).
    """

    kind: str
    source: str
    version: str
    templates: pd.DataFrame
    texts: pd.DataFrame
    singles: pd.DataFrame
    fill: Callable[[str, str], str]
    meta: dict[str, object] = field(default_factory=dict)
    # (template strings, template ids, text strings, text ids), built on first use
    _strings: _StringLists | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def n_cross(self) -> int:
        return len(self.templates) * len(self.texts)

    def __len__(self) -> int:
        return self.n_cross + len(self.singles)

    def cross_rows(
        self, template_index: Sequence[int] | np.ndarray, text_index: Sequence[int] | np.ndarray
    ) -> pd.DataFrame:
        """Rows for the pairs (templates.iloc[t], texts.iloc[x]), one per position."""
        t_idx = np.asarray(template_index, dtype=np.int64)
        x_idx = np.asarray(text_index, dtype=np.int64)
        templates = self.templates.iloc[t_idx].reset_index(drop=True)
        frame = self.texts.iloc[x_idx].reset_index(drop=True)
        # plain Python lists, built once: iterating pandas string arrays row by row is slow
        t_strings, t_ids, x_strings, x_ids = self._string_lists()
        pairs = list(zip(t_idx.tolist(), x_idx.tolist(), strict=True))
        prompts = [self.fill(t_strings[t], x_strings[x]) for t, x in pairs]
        for name, column in self.template_columns_by_row_name().items():
            frame[name] = templates[
                column
            ].array  # .array keeps nullable dtypes (Int64 stays Int64)
        frame["prompt"] = prompts
        # make_prompt_id inlined with a per-template prefix (same digest, 3x faster on big pools)
        prefixes = [f"{self.kind}\x1f{t}\x1f" for t in t_ids]
        sha256 = hashlib.sha256
        frame["prompt_id"] = [
            sha256((prefixes[t] + x_ids[x]).encode("utf-8")).hexdigest()[:12] for t, x in pairs
        ]
        frame["source"] = self.source
        frame["prompt_char_length"] = [char_length(p) for p in prompts]
        frame["prompt_word_count"] = [word_count(p) for p in prompts]
        return frame

    def template_columns_by_row_name(self) -> dict[str, str]:
        """Row column name -> templates column ("template" itself excluded); a template
        column whose name a text column already uses is ``template_<name>`` in rows."""
        return {
            (f"template_{c}" if c in self.texts.columns else c): c
            for c in self.templates.columns
            if c != "template"
        }

    def _string_lists(self) -> _StringLists:
        if self._strings is None:
            self._strings = (
                [str(v) for v in self.templates["template"].tolist()],
                [str(v) for v in self.templates["template_id"].tolist()],
                [str(v) for v in self.texts["text"].tolist()],
                [str(v) for v in self.texts["text_id"].tolist()],
            )
        return self._strings

    def rows(self, index: Sequence[int] | np.ndarray) -> pd.DataFrame:
        """Rows at pool positions ``index`` (see the module docstring), conformed, in that order."""
        idx = np.asarray(index, dtype=np.int64)
        if len(idx) and (idx.min() < 0 or idx.max() >= len(self)):
            raise IndexError(f"pool index out of range 0..{len(self) - 1}")
        n_texts = max(len(self.texts), 1)
        is_cross = idx < self.n_cross
        parts: list[pd.DataFrame] = []
        order: list[np.ndarray] = []
        if is_cross.any():
            cross = idx[is_cross]
            parts.append(self.cross_rows(cross // n_texts, cross % n_texts))
            order.append(np.flatnonzero(is_cross))
        if (~is_cross).any():
            single = idx[~is_cross] - self.n_cross
            parts.append(self.singles.iloc[single].reset_index(drop=True))
            order.append(np.flatnonzero(~is_cross))
        if not parts:
            return conform(pd.DataFrame({c: pd.Series(dtype=d) for c, d in PROMPT_COLUMNS.items()}))
        frame = pd.concat([conform(p) for p in parts], ignore_index=True)
        positions = np.concatenate(order)
        frame.index = positions
        return conform(frame.sort_index())

    def iter_chunks(self, chunk_rows: int = 50_000) -> Iterator[pd.DataFrame]:
        """All rows in pool order, a chunk at a time (whole templates per chunk)."""
        per_template = max(1, chunk_rows // max(len(self.texts), 1))
        n_texts = len(self.texts)
        for start in range(0, len(self.templates), per_template):
            stop = min(start + per_template, len(self.templates))
            t_idx = np.repeat(np.arange(start, stop), n_texts)
            x_idx = np.tile(np.arange(n_texts), stop - start)
            yield conform(self.cross_rows(t_idx, x_idx))
        if len(self.singles):
            yield conform(self.singles)

    def to_prompt_set(self) -> PromptSet:
        """Materialise every row (the cross product included)."""
        frame = (
            pd.concat(list(self.iter_chunks()), ignore_index=True) if len(self) else pd.DataFrame()
        )
        return PromptSet(frame, source=self.source, version=self.version, meta=dict(self.meta))

    def positions_of(self, wanted: Callable[[str], bool]) -> np.ndarray:
        """Pool positions, in order, of the rows whose ``prompt_id`` is ``wanted``.

        Only the ids are computed (one hash per template x text pair), no row is built.
        """
        _, t_ids, _, x_ids = self._string_lists()
        sha256 = hashlib.sha256
        found: list[int] = []
        for t, template_id in enumerate(t_ids):
            prefix = f"{self.kind}\x1f{template_id}\x1f"
            base = t * len(x_ids)
            found += [
                base + x
                for x, text_id in enumerate(x_ids)
                if wanted(sha256((prefix + text_id).encode("utf-8")).hexdigest()[:12])
            ]
        singles = self.singles["prompt_id"].astype(str).tolist() if len(self.singles) else []
        found += [self.n_cross + i for i, prompt_id in enumerate(singles) if wanted(prompt_id)]
        return np.asarray(found, dtype=np.int64)

    def subset(self, index: Sequence[int] | np.ndarray) -> PromptSet:
        """A PromptSet of the rows at ``index``."""
        return PromptSet(
            self.rows(index), source=self.source, version=self.version, meta=dict(self.meta)
        )
