"""Dead tiles at the end of a loop body, as the compiler sees them.

A kernel runs as Python, so a tile lives while a name holds it (:mod:`ascsim.triton.ub`): in

    for i in range(...):
        row = tl.load(...)
        e = tl.exp(row - tl.max(row, 0))
        tl.store(..., e / tl.sum(e, 0))

the previous iteration's ``row`` and ``e`` are still held when the next ``tl.load`` places its
tile, although the compiler knows them dead (neither is read before it is written again, nor
after the loop). To plan UB as the compiler does, the kernel's loops are rewritten once, at its
first launch: every name a loop body assigns that is not carried into the next iteration (read
in the body before it is assigned) and not read anywhere outside the body is set to ``None`` at
the end of the body. Results are unchanged; only the tiles' lifetimes shrink to the compiler's.
Kernels whose source cannot be read, or that close over variables of an enclosing function, run
as they are.
"""

from __future__ import annotations

import ast
import inspect
import textwrap

from ascsim.triton import cube_loads


def _names(nodes, ctx) -> list[str]:
    """Names used with ``ctx`` (ast.Load / ast.Store) in ``nodes``, in source order."""
    found = []
    for node in nodes:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ctx):
                found.append((sub.lineno, sub.col_offset, sub.id))
    return [name for _, _, name in sorted(found)]


def _carried(body: list) -> set[str]:
    """Names read in ``body`` before any assignment to them in it (statement by statement;
    within a statement the right-hand side is read first)."""
    assigned: set[str] = set()
    carried: set[str] = set()
    for stmt in body:
        value_nodes = [stmt.value] if isinstance(stmt, (ast.Assign, ast.AugAssign,
                                                        ast.AnnAssign)) and stmt.value else []
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            if stmt.target.id not in assigned:
                carried.add(stmt.target.id)
        reads = _names(value_nodes or [stmt], ast.Load)
        carried.update(n for n in reads if n not in assigned)
        assigned.update(_names([stmt], ast.Store))
    return carried


class _Rewriter(ast.NodeTransformer):
    def __init__(self, function: ast.FunctionDef):
        self.function = function

    def _visit_loop(self, node):
        self.generic_visit(node)
        body_ids = {id(n) for stmt in node.body for n in ast.walk(stmt)}
        outside = {n.id for n in ast.walk(self.function)
                   if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                   and id(n) not in body_ids}
        targets = set(_names([node.target], ast.Store)) if isinstance(node, ast.For) else set()
        stored = set(_names(node.body, ast.Store))
        dead = sorted(stored - outside - _carried(node.body) - targets)
        if dead:
            last = node.body[-1]
            clear = ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store()) for n in dead],
                               value=ast.Constant(value=None))
            ast.copy_location(clear, last)
            ast.fix_missing_locations(clear)
            node.body.append(clear)
        return node

    visit_For = _visit_loop  # noqa: N815 - ast.NodeTransformer's naming
    visit_While = _visit_loop  # noqa: N815

    # ``not``, ``and`` and ``or`` on blocks are element-wise in Triton (its code generator
    # turns them into logical ops), while Python would ask each block for one truth value:
    # they become calls of :mod:`ascsim.triton.logic`, which keep Python's meaning (and its
    # short circuit) for Python values.
    def visit_UnaryOp(self, node):  # noqa: N802 - ast.NodeTransformer's naming
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        call = ast.Call(func=_logic("logical_not"), args=[node.operand], keywords=[])
        return ast.fix_missing_locations(ast.copy_location(call, node))

    def visit_BoolOp(self, node):  # noqa: N802
        self.generic_visit(node)
        name = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        result = node.values[0]
        for value in node.values[1:]:
            later = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[],
                                                  kw_defaults=[], defaults=[]), body=value)
            result = ast.Call(func=_logic(name), args=[result, later], keywords=[])
        return ast.fix_missing_locations(ast.copy_location(result, node))


LOGIC = "__ascsim_triton_logic__"  # the name the rewritten kernel finds the helpers under


def _logic(name: str) -> ast.Attribute:
    return ast.Attribute(value=ast.Name(id=LOGIC, ctx=ast.Load()), attr=name, ctx=ast.Load())


def shorten_lifetimes(fn):
    """``fn`` with its loops' dead names cleared (see the module docstring), or ``fn``."""
    code = fn.__code__
    if code.co_freevars:
        return fn
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        return fn
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return fn
    function = tree.body[0]
    if not isinstance(function, ast.FunctionDef):
        return fn
    function.decorator_list = []
    cube_loads.mark(function)  # (before the loops' clearing assignments are added)
    _Rewriter(function).visit(function)
    ast.increment_lineno(tree, first - 1)
    scope: dict = {}
    from ascsim.triton import logic

    fn.__globals__.setdefault(LOGIC, logic)
    exec(compile(tree, code.co_filename, "exec"), fn.__globals__, scope)  # noqa: S102
    rewritten = scope[function.name]
    rewritten.__defaults__ = fn.__defaults__
    rewritten.__kwdefaults__ = fn.__kwdefaults__
    return rewritten
