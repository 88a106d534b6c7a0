"""YAML input: every YAML file glyphbench reads is parsed here, with one-line errors.

A syntax error, a key given twice in one mapping, nesting deeper than
:data:`MAX_YAML_DEPTH` and aliases that expand past :data:`MAX_ALIAS_VALUES` are each an
:class:`~glyphbench.core.errors.InputError` naming the file and line; PyYAML loads on call.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.core.io import MAX_CONFIG_BYTES, config_too_large


def yaml_data(text: str, source: str | Path | None) -> Any:
    """The data of YAML ``text`` (None when empty); a syntax error names ``source`` and line.

    Every YAML file glyphbench reads comes through here (:func:`yaml_loader`): a key
    given twice in one mapping and values nested more than :data:`MAX_YAML_DEPTH` deep
    are refused, naming the line.

    >>> yaml_data("ocr: easyocr\\nlimit: 4\\n", "run.yaml")
    {'ocr': 'easyocr', 'limit': 4}
    >>> for bad in ("vaes: [identity\\n", "limit: 3\\nocr: x\\nlimit: 5\\n"):
    ...     try:
    ...         yaml_data(bad, "run.yaml")
    ...     except InputError as exc:
    ...         print(exc)
    run.yaml:2: invalid YAML: expected ',' or ']', but got '<stream end>'
    run.yaml:3: invalid YAML: duplicate key 'limit' (also on line 1; YAML would keep only the last)
    """
    import yaml

    if len(text) > MAX_CONFIG_BYTES:
        raise InputError(source, f"{config_too_large(len(text))}")
    loader = None
    try:
        loader = yaml_loader()(text)  # refuses a control character: naming the file too
        node = loader.get_single_node()
        if node is None:
            return None
        _check_aliases(node, source)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(source, f"invalid YAML: {problem}", line=line) from None
    finally:
        if loader is not None:
            loader.dispose()


#: The deepest nesting of lists and mappings a YAML file may have (configs use 4 or 5
#: levels; PyYAML's composer recurses once per level, and 2,000 levels overflowed
#: Python's stack with a traceback instead of a one-line error).
MAX_YAML_DEPTH = 100


@functools.cache
def yaml_loader() -> type:
    """PyYAML's ``SafeLoader`` refusing duplicate keys and nesting over :data:`MAX_YAML_DEPTH`.

    Both are YAML errors with the line of the offending key or value, so
    :func:`yaml_data` and :func:`glyphbench.core.errors.user_error` name the file and line.
    """
    import yaml
    from yaml.composer import ComposerError
    from yaml.constructor import ConstructorError

    class Loader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            try:
                if self.depth > MAX_YAML_DEPTH:
                    mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                    problem = f"nested more than {MAX_YAML_DEPTH} levels deep"
                    raise ComposerError(None, None, problem, mark)
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, yaml.MappingNode):
                _refuse_duplicate_keys(self, node, ConstructorError)
            return super().construct_mapping(node, deep=deep)

    return Loader


def _refuse_duplicate_keys(loader: Any, node: Any, error: type[Exception]) -> None:
    """A YAML error at the second of two equal keys of mapping ``node`` (merge keys aside)."""
    first_line: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # ``<<: *base`` then a key of base: an override YAML means
        key = loader.construct_object(key_node, deep=True)
        try:
            earlier = first_line.get(key)
        except TypeError:
            continue  # an unhashable key: PyYAML's own error follows
        if earlier is not None:
            problem = (
                f"duplicate key {key!r} (also on line {earlier}; YAML would keep only the last)"
            )
            raise error(None, None, problem, key_node.start_mark)
        first_line[key] = key_node.start_mark.line + 1


#: Values YAML aliases (``*name``) may add to a document once expanded (an alias bomb,
#: anchors of anchors, grows ~9x per level and took GBs at depth 6).
MAX_ALIAS_VALUES = 10_000


def _check_aliases(root: Any, source: str | Path | None) -> None:
    """Refuse a YAML document whose aliases expand to more than :data:`MAX_ALIAS_VALUES`.

    Counts the values of the document as written (each node once) and as expanded
    (each alias counting its whole anchored value again), without expanding anything.

    >>> yaml_data("a: &x [1, 2]\\nb: *x\\n", "ok.yaml")
    {'a': [1, 2], 'b': [1, 2]}
    >>> bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\\n" + "".join(
    ...     f"{n}: &{n} [{', '.join([f'*{p}'] * 10)}]\\n" for p, n in zip("abcd", "bcde"))
    >>> try:
    ...     yaml_data(bomb, "bomb.yaml")
    ... except InputError as exc:
    ...     print(str(exc)[:86], "...")
    bomb.yaml: YAML aliases expand to more than 10,000 values (anchors of anchors?); write ...
    """
    import yaml

    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    nodes = 0

    def size(node: Any) -> int:
        nonlocal nodes
        known = sizes.get(id(node))
        if known is not None:
            return known
        if id(node) in open_nodes:
            raise InputError(source, "a YAML alias refers to a value that holds it (a cycle)")
        open_nodes.add(id(node))
        nodes += 1
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(key) + size(value) for key, value in node.value)
        open_nodes.discard(id(node))
        sizes[id(node)] = total
        return total

    try:
        expanded = size(root)
    except RecursionError:
        raise InputError(source, "YAML nested too deeply") from None
    if expanded - nodes > MAX_ALIAS_VALUES:
        raise InputError(
            source,
            f"YAML aliases expand to more than {MAX_ALIAS_VALUES:,} values (anchors of "
            "anchors?); write the values out",
        )
