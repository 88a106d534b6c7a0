"""One plug-in registry for every pluggable part of glyphbench.

Models, readers, codecs, prompt sources, samplers and suites are all *plug-ins*:
one :class:`Plugin` record each, registered by kind and name in :data:`PLUGINS`.
A plug-in is chosen with a *spec string*::

    name[:target][?key=value&key=value]     e.g.  control:typo?rate=0.2
                                                    diffusers:stabilityai/sdxl-turbo
                                                    jpeg?quality=30

and its options are a typed :class:`Options` model (pydantic), validated when the
config loads, before anything is written: a typo in an option name, a value of the
wrong type or a missing target is an :class:`~glyphbench.core.errors.InputError` that names
the spec and lists what is allowed. An empty value (``?size=``, or ``null`` in a
YAML config) means "not set": the option keeps its default.

A plug-in may take a different options class per target (``targets=``: the
``control`` model's ``render``/``typo``/``blank``), and may claim file suffixes
(``suffixes=``): a bare path such as ``mine.csv`` then names that plug-in, as if
written ``csv:mine.csv``.

Adding a plug-in is one module in the kind's package (see :data:`KINDS`) that calls
:func:`register`; every module of that package is imported when the kind is first
used, so nothing else needs editing. Modules must stay cheap to import (heavy
libraries are imported inside the factory), so ``glyphbench --help`` and
``glyphbench list`` stay instant. Third-party packages add plug-ins through the
``glyphbench.plugins`` entry-point group (each entry point names a module to import).

Plain *records* that are chosen by name but never built from a spec (a diffusers
model family, a hosted API provider, a VLM reader preset) live in the same registry,
under their own kinds (``families``, ``providers``, ``vlm-presets``):
:meth:`PluginRegistry.add_record` registers one, :meth:`PluginRegistry.records` is
the live name -> record mapping their users read, and an option typed
``Annotated[str, OneOf(kind)]`` accepts (and ``glyphbench list`` shows) the names
registered now. A taken name is a :class:`DuplicateName` error here too.

>>> from pydantic import Field
>>> class ToyOptions(Options):
...     rate: float = Field(default=0.1, ge=0, le=1, description="typo rate")
>>> @register("models", "toy-doc", options=ToyOptions, summary="a doctest model", target="optional")
... def _toy(spec: Spec, options: ToyOptions) -> str:
...     return f"toy {spec.target} at {options.rate}"
>>> PLUGINS.create("models", "toy-doc:x?rate=0.5")
'toy x at 0.5'
>>> PLUGINS.resolve("models", "toy-doc?rate=").options.rate  # empty: the default
0.1
>>> try:
...     PLUGINS.resolve("models", "toy-doc?rate=2")
... except InputError as exc:
...     print(exc.problem)
toy-doc?rate=2: option 'rate': Input should be less than or equal to 1
>>> PLUGINS.unregister("models", "toy-doc")
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import pkgutil
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import PurePath
from types import UnionType
from typing import Annotated, Any, Generic, Literal, TypeVar, Union, get_args, get_origin
from urllib.parse import unquote

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from glyphbench.core.errors import InputError

T = TypeVar("T")
O = TypeVar("O", bound="Options")  # noqa: E741 - the conventional name for an options type

#: Plug-in kind -> the package whose modules register plug-ins of that kind.
KINDS: dict[str, str] = {
    "models": "glyphbench.models",
    "readers": "glyphbench.readers",
    "codecs": "glyphbench.vae_eval.codecs",
    "sources": "glyphbench.prompts.sources",
    "samplers": "glyphbench.prompts.samplers",
    "suites": "glyphbench.suites",
    # Records (PluginRegistry.add_record): chosen by name, never built from a spec.
    "families": "glyphbench.models.families",
    "providers": "glyphbench.models.api",
    "vlm-presets": "glyphbench.readers.vlm_presets",
}

#: Entry-point group through which other packages add plug-ins (values are module names).
ENTRY_POINT_GROUP = "glyphbench.plugins"

TargetRule = Literal["none", "optional", "required"]


@dataclass(frozen=True)
class Spec:
    """A parsed spec string: ``kind:target?options``.

    >>> Spec.parse("control:typo?rate=0.2")
    Spec(kind='control', target='typo', options={'rate': '0.2'}, text='control:typo?rate=0.2')
    >>> Spec.parse("jpeg?quality=30")
    Spec(kind='jpeg', target='', options={'quality': '30'}, text='jpeg?quality=30')
    """

    kind: str
    target: str = ""
    options: dict[str, str] = field(default_factory=dict)
    text: str = ""

    @classmethod
    def parse(cls, text: str) -> Spec:
        """Split ``text``; option values are %-decoded, and ``+`` stays a plus.

        >>> Spec.parse("tesseract?lang=eng+deu&psm=%31%31").options
        {'lang': 'eng+deu', 'psm': '11'}
        """
        head, _, query = text.partition("?")
        kind, _, target = head.partition(":")
        options = dict(_query_pairs(query, text)) if query else {}
        return cls(kind=kind.strip(), target=target.strip(), options=options, text=text)

    @property
    def path(self) -> str:
        """The file or folder the spec may name: its target, or a bare path given whole.

        >>> Spec.parse("csv:runs/p.csv").path, Spec.parse("runs/p.csv").path
        ('runs/p.csv', 'runs/p.csv')
        """
        return self.target or self.kind


def _query_pairs(query: str, spec: str = "") -> Iterable[tuple[str, str]]:
    """``key=value`` pairs of a query; a key given twice is refused, as a YAML mapping's is
    (``rate=0.1&rate=0.9`` ran at 0.9 without a word).

    >>> list(_query_pairs("quality=30&"))
    [('quality', '30')]
    >>> list(_query_pairs("?", "jpeg??"))
    Traceback (most recent call last):
    ...
    glyphbench.core.errors.InputError: jpeg??: '?' is not an option (write key=value)
    >>> list(_query_pairs("rate=0.1&rate=0.9", "typo?rate=0.1&rate=0.9"))
    Traceback (most recent call last):
    ...
    glyphbench.core.errors.InputError: typo?rate=0.1&rate=0.9: option 'rate' is given twice; ...
    """
    seen: set[str] = set()
    for part in query.split("&"):
        if part:
            key, has_value, value = part.partition("=")
            key = unquote(key)
            if not key.isidentifier():
                raise InputError(spec or None, f"{key!r} is not an option (write key=value)")
            if not has_value:
                raise InputError(spec or None, f"option {key!r} has no value (write {key}=VALUE)")
            if key in seen:
                raise InputError(spec or None, f"option {key!r} is given twice; keep one")
            seen.add(key)
            yield key, unquote(value)


class Options(BaseModel):
    """Base of every plug-in's typed options: unknown keys are errors, values are frozen.

    Spec options arrive as strings (``?rate=0.2``) or YAML values; pydantic converts
    them to each field's type (``"0.2"`` -> 0.2, ``"true"`` -> True). Empty strings
    and ``None`` mean "not set", so the field keeps its default.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, data: Any) -> Any:
        if isinstance(data, Mapping):  # an unknown key stays, so that it is refused
            blank = {key for key, value in data.items() if value is None or value == ""}
            return {k: v for k, v in data.items() if k not in blank or k not in cls.model_fields}
        return data


