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
  the same module the file already makes elsewhere;
* **config takers** (``--config-takers``): the function parameters that take the run's
  whole ``RunConfig`` (annotated with it, or a ``config``/``run_config`` typed ``Any``
  or unannotated in a module that names ``RunConfig``);
* **the reader option's walk** (``--reader-walk``): the functions the value of
  ``glyphbench run/read/rescore --ocr`` passes through (:func:`reader_walk`), and how
  often the walk returns to a file it had left.

    python benchmarks/arch_metrics.py            # a table
    python benchmarks/arch_metrics.py --json     # the same as JSON
    python benchmarks/arch_metrics.py --root OTHER_CHECKOUT   # measure another tree
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
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


# ------------------------------------------------------------------ config takers
CONFIG_NAMES = ("config", "run_config")


def _annotation_text(node: ast.expr | None) -> str:
    return "" if node is None else ast.unparse(node)


def config_takers(root: Path, mounts: dict[str, str]) -> list[str]:
    """``file:line function(param)`` for each parameter taking the whole ``RunConfig``."""
    found = []
    for folder in sorted(set(mounts.values())):
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text("utf-8")
            if "RunConfig" not in text:
                continue
            for node in ast.walk(ast.parse(text)):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                for param in params:
                    annotation = _annotation_text(param.annotation)
                    loose = param.arg in CONFIG_NAMES and annotation in ("", "Any")
                    if "RunConfig" in annotation or loose:
                        relative = path.relative_to(root).as_posix()
                        found.append(f"{relative}:{node.lineno} {node.name}({param.arg})")
    return found


# ------------------------------------------------------------- the reader option's walk
#: Attributes that hold the reader option (or the reader made from it) on a carrier.
READER_ATTRS = frozenset(
    {"ocr", "read", "reader", "reader_spec", "engine", "ocr_engine", "_ocr", "_reader", "spec"}
)


@dataclass
class Function:
    module: str
    path: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: str | None

    @property
    def params(self) -> list[str]:
        args = self.node.args
        return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]


@dataclass
class Project:
    """Every function of the packages, by module, and each module's imported names."""

    functions: dict[str, Function] = field(default_factory=dict)  # "mod:Class.name" -> it
    imported: dict[str, dict[str, str]] = field(default_factory=dict)  # mod -> local -> dotted
    methods: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    classes: dict[str, str] = field(default_factory=dict)  # "mod.Class" -> "mod"


