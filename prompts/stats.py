"""``glyphbench prompts stats``: how a prompt set is distributed.

Marginal counts of rows by prompt type, group, CEFR level, text length bins and
flags. A lazy pool is counted without building its rows: every text appears
once with every template, so a text attribute's count over the cross product
is its count over the texts times the number of templates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.io import atomic_path
from glyphbench.prompts.attributes import CEFR_LEVELS
from glyphbench.prompts.pool import PromptPool
from glyphbench.prompts.schema import PROMPT_TYPES, PromptSet, conform

#: (low, high) inclusive bins for char_length and word_count.
CHAR_BINS = ((1, 5), (6, 10), (11, 20), (21, 50), (51, 100), (101, None))
WORD_BINS = ((1, 1), (2, 3), (4, 10), (11, 30), (31, None))
FLAGS = ("rare", "gibberish", "has_special_chars", "has_numbers", "is_sentence")
_MISSING = "(none)"


def _bin_label(low: int, high: int | None) -> str:
    return f"{low}+" if high is None else (str(low) if low == high else f"{low}-{high}")


def _binned(values: pd.Series, bins: tuple[tuple[int, int | None], ...]) -> pd.Series:
    def label(v: Any) -> str:
        if v is None or v is pd.NA:
            return _MISSING
        for low, high in bins:
            if v >= low and (high is None or v <= high):
                return _bin_label(low, high)
        return f"<{bins[0][0]}"

    return values.map(label)


def _weighted_counts(values: pd.Series, weights: pd.Series) -> dict[str, int]:
    keys = values.astype(object).where(values.notna(), _MISSING).astype(str)
    counts = weights.groupby(keys.to_numpy()).sum()
    return {str(k): int(v) for k, v in counts.sort_index().items()}


def _merge(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return dict(sorted(out.items()))


def _text_stats(frame: pd.DataFrame, weights: pd.Series) -> dict[str, Any]:
    return {
        "cefr": _weighted_counts(frame["cefr"], weights),
        "char_length": _weighted_counts(_binned(frame["char_length"], CHAR_BINS), weights),
        "word_count": _weighted_counts(_binned(frame["word_count"], WORD_BINS), weights),
        "flags": {
            f: int(weights[frame[f].fillna(False).astype(bool).to_numpy()].sum()) for f in FLAGS
        },
    }


def _ordered(counts: dict[str, int], order: list[str]) -> dict[str, int]:
    """Known labels in ``order``, then any others sorted, then the missing bucket."""
    rank = {label: i for i, label in enumerate(order)}
    return dict(
        sorted(
            counts.items(), key=lambda kv: (kv[0] == _MISSING, rank.get(kv[0], len(rank)), kv[0])
        )
    )


def _in_display_order(stats: dict[str, Any]) -> dict[str, Any]:

    stats["prompt_type"] = _ordered(stats["prompt_type"], list(PROMPT_TYPES))
    stats["group"] = _ordered(stats["group"], [])
    stats["cefr"] = _ordered(stats["cefr"], list(CEFR_LEVELS))
    stats["char_length"] = _ordered(
        stats["char_length"], [_bin_label(lo, hi) for lo, hi in CHAR_BINS]
    )
    stats["word_count"] = _ordered(
        stats["word_count"], [_bin_label(lo, hi) for lo, hi in WORD_BINS]
    )
    return stats


def compute_stats(source: PromptSet | PromptPool) -> dict[str, Any]:
    """Counts by prompt_type, group, cefr, char_length/word_count bins and flags.

    >>> import pandas as pd
    >>> s = PromptSet(pd.DataFrame({"prompt_id": ["a", "b"], "prompt": ['"hi"', '"yo 7"'],
    ...     "text": ["hi", "yo 7"], "prompt_type": ["simple", "simple"],
    ...     "has_numbers": [False, True]}), source="x")
    >>> compute_stats(s)["flags"]["has_numbers"]
    1
    """
    if isinstance(source, PromptPool):
        texts = conform(source.texts.assign(prompt="", prompt_id=""))
        singles = conform(source.singles) if len(source.singles) else None
        n_templates = len(source.templates)
        text_part = _text_stats(texts, pd.Series(n_templates, index=texts.index))
        type_counts = {
            str(k): int(v) * len(source.texts)
            for k, v in source.templates["prompt_type"].value_counts().items()
        }
        group_counts = {_MISSING: source.n_cross} if source.n_cross else {}
        if singles is not None:
            ones = pd.Series(1, index=singles.index)
            single_part = _text_stats(singles, ones)
            for key in ("cefr", "char_length", "word_count"):
                text_part[key] = _merge(text_part[key], single_part[key])
            text_part["flags"] = {f: text_part["flags"][f] + single_part["flags"][f] for f in FLAGS}
            type_counts = _merge(type_counts, _weighted_counts(singles["prompt_type"], ones))
            group_counts = _merge(group_counts, _weighted_counts(singles["group"], ones))
        unique_texts = int(
            pd.concat(
                [source.texts["text"], source.singles.get("text", pd.Series(dtype=str))]
            ).nunique()
        )
        return _in_display_order(
            {
                "source": source.source,
                "version": source.version,
                "rows": len(source),
                "templates": n_templates,
                "texts": len(source.texts),
                "ready_made_rows": len(source.singles),
                "unique_texts": unique_texts,
                "prompt_type": dict(sorted(type_counts.items())),
                "group": dict(sorted(group_counts.items())),
                **text_part,
            }
        )
    frame = source.frame
    ones = pd.Series(1, index=frame.index)
    return _in_display_order(
        {
            "source": source.source,
            "version": source.version,
            "rows": len(frame),
            "content_hash": source.content_hash,
            "unique_texts": int(frame["text"].nunique()),
            "prompt_type": _weighted_counts(frame["prompt_type"], ones),
            "group": _weighted_counts(frame["group"], ones),
            **_text_stats(frame, ones),
        }
    )


#: The chart formats, by the file's suffix (matplotlib writes each).
CHART_FORMATS = (".png", ".svg", ".pdf")


def write_chart(stats: dict[str, Any], path: str | Path) -> None:
    """Bar charts of the distribution (type, group, CEFR, lengths, flags) in one image, in
    the format its suffix names (:data:`CHART_FORMATS`), atomically."""
    path = Path(path)
    if path.suffix.lower() not in CHART_FORMATS:  # PNG bytes under out.jpg, before
        raise InputError(
            "--chart", f"{path}: give a file name ending in {', '.join(CHART_FORMATS)}"
        )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("prompt type", stats["prompt_type"]),
        ("real-world group", {k: v for k, v in stats["group"].items() if k != _MISSING}),
        ("CEFR level", stats["cefr"]),
        ("text length (chars)", stats["char_length"]),
        ("text length (words)", stats["word_count"]),
        ("flags", stats["flags"]),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8))
    for ax, (title, counts) in zip(axes.ravel(), panels, strict=True):
        labels = list(counts)
        ax.bar(range(len(labels)), [counts[k] for k in labels], color="#4c72b0")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
        ax.set_title(title)
        ax.set_ylabel("prompts")
    fig.suptitle(f"{stats['source']} — {stats['rows']:,} prompts ({stats['version']})")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lower()[1:], dpi=100)
    plt.close(fig)
