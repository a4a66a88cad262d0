"""Turning a ``@pl.jit`` kernel's source into the Python ascsim executes on each core.

PyPTO Pro parses kernels rather than running them; most of its language means the same as
Python, and the rest is rewritten here:

* ``with pl.section_cube():`` / ``with pl.section_vector():`` become ``if`` blocks that only
  the AIC / only the AIVs enter (statements outside sections run on every core);
* ``for`` loops must iterate ``pl.range(...)``; every loop iteration (``for`` and ``while``)
  charges the scalar unit's loop control;
* a plain Python function called by bare name is inlined, as PyPTO Pro does: it runs
  rewritten by the same rules (its sections and loops too);
* names PyPTO Pro binds itself -- tiling-key fields and ``datatype`` variables -- are bound
  to the launch's values (as closure variables, so module globals stay live);
* an annotated local, ``x: pl.DT_INT32 = v``, holds ``v`` converted to that type (a C
  variable of that type);
* kernels may not return a value; constructs outside PyPTO Pro's subset are refused with its
  diagnostic class and the kernel's ``file:line`` (a dict literal with ParserTypeError, as
  PyPTO Pro's parser reports it).

The rewritten function is compiled with the kernel's file name and line numbers, so tracebacks
and findings point at the user's source.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
from collections.abc import Iterable

from ascsim.pto.errors import (
    ParserSyntaxError,
    ParserTypeError,
    UndefinedVariableError,
    UnsupportedFeatureError,
)

SECTION = "__pto_section__"
CALL = "__pto_call__"
TICK = "__pto_tick__"
SCALAR = "__pto_scalar__"
SECTIONS = {"section_cube": "cube", "section_vector": "vector"}

# Python that PyPTO Pro's parser does not accept inside kernels.
UNSUPPORTED = {
    ast.Lambda: "lambda expressions",
    ast.ListComp: "list comprehensions",
    ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.Try: "try statements",
    ast.ClassDef: "class definitions",
    ast.AsyncFunctionDef: "async functions",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield from",
    ast.Global: "global statements",
    ast.Nonlocal: "nonlocal statements",
    ast.Delete: "del statements",
    ast.AsyncFor: "async for",
    ast.AsyncWith: "async with",
    ast.Raise: "raise statements",
}


def _section_kind(item: ast.withitem) -> str | None:
    expr = item.context_expr
    if (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in SECTIONS and not expr.args and not expr.keywords):
        return SECTIONS[expr.func.attr]
    return None


def _is_range_call(node: ast.expr) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "range")


class CheckedTransformer(ast.NodeTransformer):
    """An AST rewrite of a kernel's source that refuses the constructs of :data:`UNSUPPORTED`
    with PyPTO Pro's diagnostic at their line."""

    #: What the refused constructs are "not supported in", in the diagnostic's wording.
    context = "PyPTO kernels"

    def __init__(self, filename: str):
        self.filename = filename

    def _fail(self, cls, node, what: str):
        raise cls(what, (self.filename, getattr(node, "lineno", 0)))

    def generic_visit(self, node):
        what = UNSUPPORTED.get(type(node))
        if what:
            self._fail(UnsupportedFeatureError, node, f"{what} are not supported in "
                       f"{self.context}")
        return super().generic_visit(node)


