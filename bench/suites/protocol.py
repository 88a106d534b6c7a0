"""A run's suite: its config defaults, its prompts and its protocol card.

* :func:`expand_config` fills a run config's unset reader, ``seeds``,
  ``images_per_prompt`` and ``seed_policy`` (``benchmark``) from the suite's
  protocol. The suite's reader is the benchmark's; when it is not available here
  (not registered, or a package it needs is missing) the config fails to load
  with one line saying so, unless the user names another reader with ``--ocr``;
  then the card records the deviation.
* :func:`suite_prompts` loads the benchmark's prompts for a run.
* :func:`protocol_card` is what run.json records under ``protocol``: the reader
  (spec, the engines and versions that read the images, the instruction), the
  resolution, seeds and the seed policy, images per prompt, normalisation and the
  scorer with its reference, the versions and models the benchmark pins its reader
  to (with what is installed), plus every deviation from the benchmark's protocol:
  a different reader spec, and also a different reader package version or model
  (:func:`pin_problems`). Two results are
  comparable when :func:`comparable_part` of their cards is equal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.scoring.table import METRICS
from glyphbench.suites.base import resolve_suite

if TYPE_CHECKING:
    import pandas as pd

    from glyphbench.prompts.schema import PromptSet
    from glyphbench.suites.base import ReaderPin, SeedRule, SuiteSelection


class _Normalization(Protocol):
    def model_dump(self) -> dict[str, Any]: ...


class _Read(Protocol):
    @property
    def reader(self) -> str: ...


class _Generate(Protocol):
    @property
    def seeds(self) -> Sequence[int]: ...
    @property
    def images_per_prompt(self) -> int: ...
    @property
    def seed_policy(self) -> str | None: ...


class _Score(Protocol):
    @property
    def normalization(self) -> _Normalization: ...


class RunConfig(Protocol):
    """What a suite reads of a run config (:class:`glyphbench.run.config.RunConfig`).

    The run config sits above the suites (it expands a suite's protocol when it
    loads), so the suites take it by shape rather than importing it.
    """

    @property
    def suite(self) -> Any: ...
    @property
    def read(self) -> _Read: ...
    @property
    def generate(self) -> _Generate: ...
    @property
    def score(self) -> _Score: ...


#: Card fields that must be equal for two runs' numbers to be compared.
COMPARED_FIELDS = (
    "suite",
    "reader",
    "reader_engines",
    "instruction",
    "seeds",
    "seed_policy",
    "images_per_prompt",
    "normalisation",
    "scorer",
    "image_path",
)


def suite_spec(entry: Any) -> str | None:
    """The spec of a config's ``suite`` value (a string or a mapping with ``spec``)."""
    if isinstance(entry, str):
        return entry
    if isinstance(entry, Mapping) and entry.get("spec"):
        return str(entry["spec"])
    spec = getattr(entry, "spec", None)
    return str(spec) if spec else None


def expand_config(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a run config mapping in sections) with the suite's protocol filling what
    is unset: ``read.reader``, ``generate.seeds``, ``.images_per_prompt``, ``.seed_policy``.

    Problems are ValueErrors (the config loader turns them into one-line errors).
    """

    spec = suite_spec(data.get("suite"))
    if spec is None:
        return data
    try:
        selection = resolve_suite(spec)
    except InputError as exc:
        raise ValueError(exc.problem) from None
    prompts, read, generate = (_section(data, name) for name in ("prompts", "read", "generate"))
    if prompts.get("source") not in (None, "", "default"):
        raise ValueError(
            f"suite {selection.suite.name} brings its own prompts; drop prompts/--prompts"
        )
    protocol = selection.suite.protocol
    if not read.get("reader"):
        read["reader"] = _suite_reader(selection)
    if generate.get("seeds") is None:
        generate["seeds"] = list(protocol.seeds)
    if generate.get("images_per_prompt") is None:
        generate["images_per_prompt"] = protocol.images_per_prompt
    if generate.get("seed_policy") is None:
        generate["seed_policy"] = "benchmark"
    if image_path(selection) is not None and protocol.grid is not None:
        cells = protocol.grid[0] * protocol.grid[1]
        if generate["images_per_prompt"] != cells:
            raise ValueError(
                f"suite {selection.spec}: image_path={image_path(selection)} reads a prompt's "
                f"images as one {protocol.grid[0]}x{protocol.grid[1]} grid of {cells}; "
                f"images_per_prompt is {generate['images_per_prompt']}"
            )
    out = dict(data)
    for name, section in (("read", read), ("generate", generate)):
        if isinstance(data.get(name, {}), dict):
            out[name] = section
    return out


def _suite_reader(selection: SuiteSelection) -> str:
    """The benchmark's reader, when it can run here (else a ValueError saying what to do)."""
    reader = selection.suite.protocol.reader
    problem = _unavailable(reader)
    if problem:
        raise ValueError(
            f"suite {selection.suite.name} reads with the benchmark's reader "
            f"{reader!r}, which is not available here ({problem}); "
            "pass --ocr SPEC to read with another reader (the protocol card records it)"
        )
    return reader


