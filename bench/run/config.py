"""The run configuration: what to generate, how, and where to put it.

A run is described by one YAML file (``glyphbench run --config RUN.yaml``) or by
command-line flags; both become the same typed :class:`RunConfig`. Example::

    run_id: study-v1            # optional; default "run-" + a hash of the config
    out: runs/study-v1          # output folder (run.json, images/, results.parquet)
    prompts: default            # prompt source spec, see glyphbench.prompts.load_prompt_set
    sample: 40                  # optional stratified sample size
    stratify: [prompt_type, group]
    sampler: stratified         # optional sampler spec, e.g. stratified?floor=2
    limit: null                 # optional: first N prompts after sampling
    where: null                 # optional filter passed to glyphbench.prompts.select
    seeds: [0]
    seed_policy: benchmark      # suites only: benchmark (default) | glyphbench (docs/suites.md)
    images_per_prompt: 1
    batch_size: 4
    read_workers: 0             # reader processes the run starts (0: read in the run's thread)
    read_backlog: null          # images that may wait for them (default 4 batches per process)
    ocr: rapidocr               # reader (OCR engine) spec, e.g. easyocr?gpu=0 (default rapidocr)
    device: auto                # auto | cpu | cuda | cuda:1 (accelerate overrides it)
    normalization: {keep_case: false, strip_punct: false}   # also nfkc, fold_width
    models:
      - control:render          # a bare spec string ...
      - spec: diffusers:stabilityai/stable-diffusion-xl-base-1.0
        name: sdxl-base         # ... or a mapping with a label and options
        options: {steps: 30, guidance: 5.0}
    api:                        # hosted-API models only (docs/apis.md); not in the identity
      max_usd: 20               # the run's spending cap (needs a price for every api model)
      prices: {"api:openai/gpt-image-1": 0.04}   # USD per image, by label or spec
      cache_dir: null           # response cache (default <out>/api-cache)

Model options: an entry's ``options`` are merged into its spec's ``?key=value``
options (the mapping wins on a clash) and reach the adapter as strings:
booleans become ``true``/``false``, lists and mappings become JSON, everything
else ``str(value)``. So ``{spec: "control:typo", options: {rate: 0.2}}`` and
``control:typo?rate=0.2`` create the same adapter.

Labels: ``name`` is the model's label in every results row and report. It
defaults to the spec text, except that a diffusers model loaded from a local
folder is labelled by the folder's name. Images go under ``images/<slug>/``
where the slug is the label with unsafe characters replaced by ``_``.

Unknown keys are errors (``InputError`` naming the file and key), so a typo such
as ``modles:`` never silently runs the defaults. Every spec (models, ``prompts``,
``ocr``, ``sampler``) is checked against its plug-in in :data:`glyphbench.core.registry.PLUGINS`
when the config loads (name, target and typed options; no weights, no files), so
a mistyped reader or option fails before anything is written. Spec strings are
kept exactly as given.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)

from glyphbench.core.errors import InputError, validation_error
from glyphbench.core.io import MAX_CONFIG_BYTES, read_text, slug
from glyphbench.core.registry import PLUGINS, Spec
from glyphbench.core.yaml_input import yaml_data
from glyphbench.prompts.samplers import DEFAULT_SAMPLER
from glyphbench.prompts.where import where_refusal
from glyphbench.readers import DEFAULT_READER
from glyphbench.scoring.table import METRICS
from glyphbench.suites.protocol import expand_config


def option_text(value: Any) -> str:
    """How an option value from YAML is passed to an adapter (always a string).

    >>> [option_text(v) for v in (True, 0.5, "fp16", [1, 2], None)]
    ['true', '0.5', 'fp16', '[1, 2]', '']
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, sort_keys=True)
    return str(value)


def _check_spec(kind: str, spec: str | Spec) -> None:
    """Resolve ``spec`` as a ``kind`` plug-in (creating nothing); problems become ValueErrors."""
    try:
        PLUGINS.resolve(kind, spec)
    except InputError as exc:
        raise ValueError(exc.problem) from None


