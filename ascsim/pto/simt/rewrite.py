"""A SIMT function's source, rewritten to run all the threads of a launch at once.

The rewrite (see :mod:`ascsim.pto.simt.threads` for what each helper does):

* ``x[i, j]`` / ``x[i, j] = v`` on a tile or tensor -> one element access per thread;
* ``if`` / ``while`` / ``for ... in pl.range(...)`` / ``break`` / ``continue`` -> masked control
  flow when the condition or the bounds differ between threads (plain Python when they do
  not);
* inside such control flow, ``name = value`` keeps the old value in the inactive threads;
* ``a if c else b``, ``and``, ``or``, ``not``, ``min``, ``max``, ``int``, ``float`` -> their
  per-thread forms;
* before every statement, the count of its operations (the warp instructions it issues).

Constructs PyPTO Pro does not accept in a SIMT function (sections, nested functions, tile
operations' ``with`` blocks, ...) are refused with its diagnostic class at the line.
"""

from __future__ import annotations

import ast

from ascsim.pto.errors import ParserSyntaxError, UnsupportedFeatureError
from ascsim.pto.parse import (
    UNSUPPORTED,
    CheckedTransformer,
    _is_range_call,
    compile_factory,
    source_tree,
)

LOAD = "__simt_load__"
STORE = "__simt_store__"
MERGE = "__simt_merge__"
BRANCH = "__simt_if__"
LOOP = "__simt_while__"
SELECT = "__simt_select__"
AND = "__simt_and__"
OR = "__simt_or__"
NOT = "__simt_not__"
MIN = "__simt_min__"
MAX = "__simt_max__"
CAST = "__simt_cast__"
OPS = "__simt_ops__"
HELPERS = (LOAD, STORE, MERGE, BRANCH, LOOP, SELECT, AND, OR, NOT, MIN, MAX, CAST, OPS)

#: Expression nodes that are one operation each (a warp instruction of the thread).
OPERATIONS = (ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Call, ast.Subscript,
              ast.IfExp)
CASTS = ("int", "float", "bool")


def _call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(name, ast.Load()), list(args), [])


def _thunk(expr: ast.expr) -> ast.Lambda:
    no_args = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                            kwarg=None, defaults=[])
    return ast.Lambda(no_args, expr)


def _has_slice(index: ast.expr) -> bool:
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(p, ast.Slice) for p in parts)


def _count(nodes) -> int:
    return sum(isinstance(sub, OPERATIONS) for node in nodes if node is not None
               for sub in ast.walk(node))


def needs_per_thread(fn: ast.FunctionDef) -> str | None:
    """Why the function cannot run its threads together (None: it can): a return inside a
    branch or loop, or an unpacking assignment inside one."""
    def walk(stmts, depth: int):
        for stmt in stmts:
            if isinstance(stmt, ast.Return) and depth:
                return f"line {stmt.lineno}: a return inside a branch or loop"
            if depth and isinstance(stmt, ast.Assign) and not all(
                    isinstance(t, (ast.Name, ast.Subscript)) for t in stmt.targets):
                return f"line {stmt.lineno}: an unpacking assignment inside a branch or loop"
            for body in ("body", "orelse"):
                inner = getattr(stmt, body, None)
                if isinstance(inner, list):
                    why = walk(inner, depth + 1)
                    if why:
                        return why
        return None
    return walk(fn.body, 0)


class _Expressions(CheckedTransformer):
    """The per-thread forms of expressions."""

    context = "SIMT functions"

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or _has_slice(node.slice):
            return node
        return ast.copy_location(_call(LOAD, node.value, node.slice), node)

    def visit_IfExp(self, node):
        self.generic_visit(node)
        return ast.copy_location(_call(SELECT, node.test, _thunk(node.body),
                                       _thunk(node.orelse)), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = AND if isinstance(node.op, ast.And) else OR
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(name, value, _thunk(result))
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call(NOT, node.operand), node)
        return node

    def visit_Compare(self, node):
        if len(node.ops) > 1:
            self._fail(ParserSyntaxError, node, "chained comparisons are not supported; "
                       "combine two comparisons with 'and'")
        self.generic_visit(node)
        return node

    def visit_Call(self, node):
        self.generic_visit(node)
        func = node.func
        name = func.id if isinstance(func, ast.Name) else None
        attr = func.attr if isinstance(func, ast.Attribute) else None
        if (name in ("min", "max") or attr in ("min", "max")) and len(node.args) == 2 \
                and not node.keywords:
            which = MIN if (name or attr) == "min" else MAX
            return ast.copy_location(_call(which, *node.args), node)
        if name in CASTS and len(node.args) == 1 and not node.keywords:
            return ast.copy_location(_call(CAST, ast.Name(name, ast.Load()), node.args[0]),
                                     node)
        return node


