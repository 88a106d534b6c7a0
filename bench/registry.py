"""One plug-in registry for every pluggable part of glyphbench.

Models, readers, codecs, prompt sources, samplers and suites are all *plug-ins*:
one :class:`Plugin` record each, registered by kind and name in :data:`PLUGINS`.
A plug-in is chosen with a *spec string*::

    name[:target][?key=value&key=value]     e.g.  control:typo?rate=0.2
                                                    diffusers:stabilityai/sdxl-turbo
                                                    jpeg?quality=30

and its options are a typed :class:`Options` model (pydantic), validated when the
config loads, before anything is written: a typo in an option name, a value of the
wrong type or a missing target is an :class:`~bench.errors.InputError` that names
the spec and lists what is allowed.

Adding a plug-in is one module in the kind's package (see :data:`KINDS`) that calls
:func:`register`; every module of that package is imported when the kind is first
used, so nothing else needs editing. Modules must stay cheap to import (heavy
libraries are imported inside the factory), so ``glyphbench --help`` and
``glyphbench list`` stay instant. Third-party packages add plug-ins through the
``glyphbench.plugins`` entry-point group (each entry point names a module to import).

>>> from pydantic import Field
>>> class ToyOptions(Options):
...     rate: float = Field(0.1, ge=0, le=1, description="typo rate")
>>> @register("models", "toy-doc", options=ToyOptions, summary="a doctest model", target="optional")
... def _toy(spec: Spec, options: ToyOptions) -> str:
...     return f"toy {spec.target} at {options.rate}"
>>> PLUGINS.create("models", "toy-doc:x?rate=0.5")
'toy x at 0.5'
>>> PLUGINS.resolve("models", "toy-doc?rate=2")
Traceback (most recent call last):
...
bench.errors.InputError: [models]: toy-doc?rate=2: option 'rate': Input should be less than or equal to 1
>>> PLUGINS.unregister("models", "toy-doc")
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, ValidationError

from bench.errors import InputError

T = TypeVar("T")
O = TypeVar("O", bound="Options")  # noqa: E741 - the conventional name for an options type

#: Plug-in kind -> the package whose modules register plug-ins of that kind.
KINDS: dict[str, str] = {
    "models": "bench.models",
    "readers": "bench.readers",
    "codecs": "vae_eval.codecs",
    "sources": "prompts.sources",
    "samplers": "prompts.samplers",
    "suites": "bench.suites",
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
        head, _, query = text.partition("?")
        kind, _, target = head.partition(":")
        options = dict(parse_qsl(query, keep_blank_values=True)) if query else {}
        return cls(kind=kind.strip(), target=target.strip(), options=options, text=text)

    def with_options(self, extra: Mapping[str, str]) -> Spec:
        """This spec with ``extra`` options merged in (``extra`` wins), its text rebuilt.

        >>> Spec.parse("control:typo?rate=0.1").with_options({"size": "256"}).text
        'control:typo?rate=0.1&size=256'
        """
        options = {**self.options, **extra}
        head = self.kind + (f":{self.target}" if self.target else "")
        query = "&".join(f"{key}={value}" for key, value in options.items())
        return Spec(self.kind, self.target, options, head + (f"?{query}" if query else ""))


class Options(BaseModel):
    """Base of every plug-in's typed options: unknown keys are errors, values are frozen.

    Spec options arrive as strings (``?rate=0.2``) or YAML values; pydantic converts
    them to each field's type (``"0.2"`` -> 0.2, ``"true"`` -> True).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


class NoOptions(Options):
    """Options of a plug-in that takes none."""


@dataclass(frozen=True)
class Plugin(Generic[T]):
    """One registered plug-in: what ``glyphbench list`` prints and what creates it."""

    kind: str
    name: str
    factory: Callable[[Spec, Any], T]
    options: type[Options] = NoOptions
    summary: str = ""
    target: TargetRule = "none"
    module: str = ""

    def option_rows(self) -> list[tuple[str, str, str, str]]:
        """(name, type, default, description) of every option, for listings and docs."""
        rows = []
        for key, info in self.options.model_fields.items():
            annotation = getattr(info.annotation, "__name__", None) or str(info.annotation)
            default = (
                "required"
                if info.is_required()
                else repr(info.get_default(call_default_factory=True))
            )
            rows.append((key, annotation.replace("typing.", ""), default, info.description or ""))
        return rows


@dataclass(frozen=True)
class Resolved(Generic[T]):
    """A spec checked against its plug-in: creating it cannot fail on its options."""

    plugin: Plugin[T]
    spec: Spec
    options: Options

    def create(self) -> T:
        return self.plugin.factory(self.spec, self.options)