class _Rewriter(CheckedTransformer):
    def __init__(self, filename: str, is_kernel: bool, local_names: set[str]):
        super().__init__(filename)
        self.is_kernel = is_kernel
        self.local_names = local_names
        self.depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1
        if self.depth > 1:
            self._fail(UnsupportedFeatureError, node, "nested function definitions are not "
                       "supported in PyPTO kernels")
        node.decorator_list = []
        self.generic_visit(node)
        self.depth -= 1
        return node

    def visit_With(self, node):
        kinds = [_section_kind(item) for item in node.items]
        if len(node.items) != 1 or kinds[0] is None:
            self._fail(UnsupportedFeatureError, node, "only 'with pl.section_cube():' and "
                       "'with pl.section_vector():' are supported, one per with statement")
        self.generic_visit(node)
        test = ast.Call(ast.Name(SECTION, ast.Load()), [ast.Constant(kinds[0])], [])
        return ast.copy_location(ast.If(test, node.body, []), node)

    def visit_For(self, node):
        if not _is_range_call(node.iter):
            if isinstance(node.iter, ast.Call) and isinstance(node.iter.func, ast.Name) \
                    and node.iter.func.id == "range":
                self._fail(ParserSyntaxError, node, "use pl.range(...) in kernels; the "
                           "built-in range is not supported")
            self._fail(ParserSyntaxError, node, "a for loop in a PyPTO kernel must iterate "
                       "pl.range(...)")
        if node.orelse:
            self._fail(UnsupportedFeatureError, node, "for ... else is not supported")
        self.generic_visit(node)
        node.body.insert(0, self._tick(node))
        return node

    def visit_While(self, node):
        if node.orelse:
            self._fail(UnsupportedFeatureError, node, "while ... else is not supported")
        self.generic_visit(node)
        node.body.insert(0, self._tick(node))
        return node

    def visit_Dict(self, node):
        self._fail(ParserTypeError, node, "Unsupported closure variable type: dict (dict "
                   "literals are not supported in PyPTO kernels)")

    def visit_AnnAssign(self, node):
        self.generic_visit(node)
        if node.value is None or not isinstance(node.target, ast.Name):
            return node
        value = ast.Call(ast.Name(SCALAR, ast.Load()), [node.annotation, node.value], [])
        return ast.copy_location(ast.Assign([node.target], ast.copy_location(value, node)),
                                 node)

    def visit_Return(self, node):
        if self.is_kernel and node.value is not None:
            self._fail(ParserSyntaxError, node, "a kernel cannot return a value")
        self.generic_visit(node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        # A bare-name call of something not bound in the function: maybe a helper to inline.
        if isinstance(node.func, ast.Name) and node.func.id not in self.local_names \
                and node.func.id not in _BUILTIN_CALLS:
            node.func = ast.copy_location(
                ast.Call(ast.Name(CALL, ast.Load()), [node.func], []), node.func)
        return node

    @staticmethod
    def _tick(node) -> ast.stmt:
        call = ast.Call(ast.Name(TICK, ast.Load()), [], [])
        return ast.copy_location(ast.Expr(call), node)


_BUILTIN_CALLS = frozenset({"min", "max", "int", "float", "bool", "len", "abs", "range",
                            "print", "isinstance", "tuple", "list", "round"})


def _assigned_names(fn: ast.FunctionDef) -> set[str]:
    names = {a.arg for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs}
    for extra in (fn.args.vararg, fn.args.kwarg):
        if extra is not None:
            names.add(extra.arg)
    for node in ast.walk(fn):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names


def source_tree(fn) -> tuple[ast.FunctionDef, str, int]:
    """The function's AST (line numbers as in its file), its file name and first line."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as exc:
        raise ParserSyntaxError(f"cannot read the source of {fn.__qualname__}: {exc}") from None
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise ParserSyntaxError(f"{fn.__qualname__} is not a plain function")
    return node, filename, first


def sections_used(fn, seen: set | None = None) -> set[str]:
    """Which sections (``cube``, ``vector``) the function and the helpers it calls by bare
    name contain."""
    seen = set() if seen is None else seen
    if fn in seen:
        return set()
    seen.add(fn)
    try:
        node, _, _ = source_tree(fn)
    except ParserSyntaxError:
        return set()
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.With):
            found.update(k for k in map(_section_kind, sub.items) if k)
        elif isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
            helper = fn.__globals__.get(sub.func.id)
            if is_inlinable(helper):
                found |= sections_used(helper, seen)
    return found


def is_inlinable(obj) -> bool:
    """A plain Python function of the user's (not a library's) that PyPTO Pro would inline."""
    if not isinstance(obj, types.FunctionType):
        return False
    module = obj.__module__ or ""
    return not module.startswith(LIBRARIES)


#: Modules whose functions are called, never inlined (ascsim's own operators in
#: ``ascsim.ops`` are user code and are inlined).
LIBRARIES = ("ascsim.pto", "ascsim.sim", "ascsim.isa", "ascsim.hw", "torch", "numpy", "pytest",
             "pypto")


def compile_factory(node: ast.FunctionDef, names: Iterable[str], filename: str,
                    scope: dict, factory_name: str):
    """Compile the rewritten function ``node`` inside ``def factory_name(*, <names>): def
    fn(...): ...; return fn`` in ``scope`` (the kernel's globals) and return the factory: calling
    it with the injected names gives the function, which sees them as closure variables."""
    params = [ast.arg(name) for name in names]
    factory = ast.FunctionDef(
        name=factory_name,
        args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=params,
                           kw_defaults=[None] * len(params), kwarg=None, defaults=[]),
        body=[node, ast.Return(ast.Name(node.name, ast.Load()))], decorator_list=[],
        returns=None)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace: dict = {}
    exec(compile(module, filename, "exec"), scope, namespace)  # noqa: S102 - the user's kernel
    return namespace[factory_name]


def rewrite(fn, names: Iterable[str], is_kernel: bool = True, post=None):
    """Compile the rewritten ``fn``; returns a factory that takes a value for each of
    ``names`` (the rewrite's own helpers, and the names PyPTO Pro binds per launch) as
    keywords and returns the function. ``post(node, filename)``: a further rewrite of the
    rewritten function (the automatic pipeline's, :mod:`ascsim.pto.pipeline`)."""
    node, filename, _ = source_tree(fn)
    # Variables of an enclosing function (a kernel defined in a function) stay visible: they
    # become names of the factory too, bound to their cells' values at each launch.
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    names = tuple(names)
    names = (*names, *(name for name in cells if name not in names))
    node = _Rewriter(filename, is_kernel, _assigned_names(node) | set(names)).visit(node)
    node.decorator_list = []
    if post is not None:
        node = post(node, filename)
    make = compile_factory(node, names, filename, fn.__globals__, "__pto_factory__")
    if not cells:
        return make

    def factory(**values):
        for name, cell in cells.items():
            if name not in values:
                try:
                    values[name] = cell.cell_contents
                except ValueError:  # not assigned yet in the enclosing function
                    raise UndefinedVariableError(f"{name!r} is used before it is assigned",
                                                 (filename, node.lineno)) from None
        return make(**values)

    return factory
