"""``@pl.vector_function``: a register-level vector function and its call from a kernel.

PyPTO Pro compiles a vector function's body to one VF program of the AIV; here it runs as
Python, rewritten from its source like a kernel (:mod:`ascsim.pto.parse`):

* ``vf`` is bound (PyPTO Pro's reserved namespace, no import needed), and so are the names the
  launch binds (tiling-key fields, ``datatype`` variables);
* every name the body assigns a ``vf.*`` result to is a register the compiler declares when the
  function starts (its kind -- vector, mask, address, unaligned -- from the op of its first
  assignment): the function begins by binding each such name to its declared, unwritten
  register, so that a read before the first write reaches the machine, which reports it;
* ``dst = vf.op(...)`` passes the destination's current handle to the op
  (``_dst=dst``): ops that read their destination (``axpy``, merging masks, histograms) and
  loads into a mask register need it;
* ``for`` loops iterate ``pl.range`` (hardware loops of the VF program: no scalar-unit cost per
  iteration); a return value is refused with PyPTO Pro's ``ParserSyntaxError``.

The compiler keeps the registers whose values are live at once in the register file; from the
body's source, :func:`live_peak` counts them per kind (straight-line live ranges, each widened
to the whole of any loop it reaches into), and the machine reports a kind that needs more than
the SoC has (:class:`~ascsim.isa.RegisterFunction`).
"""

from __future__ import annotations

import ast
import contextlib
import functools

from ascsim.isa import RegisterFunction
from ascsim.pto.errors import ParserSyntaxError, UnsupportedFeatureError
from ascsim.pto.ops.sync import with_auto_mutex
from ascsim.pto.parse import source_tree
from ascsim.pto.tile import Tile
from ascsim.pto.vf.values import Declared, UbPointer
from ascsim.sim.scheduler import current_core
from ascsim.sim.source import user_location

VF_NAME = "vf"
SCOPE = "__vf_scope__"
DST = "_dst"

#: The kind of register the first assignment from each op makes (vector unless listed; ops
#: in SAME_AS_FIRST make what their first operand is).
MAKES = {**dict.fromkeys(("create_mask", "update_mask", "eq", "ne", "lt", "le", "gt", "ge",
                          "get_mask_spr", "mask_gen_with_reg_tensor"), "mask"),
         "load_unalign_init": "unaligned", "unalign_reg_for_store": "unaligned",
         "create_addr_reg": "address"}
SAME_AS_FIRST = frozenset({"and_", "or_", "xor", "not_", "move", "select", "pack", "unpack",
                           "interleave", "de_interleave"})
#: Ops whose tuple result is (mask, vector).
MASK_FIRST = frozenset({"addc", "subc"})


def _vf_op(node) -> str | None:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == VF_NAME):
        return node.func.attr
    return None


def _target_names(target) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _target_names(e)]
    return []


def _load(target):
    if isinstance(target, ast.Name):
        return ast.Name(target.id, ast.Load())
    return ast.Tuple([_load(e) for e in target.elts], ast.Load())


class _Rewriter(ast.NodeTransformer):
    """The body's rewrite (see the module docstring); collects the declared registers."""

    def __init__(self, filename: str, params: set[str]):
        self.filename = filename
        self.params = params
        self.registers: dict[str, str] = {}  # name -> kind, in declaration order
        self.depth = 0

    def _fail(self, cls, node, what: str):
        raise cls(what, (self.filename, getattr(node, "lineno", 0)))

    def visit_FunctionDef(self, node):
        self.depth += 1
        if self.depth > 1:
            self._fail(UnsupportedFeatureError, node, "nested function definitions are not "
                       "supported in vector functions")
        node.decorator_list = []
        self.generic_visit(node)
        self.depth -= 1
        return node

    def visit_Return(self, node):
        if node.value is not None:
            self._fail(ParserSyntaxError, node, "a vector function cannot return a value")
        return node

    def visit_For(self, node):
        it = node.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
                and it.func.attr == "range"):
            self._fail(ParserSyntaxError, node, "a for loop in a vector function must "
                       "iterate pl.range(...)")
        self.generic_visit(node)
        return node

    def visit_Assign(self, node):
        self.generic_visit(node)
        op = _vf_op(node.value)
        if op is None or len(node.targets) != 1:
            return node
        target = node.targets[0]
        names = _target_names(target)
        if not names:
            return node
        for i, name in enumerate(names):
            if name in self.params or name in self.registers:
                continue
            if op in MASK_FIRST:
                kind = "mask" if i == 0 else "vector"
            elif op in SAME_AS_FIRST and node.value.args and isinstance(
                    node.value.args[0], ast.Name):
                kind = self.registers.get(node.value.args[0].id, "vector")
            else:
                kind = MAKES.get(op, "vector")
            self.registers[name] = kind
        node.value.keywords.append(ast.keyword(DST, _load(target)))
        return node


