"""``python:module:Object``: any Python object that follows the codec protocol.

``Object`` is looked up in the imported ``module`` (dots allowed on both sides:
``python:mypkg.codecs:Factory.create``). A class or function is called with no
arguments to make the codec object; an object is used as it is. The object then
follows :mod:`glyphbench.vae_eval.codecs.protocol`: ``encode``/``decode`` on tensors in [-1, 1]
(it gets the tensor codec options ``dtype``, ``device``, ``batch_size``, ``tile``), or
``roundtrip`` on PIL images, or it is a :class:`~glyphbench.vae_eval.codecs.protocol.Codec`.

Objects made in a running Python process can skip the module path:
:func:`~glyphbench.vae_eval.codecs.protocol.register_codec` gives them a name of their own.
"""

from __future__ import annotations

import importlib
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.core.registry import Spec, register
from glyphbench.vae_eval.codecs.protocol import Codec, TensorOptions, adapt


def import_object(target: str) -> Any:
    """The object ``module:attribute.path`` names; InputError when it cannot be found.

    >>> import_object("collections:OrderedDict").__name__
    'OrderedDict'
    """
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise InputError(None, f"python:{target}: expected python:module:Object")
    try:
        found: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise InputError(None, f"python:{target}: cannot import {module_name!r} ({exc})") from None
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise InputError(None, f"python:{target}: {module_name} has no {attribute!r}") from None
    return found


def make_codec(spec: Spec, options: TensorOptions) -> Codec:
    """Import, instantiate (when a class or function) and adapt the object of ``spec``."""
    found = import_object(spec.target)
    made = found() if isinstance(found, type) or _is_plain_function(found) else found
    try:
        return adapt(spec.text, made, options)
    except TypeError as exc:
        raise InputError(None, f"{spec.text}: {exc}") from None


def _is_plain_function(found: Any) -> bool:
    import inspect

    return inspect.isfunction(found) or inspect.ismethod(found)


@register(
    "codecs",
    "python",
    options=TensorOptions,
    target="required",
    usage="python:module:Object",
    summary="Any Python object with encode()/decode() on tensors, or roundtrip() on images.",
)
def _python(spec: Spec, options: TensorOptions) -> Codec:
    return make_codec(spec, options)
