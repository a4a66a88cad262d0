"""Turning a kernel's source into the Python that ascsim executes.

pyasc compiles kernels; ascsim runs them as Python. Most of the kernel language means the same in
both, but a few constructs are compiled rather than executed, and the scalar unit's loop control
has a cost. The rewrite:

* rejects syntax outside pyasc's Python subset, naming the file and line;
* turns ``with mm.iterate(...) as count: body`` (a ``while (mm.Iterate())`` loop in the
  generated C++) into ``for count in <iterations>: body``;
* charges the scalar unit for every loop iteration (``for`` and ``while``).

The rewritten function is compiled with the kernel's own file name and line numbers, so
tracebacks and findings point at the user's source.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from ascsim.sim.errors import KernelError

TICK = "__ascsim_loop_tick"
ITERATE = "__ascsim_iterate"

# Python that pyasc's code generator does not accept inside kernels.
UNSUPPORTED = {
    ast.Lambda: "lambda expressions",
    ast.ListComp: "list comprehensions",
    ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions",
    ast.GeneratorExp: "generator expressions",
    ast.Try: "try/except",
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
    ast.Starred: "starred expressions (*args)",
    ast.Set: "set literals",
    ast.JoinedStr: "f-strings",
}
if hasattr(ast, "TryStar"):
    UNSUPPORTED[ast.TryStar] = "try/except*"
if hasattr(ast, "Match"):
    UNSUPPORTED[ast.Match] = "match statements"


class _Checker(ast.NodeVisitor):
    def __init__(self, filename: str, is_kernel: bool):
        self.filename = filename
        self.is_kernel = is_kernel
        self.depth = 0

    def _fail(self, node, what: str):
        raise KernelError(f"{what} are not supported in pyasc kernels",
                          (self.filename, getattr(node, "lineno", 0)))

    def generic_visit(self, node):
        what = UNSUPPORTED.get(type(node))
        if what:
            self._fail(node, what)
        super().generic_visit(node)

    def visit_FunctionDef(self, node):
        self.depth += 1
        if self.depth > 1:
            self._fail(node, "nested function definitions")
        self.generic_visit(node)
        self.depth -= 1

    def visit_Return(self, node):
        if self.is_kernel and node.value is not None:
            raise KernelError("a kernel cannot return a value (only @asc.jit helpers called "
                              "from a kernel can)", (self.filename, node.lineno))
        self.generic_visit(node)


def _tick_call(node) -> ast.stmt:
    call = ast.Expr(ast.Call(ast.Name(TICK, ast.Load()), [], []))
    return ast.copy_location(call, node)


def _is_iterate(item: ast.withitem) -> bool:
    expr = item.context_expr
    return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
            and expr.func.attr == "iterate")


class _Rewriter(ast.NodeTransformer):
    def visit_For(self, node):
        self.generic_visit(node)
        node.body.insert(0, _tick_call(node))
        return node

    def visit_While(self, node):
        self.generic_visit(node)
        node.body.insert(0, _tick_call(node))
        return node

    def visit_With(self, node):
        self.generic_visit(node)
        if len(node.items) == 1 and _is_iterate(node.items[0]):
            item = node.items[0]
            target = item.optional_vars or ast.Name("_", ast.Store())
            loop = ast.For(
                target=target,
                iter=ast.Call(ast.Name(ITERATE, ast.Load()), [item.context_expr], []),
                body=[_tick_call(node), *node.body],
                orelse=[],
            )
            return ast.copy_location(loop, node)
        return node


def rewrite(fn, helpers: dict, is_kernel: bool):
    """Compile ``fn``'s rewritten source; ``helpers`` supplies TICK and ITERATE."""
    try:
        lines, first = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError) as exc:
        raise KernelError(f"cannot read the source of kernel {fn.__name__!r}: {exc}") from exc
    tree = ast.parse(textwrap.dedent("".join(lines)))
    func = tree.body[0]
    if not isinstance(func, ast.FunctionDef):
        raise KernelError(f"@asc.jit expects a function, got {type(func).__name__}",
                          (filename, first))
    func.decorator_list = []
    ast.increment_lineno(tree, first - 1)
    _Checker(filename, is_kernel).visit(func)
    func = _Rewriter().visit(func)

    # Wrap in a factory so the kernel sees its closure variables and our helpers as free
    # variables, without touching the module's globals.
    free = list(fn.__code__.co_freevars)
    params = [ast.arg(name) for name in (TICK, ITERATE, *free)]
    fields = dict(
        name="__ascsim_factory",
        args=ast.arguments(posonlyargs=[], args=params, vararg=None, kwonlyargs=[],
                           kw_defaults=[], kwarg=None, defaults=[]),
        body=[func, ast.Return(ast.Name(func.name, ast.Load()))],
        decorator_list=[], returns=None,
    )
    if "type_params" in ast.FunctionDef._fields:  # Python >= 3.12
        fields["type_params"] = []
    factory = ast.FunctionDef(**fields)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    namespace: dict = {}
    exec(code, fn.__globals__, namespace)  # noqa: S102 - compiling the user's own kernel
    cells = [c.cell_contents for c in (fn.__closure__ or ())]
    return namespace["__ascsim_factory"](helpers[TICK], helpers[ITERATE], *cells)


def uses_call(fn, name: str) -> bool:
    """Whether ``fn``'s source calls something named ``name`` (e.g. ``register_matmul``)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError):
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr == name) or (
                    isinstance(f, ast.Name) and f.id == name):
                return True
    return False
