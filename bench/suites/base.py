"""The suite record: what a published benchmark fixes, and how glyphbench runs it.

A :class:`Suite` bundles a benchmark's prompt loader (its own files, read from
``--data DIR`` or its hub dataset), its :class:`Protocol` (images per prompt,
seeds, resolution, file naming, grid tiling, the reader it reads with and the
instruction that reader gets) and its scorer: one metric family per
:class:`Subset` (``longtext`` for English, ``longtext-zh`` for Chinese) whose
headline aggregate is computed by the metric table exactly as the original does.

A suite is a ``suites`` plug-in (:func:`register_suite`); the spec
``NAME[:SUBSET[,SUBSET]][?option=value]`` selects subsets: a subset is chosen by
its name, an alias, or one ``/``-separated part of its name (``cvtg:2`` is every
type's 2-region file, ``cvtg:CVTG-Style`` every region count of that type).
Resolving a spec gives a :class:`SuiteSelection`, which loads the prompts and
names the family of each subset.

>>> suite = Suite("toy", "Toy", "a doctest suite", (Subset("en", "longtext"),
...               Subset("zh", "longtext-zh", aliases=("chinese",))),
...               Protocol(4, (0,), reader="easyocr", reader_note="any"),
...               headline="longtext_text_score", load_rows=lambda *args: [])
>>> [s.name for s in suite.select("chinese")], [s.name for s in suite.select("")]
(['zh'], ['en', 'zh'])
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS, NoOptions, Options, Spec
from glyphbench.models.layout import ImageLayout, SuiteLayout
from glyphbench.prompts.schema import PromptSet, content_hash

if TYPE_CHECKING:
    import pandas as pd

#: How a results row's reading becomes the benchmark's "read" cell: the reader's text
#: as it is (a VLM's answer), its pieces one per line (OCR boxes, stripped, in reading
#: order), or its raw detections one per line (``boxes``: each box's text as the engine
#: gave it, spaces kept, in the engine's own order; the pieces where a reading kept none).
ReadCell = Literal["text", "lines", "boxes"]

#: How the benchmark seeds each image's generator (``--seed-policy benchmark``):
#: ``fixed``: every image with the run seed itself (TextCrafter, LeX-Art); ``batch``:
#: one generator draws all of a prompt's samples in one batch (AnyText), which a
#: per-image generator cannot reproduce; ``model``: the benchmark leaves seeds to the
#: model's script (LongText, OneIG), so glyphbench's per-image seeds are used.
SeedRule = Literal["fixed", "batch", "model"]


@dataclass(frozen=True)
class ReaderPin:
    """A package version or model the benchmark's reader is pinned to, with its source.

    ``version`` matches an observed version equal to it or starting with it and a dot
    (``2.10`` matches ``2.10.0``); ``model`` must appear in the reader's version string.
    """

    package: str
    version: str = ""
    model: str = ""
    source: str = ""


@dataclass(frozen=True)
class Subset:
    """One part of a benchmark scored by one metric family (a language, a file, a level)."""

    name: str
    family: str
    aliases: tuple[str, ...] = ()
    #: Files of the benchmark this subset is read from, relative to the data folder.
    files: tuple[str, ...] = ()
    #: Prompt ids are ``<subset>-<benchmark id>``; False: the benchmark id alone.
    prefix_ids: bool = True

    @property
    def id_prefix(self) -> str:
        """The subset in glyphbench prompt ids (``CVTG-Style/2`` -> ``CVTG-Style-2``)."""
        return re.sub(r"[^A-Za-z0-9._=+-]", "-", self.name)

    def matches(self, wanted: str) -> bool:
        """True when ``wanted`` names this subset, an alias or one part of its name.

        >>> Subset("CVTG-Style/2", "cvtg").matches("2"), Subset("en", "x").matches("EN")
        (True, True)
        """
        key = wanted.strip().lower()
        names = {self.name.lower(), *(a.lower() for a in self.aliases)}
        return key in names or key in self.name.lower().split("/")


@dataclass(frozen=True)
class Protocol:
    """How the benchmark makes and reads its images (the parts a result depends on)."""

    images_per_prompt: int
    #: The seeds the benchmark fixes; glyphbench runs them as its ``seeds``.
    seeds: tuple[int, ...]
    #: The benchmark's default reader spec (``vlm:...?preset=...``, ``paddleocr``, ...).
    reader: str
    #: What the benchmark itself reads with (model, version, settings), in words.
    reader_note: str
    #: The reader's instruction (VLM readers), as the benchmark gives it.
    instruction: str = ""
    read_cell: ReadCell = "lines"
    #: (width, height) the benchmark generates at; None: the model's own size.
    resolution: tuple[int, int] | None = None
    #: How the benchmark names its image files.
    file_naming: str = ""
    #: (columns, rows) when the benchmark tiles a prompt's images into one grid image.
    grid: tuple[int, int] | None = None
    #: Other generation settings the benchmark fixes (steps, guidance, prompt suffix).
    generation: str = ""
    #: The scorer's text rules in one line (details in docs/suites.md).
    normalisation: str = ""
    #: Versions and models the benchmark's reader is pinned to (flagged when they differ).
    reader_pins: tuple[ReaderPin, ...] = ()
    #: The reader's longer answer (its second piece) is read where the benchmark's raw
    #: truth cell has more than this many whitespace-separated words (OneIG: 60).
    long_answer_words: int | None = None
    #: How the benchmark seeds each image (see :data:`SeedRule`), and where it says so.
    seed_rule: SeedRule = "model"
    seed_source: str = ""


#: Reads one subset: (data folder, subset, suite options) -> rows with at least
#: ``benchmark_id``, ``prompt`` and ``text`` (the benchmark's expected cell).
RowLoader = Callable[[Path, Subset, Any], list[dict[str, Any]]]


@dataclass(frozen=True)
class Suite:
    """A benchmark glyphbench runs and scores as its own code does (see the module docstring)."""

    name: str
    title: str
    summary: str
    subsets: tuple[Subset, ...]
    protocol: Protocol
    #: The benchmark's headline metric (a metric of every subset's family).
    headline: str
    load_rows: RowLoader
    #: What ``--data`` must point at, in words.
    data_help: str = ""
    #: A hub dataset id holding the benchmark's files, where one exists.
    hub: str | None = None
    #: The paper, and the scorer's source (repository@commit path).
    paper: str = ""
    scorer: str = ""
    options: type[Options] = NoOptions
    #: The benchmark reports one number over all selected subsets (pooled), not per subset.
    pools_subsets: bool = False
    #: Further groups the benchmark's tables report, each pooled over its subsets (name,
    #: subsets): CVTG-2K's per-region-count columns pool the CVTG and CVTG-Style files of
    #: that count. A report shows a group when all its subsets are present.
    report_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Subsets selected when the spec names none (default: every subset).
    default_subsets: tuple[str, ...] = ()
    #: How the benchmark's own folders name their images (``images:DIR`` reads them).
    layout: ImageLayout | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    def select(self, target: str) -> list[Subset]:
        """The subsets ``target`` names (comma-separated), in the suite's order."""
        wanted = [part for part in target.split(",") if part.strip()]
        if not wanted:
            wanted = list(self.default_subsets)
        if not wanted:
            return list(self.subsets)
        chosen = [s for s in self.subsets if any(s.matches(w) for w in wanted)]
        unknown = [w for w in wanted if not any(s.matches(w) for s in self.subsets)]
        if unknown:
            names = ", ".join(s.name for s in self.subsets)
            raise InputError(
                None, f"suite {self.name}: unknown subset {unknown[0]!r}; known: {names}"
            )
        return chosen

    def family_of(self, subset: str) -> str:
        for each in self.subsets:
            if each.name == subset:
                return each.family
        raise KeyError(f"suite {self.name} has no subset {subset!r}")

    @property
    def usage(self) -> str:
        return f"{self.name}[:{'|'.join(s.name for s in self.subsets)}]"