class NoOptions(Options):
    """Options of a plug-in that takes none."""


@dataclass(frozen=True)
class Plugin(Generic[T]):
    """One registered plug-in: what ``glyphbench list`` prints and what creates it.

    ``targets`` maps each allowed target to its options class (the target is then
    required); ``suffixes`` are file suffixes whose bare paths name this plug-in;
    ``missing`` says why the plug-in cannot be created on this machine (a package
    or binary absent), or returns None when it can; ``usage`` shows the spec's shape.
    ``record`` is the registered object of a record kind (see
    :meth:`PluginRegistry.add_record`); its factory returns it.
    """

    kind: str
    name: str
    factory: Callable[[Spec, Any], T]
    options: type[Options] = NoOptions
    summary: str = ""
    target: TargetRule = "none"
    module: str = ""
    targets: Mapping[str, type[Options]] = field(default_factory=dict)
    usage: str = ""
    suffixes: tuple[str, ...] = ()
    missing: Callable[[], str | None] | None = None
    record: Any = None

    def options_for(self, target: str = "") -> type[Options]:
        """The options class a spec with ``target`` is validated against."""
        return self.targets.get(target, self.options) if self.targets else self.options

    def unavailable(self) -> str | None:
        """Why this plug-in cannot be created here, or None when it can."""
        return self.missing() if self.missing is not None else None

    def describe(self) -> dict[str, Any]:
        """Everything ``glyphbench list --json`` prints about this plug-in."""
        info: dict[str, Any] = {
            "kind": self.kind,
            "name": self.name,
            "summary": self.summary,
            "usage": self.usage or self.name,
            "target": self.target,
            "module": self.module,
            "suffixes": list(self.suffixes),
            "unavailable": self.unavailable(),
        }
        if self.targets:
            info["targets"] = {
                name: _option_records(schema) for name, schema in self.targets.items()
            }
        else:
            info["options"] = _option_records(self.options)
        return info