# ------------------------------------------------------------------ liveness
def _statements(body, loops, out):
    """Flatten ``body`` to (names read, names written) per statement, in order; ``loops``
    collects each loop's [first, last] statement positions."""
    for stmt in body:
        if isinstance(stmt, (ast.For, ast.While)):
            first = len(out)
            reads = {n.id for n in ast.walk(stmt.iter if isinstance(stmt, ast.For)
                                            else stmt.test) if isinstance(n, ast.Name)}
            out.append((reads, set()))
            _statements(stmt.body, loops, out)
            loops.append((first, len(out) - 1))
        elif isinstance(stmt, ast.If):
            out.append(({n.id for n in ast.walk(stmt.test) if isinstance(n, ast.Name)}, set()))
            _statements(stmt.body, loops, out)
            _statements(stmt.orelse, loops, out)
        else:
            reads, writes = set(), set()
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name):
                    (writes if isinstance(n.ctx, ast.Store) else reads).add(n.id)
            out.append((reads, writes))


def live_peak(fn_node: ast.FunctionDef, registers: dict[str, str]) -> dict[str, int]:
    """The most registers of each kind whose values are live at once in the body."""
    flat: list = []
    loops: list = []
    _statements(fn_node.body, loops, flat)
    spans: dict[str, list[int]] = {}
    for pos, (reads, writes) in enumerate(flat):
        for name in (reads | writes) & registers.keys():
            span = spans.setdefault(name, [pos, pos])
            span[1] = pos
    changed = True
    while changed:  # a value live into a loop stays live through all of it
        changed = False
        for lo, hi in loops:
            for span in spans.values():
                if span[0] < lo <= span[1] < hi:
                    span[1] = hi
                    changed = True
    peak: dict[str, int] = {}
    for kind in set(registers.values()):
        names = [n for n, k in registers.items() if k == kind and n in spans]
        events = sorted([(spans[n][0], 1) for n in names] + [(spans[n][1] + 1, -1)
                                                            for n in names])
        live = best = 0
        for _, step in events:
            live += step
            best = max(best, live)
        peak[kind] = best
    return peak


# ------------------------------------------------------------------ running
class VfScope:
    """The register numbering of one running vector function on one core: its declared
    registers from ``base`` on, then temporaries (values not bound to a name)."""

    __slots__ = ("base", "names", "next")

    def __init__(self, base: int, names: dict[str, str]):
        self.base = base
        self.names = {name: base + i for i, name in enumerate(names)}
        self.next = base + len(names)

    def declare(self, name: str, kind: str):
        return Declared(self.names[name], kind, name).handle() if kind in ("vector", "mask") \
            else Declared(self.names[name], kind, name)

    def temp(self) -> int:
        number = self.next
        self.next += 1
        return number


def scope_of(core) -> VfScope:
    stack = getattr(core, "pto_vf_scopes", None)
    if not stack:
        raise UnsupportedFeatureError("vf.* operations are only valid inside a "
                                      "@pl.vector_function called from a kernel",
                                      user_location())
    return stack[-1]