class PluginRegistry:
    """Plug-ins by kind and name; kinds load their package's modules on first use."""

    def __init__(self, kinds: Mapping[str, str] = KINDS) -> None:
        self.kinds = dict(kinds)
        self._plugins: dict[str, dict[str, Plugin[Any]]] = {kind: {} for kind in self.kinds}
        self._loaded: set[str] = set()

    # ------------------------------------------------------------ registering
    def register(
        self,
        kind: str,
        name: str,
        *,
        options: type[Options] = NoOptions,
        summary: str = "",
        target: TargetRule = "none",
    ) -> Callable[[Callable[[Spec, Any], T]], Callable[[Spec, Any], T]]:
        """Decorator: register ``factory(spec, options)`` as plug-in ``name`` of ``kind``."""
        self._check_kind(kind)

        def decorator(factory: Callable[[Spec, Any], T]) -> Callable[[Spec, Any], T]:
            module = getattr(factory, "__module__", "")
            plugin = Plugin(kind, name, factory, options, summary, target, module)
            self._plugins[kind][name] = plugin
            return factory

        return decorator

    def add(self, plugin: Plugin[Any]) -> None:
        """Register a ready-made :class:`Plugin` record (tests, notebooks)."""
        self._check_kind(plugin.kind)
        self._plugins[plugin.kind][plugin.name] = plugin

    def unregister(self, kind: str, name: str) -> None:
        self._plugins[kind].pop(name, None)

    # -------------------------------------------------------------- looking up
    def load(self, kind: str) -> None:
        """Import every module of ``kind``'s package (and entry points) once."""
        self._check_kind(kind)
        if kind in self._loaded:
            return
        self._loaded.add(kind)
        for module in _package_modules(self.kinds[kind]):
            importlib.import_module(module)
        if kind == next(iter(self.kinds)):  # entry points once, on the first kind loaded
            _load_entry_points()

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
            known = ", ".join(self.names(kind)) or "none"
            raise InputError(None, f"unknown {_singular(kind)} {name!r}; known: {known}", key=kind)
        return plugin

    def resolve(self, kind: str, spec: str | Spec, *, where: str | None = None) -> Resolved[Any]:
        """Check ``spec`` against its plug-in (name, target, options) without creating it."""
        parsed = Spec.parse(spec) if isinstance(spec, str) else spec
        if not parsed.kind:
            raise InputError(
                where, f"{_singular(kind)} spec {parsed.text!r} names no plug-in", key=kind
            )
        plugin = self.get(kind, parsed.kind)
        if plugin.target == "required" and not parsed.target:
            raise InputError(
                where, f"{parsed.text}: needs a target after '{parsed.kind}:'", key=kind
            )
        if plugin.target == "none" and parsed.target:
            raise InputError(where, f"{parsed.text}: '{parsed.kind}' takes no target", key=kind)
        options = parse_options(
            plugin.options, parsed.options, f"{parsed.text}", where=where, key=kind
        )
        return Resolved(plugin, parsed, options)

    def create(self, kind: str, spec: str | Spec, *, where: str | None = None) -> Any:
        """Resolve ``spec`` and create the plug-in."""
        return self.resolve(kind, spec, where=where).create()

    def _check_kind(self, kind: str) -> None:
        if kind not in self.kinds:
            raise InputError(None, f"unknown plug-in kind {kind!r}; known: {', '.join(self.kinds)}")


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
    bench.errors.InputError: jpeg: unknown option 'qualty'; known: quality
    """
    try:
        return schema.model_validate(dict(raw))
    except ValidationError as exc:
        raise InputError(where, f"{what}: {_first_problem(exc, schema)}", key=key) from None


def _first_problem(exc: ValidationError, schema: type[Options]) -> str:
    error = exc.errors()[0]
    name = ".".join(str(part) for part in error["loc"]) or "options"
    if error["type"] == "extra_forbidden":
        known = ", ".join(schema.model_fields) or "none"
        return f"unknown option {name!r}; known: {known}"
    if error["type"] == "missing":
        return f"option {name!r} is required"
    return f"option {name!r}: {error['msg']}"


def _singular(kind: str) -> str:
    return {
        "models": "model kind",
        "readers": "reader",
        "codecs": "codec",
        "sources": "prompt source",
        "samplers": "sampler",
        "suites": "suite",
    }.get(kind, kind)


def _package_modules(package: str) -> Iterable[str]:
    """The package itself and its direct modules (private ``_x`` modules skipped)."""
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


class Registry(Generic[T]):
    """LEGACY name -> factory table, removed once every part has moved to :data:`PLUGINS`."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._factories: dict[str, Callable[[Spec], T]] = {}

    def register(self, name: str) -> Callable[[Callable[[Spec], T]], Callable[[Spec], T]]:
        def decorator(factory: Callable[[Spec], T]) -> Callable[[Spec], T]:
            self._factories[name] = factory
            return factory

        return decorator

    def names(self) -> list[str]:
        return sorted(self._factories)

    def create(self, spec: str | Spec) -> T:
        parsed = Spec.parse(spec) if isinstance(spec, str) else spec
        factory = self._factories.get(parsed.kind)
        if factory is None:
            known = ", ".join(self.names()) or "none"
            raise InputError(
                None, f"unknown {self.what} {parsed.kind!r} in {parsed.text!r}; known: {known}"
            )
        return factory(parsed)


#: The registry every part of glyphbench uses.
PLUGINS = PluginRegistry()
register = PLUGINS.register