def _type_name(info: FieldInfo) -> str:
    """A readable type with its bounds, e.g. ``int (>= 32)`` or ``'max' | 'min'``."""
    text, bounds = _annotation_text(info.annotation, list(info.metadata))
    return f"{text} ({', '.join(bounds)})" if bounds else text


def _annotation_text(annotation: Any, metadata: list[Any]) -> tuple[str, list[str]]:
    for rule in metadata:
        if isinstance(rule, OneOf):
            return " | ".join(repr(name) for name in rule.names()), []
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *extra = get_args(annotation)
        for item in extra:  # a Field(...) carries its constraints in .metadata
            metadata.extend(getattr(item, "metadata", [item]))
        return _annotation_text(base, metadata)
    bounds = [
        f"{symbol} {getattr(rule, attr)}"
        for rule in metadata
        for attr, symbol in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<"))
        if getattr(rule, attr, None) is not None
    ]
    if origin is Literal:
        return " | ".join(repr(value) for value in get_args(annotation)), bounds
    if origin in (Union, UnionType):
        parts = []
        for arm in get_args(annotation):
            text, inner = _annotation_text(arm, [])
            parts.append(text)
            bounds.extend(inner)
        return " | ".join(parts), bounds
    if annotation is type(None):
        return "None", bounds
    if isinstance(annotation, type):
        return annotation.__name__, bounds
    return str(annotation).replace("typing.", ""), bounds


def _option_records(schema: type[Options]) -> list[dict[str, Any]]:
    records = []
    for key, info in schema.model_fields.items():
        required = info.is_required()
        default = None if required else info.get_default(call_default_factory=True)
        records.append(
            {
                "name": key,
                "type": _type_name(info),
                "default": to_jsonable_python(default),
                "required": required,
                "description": info.description or "",
            }
        )
    return records


@dataclass(frozen=True)
class Resolved(Generic[T]):
    """A spec checked against its plug-in: creating it cannot fail on its options."""

    plugin: Plugin[T]
    spec: Spec
    options: Options

    def create(self) -> T:
        return self.plugin.factory(self.spec, self.options)


class DuplicateName(ValueError):
    """A plug-in (or metric, or codec) registered under a name another place already took."""


def place_of(factory: Callable[..., Any], module: str | None = None) -> str:
    """Where a plug-in is defined (what a duplicate-name error names).

    ``module.qualname`` of the factory; for a factory made inside a function (a
    helper's closure, such as :func:`glyphbench.suites.base.register_suite`'s), the module
    the helper was called from, given as ``module``.
    """
    qualname = getattr(factory, "__qualname__", type(factory).__qualname__)
    if module and "<locals>" in qualname:
        return module
    return f"{module or getattr(factory, '__module__', '?')}.{qualname}"


def check_free(what: str, taken: str | None, new: str, *, replace: bool) -> None:
    """Raise :class:`DuplicateName` when ``what`` is taken by another place (``taken``).

    The same place registering again (a module imported twice) is no conflict;
    ``replace=True`` overrides on purpose.

    >>> check_free("reader 'x'", "a.make", "b.make", replace=False)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    glyphbench.core.registry.DuplicateName: reader 'x' is already registered by a.make; b.make ...
    """
    if taken is not None and _origin(taken) != _origin(new) and not replace:
        raise DuplicateName(
            f"{what} is already registered by {taken}; {new} registers it again "
            "(pass replace=True to override it on purpose)"
        )


def _origin(place: str) -> str:
    """``place`` with its module replaced by the module's file.

    One file imported under two module names (``tests.helper`` and ``helper``, as pytest
    and a script may both import it) is one place, not a duplicate.
    """
    parts = place.split(".")
    for cut in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        file = getattr(module, "__file__", None)
        if file:
            return ":".join([os.path.realpath(file), *parts[cut:]])
    return place