@dataclass(frozen=True)
class SuiteSelection:
    """A resolved suite spec: the suite, the chosen subsets and the suite's options."""

    suite: Suite
    subsets: tuple[Subset, ...]
    options: Options
    spec: str

    @property
    def families(self) -> dict[str, str]:
        """Subset name -> metric family."""
        return {subset.name: subset.family for subset in self.subsets}

    def layout(self) -> SuiteLayout:
        """What ``images:`` needs to read a folder named as this benchmark names its files."""
        return SuiteLayout(
            title=self.suite.title,
            layout=self.suite.layout,
            subsets=tuple(subset.name for subset in self.subsets),
            options=self.options.model_dump(),
        )

    def load_prompts(self, data: str | Path | None) -> PromptSet:
        """The selected subsets' prompts as a glyphbench prompt set (see :func:`prompt_set`)."""
        folder = locate_data(self.suite, data)
        return prompt_set(self, folder)


def register_suite(suite: Suite, *, replace: bool = False) -> Suite:
    """Register ``suite`` as a ``suites`` plug-in (call at import time of its module).

    A name another module registered already is a :class:`~glyphbench.core.registry.DuplicateName`
    error unless ``replace=True``.
    """
    module = sys._getframe(1).f_globals.get("__name__", "")

    def factory(spec: Spec, options: Options) -> SuiteSelection:
        subsets = tuple(suite.select(spec.target))
        return SuiteSelection(suite, subsets, options, spec.text)

    PLUGINS.register(
        "suites",
        suite.name,
        options=suite.options,
        summary=f"{suite.title}: {suite.summary}",
        target="optional",
        usage=suite.usage,
        module=module,
        replace=replace,
    )(factory)
    return suite


