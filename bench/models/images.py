"""The ``images`` model kind: score images made elsewhere (a closed model, a ComfyUI graph).

``images:DIR`` takes the images of a folder, named as a run folder names its own::

    <prompt_id>[_s<seed>][_i<index>].<png|jpg|jpeg|webp>

so ``images:runs/x/images/control_render`` re-scores the images of another run. A
name without ``_s<seed>`` stands for the run's first seed, one without ``_i<index>``
for sample index 0; a prompt id with characters unsafe in file names may also appear
as the run folder writes it (:func:`bench.store.image_stem`). When two files name the
same image, the more specific name wins (``p_s0_i0`` before ``p_s0``, ``p_i0``, ``p``;
then ``.png``, ``.jpg``, ``.jpeg``, ``.webp``) and the other is listed as extra.

``images:MANIFEST.csv`` lists them instead: columns ``prompt_id`` and ``path``
(relative to the CSV's folder, or absolute), optionally ``seed`` and ``sample_index``;
repeated rows of one prompt and seed without ``sample_index`` get indices 0, 1, ...

The prompts come from any source (``--prompts``), as for any model. Nothing is
skipped silently: an expected image with no file is a failed row (``Missing: ...``),
a file that cannot be decoded a failed row (``Unreadable: ...``), and before the
first image the run prints one summary naming the missing, unreadable and extra
(unused) files; :meth:`ImagesModel.describe` records the same in run.json.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from bench.errors import InputError
from bench.models.base import ImageNotMade, ImageRequest, ModelAdapter, RunContext
from bench.registry import Options, Spec, register

if TYPE_CHECKING:
    from PIL import Image

#: File suffixes read from an image folder, in the order that breaks ties.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")
#: How many names of each kind the one-line summary shows before "and N more".
SHOWN = 5
#: How many names of each kind run.json records (the counts are always complete).
RECORDED = 100

#: (prompt_id, run seed, sample index): one expected image.
ImageKey = tuple[str, int, int]


def candidate_stems(prompt_id: str, seed: int, index: int, first_seed: int) -> list[str]:
    """File stems that may hold image ``(prompt_id, seed, index)``, most specific first.

    >>> candidate_stems("p-1", 0, 0, first_seed=0)
    ['p-1_s0_i0', 'p-1_s0', 'p-1_i0', 'p-1']
    >>> candidate_stems("p-1", 3, 1, first_seed=0)
    ['p-1_s3_i1']
    >>> candidate_stems("a/b", 0, 1, first_seed=0)[:2]
    ['a/b_s0_i1', 'a/b_i1']
    """
    from bench.engine import slug

    stems: list[str] = []
    for name in dict.fromkeys((prompt_id, slug(prompt_id, digest=8))):
        stems.append(f"{name}_s{seed}_i{index}")
        if index == 0:
            stems.append(f"{name}_s{seed}")
        if seed == first_seed:
            stems.append(f"{name}_i{index}")
            if index == 0:
                stems.append(name)
    return stems


@dataclass
class Matching:
    """Which file holds each expected image, and what did not fit."""

    files: dict[ImageKey, Path] = field(default_factory=dict)
    missing: list[ImageKey] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    unreadable: dict[ImageKey, str] = field(default_factory=dict)

    def summary(self, source: str) -> str:
        """One line for the console: counts, then the first names of each problem."""
        parts = [f"images: {len(self.files)} of {len(self.files) + len(self.missing)} found"]
        parts.append(f"in {source}")
        problems = [
            ("missing", [_key_text(key) for key in self.missing]),
            ("unreadable", [f"{self.files[k].name} ({why})" for k, why in self.unreadable.items()]),
            ("extra (not used)", self.extra),
        ]
        notes = [f"{len(names)} {what}: {_shown(names)}" for what, names in problems if names]
        return " ".join(parts) + ("; " + "; ".join(notes) if notes else "; nothing missing")

    def describe(self) -> dict[str, Any]:
        """Counts, and the first :data:`RECORDED` names of each problem (for run.json)."""
        unreadable = [(self.files[k].name, why) for k, why in self.unreadable.items()]
        return {
            "found": len(self.files),
            "counts": {
                "missing": len(self.missing),
                "unreadable": len(unreadable),
                "extra": len(self.extra),
            },
            "missing": [_key_text(key) for key in self.missing[:RECORDED]],
            "unreadable": dict(unreadable[:RECORDED]),
            "extra": list(self.extra[:RECORDED]),
        }


def _key_text(key: ImageKey) -> str:
    return f"{key[0]} seed {key[1]} index {key[2]}"


def _shown(names: Sequence[str]) -> str:
    more = len(names) - SHOWN
    return ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def match_folder(folder: Path, expected: Sequence[ImageKey]) -> Matching:
    """Match the image files of ``folder`` to ``expected`` keys by :func:`candidate_stems`."""
    by_stem: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(folder.iterdir()):
        suffix = path.suffix.lower()
        if path.is_file() and suffix in IMAGE_SUFFIXES:
            by_stem[path.stem].append(path)
    for paths in by_stem.values():
        paths.sort(key=lambda p: IMAGE_SUFFIXES.index(p.suffix.lower()))
    first_seed = expected[0][1] if expected else 0
    matching = Matching()
    used: set[Path] = set()
    for key in expected:
        stems = candidate_stems(*key, first_seed=first_seed)
        found = next((by_stem[stem][0] for stem in stems if by_stem.get(stem)), None)
        if found is None or found in used:
            matching.missing.append(key)
            continue
        matching.files[key] = found
        used.add(found)
    matching.extra = [p.name for paths in by_stem.values() for p in paths if p not in used]
    return matching


def match_manifest(manifest: Path, expected: Sequence[ImageKey]) -> Matching:
    """Match the rows of a ``prompt_id, path[, seed][, sample_index]`` CSV to ``expected``."""
    first_seed = expected[0][1] if expected else 0
    listed: dict[ImageKey, Path] = {}
    extra: list[str] = []
    for line, row in _manifest_rows(manifest):
        key = _manifest_key(row, first_seed, listed, manifest, line)
        path = Path(row["path"])
        path = path if path.is_absolute() else manifest.parent / path
        if key in listed:
            extra.append(f"{row['path']} (line {line}: repeats {_key_text(key)})")
            continue
        listed[key] = path
    wanted = set(expected)
    extra += [
        f"{path.name} ({_key_text(key)})" for key, path in listed.items() if key not in wanted
    ]
    matching = Matching(extra=extra)
    for key in expected:
        if key in listed:
            matching.files[key] = listed[key]
        else:
            matching.missing.append(key)
    return matching


def _manifest_rows(manifest: Path) -> Iterable[tuple[int, dict[str, str]]]:
    with manifest.open(newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        columns = [c.strip() for c in reader.fieldnames or []]
        absent = [c for c in ("prompt_id", "path") if c not in columns]
        if absent:
            raise InputError(
                manifest, f"missing column {absent[0]!r} (columns: {', '.join(columns) or 'none'})"
            )
        for number, raw in enumerate(reader, start=2):
            yield number, {k.strip(): (v or "").strip() for k, v in raw.items() if k}


def _manifest_key(
    row: dict[str, str], first_seed: int, listed: dict[ImageKey, Path], source: Path, line: int
) -> ImageKey:
    """The row's key; without ``sample_index``, the next index not yet listed for its seed."""
    try:
        seed = int(row["seed"]) if row.get("seed") else first_seed
        if row.get("sample_index"):
            return (row["prompt_id"], seed, int(row["sample_index"]))
    except ValueError:
        raise InputError(source, "seed and sample_index must be integers", line=line) from None
    index = 0
    while (row["prompt_id"], seed, index) in listed:
        index += 1
    return (row["prompt_id"], seed, index)