class PluginRegistry:
    """Plug-ins by kind and name; kinds load their package's modules on first use."""

    def __init__(self, kinds: Mapping[str, str] = KINDS) -> None:
        self.kinds = dict(kinds)
        self._plugins: dict[str, dict[str, Plugin[Any]]] = {kind: {} for kind in self.kinds}
        self._loaded: set[str] = set()
        self._complete: set[str] = set()
        # Re-entrant: a module being imported may look up its own kind (and sees it partial);
        # another thread waits until the kind is complete.
        self._load_lock = threading.RLock()
        self._entry_points_loaded = False

    # ------------------------------------------------------------ registering
    def register(
        self,
        kind: str,
        name: str,
        *,
        options: type[Options] = NoOptions,
        summary: str = "",
        target: TargetRule = "none",
        targets: Mapping[str, type[Options]] | None = None,
        usage: str = "",
        suffixes: Iterable[str] = (),
        missing: Callable[[], str | None] | None = None,
        module: str | None = None,
        replace: bool = False,
    ) -> Callable[[Callable[[Spec, Any], T]], Callable[[Spec, Any], T]]:
        """Decorator: register ``factory(spec, options)`` as plug-in ``name`` of ``kind``.

        With ``targets`` the target is required and selects the options class.
        ``module`` is where the plug-in is defined (default: the factory's module);
        a name another place registered already is a :class:`DuplicateName` error
        unless ``replace=True``.
        """
        self._check_kind(kind)

        def decorator(factory: Callable[[Spec, Any], T]) -> Callable[[Spec, Any], T]:
            plugin = Plugin(
                kind,
                name,
                factory,
                options,
                summary,
                "required" if targets else target,
                module or str(getattr(factory, "__module__", "")),
                dict(targets or {}),
                usage,
                tuple(suffix.lower() for suffix in suffixes),
                missing,
            )
            self.add(plugin, replace=replace)
            return factory

        return decorator

    def add(self, plugin: Plugin[Any], *, replace: bool = False) -> None:
        """Register a ready-made :class:`Plugin` record (tests, notebooks)."""
        self._check_kind(plugin.kind)
        taken = self._plugins[plugin.kind].get(plugin.name)
        check_free(
            f"{_singular(plugin.kind)} {plugin.name!r}",
            None if taken is None else place_of(taken.factory, taken.module),
            place_of(plugin.factory, plugin.module),
            replace=replace,
        )
        self._plugins[plugin.kind][plugin.name] = plugin

    def unregister(self, kind: str, name: str) -> None:
        self._plugins[kind].pop(name, None)

    def add_record(
        self,
        kind: str,
        name: str,
        record: T,
        *,
        summary: str = "",
        module: str | None = None,
        replace: bool = False,
    ) -> T:
        """Register ``record`` (a model family, an API provider...) as ``name`` of ``kind``.

        ``module`` is where it is defined (default: the module calling this); a name
        another module registered already is a :class:`DuplicateName` error unless
        ``replace=True``. Returns ``record``.
        """
        here = module or str(sys._getframe(1).f_globals.get("__name__", ""))
        plugin = Plugin(kind, name, _constant(record), summary=summary, module=here, record=record)
        self.add(plugin, replace=replace)
        return record

    def records(
        self, kind: str, of: type[T], *, key: Callable[[Plugin[Any]], Any] | None = None
    ) -> Records[T]:
        """The live ``name -> record`` mapping of ``kind`` (its package loads on first use).

        In registration order, or sorted by ``key`` (a stable sort: ties keep that order).
        """
        self._check_kind(kind)
        return Records(self, kind, key)

    def in_order(self, kind: str) -> list[Plugin[Any]]:
        """Every plug-in of ``kind`` in the order it was registered."""
        self.load(kind)
        return list(self._plugins[kind].values())

    # -------------------------------------------------------------- looking up
    def load(self, kind: str) -> None:
        """Import every module of ``kind``'s package (and the entry points) once."""
        self._check_kind(kind)
        if kind in self._complete:
            return
        with self._load_lock:
            if kind in self._loaded:
                return
            # Marked first: a module being imported may look up its own kind.
            self._loaded.add(kind)
            try:
                for module in package_modules(self.kinds[kind]):
                    importlib.import_module(module)
            except BaseException:
                self._loaded.discard(kind)  # a later call tries again and raises again
                raise
            if not self._entry_points_loaded:
                self._entry_points_loaded = True
                _load_entry_points()
            self._complete.add(kind)

    def entries(self, kind: str) -> list[Plugin[Any]]:
        """Every plug-in of ``kind``, sorted by name."""
        self.load(kind)
        return [self._plugins[kind][name] for name in sorted(self._plugins[kind])]

    def names(self, kind: str) -> list[str]:
        return [plugin.name for plugin in self.entries(kind)]

    def get(self, kind: str, name: str) -> Plugin[Any]:
        self.load(kind)
        plugin = self._plugins[kind].get(name)
        if plugin is None:
            raise InputError(None, self._unknown(kind, name, name), key=kind)
        return plugin

    def resolve(self, kind: str, spec: str | Spec, *, where: str | None = None) -> Resolved[Any]:
        """Check ``spec`` against its plug-in (name, target, options) without creating it."""
        parsed = Spec.parse(spec) if isinstance(spec, str) else spec
        self.load(kind)
        parsed = self._by_suffix(kind, parsed)
        if not parsed.kind:
            raise InputError(
                where, f"{_singular(kind)} spec {parsed.text!r} names no plug-in", key=kind
            )
        plugin = self._plugins[kind].get(parsed.kind)
        if plugin is None:
            raise InputError(where, self._unknown(kind, parsed.kind, parsed.text), key=kind)
        _check_target(plugin, parsed, where)
        options = parse_options(
            plugin.options_for(parsed.target), parsed.options, parsed.text, where=where, key=kind
        )
        return Resolved(plugin, parsed, options)

    def create(self, kind: str, spec: str | Spec, *, where: str | None = None) -> Any:
        """Resolve ``spec`` and create the plug-in."""
        return self.resolve(kind, spec, where=where).create()

    def _by_suffix(self, kind: str, parsed: Spec) -> Spec:
        """A bare path whose suffix a plug-in claims becomes ``name:path``."""
        if parsed.kind in self._plugins[kind]:
            return parsed
        suffix = PurePath(parsed.text.partition("?")[0]).suffix.lower()
        for plugin in self._plugins[kind].values():
            if suffix and suffix in plugin.suffixes:
                return Spec.parse(f"{plugin.name}:{parsed.text}")
        return parsed

    def _unknown(self, kind: str, name: str, text: str) -> str:
        known = ", ".join(self.names(kind)) or "none"
        suffixes = sorted({s for plugin in self._plugins[kind].values() for s in plugin.suffixes})
        also = f" (or a path ending in {', '.join(suffixes)})" if suffixes else ""
        given = f" in {text!r}" if text != name else ""
        return f"unknown {_singular(kind)} {name!r}{given}; known: {known}{also}"

    def _check_kind(self, kind: str) -> None:
        if kind not in self.kinds:
            raise InputError(None, f"unknown plug-in kind {kind!r}; known: {', '.join(self.kinds)}")