def resolve_suite(spec: str) -> SuiteSelection:
    """The selection a suite spec names; unknown suites, subsets or options: InputError.

    >>> resolve_suite("longtext:zh").families
    {'zh': 'longtext-zh'}
    """
    selection: SuiteSelection = PLUGINS.create("suites", spec)
    return selection


# --------------------------------------------------------------------------- data


def locate_data(suite: Suite, data: str | Path | None) -> Path:
    """The folder holding the benchmark's files: ``data``, else the suite's hub dataset.

    Without ``data`` and without a reachable hub the problem is one line naming
    what to download and where to point ``--data``.
    """
    if data is not None and str(data) != "":
        folder = Path(data).expanduser()
        if not folder.exists():
            raise InputError(
                folder,
                f"suite {suite.name}: data folder not found (looked in {folder.resolve()}); "
                f"give {suite.data_help} as --data DIR or the config's suite.data",
            )
        return folder
    if suite.hub is None:
        raise InputError(
            None, f"suite {suite.name} needs --data DIR ({suite.data_help}); it has no hub dataset"
        )
    return _download(suite)


def _download(suite: Suite) -> Path:
    """A local snapshot of the suite's hub dataset (one-line error when offline)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise InputError(
            None,
            f"suite {suite.name}: without --data the hub dataset {suite.hub} is needed, "
            "and huggingface_hub is not installed",
        ) from None
    try:
        return Path(snapshot_download(repo_id=str(suite.hub), repo_type="dataset"))
    except Exception as exc:  # offline, unknown repo, gated: all mean "give --data"
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            None,
            f"suite {suite.name}: hub dataset {suite.hub} is unreachable ({first[:120]}); "
            f"download it and pass --data DIR ({suite.data_help})",
        ) from None


def find_file(folder: Path, names: Sequence[str], suite: str) -> Path:
    """The first of ``names`` (relative paths, compared case-insensitively) under ``folder``.

    Benchmarks spell their folders inconsistently (CVTG-2K's README says
    ``CVTG-style``, its code ``CVTG-Style``), so each path part is matched without case.
    """
    for name in names:
        found = _case_insensitive(folder, Path(name).parts)
        if found is not None:
            return found
    raise InputError(folder, f"suite {suite}: none of {', '.join(names)} in this folder")


def _case_insensitive(folder: Path, parts: Sequence[str]) -> Path | None:
    current = folder
    for part in parts:
        exact = current / part
        if exact.exists():
            current = exact
            continue
        if not current.is_dir():
            return None
        match = [p for p in current.iterdir() if p.name.lower() == part.lower()]
        if not match:
            return None
        current = match[0]
    return current


def read_json(path: Path, suite: str) -> Any:
    """A benchmark's JSON file; malformed JSON is a one-line InputError with its line."""
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise InputError(
            path, f"suite {suite}: malformed JSON: {exc.msg}", line=exc.lineno
        ) from None


def require(record: Mapping[str, Any], keys: Iterable[str], where: Path, line: int | None) -> None:
    """Every key present in one benchmark record, else a one-line InputError."""
    missing = [key for key in keys if key not in record]
    if missing:
        raise InputError(where, f"record lacks {', '.join(map(repr, missing))}", line=line)