def _not_regular(path: Path) -> str:
    """What ``path`` is when it is not a regular file (``""`` for a regular one).

    >>> _not_regular(Path("/dev/null"))
    'a device'
    """
    import stat

    mode = path.stat().st_mode  # follows links: the file a link points to counts
    if stat.S_ISREG(mode):
        return ""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


def _check_readable(matching: Matching) -> None:
    """Decode every matched file once, so unreadable ones are named before the run starts."""
    from PIL import Image

    for key, path in matching.files.items():
        try:
            kind = _not_regular(path)
            if kind:  # opening a FIFO would wait for a writer forever (issue 25)
                matching.unreadable[key] = f"not a regular file ({kind})"
                continue
            with Image.open(path) as image:
                image.load()
        except Exception as exc:  # any decoding failure makes the file unreadable
            matching.unreadable[key] = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]


class ImagesOptions(Options):
    """Options of ``images:``: none of its own; ``device`` is accepted as every model's is."""

    device: str | None = Field(default=None, description="ignored: the images are files")


class ImagesModel(ModelAdapter):
    """Images read from a folder or a manifest instead of generated (see the module doc)."""

    def __init__(self, spec: Spec, options: ImagesOptions) -> None:
        self.spec = spec.text
        self.source = Path(spec.target).expanduser()
        if not self.source.exists():
            raise InputError(spec.text, f"no image folder or CSV manifest at {self.source}")
        if self.source.is_file() and self.source.suffix.lower() != ".csv":
            raise InputError(spec.text, "images: takes a folder or a .csv manifest")
        self.matching: Matching | None = None
        self._by_seed: dict[int, ImageKey] = {}

    def bind_run(self, context: RunContext) -> None:
        """Match the files to every image the run expects (all shards) and check them."""
        from bench.seeds import image_seed

        expected = list(context.expected)
        if self.source.is_dir():
            self.matching = match_folder(self.source, expected)
        else:
            self.matching = match_manifest(self.source, expected)
        _check_readable(self.matching)
        self._by_seed = {
            image_seed(seed, pid, index): (pid, seed, index) for pid, seed, index in expected
        }

    def input_summary(self) -> str:
        return "" if self.matching is None else self.matching.summary(str(self.source))

    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        return [self._image(request) for request in requests]  # type: ignore[misc]

    def _image(self, request: ImageRequest) -> Image.Image | ImageNotMade:
        from PIL import Image

        key = self._by_seed.get(request.seed)
        if key is None or self.matching is None:
            return ImageNotMade("Missing: the images: model knows only the images of its run")
        path = self.matching.files.get(key)
        if path is None:
            return ImageNotMade(f"Missing: no image for {_key_text(key)} in {self.source}")
        if key in self.matching.unreadable:
            return ImageNotMade(f"Unreadable: {path.name}: {self.matching.unreadable[key]}")
        with Image.open(path) as image:
            return image.convert("RGB")

    def describe(self) -> dict[str, Any]:
        facts: dict[str, Any] = {"spec": self.spec, "is_control": False}
        facts["source"] = str(self.source)
        if self.matching is not None:
            facts["images"] = self.matching.describe()
        return facts


register(
    "models",
    "images",
    options=ImagesOptions,
    target="required",
    usage="images:DIR|MANIFEST.csv",
    summary="Images made elsewhere, read from a folder (<prompt_id>[_s<seed>][_i<index>].png) "
    "or a CSV manifest (prompt_id, path[, seed]): score any model's images.",
)(ImagesModel)
