"""Name -> factory registries for pluggable parts (models, OCR engines, codecs).

A spec string names a registered part and may carry options, e.g.
``control:typo?rate=0.2`` or ``jpeg?quality=30``: ``kind:rest?key=value&key=value``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar
from urllib.parse import parse_qsl

from bench.errors import InputError

T = TypeVar("T")


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


class Registry(Generic[T]):
    """A small registry: ``@registry.register("name")`` on a factory taking a :class:`Spec`."""

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
