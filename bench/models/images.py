"""The ``images`` model kind: score images made elsewhere (a closed model, a ComfyUI graph).

``images:DIR`` takes the images of a folder, named as a run folder names its own::

    <prompt_id>[_s<seed>][_i<index>].<png|jpg|jpeg|webp>

so ``images:runs/x/images/control_render`` re-scores the images of another run. A
name without ``_s<seed>`` stands for the run's first seed, one without ``_i<index>``
for sample index 0; a prompt id with characters unsafe in file names may also appear
as the run folder writes it (:func:`glyphbench.run.results.image_stem`). When two files name the
same image, the more specific name wins (``p_s0_i0`` before ``p_s0``, ``p_i0``, ``p``;
then ``.png``, ``.jpg``, ``.jpeg``, ``.webp``) and the other is listed as extra.

In a suite run (``--suite``) the folder may instead be laid out as the benchmark's
own evaluation code names its files (each suite's :class:`~glyphbench.suites.base.ImageLayout`):
LongText-Bench's ``{prompt_id}_{k}.png`` (k from 1), a OneIG-Bench model folder of
``<id>.webp`` 2x2 grids (each cell one image), CVTG-2K's ``CVTG/2/<index>.png``, ...
Files of either naming are used; those of the layout are searched in subfolders too.
A folder in which no file names an image of the run is an error that names the
expected file names, with an example.

``images:MANIFEST.csv`` lists them instead: columns ``prompt_id`` and ``path``
(relative to the CSV's folder, or absolute), optionally ``seed`` and ``sample_index``;
every file named (and every file of a folder, links resolved) must lie inside the
manifest's folder (or the image folder): one that leads outside is refused in one line
before anything is written (:mod:`glyphbench.core.paths`);
repeated rows of one prompt and seed without ``sample_index`` get indices 0, 1, ...

The prompts come from any source (``--prompts``), as for any model. Nothing is
skipped silently: an expected image with no file is a failed row (``Missing: ...``),
a file that cannot be decoded a failed row (``Unreadable: ...``), and before the
first image the run prints one summary naming the missing, unreadable and extra
(unused) files; :meth:`ImagesModel.describe` records the same in run.json.
"""

from __future__ import annotations

import csv
import re
import string
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from glyphbench.core.errors import InputError
from glyphbench.core.io import slug
from glyphbench.core.paths import Contained
from glyphbench.core.registry import Options, Spec, register
from glyphbench.core.seeds import image_seed
from glyphbench.models.base import ImageNotMade, ImageRequest, ModelAdapter, RunContext
from glyphbench.models.layout import ImageLayout, SuiteLayout

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


def stem_ids(stem: str) -> list[str]:
    """The prompt ids (or their file-safe forms) a file stem may name: :func:`candidate_stems`
    read backwards.

    >>> stem_ids("p-1_s0_i2"), stem_ids("p-1_s3"), stem_ids("p-1")
    (['p-1_s0_i2', 'p-1_s0', 'p-1'], ['p-1_s3', 'p-1'], ['p-1'])
    >>> stem_ids("p_i1")
    ['p_i1', 'p']
    """
    names = [stem]
    indexed = re.fullmatch(r"(.+)_i\d+", stem)
    if indexed:
        names.append(indexed[1])
    for name in list(names):
        seeded = re.fullmatch(r"(.+)_s\d+", name)
        if seeded:
            names.append(seeded[1])
    return list(dict.fromkeys(names))


def image_files(folder: Path) -> list[Path]:
    """The entries directly in ``folder`` named as images (:data:`IMAGE_SUFFIXES`), sorted.

    Anything but a folder counts: a FIFO or socket named like an image is matched, and
    its row says it is not a regular file (``Unreadable: ...``), instead of "no image".
    """
    return [
        path
        for path in sorted(folder.iterdir())
        if not path.is_dir() and path.suffix.lower() in IMAGE_SUFFIXES
    ]


@dataclass
class Matching:
    """Which file holds each expected image, and what did not fit."""

    files: dict[ImageKey, Path] = field(default_factory=dict)
    #: Images that are one cell of a grid file: key -> (cell index, columns, rows).
    cells: dict[ImageKey, tuple[int, int, int]] = field(default_factory=dict)
    missing: list[ImageKey] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    unreadable: dict[ImageKey, str] = field(default_factory=dict)

    def summary(self, source: str) -> str:
        """One line for the console: counts, then the first names of each problem."""
        parts = [f"images: {len(self.files)} of {len(self.files) + len(self.missing)} found"]
        parts.append(f"in {source}")
        problems = [
            ("missing", [_key_text(key) for key in self.missing]),
            (
                "unreadable",
                [f"{shown_name(self.files[k].name)} ({why})" for k, why in self.unreadable.items()],
            ),
            ("not used (no image of this run by that name)", self.extra),
        ]
        notes = [f"{len(names)} {what}: {_shown(names)}" for what, names in problems if names]
        return " ".join(parts) + ("; " + "; ".join(notes) if notes else "; nothing missing")

    def describe(self) -> dict[str, Any]:
        """Counts, and the first :data:`RECORDED` names of each problem (for run.json)."""
        unreadable = [(shown_name(self.files[k].name), why) for k, why in self.unreadable.items()]
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


