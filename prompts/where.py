"""The filter expression of ``--where`` (and a run config's ``where:``), checked before use.

pandas' ``DataFrame.query`` evaluates attribute access, calls and ``@name`` references
to Python variables, so an unchecked expression runs any code it likes
(``@pd.io.common.os.system(...)``), even in a dry run. An expression is therefore parsed
with :mod:`ast` and accepted only when every part of it is on a short list:

* column names (no leading underscore: pandas reserves ``__pd_eval_local_*`` for ``@``),
  and literals (strings, numbers, True/False/None, lists/tuples/sets of them);
* comparisons (``== != < <= > >= in not in``), ``and or not``, ``& | ~``, arithmetic
  (``+ - * / // %``, and ``**`` to a number of at most :data:`MAX_EXPONENT`: a power of
  a power would compute for ever);
* calls to :data:`FUNCTIONS` by name, and ``COLUMN.str.METHOD(...)`` with METHOD in
  :data:`STR_METHODS`: the only attribute access there is.

Anything else (``@`` references, other attributes, dunders, lambdas, comprehensions,
subscripts, calls to other names) is refused in one line that says what is allowed.

The methods of :data:`REGEX_METHODS` take a regular expression, and Python's ``re``
backtracks: ``(a+)+$`` on 25 a's and a '!' takes a second, and each further character
doubles that. Their pattern must be a string literal of at most :data:`MAX_PATTERN_CHARS`
characters with none of the shapes behind exponential backtracking (:func:`pattern_problem`).

>>> check_where("cefr == 'A1' and word_count <= 2")
>>> check_where("text.str.len() <= 4000 and text_id in ['w1', 'g1']")
>>> where_problem("text.__class__")
"'text.__class__' is not allowed"
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from glyphbench.core.errors import InputError

#: ``COLUMN.str.METHOD(...)`` methods a filter may call: pandas string methods that only
#: read the column (none takes a callable, none reaches another object).
STR_METHODS = frozenset(
    {
        "len",
        "contains",
        "startswith",
        "endswith",
        "match",
        "fullmatch",
        "count",
        "lower",
        "upper",
        "strip",
        "isalpha",
        "isalnum",
        "isdigit",
        "isnumeric",
        "isdecimal",
        "isspace",
        "islower",
        "isupper",
        "istitle",
    }
)

#: The methods of :data:`STR_METHODS` whose pattern is a regular expression (pandas'
#: ``contains`` unless ``regex=False``).
REGEX_METHODS = frozenset({"contains", "match", "fullmatch", "count"})

#: The longest regular expression a filter may give.
MAX_PATTERN_CHARS = 200

#: A repetition of more than this many times counts as unbounded for backtracking: a
#: repetition or an alternative inside one can take exponential time.
MANY = 16

#: How a refused pattern's reason begins (it names its own fix, not the list of forms).
PATTERN = "the pattern "

#: Functions a filter may call by name (pandas' own math functions, no lookup of a name).
FUNCTIONS = frozenset({"abs"})

_BOOL_OPS = (ast.And, ast.Or)
_UNARY_OPS = (ast.Not, ast.Invert, ast.USub, ast.UAdd)
_BIN_OPS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,  # ** only to a small literal exponent (_arithmetic)
    ast.BitAnd,
    ast.BitOr,
)
_COMPARE_OPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn)
_CONSTANTS = (str, int, float, bool, type(None))

#: The largest exponent a filter may write (``10**6``): a power of a power
#: (``2 ** 2 ** 100``) would compute for ever.
MAX_EXPONENT = 64


ALLOWED = (
    "column names, literals, comparisons (== != < <= > >= in, not in), and/or/not, & | ~, "
    f"arithmetic (+ - * / // %, ** to a number up to {MAX_EXPONENT}), "
    f"{', '.join(sorted(FUNCTIONS))}() and COLUMN.str.METHOD(...) "
    "with METHOD one of " + ", ".join(sorted(STR_METHODS))
)


def where_problem(expression: str) -> str | None:
    """Why ``expression`` is not an allowed filter, or None when it is.

    >>> where_problem("@pd.io.common.os.system('id') == 0")
    "'@' (a reference to a Python variable) is not allowed"
    >>> where_problem("(lambda: 1)() == 1")
    "'(lambda: 1)()' is not allowed"
    """
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        # pandas reads '@name' as a Python variable; Python itself cannot parse most of them
        if "@" in expression and not _only_in_strings("@", expression):
            return "'@' (a reference to a Python variable) is not allowed"
        return f"not a filter expression ({exc.msg}, column {exc.offset or 0})"
    bad = _first_disallowed(tree.body)
    if bad is None:
        return next(filter(None, map(_call_pattern_problem, _regex_calls(tree.body))), None)
    shown = ast.get_source_segment(expression.strip(), bad) or type(bad).__name__
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"{shown!r} is not allowed"


def where_refusal(expression: str) -> str | None:
    """The one-line refusal of ``expression`` (what is wrong, and what to write), or None."""
    problem = where_problem(expression)
    if problem is None or problem.startswith(PATTERN):
        return problem
    return f"{problem}: a filter may use only {ALLOWED}"


def check_where(expression: str, option: str = "--where") -> None:
    """Raise a one-line :class:`InputError` naming ``option`` unless ``expression`` is allowed."""
    refusal = where_refusal(expression)
    if refusal is not None:
        raise InputError(option, refusal)


def pattern_problem(pattern: str) -> str | None:
    """Why a filter may not search with the regular expression ``pattern``, or None.

    Refused: patterns over :data:`MAX_PATTERN_CHARS` characters, back-references, and a
    repetition or an alternative inside a repetition of more than :data:`MANY` (``(a+)+``,
    ``(\\w+\\s)*``, ``(a|ab)+``): the shapes whose backtracking grows exponentially with
    the text. A possessive repetition or an atomic group does not backtrack and passes.
    Patterns that only grow polynomially (``.*a.*b``) pass.

    >>> pattern_problem(r"^[A-Z][a-z]+ \\d{2,4}$")
    >>> pattern_problem("(a+)+$").split(",")[0]
    "the pattern '(a+)+$' repeats a repetition"
    """
    shown = repr(pattern if len(pattern) <= 40 else pattern[:37] + "...")
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"{PATTERN}{shown} is longer than {MAX_PATTERN_CHARS} characters"
    try:
        parsed = _parse_regex(pattern)
    except Exception as exc:  # re.error, and the parser's own errors on odd input
        return f"{PATTERN}{shown} is not a regular expression ({exc})"
    risk = _backtracking_risk(parsed, inside_many=False)
    if risk is None:
        return None
    return f"{PATTERN}{shown} {risk}, which can take exponential time on a long text: {FIXES[risk]}"


#: What to write instead, by what :func:`_backtracking_risk` found.
FIXES = {
    "repeats a repetition": "repeat once (for example '[\\w\\s]+' for '(\\w+\\s)+')",
    "repeats a choice of alternatives": (
        "search for each alternative on its own, joined by 'or' "
        "(text.str.contains('cat') or text.str.contains('dog'))"
    ),
    "uses a back-reference": "a filter's pattern may not refer back to a group",
}


def _parse_regex(pattern: str) -> Any:
    try:
        from re import _parser  # type: ignore[attr-defined]  # Python 3.11+
    except ImportError:  # pragma: no cover - Python 3.10
        import sre_parse as _parser
    return _parser.parse(pattern)


def _backtracking_risk(items: Any, inside_many: bool) -> str | None:
    """What makes ``items`` (a parsed pattern) backtrack exponentially, or None."""
    from re import _constants as c  # type: ignore[attr-defined]

    for op, arg in items:
        name = str(op)
        if name in ("GROUPREF", "GROUPREF_EXISTS"):
            return "uses a back-reference"
        if name in ("MAX_REPEAT", "MIN_REPEAT"):
            _low, high, body = arg
            if inside_many and high > 1:
                return "repeats a repetition"
            many = high == c.MAXREPEAT or high > MANY
            found = _backtracking_risk(body, inside_many or many)
        elif name == "BRANCH":
            if inside_many:
                return "repeats a choice of alternatives"
            found = next(filter(None, (_backtracking_risk(b, False) for b in arg[1])), None)
        elif name == "SUBPATTERN":
            found = _backtracking_risk(arg[-1], inside_many)
        elif name in ("ASSERT", "ASSERT_NOT"):
            found = _backtracking_risk(arg[1], inside_many)
        else:  # literals, classes, anchors; POSSESSIVE_REPEAT and ATOMIC_GROUP never backtrack
            found = None
        if found is not None:
            return found
    return None


def _regex_calls(node: ast.AST) -> Iterator[ast.Call]:
    """The calls of an allowed expression whose first argument is a regular expression."""
    for call in ast.walk(node):
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr in REGEX_METHODS
        ):
            yield call


def _call_pattern_problem(call: ast.Call) -> str | None:
    keywords = {k.arg: k.value for k in call.keywords}
    regex = keywords.get("regex")
    if isinstance(regex, ast.Constant) and regex.value is False:
        return None  # a plain substring
    pattern = call.args[0] if call.args else keywords.get("pat")
    if pattern is None:
        return None  # pandas itself refuses a call with no pattern
    if not (isinstance(pattern, ast.Constant) and isinstance(pattern.value, str)):
        method = call.func.attr if isinstance(call.func, ast.Attribute) else "str"
        return f"{PATTERN}of {method}() must be a string literal"
    return pattern_problem(pattern.value)


def _arithmetic(node: ast.BinOp) -> bool:
    """An allowed operator; a power only to a number literal of at most :data:`MAX_EXPONENT`."""
    if isinstance(node.op, _BIN_OPS):
        return True
    exponent = node.right.value if isinstance(node.right, ast.Constant) else None
    return (
        isinstance(node.op, ast.Pow)
        and type(exponent) in (int, float)
        and isinstance(exponent, int | float)
        and abs(exponent) <= MAX_EXPONENT
    )


def _only_in_strings(char: str, expression: str) -> bool:
    """Whether every ``char`` of ``expression`` lies inside a string literal (by tokens)."""
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(expression).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    return not any(tok.type == tokenize.OP and char in tok.string for tok in tokens)


def _first_disallowed(node: ast.AST) -> ast.AST | None:
    """The first node (depth first) of an expression that is not on the list, or None."""
    children: list[ast.AST]
    if isinstance(node, ast.BoolOp) and isinstance(node.op, _BOOL_OPS):
        children = list(node.values)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, _UNARY_OPS):
        children = [node.operand]
    elif isinstance(node, ast.BinOp) and _arithmetic(node):
        children = [node.left, node.right]
    elif isinstance(node, ast.Compare) and all(isinstance(op, _COMPARE_OPS) for op in node.ops):
        children = [node.left, *node.comparators]
    elif isinstance(node, ast.Name):
        return None if _column_name(node.id) else node
    elif isinstance(node, ast.Constant):
        return None if isinstance(node.value, _CONSTANTS) else node
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        children = list(node.elts)
    elif isinstance(node, ast.Call) and _allowed_callee(node.func):
        if any(k.arg is None for k in node.keywords):  # **mapping
            return node
        children = [*node.args, *(k.value for k in node.keywords)]
    else:
        return node
    for child in children:
        bad = _first_disallowed(child)
        if bad is not None:
            return bad
    return None


def _column_name(name: str) -> bool:
    return name.isidentifier() and not name.startswith("_")


def _allowed_callee(func: ast.expr) -> bool:
    """``abs`` (a listed function) or ``COLUMN.str.METHOD`` with a listed METHOD."""
    if isinstance(func, ast.Name):
        return func.id in FUNCTIONS
    return (
        isinstance(func, ast.Attribute)
        and func.attr in STR_METHODS
        and isinstance(func.value, ast.Attribute)
        and func.value.attr == "str"
        and isinstance(func.value.value, ast.Name)
        and _column_name(func.value.value.id)
    )
