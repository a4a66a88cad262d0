"""Which ``tl.load`` s of a kernel the cube makes: those whose value only feeds ``tl.dot``.

triton-ascend's compiler splits a kernel with ``tl.dot`` into a cube and a vector program by
where each value is used: a block loaded only to be multiplied is copied by the cube core from
GM straight into L1 (ND -> NZ on the way), never through the vector core's UB. A kernel runs
eagerly here, so that use is read off its source once, at the first launch: a name bound only
to ``tl.load(...)`` results and read only as an operand of ``tl.dot`` (or of a compile hint)
has its loads rewritten to ``tl.load(..., _cube_operand=True)`` (:mod:`ascsim.triton.dot`).
"""

from __future__ import annotations

import ast
import inspect
import textwrap

#: Calls that take a value as a hint without using its data.
HINTS = frozenset({"compile_hint", "multiple_of", "max_contiguous", "max_constancy"})
CUBE_KEYWORD = "_cube_operand"


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


def _as_operand(node):
    """The Name a dot operand reads, directly or transposed (``tl.trans(x)``, ``x.T``), or
    None: the cube loads a transposed block as readily as the block."""
    if isinstance(node, ast.Call) and _callee(node) == "trans" and len(node.args) == 1:
        node = node.args[0]
    elif isinstance(node, ast.Attribute) and node.attr == "T":
        node = node.value
    return node if isinstance(node, ast.Name) else None


def _operand_uses(function: ast.AST) -> set[int]:
    """ids of the Name nodes that are operands of a dot (first two arguments, maybe
    transposed) or of a hint."""
    found = set()
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        name = _callee(node)
        if name == "dot":
            args = [_as_operand(a) for a in list(node.args[:2]) + [
                k.value for k in node.keywords if k.arg in ("input", "other")]]
        elif name in HINTS:
            args = node.args[:1]
        else:
            continue
        found.update(id(a) for a in args if isinstance(a, ast.Name))
    return found


def _bindings(function: ast.FunctionDef):
    """Names bound only by ``name = tl.load(...)`` (their load calls), names bound only by
    ``name = tl.trans(x)`` / ``x.T`` of a Name (the Name node read -> the name bound), and
    every other name bound."""
    loads: dict[str, list[ast.Call]] = {}
    transposed: dict[int, str] = {}
    other: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            single = (len(targets) == 1 and isinstance(targets[0], ast.Name)
                      and not isinstance(node, ast.AugAssign))
            if single and isinstance(value, ast.Call) and _callee(value) == "load":
                loads.setdefault(targets[0].id, []).append(value)
                continue
            source = _as_operand(value) if single and value is not None else None
            if source is not None and source is not value:  # x_t = tl.trans(x) / x.T
                transposed[id(source)] = targets[0].id
                continue
            for target in targets:
                other.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.For, ast.comprehension)):
            other.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
    return loads, transposed, other


def mark(function: ast.FunctionDef) -> None:
    """Rewrite the loads of ``function`` that feed only ``tl.dot`` (see the module docstring):
    read only as dot operands, hints, or through a transpose bound to a name that is."""
    loads, transposed, other = _bindings(function)
    if not loads:
        return
    operand_uses = _operand_uses(function)
    reads: dict[str, list[int]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            reads.setdefault(node.id, []).append(id(node))
    feeding = (set(loads) | set(transposed.values())) - other
    changed = True
    while changed:  # drop names with a use that is not the cube's, until none is left
        changed = False
        for name in sorted(feeding):
            used = reads.get(name, [])
            if not used or not all(u in operand_uses or transposed.get(u) in feeding
                                   for u in used):
                feeding.discard(name)
                changed = True
    for name in feeding & set(loads):
        for call in loads[name]:
            if not any(k.arg == CUBE_KEYWORD for k in call.keywords):
                flag = ast.keyword(arg=CUBE_KEYWORD, value=ast.Constant(True))
                ast.copy_location(flag.value, call)
                ast.copy_location(flag, call)
                call.keywords.append(flag)


def uses_dot(fn, seen=None) -> bool:
    """Whether kernel ``fn`` (or a ``@triton.jit`` function it calls) calls ``tl.dot``: a mix
    kernel, launched on AIC + 2 AIV blocks."""
    seen = set() if seen is None else seen
    if id(fn) in seen:
        return False
    seen.add(id(fn))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    from ascsim.triton.jit import JITFunction

    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node) in ("dot", "dot_scaled"):
            return True
        if isinstance(node, ast.Name):
            names.add(node.id)
    helpers = [fn.__globals__.get(n) for n in names]
    return any(uses_dot(h.fn, seen) for h in helpers if isinstance(h, JITFunction))