def shown_name(name: str) -> str:
    """A file name as text that can always be printed and stored: bytes that are not
    UTF-8 (kept by Python as lone surrogates) become ``\\xNN``.

    >>> shown_name("caf" + chr(0xDCE9) + ".png"), shown_name("café.png")
    ('caf\\\\xe9.png', 'café.png')
    """
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _key_text(key: ImageKey) -> str:
    return f"{key[0]} seed {key[1]} index {key[2]}"


def _shown(names: Sequence[str]) -> str:
    more = len(names) - SHOWN
    return ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def match_folder(folder: Path, expected: Sequence[ImageKey]) -> Matching:
    """Match the image files of ``folder`` to ``expected`` keys by :func:`candidate_stems`."""
    by_stem: dict[str, list[Path]] = defaultdict(list)
    for path in image_files(folder):
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
    matching.extra = [
        shown_name(p.name) for paths in by_stem.values() for p in paths if p not in used
    ]
    return matching


def match_manifest(manifest: Path, expected: Sequence[ImageKey]) -> Matching:
    """Match the rows of a ``prompt_id, path[, seed][, sample_index]`` CSV to ``expected``."""
    first_seed = expected[0][1] if expected else 0
    listed: dict[ImageKey, Path] = {}
    extra: list[str] = []
    contained = Contained(manifest.parent, source=manifest, column="path")
    for line, row in _manifest_rows(manifest):
        key = _manifest_key(row, first_seed, listed, manifest, line)
        contained(row["path"], f"line {line}")  # a listed file stays in the manifest's folder
        path = Path(row["path"])
        path = path if path.is_absolute() else manifest.parent / path
        if key in listed:
            extra.append(f"{shown_name(row['path'])} (line {line}: repeats {_key_text(key)})")
            continue
        listed[key] = path
    wanted = set(expected)
    extra += [
        f"{shown_name(path.name)} ({_key_text(key)})"
        for key, path in listed.items()
        if key not in wanted
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


# --------------------------------------------------------------------------- suite layouts


@dataclass(frozen=True)
class SuiteImages:
    """What a suite run tells ``images:`` to read a benchmark-layout folder."""

    suite: SuiteLayout
    #: prompt id -> (subset name, benchmark id)
    benchmark_ids: Mapping[str, tuple[str, str]]

    @property
    def layout(self) -> ImageLayout | None:
        return self.suite.layout


def _layout_regexes(suite: SuiteImages) -> dict[str, list[re.Pattern[str]]]:
    """Per selected subset, the regular expressions a file's relative stem must match.

    A pattern without ``{subset}`` is also tried under a folder named as the subset;
    when several selected subsets share it, only under those folders.
    """
    layout = suite.layout
    assert layout is not None
    options = dict(suite.suite.options)
    subsets = list(suite.suite.subsets)
    shared = "{subset}" not in layout.pattern and len(subsets) > 1
    regexes: dict[str, list[re.Pattern[str]]] = {}
    for subset in subsets:
        body = _pattern_regex(layout.pattern, subset, options)
        folder = re.escape(subset)
        forms = [f"{folder}/{body}"] if "{subset}" not in layout.pattern else []
        if not shared:
            forms.append(body)
        regexes[subset] = [re.compile(form, re.IGNORECASE) for form in forms]
    return regexes


def _pattern_regex(pattern: str, subset: str, options: Mapping[str, Any]) -> str:
    """``pattern`` as a regular expression: ``{id}`` and ``{k}`` captured, the rest literal."""
    parts = []
    for literal, name, _, _ in string.Formatter().parse(pattern):
        parts.append(re.escape(literal))
        if name is None:
            continue
        if name == "id":
            parts.append(r"(?P<id>[^/]+?)")
        elif name == "k":
            parts.append(r"(?P<k>\d+)")
        elif name == "subset":
            parts.append(re.escape(subset))
        else:
            parts.append(re.escape(str(options.get(name, ""))))
    return "".join(parts)


def _id_key(benchmark_id: str, numeric: bool) -> str:
    """A benchmark id as the benchmark compares it (``int()`` where its code parses ids)."""
    return str(int(benchmark_id)) if numeric and benchmark_id.strip().isdigit() else benchmark_id


def match_layout(
    folder: Path, expected: Sequence[ImageKey], suite: SuiteImages, first_seed: int
) -> Matching:
    """Match the files under ``folder`` (any depth) named in the suite's own layout.

    The layout names no seed: its files are the images of the run's first seed.
    """
    layout = suite.layout
    assert layout is not None
    regexes = _layout_regexes(suite)
    found: dict[tuple[str, str, int | None], list[Path]] = defaultdict(list)
    for path in sorted(folder.rglob("*")):
        if path.is_dir() or path.suffix.lower() not in layout.suffixes:
            continue
        stem = path.relative_to(folder).with_suffix("").as_posix()
        for subset, forms in regexes.items():
            hit = next((m for m in (r.fullmatch(stem) for r in forms) if m), None)
            if hit is not None:
                number = int(hit["k"]) if "k" in hit.groupdict() else None
                found[(subset, _id_key(hit["id"], layout.numeric_ids), number)].append(path)
    for paths in found.values():
        paths.sort(key=lambda p: layout.suffixes.index(p.suffix.lower()))
    counted = layout.grid is None and "{k}" in layout.pattern
    capacity = layout.grid[0] * layout.grid[1] if layout.grid is not None else 1
    matching = Matching()
    for key in expected:
        prompt_id, seed, index = key
        subset, benchmark_id = suite.benchmark_ids.get(prompt_id, ("", ""))
        number = index + layout.first if counted else None
        paths = found.get((subset, _id_key(benchmark_id, layout.numeric_ids), number), [])
        if seed != first_seed or not paths or (not counted and index >= capacity):
            matching.missing.append(key)
            continue
        matching.files[key] = paths[0]
        if layout.grid is not None:
            matching.cells[key] = (index, *layout.grid)
    return matching


def combine(folder: Path, own: Matching, layout: Matching) -> Matching:
    """glyphbench-named files first, the layout's for the rest; extras over the whole tree."""
    combined = Matching(files=dict(own.files))
    for key in own.missing:
        if key in layout.files:
            combined.files[key] = layout.files[key]
            if key in layout.cells:
                combined.cells[key] = layout.cells[key]
        else:
            combined.missing.append(key)
    used = set(combined.files.values())
    combined.extra = [
        shown_name(path.relative_to(folder).as_posix())
        for path in sorted(folder.rglob("*"))
        if not path.is_dir() and path.suffix.lower() in IMAGE_SUFFIXES and path not in used
    ]
    return combined


def nothing_found(source: Path, expected: Sequence[ImageKey], suite: SuiteImages | None) -> str:
    """The problem when no file names an image of the run: the names expected, with examples."""
    prompt_id, seed, index = expected[0]
    ours = f"{candidate_stems(prompt_id, seed, index, first_seed=seed)[0]}.png"
    names = f"glyphbench's <prompt_id>[_s<seed>][_i<index>].png|jpg|jpeg|webp (e.g. {ours})"
    if suite is not None and suite.layout is not None:
        subset, benchmark_id = suite.benchmark_ids.get(prompt_id, ("", prompt_id))
        options = dict(suite.suite.options)
        example = suite.layout.example(benchmark_id, index, subset, options)
        shared = "{subset}" not in suite.layout.pattern and len(suite.suite.subsets) > 1
        if shared:
            example = f"{subset}/{example}"
        title = suite.suite.title
        names = f"{title}'s {suite.layout.described} (e.g. {example}), or {names}"
    unused = _unused_files(source)
    return (
        f"no file in {source} names an image of this run ({len(expected)} expected); "
        f"expected names: {names}; {unused}"
    )


def _unused_files(source: Path) -> str:
    """``"2 files not used: a.png, b.png"`` for every image file under ``source``."""
    files = sorted(
        path.relative_to(source).as_posix()
        for path in source.rglob("*")
        if path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES
    )
    if not files:
        return f"no image file ({', '.join(IMAGE_SUFFIXES)}) in it at all"
    return f"{len(files)} file{'' if len(files) == 1 else 's'} not used: {_shown(files)}"


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

    problems: dict[Path, str | None] = {}
    for key, path in matching.files.items():
        if path not in problems:
            problems[path] = None
            try:
                kind = _not_regular(path)
                if kind:  # opening a FIFO would wait for a writer forever
                    problems[path] = f"not a regular file ({kind})"
                else:
                    with Image.open(path) as image:
                        image.load()
            except Exception as exc:  # any decoding failure makes the file unreadable
                problems[path] = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        if problems[path] is not None:
            matching.unreadable[key] = str(problems[path])


def grid_cell(image: Image.Image, cell: int, columns: int, rows: int) -> Image.Image | None:
    """Cell ``cell`` (row by row) of a grid image as OneIG cuts it; None for a black cell."""
    width, height = image.size[0] // columns, image.size[1] // rows
    row, column = divmod(cell, columns)
    box = (column * width, row * height, (column + 1) * width, (row + 1) * height)
    crop = image.crop(box).convert("RGB")
    return None if crop.getextrema() == ((0, 0), (0, 0), (0, 0)) else crop


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

    def match(self, context: RunContext) -> Matching:
        """Which file holds each image the run expects (all shards); nothing is decoded.

        A folder in which no file names an image of the run is an :class:`InputError`
        naming the expected names and the files found (the run checks this before it
        writes anything).
        """
        expected = list(context.expected)
        suite = _suite_images(context)
        if not self.source.is_dir():
            matching = match_manifest(self.source, expected)
            if expected and not matching.files:
                raise InputError(
                    self.spec,
                    f"no row of {self.source} names an image of this run ({len(expected)} "
                    f"expected, e.g. prompt_id {expected[0][0]!r} seed {expected[0][1]}); "
                    f"{len(matching.extra)} rows not used: {_shown(matching.extra)}",
                )
            return matching
        matching = match_folder(self.source, expected)
        if suite is not None and suite.layout is not None and matching.missing:
            first_seed = expected[0][1]
            layout = match_layout(self.source, matching.missing, suite, first_seed)
            matching = combine(self.source, matching, layout)
        if expected and not matching.files:
            raise InputError(self.spec, nothing_found(self.source, expected, suite))
        contained = Contained(self.source, source=self.source, column="file")
        for key, path in matching.files.items():  # a linked file stays in the folder too
            contained(str(path), _key_text(key))
        return matching

    def named_ids(self) -> set[str]:
        """Every prompt id (or file-safe form of one) the files or the manifest name."""
        if self.source.is_dir():
            return {name for path in image_files(self.source) for name in stem_ids(path.stem)}
        return {row["prompt_id"] for _, row in _manifest_rows(self.source)}

    def unused_files(self) -> str:
        """The files (or manifest rows) of the source, as one clause naming them as not used."""
        if self.source.is_dir():
            return _unused_files(self.source)
        rows = [f"{row['prompt_id']} (line {line})" for line, row in _manifest_rows(self.source)]
        return f"{len(rows)} rows not used: {_shown(rows) or 'the manifest has none'}"

    def bind_run(self, context: RunContext) -> None:
        """Match the files to every image the run expects (all shards) and check them."""

        expected = list(context.expected)
        self.matching = self.match(context)
        _check_readable(self.matching)
        self._by_seed = {
            image_seed(seed, pid, index): (pid, seed, index) for pid, seed, index in expected
        }

    def files_found(self, expected: Sequence[ImageKey]) -> dict[str, int]:
        """For the dry-run plan: of ``expected``, how many have a file (nothing decoded)."""
        if self.source.is_dir():
            matching = match_folder(self.source, list(expected))
        else:
            matching = match_manifest(self.source, list(expected))
        return {"found": len(matching.files), "missing": len(matching.missing)}

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
            return ImageNotMade(
                f"Unreadable: {shown_name(path.name)}: {self.matching.unreadable[key]}"
            )
        with Image.open(path) as image:
            if key not in self.matching.cells:
                return image.convert("RGB")
            cell, columns, rows = self.matching.cells[key]
            made = grid_cell(image, cell, columns, rows)
        if made is None:  # OneIG's padding for an image the model did not make
            return ImageNotMade(f"Missing: cell {cell} of {path.name} is black (no image)")
        return made

    def describe(self) -> dict[str, Any]:
        facts: dict[str, Any] = {"spec": self.spec, "is_control": False}
        facts["source"] = str(self.source)
        if self.matching is not None:
            facts["images"] = self.matching.describe()
        return facts


def _suite_images(context: RunContext) -> SuiteImages | None:
    """The suite the run belongs to, for reading its benchmark's layout (None: no suite)."""
    if context.suite_layout is None:
        return None
    return SuiteImages(context.suite_layout, context.benchmark_ids)


register(
    "models",
    "images",
    options=ImagesOptions,
    target="required",
    usage="images:DIR|MANIFEST.csv",
    summary="Images made elsewhere, read from a folder (<prompt_id>[_s<seed>][_i<index>].png, or "
    "in a suite run the benchmark's own naming) or a CSV manifest (prompt_id, path[, seed]).",
)(ImagesModel)
