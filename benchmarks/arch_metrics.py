"""The shape of the import graph: rooms, floors, arrows back up, cycles, chains, hidden imports.

Reads every module of the project's packages with :mod:`ast` (nothing is imported)
and the rooms and their order from the ``layers`` contract in ``pyproject.toml``:

* **rooms** and **floors**: the packages the layers contract names, and its layers;
* **arrows back up**: imports from a room into a room on a higher floor (the layers
  contract forbids them; ``lint-imports`` says which);
* **cycles**: strongly connected groups of rooms;
* **longest chain**: the longest path of imports between modules, imports inside
  functions counted and ``if TYPE_CHECKING:`` ones not (those never run); each
  strongly connected group of modules counts once;
* **inside functions**: of the imports from one room of the project into another,
  the share made inside a function body, and how many of those repeat an import of
  the same module the file already makes elsewhere.

    python benchmarks/arch_metrics.py            # a table
    python benchmarks/arch_metrics.py --json     # the same as JSON
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Import:
    """One import statement's target module, where it stands and whether it runs."""

    source: str
    target: str
    in_function: bool
    type_checking: bool


@dataclass
class Graph:
    modules: set[str] = field(default_factory=set)
    imports: list[Import] = field(default_factory=list)


def module_name(path: Path, root: Path, mounts: dict[str, str]) -> str:
    """``bench/engine/loop.py`` -> ``glyphbench.engine.loop`` by pyproject's package-dir
    (``mounts``: import name -> folder); a package's ``__init__`` is the package.

    >>> mounts = {"glyphbench": "bench", "glyphbench.prompts": "prompts"}
    >>> module_name(Path("/r/bench/engine/__init__.py"), Path("/r"), mounts)
    'glyphbench.engine'
    >>> module_name(Path("/r/prompts/pool.py"), Path("/r"), mounts)
    'glyphbench.prompts.pool'
    """
    relative = path.relative_to(root).with_suffix("")
    name, folder = max(
        ((name, folder) for name, folder in mounts.items() if relative.is_relative_to(folder)),
        key=lambda mount: len(mount[1]),
    )
    parts = [name, *relative.relative_to(folder).parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


Found = tuple[list[str], bool, bool]


def _imports(tree: ast.AST, module: str, is_package: bool) -> Iterator[Found]:
    """(names one statement imports, inside a function, under TYPE_CHECKING) per statement."""

    def walk(node: ast.AST, in_function: bool, type_checking: bool) -> Iterator[Found]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                yield [alias.name for alias in child.names], in_function, type_checking
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(child, module, is_package)
                names = [f"{base}.{alias.name}" if base else alias.name for alias in child.names]
                yield names, in_function, type_checking
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                yield from walk(child, True, type_checking)
            elif isinstance(child, ast.If) and _is_type_checking(child):
                yield from walk(ast.Module(body=child.body, type_ignores=[]), in_function, True)
                orelse = ast.Module(body=child.orelse, type_ignores=[])
                yield from walk(orelse, in_function, type_checking)
            else:
                yield from walk(child, in_function, type_checking)

    yield from walk(tree, False, False)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def read_graph(root: Path, mounts: dict[str, str]) -> Graph:
    """Every module of the package folders (``mounts``) and its imports of other modules."""
    graph = Graph()
    files = sorted({path for folder in mounts.values() for path in (root / folder).rglob("*.py")})
    parsed = []
    for path in files:
        name = module_name(path, root, mounts)
        graph.modules.add(name)
        parsed.append((name, path.name == "__init__.py", ast.parse(path.read_text("utf-8"))))
    for name, is_package, tree in parsed:
        for names, in_function, type_checking in _imports(tree, name, is_package):
            targets = {_resolve(target, graph.modules) for target in names} - {None, name}
            graph.imports.extend(
                Import(name, target, in_function, type_checking)
                for target in sorted(t for t in targets if t is not None)
            )
    return graph


def _resolve(target: str, modules: set[str]) -> str | None:
    """The project module a dotted name lands in (a name inside a module is that module)."""
    while target:
        if target in modules:
            return target
        target = target.rpartition(".")[0]
    return None


def package_dirs(pyproject: Path, packages: list[str]) -> dict[str, str]:
    """Import name -> folder: pyproject's package-dir, else each package in its own folder."""
    import tomllib  # Python 3.11+; this script is a developer's tool

    config = tomllib.loads(pyproject.read_text("utf-8"))
    mapping = config["tool"].get("setuptools", {}).get("package-dir")
    return dict(mapping) if mapping else {package: package for package in packages}


def layers(pyproject: Path) -> list[list[str]]:
    """The layers contract, top floor first: each floor a list of rooms."""
    import tomllib  # Python 3.11+; this script is a developer's tool

    config = tomllib.loads(pyproject.read_text("utf-8"))
    for contract in config["tool"]["importlinter"]["contracts"]:
        if contract["type"] == "layers":
            return [[room.strip() for room in layer.split("|")] for layer in contract["layers"]]
    raise SystemExit("no layers contract in pyproject.toml")


def room_of(module: str, rooms: list[str]) -> str | None:
    """The most specific room holding ``module`` (None: in no room).

    >>> room_of("glyphbench.engine.loop", ["glyphbench.engine", "bench"])
    'glyphbench.engine'
    """
    holding = [r for r in rooms if module == r or module.startswith(r + ".")]
    return max(holding, key=len) if holding else None


def strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def longest_chain(nodes: set[str], edges: dict[str, set[str]]) -> list[str]:
    """The longest import path, each strongly connected group counted once (one member shown)."""
    components = strongly_connected(nodes, edges)
    group = {member: i for i, component in enumerate(components) for member in component}
    after: dict[int, set[int]] = defaultdict(set)
    for source, targets in edges.items():
        for target in targets:
            if group[source] != group[target]:
                after[group[source]].add(group[target])
    best: dict[int, list[int]] = {}
    # Tarjan emits components in reverse topological order: successors come first.
    for i in range(len(components)):
        tails = [best[j] for j in after[i]]
        best[i] = [i, *max(tails, key=len, default=[])]
    chain = max(best.values(), key=len, default=[])
    return [components[i][0] for i in chain]


def measure(root: Path = ROOT) -> dict[str, object]:
    floors = layers(root / "pyproject.toml")
    rooms = [room for floor in floors for room in floor]
    floor_of = {room: level for level, floor in enumerate(floors) for room in floor}
    packages = sorted({room.split(".")[0] for room in rooms})
    graph = read_graph(root, package_dirs(root / "pyproject.toml", packages))
    running = [i for i in graph.imports if not i.type_checking]
    module_edges: dict[str, set[str]] = defaultdict(set)
    for item in running:
        module_edges[item.source].add(item.target)
    room_edges: dict[str, set[str]] = defaultdict(set)
    cross = []
    back_up = set()
    for item in graph.imports:
        source, target = room_of(item.source, rooms), room_of(item.target, rooms)
        if source is None or target is None or source == target:
            continue
        cross.append(item)
        room_edges[source].add(target)
        if floor_of[target] < floor_of[source]:  # a lower index is a higher floor
            back_up.add((item.source, item.target))
    local = [i for i in cross if i.in_function]
    top_level = {(i.source, i.target) for i in cross if not i.in_function}
    local_targets: dict[str, list[str]] = defaultdict(list)
    for item in local:
        local_targets[item.source].append(item.target)
    repeats = sum(
        1
        for item in local
        if (item.source, item.target) in top_level
        or local_targets[item.source].count(item.target) > 1
    )
    cycles = [c for c in strongly_connected(set(rooms), room_edges) if len(c) > 1]
    chain = longest_chain(graph.modules, module_edges)
    return {
        "rooms": len(rooms),
        "floors": len(floors),
        "modules": len(graph.modules),
        "arrows_back_up": len(back_up),
        "room_cycles": cycles,
        "longest_chain": len(chain),
        "longest_chain_modules": chain,
        "cross_room_imports": len(cross),
        "inside_functions": len(local),
        "inside_functions_share": round(len(local) / len(cross), 3) if cross else 0.0,
        "inside_functions_repeating": repeats,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    figures = measure()
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    for key, value in figures.items():
        if key == "longest_chain_modules":
            value = " -> ".join(value)  # type: ignore[arg-type]
        print(f"{key:28} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