class VectorFunction:
    """A function decorated with ``@pl.vector_function``."""

    def __init__(self, fn):
        self.fn = fn
        self._compiled: dict = {}
        functools.update_wrapper(self, fn)

    def _compile(self, bound_names: tuple):
        entry = self._compiled.get(bound_names)
        if entry is not None:
            return entry
        node, filename, first = source_tree(self.fn)
        params = {a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs}
        rewriter = _Rewriter(filename, params)
        node = rewriter.visit(node)
        registers = rewriter.registers
        declare = [ast.Assign([ast.Name(name, ast.Store())], ast.Call(
            ast.Attribute(ast.Name(SCOPE, ast.Load()), "declare", ast.Load()),
            [ast.Constant(name), ast.Constant(kind)], [])) for name, kind in registers.items()]
        for stmt in declare:
            ast.copy_location(stmt, node)
        node.body[:0] = declare
        cells = dict(zip(self.fn.__code__.co_freevars, self.fn.__closure__ or ()))
        names = (VF_NAME, SCOPE, *bound_names, *(c for c in cells if c not in bound_names))
        params_ast = [ast.arg(name) for name in names]
        factory = ast.FunctionDef(
            name="__vf_factory__",
            args=ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=params_ast,
                               kw_defaults=[None] * len(params_ast), kwarg=None, defaults=[]),
            body=[node, ast.Return(ast.Name(node.name, ast.Load()))], decorator_list=[],
            returns=None)
        module = ast.Module(body=[factory], type_ignores=[])
        ast.fix_missing_locations(module)
        namespace: dict = {}
        exec(compile(module, filename, "exec"), self.fn.__globals__, namespace)  # noqa: S102
        kinds = tuple(registers.items())
        live = tuple(sorted(live_peak(node, registers).items()))
        entry = self._compiled[bound_names] = (namespace["__vf_factory__"], kinds, live,
                                               cells, (filename, first))
        return entry

    def pto_bind(self, bound: dict):
        """This function with a launch's bound names (the kernel's inliner calls this)."""
        return functools.partial(self._run, bound)

    def __call__(self, *args):
        return self._run({}, *args)

    def _run(self, bound: dict, *args):
        core = current_core()
        if getattr(core, "pto_vf_scopes", None):  # inlined into a running vector function
            return self._body(core, bound, args)
        # Called from a kernel: one vector operation on its tile arguments, which takes their
        # buffer tokens on the V pipe under auto_mutex as every vector operation does.
        return with_auto_mutex("vector_function",
                               lambda *a: self._body(core, bound, a))(*args)

    def _body(self, core, bound: dict, args: tuple):
        from ascsim.pto.vf.ops import VF

        if core.kind != "AIV":
            raise UnsupportedFeatureError(
                f"vector function {self.__name__} called on an {core.kind} core: vector "
                "functions run on the AIV (call it inside pl.section_vector())")
        factory, kinds, live, cells, loc = self._compile(tuple(bound))
        stack = core.__dict__.setdefault("pto_vf_scopes", [])
        scope = VfScope(stack[-1].next if stack else 0, dict(kinds))
        values = dict(bound)
        for name, cell in cells.items():
            with contextlib.suppress(ValueError):
                values.setdefault(name, cell.cell_contents)
        body = factory(**{VF_NAME: VF, SCOPE: scope}, **values)
        declared = tuple((scope.names[name], kind, name) for name, kind in kinds)
        core.execute(RegisterFunction(True, declared, loc, self.__name__, live=live))
        stack.append(scope)
        try:
            body(*[UbPointer(a) if isinstance(a, Tile) else
                   a.copy() if isinstance(a, UbPointer) else a for a in args])
        finally:
            stack.pop()
            core.execute(RegisterFunction(False, declared, loc, self.__name__))

    def __repr__(self) -> str:
        return f"<pl.vector_function {self.__name__}>"


def vector_function(fn=None, **options):
    """``@pl.vector_function`` (or with options, which PyPTO Pro's code generator reads)."""
    if fn is not None:
        return VectorFunction(fn)
    return VectorFunction


__all__ = ["VectorFunction", "live_peak", "scope_of", "vector_function"]
