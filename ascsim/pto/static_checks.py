"""Checks PyPTO Pro's parser makes from a kernel's types before anything runs, made here on the
kernel's AST at its first launch (before the arguments are bound).

PyPTO Pro types every expression while it parses, so some of its refusals come before the
kernel could run at all: a ``scale=`` that is a runtime scalar of a type the fixpipe cannot take
(``block_ops._resolve_scale_param``), and a per-channel scale tile on a move that splits the
accumulator between the two AIVs (``block_ops._ir_move``). ascsim runs kernels eagerly, where
such a kernel would fail elsewhere first (binding an fp16 tensor to a scalar parameter; a Vec
tile in a cube-only kernel), so these are found on the AST: each raises PyPTO Pro's
:class:`ParserSyntaxError` with its wording and the kernel's ``file:line``.
"""

from __future__ import annotations

import ast

from ascsim.pto.dtypes import DataType
from ascsim.pto.errors import ParserSyntaxError
from ascsim.pto.parse import source_tree

#: Ops whose ``scale=`` quantises in the fixpipe.
SCALED_OPS = frozenset({"store", "store_tile", "move"})
#: Runtime scalar types a ``scale=`` may be: fp32 (its bits are used) or int32 / int64
#: (holding an fp32's bits).
SCALAR_SCALE_TYPES = frozenset({"FP32", "INT32", "INT64"})
#: Calls that give a tile: a name bound to one of these is a tile (a per-channel scale).
TILE_MAKERS = frozenset({"make_tile", "current", "next", "previous"})
DUAL_MODES = frozenset({"DualModeSplitM", "DualModeSplitN"})


def check_kernel(fn, name: str, specs: dict) -> None:
    """Raise PyPTO Pro's parse error for the first refused ``scale=`` in kernel ``fn``
    (parameter annotations ``specs``: name -> DataType for scalar parameters)."""
    tree, filename, _ = source_tree(fn)
    tiles = _tile_names(tree)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _op_name(node) in SCALED_OPS):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        scale = keywords.get("scale")
        if not isinstance(scale, ast.Name):
            continue
        where = (filename, node.lineno)
        spec = specs.get(scale.id)
        if isinstance(spec, DataType) and spec.name not in SCALAR_SCALE_TYPES:
            raise ParserSyntaxError(
                f"Failed to parse kernel function '{name}': TypeError: scale runtime scalar "
                f"dtype {spec.name.lower()} is not supported — pass an FP32 scalar "
                "(auto-reinterpreted as its IEEE-754 bit pattern) or an INT32/INT64 scalar "
                "carrying the pre-encoded float32 bit pattern (struct.pack(\"!f\", scale))",
                where)
        mode = keywords.get("acc_to_vec_mode")
        if (_op_name(node) == "move" and scale.id in tiles and isinstance(mode, ast.Attribute)
                and mode.attr in DUAL_MODES):
            raise ParserSyntaxError(
                f"Failed to parse kernel function '{name}': ValueError: scale (per-channel) "
                "only supports single-mode acc_to_vec_mode", where)


def _op_name(call: ast.Call) -> str | None:
    """``store`` of ``pl.store(...)`` (an attribute call of a module name)."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return func.attr
    return None


def _tile_names(tree: ast.AST) -> set[str]:
    """Names the kernel binds to a tile (``x = pl.make_tile(...)``, ``x = group.next()``)."""
    names = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr in TILE_MAKERS):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names