def _section(data: Mapping[str, Any], name: str) -> dict[str, Any]:
    """A copy of section ``name`` of a config mapping ({} when absent or not a mapping)."""
    section = data.get(name)
    return dict(section) if isinstance(section, Mapping) else {}


def image_path(selection: SuiteSelection | None) -> str | None:
    """The benchmark image path the selection reads through (``oneig``), or None.

    None (the default, ``image_path=as-generated``): each stored image is read as it is.

    >>> from glyphbench.suites.base import resolve_suite
    >>> image_path(resolve_suite("oneig-text:en?image_path=oneig")), image_path(None)
    ('oneig', None)
    """
    value = getattr(selection.options, "image_path", None) if selection is not None else None
    return str(value) if value not in (None, "as-generated") else None


def image_seed_rule(seed_policy: str | None, suite: Any) -> SeedRule | None:
    """How the run seeds each image's generator: the suite's rule under the benchmark policy.

    None: glyphbench's per-image seeds (:func:`glyphbench.core.seeds.image_seed`).
    """
    if seed_policy != "benchmark":
        return None
    selection = selection_of(suite)
    return selection.suite.protocol.seed_rule if selection is not None else None


def _unavailable(reader: str) -> str | None:
    """Why the reader ``reader`` cannot run here (not registered, a package missing), or None."""

    try:
        resolved = PLUGINS.resolve("readers", reader)
    except InputError as exc:
        return exc.problem
    return resolved.plugin.unavailable()


def selection_of(suite: Any) -> SuiteSelection | None:
    """The suite selection of a config's ``suite`` entry (None: no suite)."""

    spec = suite_spec(suite)
    return resolve_suite(spec) if spec else None


def suite_prompts(suite: Any) -> PromptSet:
    """Every prompt of a config's suite entry (before where/sample/limit)."""
    selection = selection_of(suite)
    if selection is None:
        raise ValueError("the config names no suite")
    prompt_set = selection.load_prompts(getattr(suite, "data", None))
    prompt_set.meta["benchmark_prompts"] = len(prompt_set)
    return prompt_set


# --------------------------------------------------------------------------- the card