def _imported_names(tree: ast.AST, module: str, is_package: bool) -> dict[str, str]:
    """Each name a module imports (anywhere in it) -> the dotted name it stands for."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            for alias in node.names:
                names[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name
    return names


def read_project(root: Path, mounts: dict[str, str]) -> Project:
    project = Project()
    for folder in sorted(set(mounts.values())):
        for path in sorted((root / folder).rglob("*.py")):
            module = module_name(path, root, mounts)
            tree = ast.parse(path.read_text("utf-8"))
            project.imported[module] = _imported_names(tree, module, path.name == "__init__.py")
            relative = path.relative_to(root).as_posix()
            for node in tree.body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    project.functions[f"{module}:{node.name}"] = Function(
                        module, relative, node, None
                    )
                elif isinstance(node, ast.ClassDef):
                    project.classes[f"{module}.{node.name}"] = module
                    for item in node.body:
                        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                            key = f"{module}:{node.name}.{item.name}"
                            project.functions[key] = Function(module, relative, item, node.name)
                            project.methods[item.name].append(key)
    return project


def _defined(project: Project, dotted: str | None) -> str | None:
    """The function (or class's ``__init__``) a dotted name stands for, through re-exports."""
    for _ in range(5):  # a name imported from a module that imports it from another
        if not dotted:
            return None
        where, _, name = dotted.rpartition(".")
        for key in (f"{where}:{name}", f"{where}:{name}.__init__"):
            if key in project.functions:
                return key
        dotted = project.imported.get(where, {}).get(name)
    return None


#: Methods of dicts, lists, futures and pydantic models: never resolved by name alone to a
#: project method of the same name.
LIBRARY_METHODS = frozenset(
    {"update", "append", "extend", "add", "setdefault", "insert", "get", "items", "keys"}
    | {"values", "copy", "pop", "model_dump", "model_copy", "model_validate"}
    | {"submit", "result", "shutdown", "cancel"}
)


def _local_classes(project: Project, caller: Function) -> dict[str, str]:
    """Names of ``caller`` assigned an instance of a project class: name -> that class's
    qualified prefix (``module:Class``)."""
    classes: dict[str, str] = {}
    for node in ast.walk(caller.node):
        targets, value = _assignment(node)
        if not isinstance(value, ast.Call):
            continue
        made = _callee(project, caller, value, {})
        if made is None or not made.endswith(".__init__"):
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                classes[target.id] = made.removesuffix(".__init__")
    return classes


def _callee(
    project: Project, caller: Function, call: ast.Call, classes: dict[str, str] | None = None
) -> str | None:
    """The project function a call runs: by import, by class (``self``, or a name assigned
    an instance: ``classes``), or by a method name defined once in the packages."""
    func = call.func
    module = caller.module
    if isinstance(func, ast.Name):
        for key in (f"{module}:{func.id}", f"{module}:{func.id}.__init__"):
            if key in project.functions:
                return key
        return _defined(project, project.imported.get(module, {}).get(func.id))
    if not isinstance(func, ast.Attribute):
        return None
    if isinstance(func.value, ast.Name) and func.value.id in ("self", "cls") and caller.cls:
        key = f"{module}:{caller.cls}.{func.attr}"
        if key in project.functions:
            return key
    if isinstance(func.value, ast.Name):
        dotted = project.imported.get(module, {}).get(func.value.id)
        if dotted and f"{dotted}:{func.attr}" in project.functions:
            return f"{dotted}:{func.attr}"
        owner = (classes or {}).get(func.value.id)
        if owner and f"{owner}.{func.attr}" in project.functions:
            return f"{owner}.{func.attr}"
    methods = project.methods.get(func.attr, [])
    unique = len(methods) == 1 and func.attr not in LIBRARY_METHODS
    return methods[0] if unique else None


class _Taint:
    """Which expressions of one function carry the reader option (flow-insensitive).

    ``returns(call)``: whether a call's result carries it: for a project function, whether
    the function returns a carrier (None: not known yet); else whether an argument does.
    """

    def __init__(
        self, carriers: set[str], attrs: set[str], returns: Callable[[ast.Call], bool | None]
    ) -> None:
        self.carriers = set(carriers)
        self.attrs = attrs  # ``self.<attr>`` that carry it, shared by a class's methods
        self.returns = returns

    def __call__(self, node: ast.AST | None) -> bool:
        if node is None:
            return False
        if isinstance(node, ast.Name):
            return node.id in self.carriers
        if isinstance(node, ast.Attribute):
            on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
            if on_self and node.attr in self.attrs:
                return True
            return node.attr in READER_ATTRS and self(node.value)
        if isinstance(node, ast.Call):
            known = self.returns(node)
            if known is not None:
                return known
            values = [*node.args, *(k.value for k in node.keywords)]
            method_of = node.func.value if isinstance(node.func, ast.Attribute) else None
            return any(self(value) for value in values) or self(method_of)
        return self._container(node)

    def _container(self, node: ast.AST) -> bool:
        """Subscripts, comprehensions, collections and the other compound expressions."""
        if isinstance(node, ast.Subscript):
            return self(node.value)
        if isinstance(node, ast.DictComp | ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return any(self(generator.iter) for generator in node.generators)
        if isinstance(node, ast.Starred):
            return self(node.value)
        if isinstance(node, ast.Tuple | ast.List):
            return any(self(value) for value in node.elts)
        if isinstance(node, ast.BoolOp):
            return any(self(value) for value in node.values)
        if isinstance(node, ast.IfExp):
            return self(node.body) or self(node.orelse)
        if isinstance(node, ast.Dict):
            return any(self(value) for value in node.values)
        if isinstance(node, ast.Lambda):
            return self(node.body)
        return False

    def spread(self, body: ast.AST) -> None:
        """Names assigned from a carrying expression carry it too (until nothing changes)."""
        changed = True
        while changed:
            changed = False
            for node in ast.walk(body):
                targets, value = _assignment(node)
                if not self(value):
                    continue
                for target in targets:
                    for name in ast.walk(target):
                        if isinstance(name, ast.Name) and name.id not in self.carriers:
                            self.carriers.add(name.id)
                            changed = True
                        is_self = isinstance(name, ast.Attribute) and (
                            isinstance(name.value, ast.Name) and name.value.id == "self"
                        )
                        if is_self and name.attr not in self.attrs:  # type: ignore[union-attr]
                            self.attrs.add(name.attr)  # type: ignore[union-attr]
                            changed = True


def _assignment(node: ast.AST) -> tuple[list[ast.expr], ast.AST | None]:
    """What a statement assigns to, and from what (``x.update(y)`` puts y into x)."""
    if isinstance(node, ast.Assign):
        return node.targets, node.value
    if isinstance(node, ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
        return [node.target], node.value
    if isinstance(node, ast.For | ast.comprehension):
        return [node.target], node.iter
    if isinstance(node, ast.withitem) and node.optional_vars is not None:
        return [node.optional_vars], node.context_expr
    if isinstance(node, ast.Call) and _mutates(node):
        assert isinstance(node.func, ast.Attribute)
        return [node.func.value], ast.Tuple(elts=list(node.args), ctx=ast.Load())
    return [], None


#: Methods that put their argument into the object they are called on.
MUTATORS = frozenset({"update", "append", "extend", "add", "setdefault", "insert"})


def _mutates(node: ast.AST) -> bool:
    """``name.update(...)`` and the like: the argument goes into ``name``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MUTATORS
        and isinstance(node.func.value, ast.Name)
    )


def _bound(function: Function, call: ast.Call, taint: _Taint, method: bool) -> set[str]:
    """The callee's parameters that receive the option at this call."""
    params = function.params
    if method and params and params[0] in ("self", "cls"):
        params = params[1:]
    bound = set()
    for position, arg in enumerate(call.args):
        if taint(arg):
            if isinstance(arg, ast.Starred) and function.node.args.vararg:
                bound.add(function.node.args.vararg.arg)
            elif position < len(params):
                bound.add(params[position])
    for keyword in call.keywords:
        if not taint(keyword.value):
            continue
        if keyword.arg is None or keyword.arg not in params:
            extra = function.node.args.kwarg
            if extra is not None:
                bound.add(extra.arg)
        else:
            bound.add(keyword.arg)
    if isinstance(call.func, ast.Attribute) and taint(call.func.value):
        bound.add("self")  # a method of an object carrying the option
    return bound


def _calls(node: ast.AST) -> Iterator[ast.Call]:
    """The calls of a function body in source order."""
    calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)]
    yield from sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def reader_walk(root: Path, mounts: dict[str, str], entry_file: str) -> list[str]:
    """The functions the reader option passes through, in the order a reader of the code
    meets them: depth first from each command of ``entry_file`` that takes ``ocr``.

    A function is a stop the first time the option reaches it: through a parameter
    bound to a carrying argument, or as a method of a carrying object. A name carries
    the option when it is assigned one that does, a call's result carries it when one
    of its arguments does, and an attribute named like a reader (:data:`READER_ATTRS`)
    of a carrier carries it. Calls are resolved by import, by class, or by a method name
    defined once in the packages; calls into other packages end the walk. Returns
    ``path:function`` per stop.
    """
    project = read_project(root, mounts)
    class_attrs: dict[str, set[str]] = defaultdict(set)
    seen: set[str] = set()
    returned: dict[str, bool] = {}  # function -> whether it returns a carrier
    stops: list[str] = []

    def visit(key: str, carriers: set[str]) -> bool:
        seen.add(key)
        function = project.functions[key]
        stops.append(f"{function.path}:{key.split(':', 1)[1]}")

        classes = _local_classes(project, function)

        def returns(call: ast.Call) -> bool | None:
            callee = _callee(project, function, call, classes)
            if callee is None or callee.endswith(".__init__"):
                return None  # an object made from a carrier carries it
            return returned.get(callee, False)

        taint = _Taint(carriers, class_attrs[f"{function.module}.{function.cls}"], returns)
        visited = True
        while visited:  # a callee found to return a carrier makes new carriers here
            visited = False
            taint.spread(function.node)
            for call in _calls(function.node):
                callee = _callee(project, function, call, classes)
                if callee is None or callee in seen:
                    continue
                target = project.functions[callee]
                bound = _bound(target, call, taint, method=target.cls is not None)
                if bound:
                    returned[callee] = visit(callee, bound)
                    visited = True
        outputs = [n.value for n in ast.walk(function.node) if isinstance(n, ast.Return)]
        return any(taint(value) for value in outputs)

    for key, function in sorted(project.functions.items(), key=lambda item: item[1].node.lineno):
        if function.path == entry_file and "ocr" in function.params and key not in seen:
            returned[key] = visit(key, {"ocr"})
    return stops


def walk_figures(stops: list[str]) -> dict[str, int]:
    """Stops, files, and returns to a file already left (a stop in an earlier file).

    >>> walk_figures(["a.py:f", "b.py:g", "a.py:h", "a.py:i", "c.py:j"])
    {'stops': 5, 'files': 3, 'returns': 1}
    """
    files = [stop.split(":", 1)[0] for stop in stops]
    returns = sum(
        1 for i, file in enumerate(files) if i and file != files[i - 1] and file in files[:i]
    )
    return {"stops": len(stops), "files": len(set(files)), "returns": returns}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    parser.add_argument(
        "--config-takers", action="store_true", help="list the parameters taking RunConfig"
    )
    parser.add_argument("--reader-walk", action="store_true", help="list the reader option's stops")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    mounts = package_dirs(root / "pyproject.toml", ["glyphbench"])
    if args.config_takers:
        print("\n".join(config_takers(root, mounts)))
        return 0
    if args.reader_walk:
        print("\n".join(reader_walk(root, mounts, "bench/cli/run.py")))
        return 0
    figures = measure(root)
    takers = config_takers(root, mounts)
    figures["config_takers"] = len(takers)
    figures["config_taker_files"] = len({taker.split(":", 1)[0] for taker in takers})
    walk = walk_figures(reader_walk(root, mounts, "bench/cli/run.py"))
    figures.update({f"reader_walk_{key}": value for key, value in walk.items()})
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