def _resolves(kind: str) -> Callable[[str], str]:
    """A field validator: the spec must resolve to a ``kind`` plug-in; it is kept as given."""

    def check(value: str) -> str:
        _check_spec(kind, value)
        return value

    return check


#: Spec strings checked against their plug-ins when a config loads.
SourceSpec = Annotated[str, AfterValidator(_resolves("sources"))]
ReaderSpec = Annotated[str, AfterValidator(_resolves("readers"))]
SamplerSpec = Annotated[str, AfterValidator(_resolves("samplers"))]


def _allowed_filter(value: str) -> str:
    """A ``where`` the prompts' filter list allows, checked at load (pandas would run any code)."""
    refusal = where_refusal(value)
    if refusal is not None:
        raise ValueError(refusal)
    return value


FilterExpression = Annotated[str, AfterValidator(_allowed_filter)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _refuse_a_path_meant_beside_the_config(config: RunConfig, path: Path) -> None:
    """A relative prompt file is read from the current folder, as every path of a run is.
    One missing there but found beside the config was "p.csv: file not found", naming
    neither the config nor the key: say where it is and what to write."""
    spec = Spec.parse(config.prompts.source)
    target = Path(spec.target) if spec.target else None
    if target is None or target.is_absolute() or target.exists():
        return
    beside = path.parent / target
    if path.parent != Path(".") and beside.exists():
        raise InputError(
            path,
            f"{target} is not in the current folder but is beside this config: paths in a "
            f"config are read from the current folder; write {spec.kind}:{beside}",
            key="prompts",
        )


def _names_control(named: Spec, spec: Spec) -> bool:
    """Whether the label ``named`` names the control ``spec`` (kind, and a typo's rate).

    >>> typo = Spec.parse("control:typo?rate=0.1&size=256")
    >>> _names_control(Spec.parse("control:typo?rate=0.10"), typo)
    True
    >>> _names_control(Spec.parse("control:render"), Spec.parse("control:blank"))
    False
    """
    if named.kind != "control" or named.target != spec.target:
        return False
    rates = [given.options.get("rate") for given in (named, spec)]
    try:
        return rates[0] == rates[1] or float(rates[0] or "nan") == float(rates[1] or "nan")
    except ValueError:
        return False


class ModelEntry(_Strict):
    """One model to run: a spec string plus an optional label and options."""

    spec: str
    name: str = ""
    options: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        """A bare spec string; ``?name=LABEL`` in a spec names the model, as ``name:`` does.

        >>> ModelEntry.model_validate("images:outputs/sdxl?name=SDXL").label
        'SDXL'
        """
        entry = {"spec": value} if isinstance(value, str) else value
        if isinstance(entry, dict) and isinstance(entry.get("spec"), str):
            parsed = Spec.parse(entry["spec"].strip())
            if "name" in parsed.options:
                options = {k: v for k, v in parsed.options.items() if k != "name"}
                head = parsed.kind + (f":{parsed.target}" if parsed.target else "")
                query = "&".join(f"{k}={v}" for k, v in options.items())
                name = entry.get("name") or parsed.options["name"]
                entry = {**entry, "spec": head + (f"?{query}" if query else ""), "name": name}
        return entry

    @field_validator("spec")
    @classmethod
    def _spec_has_kind(cls, value: str) -> str:
        value = value.strip()
        if not Spec.parse(value).kind:
            raise ValueError(f"model spec {value!r} has no kind (e.g. 'control:render')")
        return value

    @model_validator(mode="after")
    def _spec_resolves(self) -> ModelEntry:
        """The spec, with ``options`` merged in, names a model kind and valid options."""
        _check_spec("models", self.to_spec())
        return self

    @model_validator(mode="after")
    def _controls_named_as_controls(self) -> ModelEntry:
        """The report tells a control, and which one, by its label (``control:KIND``, a
        typo's ``rate``): a control's name must say which control it is, and a model's
        name must not say it is one, or the report ranks a control as a model, or a model
        as the reader's ceiling."""
        if not self.name:
            return self
        spec, named = self.to_spec(), Spec.parse(self.name)
        if self.is_control and not _names_control(named, spec):
            head = f"control:{spec.target}" + (
                f"?rate={spec.options['rate']}" if "rate" in spec.options else ""
            )
            raise ValueError(
                f"the control {spec.text!r} is named {self.name!r}: the report tells a "
                f"control and its kind by its name; leave the name out, or name it {head!r}"
            )
        if not self.is_control and named.kind == "control":
            raise ValueError(
                f"model {self.spec!r} is named {self.name!r}: names starting 'control:' are "
                "kept for the controls (the report would take it for one); choose another name"
            )
        return self

    @property
    def label(self) -> str:
        """The name shown in results and reports."""
        if self.name:
            return self.name
        parsed = Spec.parse(self.spec)
        if parsed.kind == "diffusers" and parsed.target:
            local = Path(parsed.target.split("@")[0])
            if local.is_absolute() or parsed.target.startswith(".") or local.exists():
                return f"diffusers:{local.name}"
        if parsed.kind == "images" and parsed.target and not parsed.options:
            return f"images:{Path(parsed.target).name}"  # a folder or manifest: its name
        return self.to_spec().text

    @property
    def slug(self) -> str:
        return slug(self.label)

    def to_spec(self) -> Spec:
        """The spec the adapter is created from: spec-string options merged with ``options``."""
        parsed = Spec.parse(self.spec)
        options = dict(parsed.options)
        options.update({key: option_text(value) for key, value in self.options.items()})
        head = parsed.kind + (f":{parsed.target}" if parsed.target else "")
        text = head + ("?" + "&".join(f"{k}={v}" for k, v in options.items()) if options else "")
        return Spec(kind=parsed.kind, target=parsed.target, options=options, text=text)

    @property
    def is_control(self) -> bool:
        return Spec.parse(self.spec).kind == "control"


class SuiteEntry(_Strict):
    """A benchmark suite to run: ``NAME[:SUBSET][?option=value]`` and its data folder.

    Given as a string (``suite: longtext:en``) or a mapping (``suite: {spec: longtext,
    data: ../shared/longtext-bench}``); the suite brings the prompts, the reader and
    the protocol (see :mod:`glyphbench.suites`).
    """

    spec: str
    data: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, value: Any) -> Any:
        return {"spec": value} if isinstance(value, str) else value

    @field_validator("spec")
    @classmethod
    def _spec_resolves(cls, value: str) -> str:
        _check_spec("suites", value.strip())
        return value.strip()


