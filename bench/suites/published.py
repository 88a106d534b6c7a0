"""Published scores of the suites' benchmarks (``published.csv``), and which run model is which.

Each row of ``published.csv`` is one number a paper or a benchmark's repository
reports: ``benchmark`` (the suite), ``subset``, ``options`` (suite options it needs,
e.g. ``caption=enhanced``), ``model`` (the paper's name), ``match`` (model ids that
name the same model in a glyphbench spec, ``|``-separated), ``metric`` (a glyphbench
column of the suite's family, on the same scale), ``value``, ``source`` (repository
at commit, file, the section and column of its table) and ``protocol`` (how it
was produced). Only numbers read from a cited source are listed, copied as the
source prints them; none is derived or averaged. Where sources disagree (Seedream
4.0's CVTG-2K word accuracy is 0.8451 in GLM-Image's README and 0.8917 in
LongCat-Image's), each source keeps its own row: a row is unique by (benchmark,
subset, options, model, metric, source). ``subset`` is a subset name, ``all`` for a
pooled benchmark's number over every subset, or a part that selects subsets
(``cvtg``'s ``2``: both types' 2-region files).

A run's model matches a published one when its label equals the published name
(case-insensitively), or its label or resolved spec contains one of ``match`` as a
whole name (``Qwen/Qwen-Image`` does not match ``Qwen/Qwen-Image-2512``).

>>> table = load_published()
>>> sorted(set(table["benchmark"]))
['anytext', 'cvtg', 'lex', 'longtext', 'oneig-text']
>>> matches("diffusers:black-forest-labs/FLUX.1-dev", "Flux.1-dev", "black-forest-labs/FLUX.1-dev")
True
>>> matches("diffusers:Qwen/Qwen-Image-2512", "Qwen-Image", "Qwen/Qwen-Image")
False
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

PUBLISHED = Path(__file__).with_name("published.csv")
COLUMNS = (
    "benchmark",
    "subset",
    "options",
    "model",
    "match",
    "metric",
    "value",
    "source",
    "protocol",
)


@functools.cache
def _load(path: str) -> pd.DataFrame:
    import pandas as pd

    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame["value_text"] = frame["value"]  # as the source prints it (0.020, 0.8451)
    frame["value"] = frame["value"].astype(float)
    return frame


def load_published(path: str | Path = PUBLISHED) -> pd.DataFrame:
    """The published scores (a copy: callers may change it)."""
    return _load(str(path)).copy()


def matches(label: str, model: str, match: str) -> bool:
    """True when a run's model (its label or spec) is the published ``model``."""
    text = label.lower()
    if text == model.lower() or text.split(":", 1)[-1] == model.lower():
        return True
    return any(_contains_name(text, alias.strip().lower()) for alias in match.split("|"))


def _contains_name(text: str, name: str) -> bool:
    """``name`` inside ``text`` with no name character (letter, digit, ``.-_``) on either side."""
    return bool(name) and re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", text) is not None


def options_text(options: dict[str, object]) -> str:
    """Suite options as ``published.csv`` writes them: ``key=value`` joined by ``&``, sorted.

    >>> options_text({"caption": "simple"})
    'caption=simple'
    """
    return "&".join(f"{key}={value}" for key, value in sorted(options.items()))


def published_for(suite: str, subset: str, options: str, names: tuple[str, ...]) -> pd.DataFrame:
    """Published rows of ``suite``/``subset`` with ``options`` for a model called by ``names``."""
    table = load_published()
    rows = table[(table["benchmark"] == suite) & (table["subset"] == subset)]
    rows = rows[rows["options"].isin(["", options])]
    keep = [
        any(matches(name, m, alias) for name in names)
        for m, alias in zip(rows["model"], rows["match"], strict=True)
    ]
    return rows[keep]