def _constant(record: T) -> Callable[[Spec, Any], T]:
    """A record's factory: it returns the record itself."""

    def record_factory(spec: Spec, options: Any) -> T:
        return record

    return record_factory


class Records(Mapping[str, T]):
    """A read-only, live view ``name -> record`` of one record kind of a registry.

    Every access sees what is registered now (a record added later shows up), and
    the first one imports the kind's package.
    """

    def __init__(
        self,
        registry: PluginRegistry,
        kind: str,
        key: Callable[[Plugin[Any]], Any] | None = None,
    ) -> None:
        self.registry = registry
        self.kind = kind
        self.key = key

    def plugins(self) -> list[Plugin[T]]:
        """The registered entries (with the module that registered each) in this view's order."""
        entries = self.registry.in_order(self.kind)
        return sorted(entries, key=self.key) if self.key is not None else entries

    def __getitem__(self, name: str) -> T:
        self.registry.load(self.kind)
        record: T = self.registry._plugins[self.kind][name].record
        return record

    def __contains__(self, name: object) -> bool:
        self.registry.load(self.kind)
        return name in self.registry._plugins[self.kind]

    def __iter__(self) -> Iterator[str]:
        return iter([plugin.name for plugin in self.plugins()])

    def __len__(self) -> int:
        self.registry.load(self.kind)
        return len(self.registry._plugins[self.kind])

    def __repr__(self) -> str:
        return f"Records({self.kind!r}: {', '.join(self)})"