class NormalizationConfig(_Strict):
    """Text normalisation applied before scoring (see docs/metrics.md)."""

    keep_case: bool = False
    strip_punct: bool = False
    nfkc: bool = False
    fold_width: bool = False

    @model_serializer(mode="wrap")
    def _omit_unset_unicode_options(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Configs from before these options existed keep their bytes and their hash.
        data: dict[str, Any] = handler(self)
        for key in ("nfkc", "fold_width"):
            if data.get(key) is False:
                del data[key]
        return data


class ApiSettings(_Strict):
    """Hosted APIs (``api:`` models): prices, the run's spending cap, the response cache.

    None of it changes an image, so none of it is in the run's identity: a re-run
    with a higher ``max_usd`` continues the same run. See docs/apis.md.
    """

    max_usd: float | None = Field(default=None, ge=0)  # the run's cap; None: no cap
    prices: dict[str, float] = Field(default_factory=dict)  # USD per image, by label or spec
    cache_dir: str | None = None  # default: <out>/api-cache

    @field_validator("prices")
    @classmethod
    def _prices_not_negative(cls, prices: dict[str, float]) -> dict[str, float]:
        for name, price in prices.items():
            if price < 0:
                raise ValueError(f"price of {name!r} is negative")
        return prices

    def price_for(self, entry: ModelEntry) -> float | None:
        """USD per image of ``entry``: by its label, else its spec without options."""
        parsed = Spec.parse(entry.spec)
        head = parsed.kind + (f":{parsed.target}" if parsed.target else "")
        for name in (entry.label, entry.spec, head):
            if name in self.prices:
                return self.prices[name]
        return None


class PromptSettings(_Strict):
    """Which prompts a run uses (the ``prompts`` stage)."""

    source: SourceSpec = "default"  # a prompt source spec (glyphbench.prompts.load_prompt_set)
    sample: int | None = Field(default=None, ge=1)
    limit: int | None = Field(default=None, ge=1)
    stratify: list[str] | None = None
    where: FilterExpression | None = None  # passed to glyphbench.prompts.select(where=...)
    seed: int = 0  # seed of the prompt sample (not of the images)
    sampler: SamplerSpec = DEFAULT_SAMPLER  # recorded only when it is not the default


class GenerateSettings(_Strict):
    """How each model makes its images (the ``generate`` stage)."""

    seeds: list[int] = Field(default_factory=lambda: [0])
    #: How each image's generator is seeded (suites): ``benchmark``, as the benchmark's
    #: script does (TextCrafter, LeX-Art: every image with the seed itself), or
    #: ``glyphbench``, a seed derived per image (:mod:`glyphbench.core.seeds`). A suite's default
    #: is ``benchmark``; runs without a suite use glyphbench's (None).
    seed_policy: Literal["benchmark", "glyphbench"] | None = None
    # Upper bounds catch a typo before the plan is made: 10 million images per prompt
    # took 4 GB to plan a dry run, 100 million were killed for memory.
    images_per_prompt: int = Field(default=1, ge=1, le=1000)
    batch_size: int = Field(default=4, ge=1, le=4096)
    device: str = "auto"

    @field_validator("device")
    @classmethod
    def _device_named(cls, value: str) -> str:
        """``auto``, ``cpu``, ``mps``, ``cuda`` or ``cuda:N``: a typo ("banana") reached
        torch only when each model loaded, as failed rows in a folder already written."""
        if not re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", value.strip()):
            raise ValueError(f"device {value!r} is not one of auto, cpu, cuda, cuda:N, mps")
        return value.strip()

    @field_validator("seeds")
    @classmethod
    def _seeds_unique(cls, seeds: list[int]) -> list[int]:
        if not seeds:
            raise ValueError("at least one seed is needed")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds repeat: {seeds}")
        wide = [seed for seed in seeds if not -(2**63) <= seed < 2**63]
        if wide:  # the results table stores seeds as int64: a wider one crashed the run
            raise ValueError(f"a seed must fit in 64 bits (|seed| < 2**63), not {wide[0]}")
        return seeds


class ReadSettings(_Strict):
    """Who reads the images and where (the ``read`` stage)."""

    #: A reader spec, e.g. ``easyocr?gpu=0``; default: the one default reader
    #: (:data:`glyphbench.readers.DEFAULT_READER`); a suite brings its benchmark's reader.
    reader: ReaderSpec = DEFAULT_READER
    #: Reader processes the run starts itself (:mod:`glyphbench.run.read_workers`);
    #: 0 reads in the run's worker thread. How, not what: not in the run's identity.
    workers: int = Field(default=0, ge=0)
    #: Images made and not yet read beyond which generation waits for the readers
    #: (None: :func:`glyphbench.engine.backlog.default_backlog`). Not in the identity.
    backlog: int | None = Field(default=None, ge=1)


class ScoreSettings(_Strict):
    """How readings are scored (the ``score`` stage)."""

    normalization: NormalizationConfig = Field(default_factory=NormalizationConfig)
    #: Metric families scored besides glyphbench's (and the suite's): names of the metric
    #: table (``glyphbench list metrics``), e.g. ``mario`` or a plug-in's own family.
    metrics: list[str] = Field(default_factory=list)

    @field_validator("metrics")
    @classmethod
    def _metric_families_known(cls, families: list[str]) -> list[str]:
        known = METRICS.families()
        unknown = [name for name in families if name not in known]
        if unknown:
            raise ValueError(
                f"unknown metric family {unknown[0]!r}; known: {', '.join(sorted(known))}"
            )
        return list(dict.fromkeys(families))


#: The longest run id (it names folders, rows and reports).
MAX_RUN_ID = 128


class OutputSettings(_Strict):
    """Where the run writes, and its name."""

    out: str = "runs/latest"  # the run folder (run.json, images/, results.parquet)
    run_id: str = ""  # default: "run-" + a hash of the config

    @field_validator("out")
    @classmethod
    def _out_named(cls, value: str) -> str:
        if not value.strip():  # "" is the current folder to a path: a run among its files
            raise ValueError("out is empty; name the run folder (e.g. --out runs/first)")
        return value

    @field_validator("run_id")
    @classmethod
    def _run_id_safe(cls, value: str) -> str:
        if len(value) > MAX_RUN_ID:  # a name, not a text: never echoed whole in an error
            raise ValueError(f"run_id has {len(value):,} characters; at most {MAX_RUN_ID}")
        if value and slug(value) != value:
            raise ValueError(f"run_id {value!r} may only use letters, digits and . _ = + -")
        return value

    @property
    def folder(self) -> Path:
        return Path(self.out)


#: Each flat key (the published form: run.json's ``config``, YAML files, the CLI's
#: flags) and where it lives in the sections, in the order run.json writes them.
FLAT_KEYS: dict[str, tuple[str, ...]] = {
    "models": ("models",),
    "prompts": ("prompts", "source"),
    "sample": ("prompts", "sample"),
    "limit": ("prompts", "limit"),
    "stratify": ("prompts", "stratify"),
    "where": ("prompts", "where"),
    "prompt_seed": ("prompts", "seed"),
    "sampler": ("prompts", "sampler"),
    "seeds": ("generate", "seeds"),
    "seed_policy": ("generate", "seed_policy"),
    "images_per_prompt": ("generate", "images_per_prompt"),
    "batch_size": ("generate", "batch_size"),
    "ocr": ("read", "reader"),
    "device": ("generate", "device"),
    "normalization": ("score", "normalization"),
    "out": ("output", "out"),
    "run_id": ("output", "run_id"),
    "api": ("api",),
    "suite": ("suite",),
    "metrics": ("score", "metrics"),
    "read_workers": ("read", "workers"),
    "read_backlog": ("read", "backlog"),
}
#: The sections that hold several flat keys (the others are a key of their own).
SECTIONS = ("prompts", "generate", "read", "score", "output")
#: Flat keys run.json leaves out at their default, so configs from before they existed
#: keep their bytes and their hash (their defaults, as the JSON dump writes them).
OMITTED_AT_DEFAULT: dict[str, Any] = {
    "sampler": DEFAULT_SAMPLER,
    "api": None,  # ApiSettings() (filled in below)
    "suite": None,
    "seed_policy": None,
    "metrics": [],
    "read_workers": 0,
    "read_backlog": None,
}


def _is_section(key: str, value: Any) -> bool:
    """Whether ``key: value`` is a section; ``prompts: SPEC`` (a string) is the flat key."""
    return key in SECTIONS and (isinstance(value, dict) or key != "prompts")


def sectioned(data: dict[str, Any]) -> dict[str, Any]:
    """A config mapping in sections, from flat keys, sections or both (not the same setting
    twice: a flat key and its section key both given is an error naming both).

    >>> sectioned({"models": ["control:blank"], "ocr": "easyocr", "read": {"workers": 2}})
    {'models': ['control:blank'], 'read': {'workers': 2, 'reader': 'easyocr'}}
    """
    out: dict[str, Any] = {}
    for key, value in data.items():
        if _is_section(key, value):
            out[key] = dict(value) if isinstance(value, dict) else value
    for key, value in data.items():
        if _is_section(key, value):
            continue
        path = FLAT_KEYS.get(key)
        if path is None or len(path) == 1:
            out[key] = value  # a key of its own (models, api, suite) or unknown (refused)
            continue
        section = out.setdefault(path[0], {})
        if not isinstance(section, dict):
            continue  # the section itself is not a mapping: its own error
        if path[1] in section:
            raise ValueError(
                f"{key!r} and {'.'.join(path)!r} are the same setting; give one of them"
            )
        section[path[1]] = value
    return _in_given_order(out, data)


def _in_given_order(out: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """``out``'s keys in the order ``data`` first names each (a section by any of its keys)."""
    first: dict[str, int] = {}
    for key, value in data.items():
        path = FLAT_KEYS.get(key)
        target = key if _is_section(key, value) or path is None else path[0]
        first.setdefault(target, len(first))
    return dict(sorted(out.items(), key=lambda item: first.get(item[0], len(first))))


def flat_form(data: dict[str, Any]) -> dict[str, Any]:
    """The flat mapping of a sectioned dump, in run.json's order, without the keys left out
    at their defaults (:data:`OMITTED_AT_DEFAULT`): the published form."""
    flat: dict[str, Any] = {}
    for key, path in FLAT_KEYS.items():
        value: Any = data
        for part in path:
            value = value[part]
        flat[key] = value
    for key, default in OMITTED_AT_DEFAULT.items():
        if flat.get(key) == (ApiSettings().model_dump() if key == "api" else default):
            del flat[key]
    return flat


def _as_given(location: str | None, data: dict[str, Any]) -> str | None:
    """A problem's key as the user wrote it: ``ocr`` for ``read.reader`` given flat.

    >>> _as_given("read.reader", {"ocr": 7}), _as_given("read.reader", {"read": {}})
    ('ocr', 'read.reader')
    """
    where = location or ""
    for key, path in FLAT_KEYS.items():
        dotted = ".".join(path)
        flat = len(path) == 2 and key in data and not _is_section(key, data[key])
        if flat and (where == dotted or where.startswith(dotted + ".")):
            return key + where[len(dotted) :]
    return location


#: The settings that choose prompts: with none of them given, an ``images:`` run
#: scores the prompts its files name (:mod:`glyphbench.run.made_elsewhere`).
SELECTION_KEYS = ("prompts", "where", "sample", "limit", "suite")


class RunConfig(_Strict):
    """Everything that determines a run's output, in one section per stage.

    Its dump (run.json's ``config``, the identity) is the flat form; YAML and mappings
    may give flat keys, sections, or both (:func:`sectioned`).
    """

    models: list[ModelEntry]
    prompts: PromptSettings = Field(default_factory=PromptSettings)
    generate: GenerateSettings = Field(default_factory=GenerateSettings)
    read: ReadSettings = Field(default_factory=ReadSettings)
    score: ScoreSettings = Field(default_factory=ScoreSettings)
    output: OutputSettings = Field(default_factory=OutputSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    suite: SuiteEntry | None = None
    #: The flat keys given, when flags replaced some (:meth:`with_overrides`).
    _given: frozenset[str] | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _sections(cls, data: Any) -> Any:
        """Flat keys into their sections; a suite fills the unset reader, seeds and images
        per prompt from its protocol."""
        if not isinstance(data, dict):
            return data
        data = sectioned(data)
        return expand_config(data) if data.get("suite") is not None else data

    @field_validator("models")
    @classmethod
    def _models_unique(cls, models: list[ModelEntry]) -> list[ModelEntry]:
        if not models:
            raise ValueError("at least one model is needed")
        seen: dict[str, str] = {}
        for entry in models:
            for key in {entry.label, entry.slug}:
                if key in seen:
                    raise ValueError(
                        f"two models share the label {key!r} ({seen[key]!r} and {entry.spec!r}); "
                        "give one a 'name'"
                    )
            seen.update({entry.label: entry.spec, entry.slug: entry.spec})
        return models

    @model_validator(mode="after")
    def _capped_models_priced(self) -> RunConfig:
        """With a spending cap, every hosted-API model needs a price."""
        if self.api.max_usd is None:
            return self
        unpriced = [
            entry.label
            for entry in self.models
            if Spec.parse(entry.spec).kind == "api" and self.api.price_for(entry) is None
        ]
        if unpriced:
            raise ValueError(
                f"api.max_usd is set but api.prices has no price for {', '.join(unpriced)}"
            )
        return self

    @model_validator(mode="after")
    def _seed_policy_needs_suite(self) -> RunConfig:
        if self.generate.seed_policy == "benchmark" and self.suite is None:
            raise ValueError(
                "seed_policy benchmark seeds images as a benchmark does: it needs a suite "
                "(--suite NAME), or use seed_policy glyphbench"
            )
        return self

    @model_validator(mode="after")
    def _backlog_needs_readers(self) -> RunConfig:
        if self.read.backlog is not None and not self.read.workers:
            raise ValueError(
                "read_backlog bounds the images waiting for the run's reader processes: "
                "it needs read_workers of 1 or more"
            )
        return self

    @model_serializer(mode="wrap")
    def _flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # The published form: configs from before sections (and before each optional key)
        # keep their bytes and their hash.
        return flat_form(handler(self))

    # ----------------------------------------------------------------- identity
    def identity(self) -> dict[str, Any]:
        """The settings that decide which images and rows a run holds (not where it writes)."""
        data = self.model_dump(mode="json")  # the flat form
        data.pop("out", None)
        data.pop("run_id", None)
        data.pop("device", None)  # the same images on any device, up to numerics
        data.pop("api", None)  # prices, cap and cache: a higher cap continues the same run
        data.pop("read_workers", None)  # who reads, not what: any N resumes the same run
        data.pop("read_backlog", None)
        return data

    def config_hash(self) -> str:
        blob = json.dumps(self.identity(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    @property
    def resolved_run_id(self) -> str:
        return self.output.run_id or f"run-{self.config_hash()[:10]}"

    # ----------------------------------------------------------------- loading
    @classmethod
    def from_mapping(cls, data: dict[str, Any], source: str | Path | None = None) -> RunConfig:
        """Validate a mapping; problems become one-line :class:`InputError` s naming the key."""
        if not isinstance(data, dict):
            raise InputError(source, f"expected a mapping of settings, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            error = validation_error(exc, source)
            error.key = _as_given(error.key, data)
            raise InputError(source, error.problem, key=error.key) from None

    @classmethod
    def from_yaml_text(cls, text: str, source: str | Path | None = None) -> RunConfig:
        data = yaml_data(text, source)
        config = cls.from_mapping(data if data is not None else {}, source)
        if isinstance(source, Path):
            _refuse_a_path_meant_beside_the_config(config, source)
        return config

    @classmethod
    def from_yaml(cls, path: str | Path) -> RunConfig:
        """Load ``RUN.yaml``; unknown keys and bad values raise :class:`InputError`."""
        path = Path(path)
        if not path.is_file():
            raise InputError(path, "config file not found")

        return cls.from_yaml_text(read_text(path, limit=MAX_CONFIG_BYTES), path)

    def with_overrides(self, **changes: Any) -> RunConfig:
        """A copy with some settings (flat keys, as the flags name them) replaced (``None``
        values are ignored), re-validated."""
        data = self.model_dump(mode="python")
        given = {k: v for k, v in changes.items() if v is not None}
        data.update(given)
        result = RunConfig.from_mapping(data, "command-line flags")
        # what the user set stays what they set (selection_given reads it), not every key
        result._given = frozenset(self.given_keys() | set(given))
        return result

    def with_reader(self, reader_spec: str) -> RunConfig:
        """This config read by ``reader_spec`` (the same config when it already is)."""
        if reader_spec == self.read.reader:
            return self
        return self.model_copy(
            update={"read": self.read.model_copy(update={"reader": reader_spec})}
        )

    def given_keys(self) -> set[str]:
        """The flat keys the config file, mapping or flags gave (the others are defaults)."""
        if self._given is not None:
            return set(self._given)
        given: set[str] = {k for k in ("models", "api", "suite") if k in self.model_fields_set}
        for key, path in FLAT_KEYS.items():
            section = getattr(self, path[0]) if path[0] in self.model_fields_set else None
            if len(path) == 2 and section is not None and path[1] in section.model_fields_set:
                given.add(key)
        return given

    @property
    def selection_given(self) -> list[str]:
        """The prompt-choosing settings the config file or the flags gave.

        >>> RunConfig.from_mapping({"models": ["control:blank"]}).selection_given
        []
        >>> config = RunConfig.from_mapping({"models": ["control:blank"], "limit": 3})
        >>> config.selection_given, config.with_overrides(where="lang == 'en'").selection_given
        (['limit'], ['where', 'limit'])
        """
        given = self.given_keys()
        return [key for key in SELECTION_KEYS if key in given]
