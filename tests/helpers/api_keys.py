"""KEY, encodings, run_folder_text: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pandas as pd

KEY = "sk-Zq8w/9f+Qz7Lp3Xw8Rt2Vb6Nm4Kj1Hg5Fd0Sa"


def encodings(key: str) -> list[str]:
    """The key as a hostile answer may carry it (base64 without its edge blocks)."""
    json_escaped = key.replace("/", "\\/").replace("+", "\\u002b")
    unicode = "".join(f"\\u{ord(c):04x}" for c in key)
    url = "".join(f"%{b:02X}" for b in key.encode())
    cores = [base64.b64encode(value.encode()).decode()[4:-4] for value in (key, f"Bearer {key}")]
    return [key, json_escaped, unicode, url, key.encode().hex(), *cores]


def run_folder_text(root: Path) -> dict[str, str]:
    """Every file's text; parquet files also as their decoded rows (compression hides bytes)."""
    texts = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        texts[str(path)] = path.read_bytes().decode("latin-1")
        if path.suffix == ".parquet":
            frame = pd.read_parquet(path)
            texts[f"{path} (rows)"] = frame.astype(str).to_csv(index=False)
    return texts