@dataclass(frozen=True)
class OneOf:
    """Option metadata: the value must name a record of ``kind`` registered now.

    ``preset: Annotated[str, OneOf("vlm-presets")]`` validates like a ``Literal`` of
    the registered names (same message) and ``glyphbench list`` shows those names, so a
    record added in its own module is accepted with nothing else edited.
    """

    kind: str

    def names(self) -> list[str]:
        return list(PLUGINS.records(self.kind, object))

    def check(self, value: str) -> str:
        names = self.names()
        if value not in names:
            quoted = [repr(name) for name in names]
            choices = " or ".join(
                [", ".join(quoted[:-1]), quoted[-1]] if len(quoted) > 1 else quoted
            )
            raise ValueError(f"Input should be {choices}")
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.check, handler(source))


def _check_target(plugin: Plugin[Any], parsed: Spec, where: str | None) -> None:
    kind = plugin.kind
    if plugin.target == "required" and not parsed.target:
        example = f", e.g. {plugin.usage}" if plugin.usage else f" after '{parsed.kind}:'"
        raise InputError(where, f"{parsed.text}: needs a target{example}", key=kind)
    if plugin.target == "none" and parsed.target:
        raise InputError(where, f"{parsed.text}: '{parsed.kind}' takes no target", key=kind)
    if plugin.targets and parsed.target not in plugin.targets:
        known = ", ".join(plugin.targets)
        raise InputError(
            where,
            f"unknown {plugin.name} target {parsed.target!r} in {parsed.text!r}; known: {known}",
            key=kind,
        )


def parse_options(
    schema: type[O],
    raw: Mapping[str, Any],
    what: str,
    *,
    where: str | None = None,
    key: str | None = None,
) -> O:
    """Validate ``raw`` options against ``schema``; the first problem becomes an InputError.

    >>> class Q(Options):
    ...     quality: int = 75
    >>> parse_options(Q, {"quality": "30"}, "jpeg").quality
    30
    >>> parse_options(Q, {"qualty": "30"}, "jpeg")
    Traceback (most recent call last):
    ...
    glyphbench.core.errors.InputError: jpeg: unknown option 'qualty'; known: quality
    """
    try:
        return schema.model_validate(dict(raw))
    except ValidationError as exc:
        raise InputError(where, f"{what}: {_first_problem(exc, schema)}", key=key) from None


def _first_problem(exc: ValidationError, schema: type[Options]) -> str:
    errors = exc.errors()
    # An unknown option usually explains the rest (``rat=`` -> "rate is required").
    error = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    if not error["loc"]:  # a check of the options as a whole
        return str(error["msg"]).removeprefix("Value error, ")
    name = str(error["loc"][0])
    if error["type"] == "extra_forbidden":
        known = ", ".join(schema.model_fields) or "none"
        return f"unknown option {name!r}; known: {known}"
    if error["type"] == "missing":
        return f"option {name!r} is required"
    # A union type fails once per member ('auto' | bool): say every way it could be right.
    messages = [
        str(other["msg"]).removeprefix("Value error, ")
        for other in errors
        if other["loc"][:1] == error["loc"][:1]
    ]
    return f"option {name!r}: {' or '.join(dict.fromkeys(messages))}"


def _singular(kind: str) -> str:
    return {
        "models": "model kind",
        "readers": "reader",
        "codecs": "codec",
        "sources": "prompt source",
        "samplers": "sampler",
        "suites": "suite",
        "families": "model family",
        "providers": "api provider",
        "vlm-presets": "vlm preset",
    }.get(kind, kind)


def missing_modules(*modules: str) -> str | None:
    """For a plug-in's ``missing=``: the first of ``modules`` not installed, else None.

    Looks the modules up without importing them.

    >>> missing_modules("json") is None, missing_modules("no_such_module_here")
    (True, "python package 'no_such_module_here' is not installed")
    """
    for module in modules:
        if importlib.util.find_spec(module) is None:
            return f"python package {module!r} is not installed"
    return None


def package_modules(package: str) -> list[str]:
    """The package itself and its direct modules (private ``_x`` modules skipped).

    How plug-in kinds and metric families are found: every module is imported once.

    >>> package_modules("glyphbench.suites")[0], package_modules("no_such_package_here")
    ('glyphbench.suites', [])
    """
    spec = importlib.util.find_spec(package)
    if spec is None:
        return []
    names = [package]
    for info in pkgutil.iter_modules(spec.submodule_search_locations or []):
        if not info.name.startswith("_"):
            names.append(f"{package}.{info.name}")
    return names


def _load_entry_points() -> None:
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        importlib.import_module(entry.value)


#: The registry every part of glyphbench uses.
PLUGINS = PluginRegistry()
register = PLUGINS.register
