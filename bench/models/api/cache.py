"""The response cache: what a paid request returned, kept on disk so no re-run pays twice.

An entry is keyed by (provider, model, prompt, seed, the options that shape the
image): :func:`cache_key`. It holds the image exactly as the provider sent it
(``<key>.img``) and a small JSON record (``<key>.json``: outcome, cost, the run that
paid). A refusal is cached too (it is the provider's answer to that request);
a failure is not (the next run tries again). Both files are written atomically and
the record last, so an entry is either complete or absent after a crash, and an
entry is written as soon as its response arrives, before the image's row: a run
killed mid-way resumes without asking again for any image it had received.

Nothing secret goes in: the key is a hash, the record names no header or key.

>>> cache_key("openai", "gpt-image-1", "a sign", 7, {"size": "1024x1024"})[:12]
'9a5507fa6eef'
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glyphbench.core.io import atomic_path, write_json

IMAGE = "image"
REFUSED = "refused"


def cache_key(provider: str, model: str, prompt: str, seed: int, options: dict[str, Any]) -> str:
    """SHA-256 of the request's identity (transport options such as timeouts excluded)."""
    identity = {
        "provider": provider,
        "model": model,
        "prompt": prompt,
        "seed": seed,
        "options": options,
    }
    blob = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheEntry:
    """One cached answer: an image (``data``) or a refusal (``reason``)."""

    outcome: str
    cost_usd: float
    paid_by: str  # the run (id and folder) that paid for it: see ApiModel.payer
    reason: str = ""
    data: bytes = b""


class ResponseCache:
    """Entries under ``root/<first two hex digits>/<key>.{json,img}``."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _paths(self, key: str) -> tuple[Path, Path]:
        folder = self.root / key[:2]
        return folder / f"{key}.json", folder / f"{key}.img"

    def get(self, key: str) -> CacheEntry | None:
        """The entry for ``key``, or None (absent or unreadable: asked again)."""
        record_path, image_path = self._paths(key)
        try:
            record = json.loads(record_path.read_text(encoding="utf-8"))
            data = image_path.read_bytes() if record["outcome"] == IMAGE else b""
        except (OSError, ValueError, KeyError):
            return None
        cost = record.get("cost_usd")
        return CacheEntry(
            outcome=str(record["outcome"]),
            cost_usd=float("nan") if cost is None else float(cost),
            paid_by=str(record.get("paid_by", "")),
            reason=str(record.get("reason", "")),
            data=data,
        )

    def put(self, key: str, entry: CacheEntry, about: dict[str, Any]) -> None:
        """Store ``entry``; ``about`` (provider, model, prompt, seed, options) is recorded."""
        record_path, image_path = self._paths(key)
        if entry.outcome == IMAGE:
            with atomic_path(image_path) as tmp:
                tmp.write_bytes(entry.data)
        record = {
            **about,
            "outcome": entry.outcome,
            "reason": entry.reason,
            "cost_usd": None if entry.cost_usd != entry.cost_usd else entry.cost_usd,
            "paid_by": entry.paid_by,
            "image_sha256": hashlib.sha256(entry.data).hexdigest() if entry.data else None,
        }
        write_json(record_path, record)

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json"))