def quoted_spans(prompt: str) -> list[str]:
    """Spans between ASCII single quotes, shortest match (CVTG-2K's and MARIO's rule).

    >>> quoted_spans("a sign 'OPEN' and 'Fresh Bread'")
    ['OPEN', 'Fresh Bread']
    """
    return re.findall(r"'(.*?)'", prompt)


# --------------------------------------------------------------------------- prompts


def prompt_set(selection: SuiteSelection, folder: Path) -> PromptSet:
    """Every selected subset's rows as one glyphbench prompt set.

    Prompt ids are ``<subset>-<benchmark id>`` (unique across subsets, stable across
    runs); the benchmark's own id is kept in ``benchmark_id``. ``group`` holds the
    subset (so reports slice by it) and every row records its ``suite`` and
    ``suite_subset``. Text attributes are computed as for any source.
    """
    import pandas as pd

    suite = selection.suite
    frames = []
    for subset in selection.subsets:
        rows = suite.load_rows(folder, subset, selection.options)
        frame = pd.DataFrame(rows)
        if frame.empty:
            continue
        frame["benchmark_id"] = frame["benchmark_id"].astype(str)
        _check_unique_ids(frame["benchmark_id"], selection.spec, subset.name, folder)
        prefix = subset.id_prefix + "-" if subset.prefix_ids else ""
        frame["prompt_id"] = prefix + frame["benchmark_id"]
        frame["suite"] = suite.name
        frame["suite_subset"] = subset.name
        frame["group"] = subset.name
        frames.append(frame)
    if not frames:
        raise InputError(folder, f"suite {selection.spec}: no prompts in the selected subsets")
    frame = pd.concat(frames, ignore_index=True)
    frame["source"] = f"suite:{selection.spec}"
    frame = _with_attributes(frame)
    return PromptSet(
        frame,
        source=f"suite:{selection.spec}",
        version=f"{suite.name}-{_digest(frame)}",
        meta={"suite": suite.name, "subsets": [s.name for s in selection.subsets]},
    )


def _check_unique_ids(ids: Any, spec: str, subset: str, folder: Path) -> None:
    """Refuse a subset whose file gives one benchmark id to two prompts (a line pasted
    twice, two files merged): their images would share one name and one seed.

    >>> import pandas as pd
    >>> from glyphbench.core.errors import InputError
    >>> try:
    ...     _check_unique_ids(pd.Series(["0", "1", "0"]), "longtext:en", "en", Path("lt"))
    ... except InputError as exc:
    ...     print(exc.problem.split(": ")[1])
    benchmark id '0' is given to prompts 1 and 3 of the subset's file; each id must appear once
    """
    repeated = ids[ids.duplicated(keep=False)]
    if repeated.empty:
        return
    first = repeated.iloc[0]
    rows = [int(position) + 1 for position in (ids == first).to_numpy().nonzero()[0][:2]]
    raise InputError(
        folder,
        f"suite {spec}, subset {subset}: benchmark id {first!r} is given to prompts "
        f"{rows[0]} and {rows[1]} of the subset's file; each id must appear once",
    )


def limit_per_subset(prompt_set: PromptSet, limit: int | None) -> PromptSet:
    """The first ``limit`` prompts of every subset of a suite's selection (``--limit``).

    A benchmark reports each subset (or pools them), so a limited run takes from
    every selected subset: ``--suite longtext --limit 8`` runs 8 English and 8
    Chinese prompts, not the first 8 of the English file alone. The selection's
    record says so (``limit_per: subset``).
    """

    if limit is None:
        return prompt_set
    if limit < 0:
        raise InputError(None, f"--limit must be >= 0, got {limit}")
    frame = prompt_set.frame
    kept = frame.groupby("suite_subset", sort=False).head(limit) if len(frame) else frame
    meta = dict(prompt_set.meta)
    previous = meta.get("selection")
    selection = dict(previous) if isinstance(previous, dict) else {}
    meta["selection"] = {**selection, "limit": limit, "limit_per": "subset"}
    return PromptSet(
        kept.reset_index(drop=True), source=prompt_set.source, version=prompt_set.version, meta=meta
    )


def _with_attributes(frame: pd.DataFrame) -> pd.DataFrame:
    try:
        # --help loads this module; attributes (pandas) load with a table
        from glyphbench.prompts.attributes import compute_attributes

        return compute_attributes(frame)
    except ImportError:  # the prompts extra is optional: attributes stay unknown
        return frame


def _digest(frame: pd.DataFrame) -> str:
    return content_hash(frame)[:12]