class _Statements:
    """The per-thread forms of statements (control flow, assignments, the operation count)."""

    def __init__(self, filename: str):
        self.filename = filename
        self.expressions = _Expressions(filename)
        self.serial = 0
        self.loops: list[str] = []  # the names of the enclosing loops' Loop objects

    def _fail(self, cls, node, what: str):
        raise cls(what, (self.filename, getattr(node, "lineno", 0)))

    def _expr(self, node):
        return self.expressions.visit(node) if node is not None else None

    def block(self, stmts: list, depth: int) -> list:
        out: list = []
        for stmt in stmts:
            ops = self._ops(stmt)
            if ops:
                out.append(ast.copy_location(ast.Expr(_call(OPS, ast.Constant(ops))), stmt))
            out.extend(self.statement(stmt, depth))
        return out or [ast.Pass()]

    @staticmethod
    def _ops(stmt) -> int:
        if isinstance(stmt, (ast.If, ast.While)):
            return _count([stmt.test])
        if isinstance(stmt, ast.For):
            return _count([stmt.iter])
        if isinstance(stmt, (ast.FunctionDef, ast.With)):
            return 0
        return _count([stmt])

    def statement(self, stmt, depth: int) -> list:
        handler = getattr(self, f"_{type(stmt).__name__}", None)
        if handler is not None:
            return handler(stmt, depth)
        what = UNSUPPORTED.get(type(stmt))
        if what:
            self._fail(UnsupportedFeatureError, stmt, f"{what} are not supported in SIMT "
                       "functions")
        return [self._expr(stmt)]

    def _name(self, prefix: str) -> str:
        self.serial += 1
        return f"__simt_{prefix}{self.serial}"

    def _assign_name(self, target: ast.Name, value: ast.expr, depth: int, where) -> ast.stmt:
        if depth:
            value = _call(MERGE, value, _thunk(ast.Name(target.id, ast.Load())))
        return ast.copy_location(ast.Assign([ast.Name(target.id, ast.Store())], value), where)

    def _store(self, target: ast.Subscript, value: ast.expr, where) -> ast.stmt:
        obj = self._expr(target.value)
        if _has_slice(target.slice):
            self._fail(UnsupportedFeatureError, where, "a SIMT thread writes one element at a "
                       "time; slices cannot be assigned")
        index = self._expr(target.slice)
        return ast.copy_location(ast.Expr(_call(STORE, obj, index, value)), where)

    def _Assign(self, stmt: ast.Assign, depth: int) -> list:
        if len(stmt.targets) != 1:
            self._fail(UnsupportedFeatureError, stmt, "chained assignments (a = b = v) are not "
                       "supported in SIMT functions")
        target, value = stmt.targets[0], self._expr(stmt.value)
        if isinstance(target, ast.Subscript):
            return [self._store(target, value, stmt)]
        if isinstance(target, ast.Name):
            return [self._assign_name(target, value, depth, stmt)]
        stmt.value = value
        return [stmt]  # unpacking outside control flow (needs_per_thread covers the rest)

    def _AnnAssign(self, stmt: ast.AnnAssign, depth: int) -> list:
        if stmt.value is None:
            return []
        return self._Assign(ast.copy_location(ast.Assign([stmt.target], stmt.value), stmt),
                            depth)

    def _AugAssign(self, stmt: ast.AugAssign, depth: int) -> list:
        target = stmt.target
        if isinstance(target, ast.Name):
            value = ast.BinOp(ast.Name(target.id, ast.Load()), stmt.op, stmt.value)
            return [self._assign_name(target, self._expr(value), depth, stmt)]
        if isinstance(target, ast.Subscript):
            current = ast.Subscript(target.value, target.slice, ast.Load())
            value = self._expr(ast.BinOp(current, stmt.op, stmt.value))
            return [self._store(target, value, stmt)]
        self._fail(UnsupportedFeatureError, stmt, "unsupported augmented assignment target")
        return []

    def _If(self, stmt: ast.If, depth: int) -> list:
        name = self._name("b")
        load = ast.Name(name, ast.Load())
        out = [ast.copy_location(ast.Assign([ast.Name(name, ast.Store())],
                                            _call(BRANCH, self._expr(stmt.test))), stmt)]
        for side, body in (("then", stmt.body), ("orelse", stmt.orelse)):
            if not body:
                continue
            leave = ast.Expr(ast.Call(ast.Attribute(load, "leave", ast.Load()), [], []))
            guarded = ast.Try(body=self.block(body, depth + 1), handlers=[], orelse=[],
                              finalbody=[leave])
            test = ast.Call(ast.Attribute(load, side, ast.Load()), [], [])
            out.append(ast.copy_location(ast.If(test, [guarded], []), stmt))
        return out

    def _loop(self, stmt, make_loop, depth: int) -> list:
        """``name = Loop()``, the loop ``make_loop(load of name)`` with the body rewritten
        inside it, ``name.leave()``."""
        name = self._name("l")
        load = ast.Name(name, ast.Load())
        self.loops.append(name)
        try:
            loop = make_loop(load, self.block(stmt.body, depth + 1))
        finally:
            self.loops.pop()
        leave = ast.Expr(ast.Call(ast.Attribute(load, "leave", ast.Load()), [], []))
        return [ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], _call(LOOP)), stmt),
                ast.copy_location(loop, stmt), ast.copy_location(leave, stmt)]

    def _While(self, stmt: ast.While, depth: int) -> list:
        if stmt.orelse:
            self._fail(UnsupportedFeatureError, stmt, "while ... else is not supported")
        test = self._expr(stmt.test)

        def make(load, body):
            check = ast.Call(ast.Attribute(load, "test", ast.Load()), [test], [])
            return ast.While(check, body, [])
        return self._loop(stmt, make, depth)

    def _For(self, stmt: ast.For, depth: int) -> list:
        if not _is_range_call(stmt.iter):
            self._fail(ParserSyntaxError, stmt, "a for loop in a SIMT function must iterate "
                       "pl.range(...)")
        if stmt.orelse:
            self._fail(UnsupportedFeatureError, stmt, "for ... else is not supported")
        bounds = [self._expr(a) for a in stmt.iter.args]

        def make(load, body):
            values = ast.Call(ast.Attribute(load, "range", ast.Load()), bounds, [])
            return ast.For(stmt.target, values, body, [])
        return self._loop(stmt, make, depth)

    def _stop(self, stmt, leaving: bool) -> list:
        if not self.loops:
            return [stmt]  # outside a loop: Python's own error
        check = ast.Call(ast.Attribute(ast.Name(self.loops[-1], ast.Load()), "stop",
                                       ast.Load()), [ast.Constant(leaving)], [])
        return [ast.copy_location(ast.If(check, [stmt], []), stmt)]

    def _Break(self, stmt, depth: int) -> list:
        return self._stop(stmt, True)

    def _Continue(self, stmt, depth: int) -> list:
        return self._stop(stmt, False)

    def _Return(self, stmt: ast.Return, depth: int) -> list:
        stmt.value = self._expr(stmt.value)
        return [stmt]

    def _FunctionDef(self, stmt, depth: int) -> list:
        self._fail(UnsupportedFeatureError, stmt, "nested function definitions are not "
                   "supported in SIMT functions")
        return []

    def _With(self, stmt, depth: int) -> list:
        self._fail(UnsupportedFeatureError, stmt, "with blocks (sections) are not supported in "
                   "SIMT functions")
        return []


def compile_simt(fn):
    """``fn`` rewritten (see the module docstring), compiled with its file and lines.

    Returns ``(factory, why)``: ``factory(**helpers)`` gives the function (helpers: one value
    for each of :data:`HELPERS`, plus the variables ``fn`` closes over); ``why`` is None when
    its threads can run together, else the construct that makes it run per thread.
    """
    node, filename, _ = source_tree(fn)
    why = needs_per_thread(node)
    node.decorator_list = []
    node.returns = None
    for arg in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs):
        arg.annotation = None
    node.body = _Statements(filename).block(node.body, 0)
    cells = fn.__code__.co_freevars
    factory = compile_factory(node, (*HELPERS, *cells), filename, fn.__globals__,
                              "__simt_factory__")
    return factory, why