def protocol_card(
    config: RunConfig,
    *,
    prompt_count: int | None = None,
    benchmark_prompts: int | None = None,
    rows: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """The run's protocol card (see the module docstring); ``rows`` add what was observed."""
    selection = selection_of(config.suite)
    card: dict[str, Any] = {
        "suite": _suite_part(selection, config.suite),
        "reader": config.read.reader,
        "reader_engines": _engines(rows),
        "instruction": _instruction(selection, config.read.reader),
        "resolution": {
            "benchmark": _size(selection.suite.protocol.resolution) if selection else None,
            "images": _sizes(rows),
        },
        "seeds": list(config.generate.seeds),
        "seed_policy": _seed_policy(selection, config.generate.seed_policy),
        "images_per_prompt": config.generate.images_per_prompt,
        "prompts": {"selected": prompt_count, "benchmark": benchmark_prompts},
        "normalisation": _normalisation(selection, config.score.normalization),
        "scorer": _scorer(selection),
        "reader_pins": _pins(selection),
    }
    if image_path(selection) is not None:  # absent by default: older cards stay comparable
        card["image_path"] = _image_path_note(selection)
    card["deviations"] = deviations(card, selection)
    return card


def comparable_part(card: Mapping[str, Any]) -> dict[str, Any]:
    """The fields two cards must share for their numbers to be compared.

    >>> a = {"reader": "easyocr", "seeds": [0], "deviations": ["x"]}
    >>> comparable_part(a) == comparable_part({**a, "deviations": []})
    True
    """
    part = {key: card.get(key) for key in COMPARED_FIELDS}
    suite = part.get("suite")
    if isinstance(suite, Mapping):  # the subsets and data folder may differ between runs
        part["suite"] = suite.get("name")
    scorer = part.get("scorer")
    if isinstance(scorer, Mapping):  # the scorers' sources, whichever subsets ran
        part["scorer"] = sorted(set((scorer.get("references") or {}).values()))
    return part


def deviations(card: Mapping[str, Any], selection: SuiteSelection | None) -> list[str]:
    """Where the run departs from the benchmark's protocol, one sentence each."""
    if selection is None:
        return []
    protocol = selection.suite.protocol
    found = []
    if card["reader"] != protocol.reader:
        found.append(
            f"reader {card['reader']} instead of the benchmark's {protocol.reader} "
            f"({protocol.reader_note}): numbers are not comparable with published ones"
        )
    if card["images_per_prompt"] != protocol.images_per_prompt:
        found.append(
            f"{card['images_per_prompt']} image(s) per prompt instead of "
            f"{protocol.images_per_prompt}"
        )
    if card["reader"] == protocol.reader:
        found.extend(pin_problems(protocol.reader_pins, card["reader_engines"], card["reader"]))
    if tuple(card["seeds"]) != protocol.seeds:
        found.append(f"seeds {card['seeds']} instead of {list(protocol.seeds)}")
    found.extend(_seed_deviations(card.get("seed_policy"), protocol.seed_rule, protocol))
    benchmark = card["resolution"]["benchmark"]
    other = [size for size in card["resolution"]["images"] if benchmark and size != benchmark]
    if other:
        found.append(f"images of {', '.join(other)} instead of {benchmark}")
    prompts = card["prompts"]
    if prompts["selected"] is not None and prompts["benchmark"] not in (None, prompts["selected"]):
        found.append(
            f"{prompts['selected']} of the selection's {prompts['benchmark']} prompts "
            "(--limit/--sample/--where): not the full benchmark"
        )
    return found


def pin_problems(pins: Sequence[ReaderPin], engines: Sequence[str], spec: str) -> list[str]:
    """Where the reader that read (``engines``, else the installed packages and ``spec``)
    is not the version or model the benchmark pins.

    >>> from glyphbench.suites.base import ReaderPin
    >>> pin = ReaderPin("paddleocr", "2.10", source="i1")
    >>> pin_problems([pin], ["paddleocr paddleocr 2.10.0; lang en"], "paddleocr")
    []
    >>> pin_problems([pin], ["paddleocr paddleocr 3.0.3; lang en"], "paddleocr")
    ['reader paddleocr 3.0.3 where the benchmark pins 2.10 (i1)']
    """
    found: list[str] = []
    for pin in pins:
        observed: list[str | None] = list(engines) or [None]
        for engine in observed:
            problem = _pin_problem(pin, engine, spec)
            if problem and problem not in found:
                found.append(problem)
    return found


def _pin_problem(pin: ReaderPin, engine: str | None, spec: str) -> str | None:
    """One pin against one observed engine string, or (``engine`` None) against this machine."""
    if pin.version:
        seen = _version_in(pin.package, engine) if engine else installed_version(pin.package)
        if seen is None and engine is not None:
            return (
                f"reader {engine!r} names no {pin.package} version; the benchmark pins "
                f"{pin.package} {pin.version} ({pin.source})"
            )
        if seen is not None and not version_matches(seen, pin.version):
            where = "reader" if engine else "installed:"
            return (
                f"{where} {pin.package} {seen} where the benchmark pins {pin.version} "
                f"({pin.source})"
            )
    if pin.model and pin.model not in (engine if engine is not None else spec):
        return (
            f"reader model: the benchmark reads with {pin.model} ({pin.source}); this run's "
            f"reader is {engine or spec!r}"
        )
    return None


def version_matches(seen: str, pinned: str) -> bool:
    """``seen`` is ``pinned`` or a release of it (``2.10.0`` matches ``2.10``, not ``2.1``).

    >>> version_matches("2.10.0", "2.10"), version_matches("2.1.0", "2.10")
    (True, False)
    """
    return seen == pinned or seen.startswith(pinned + ".")


def _version_in(package: str, engine: str) -> str | None:
    match = re.search(rf"\b{re.escape(package)} v?(\d[\w.+-]*)", engine)
    return match.group(1).rstrip(".;,") if match else None


def installed_version(package: str) -> str | None:
    """The installed distribution's version, or None (not installed, or not a package)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _pins(selection: SuiteSelection | None) -> list[dict[str, Any]]:
    if selection is None:
        return []
    return [
        {
            "package": pin.package,
            "version": pin.version or None,
            "model": pin.model or None,
            "source": pin.source,
            "installed": installed_version(pin.package) if pin.version else None,
        }
        for pin in selection.suite.protocol.reader_pins
    ]


def _seed_policy(selection: SuiteSelection | None, policy: str | None) -> dict[str, Any] | None:
    if selection is None:
        return None
    protocol = selection.suite.protocol
    return {"policy": policy, "benchmark_rule": protocol.seed_rule, "source": protocol.seed_source}


def _seed_deviations(policy: Mapping[str, Any] | None, rule: SeedRule, protocol: Any) -> list[str]:
    chosen = (policy or {}).get("policy")
    if rule == "fixed" and chosen != "benchmark":
        return [
            "each image's seed derived from (seed, prompt, sample) (--seed-policy glyphbench) "
            f"where the benchmark seeds every image with the seed itself ({protocol.seed_source})"
        ]
    if rule == "batch":
        return [
            "the benchmark draws a prompt's samples in one batch from one generator "
            f"({protocol.seed_source}); glyphbench seeds each image on its own"
        ]
    return []


def _suite_part(selection: SuiteSelection | None, entry: Any) -> dict[str, Any] | None:
    if selection is None:
        return None
    suite = selection.suite
    return {
        "name": suite.name,
        "title": suite.title,
        "spec": selection.spec,
        "subsets": [s.name for s in selection.subsets],
        "data": getattr(entry, "data", None),
        "paper": suite.paper,
        "headline": suite.headline,
        "benchmark_reader": suite.protocol.reader,
        "file_naming": suite.protocol.file_naming,
        "grid": _size(suite.protocol.grid),
        "generation": suite.protocol.generation,
    }


def _image_path_note(selection: SuiteSelection | None) -> str | None:
    """What the reader read, in the card's words (the suite's options say it)."""
    path = image_path(selection)
    if path is None or selection is None:
        return None
    note = getattr(selection.options, "image_path_note", None)
    return str(note()) if callable(note) else path


def _instruction(selection: SuiteSelection | None, reader: str) -> str | None:
    """The reader's instruction: the benchmark's when its own reader reads, else none known."""
    if selection is not None and reader == selection.suite.protocol.reader:
        return selection.suite.protocol.instruction or None
    return None


def _normalisation(
    selection: SuiteSelection | None, normalization: _Normalization
) -> dict[str, Any]:
    glyphbench = normalization.model_dump()
    benchmark = selection.suite.protocol.normalisation if selection else None
    return {"glyphbench": glyphbench, "benchmark": benchmark}


def _scorer(selection: SuiteSelection | None) -> dict[str, Any]:
    families = {"glyphbench": "glyphbench"}
    references = {}
    if selection is not None:
        families.update(selection.families)
        for family in dict.fromkeys(selection.families.values()):
            records = METRICS.of([family])
            references[family] = next((m.reference for m in records if m.reference), "")
    return {"families": families, "references": references}


def _engines(rows: pd.DataFrame | None) -> list[str]:
    if rows is None or "ocr_engine" not in rows:
        return []
    pairs = rows[["ocr_engine", "ocr_version"]].dropna().astype(str).drop_duplicates()
    return sorted(f"{engine} {version}" for engine, version in pairs.itertuples(index=False))


def _sizes(rows: pd.DataFrame | None) -> list[str]:
    if rows is None or "width" not in rows:
        return []
    sizes = rows[["width", "height"]].dropna().drop_duplicates()
    return sorted(f"{int(w)}x{int(h)}" for w, h in sizes.itertuples(index=False))


def _size(size: tuple[int, int] | None) -> str | None:
    return f"{size[0]}x{size[1]}" if size else None
