"""System variables (block and sub-block indices and counts as PyPTO Pro defines them) and the
SSBuffer (``ssbuf_store`` / ``ssbuf_load`` of a ``pl.struct``).

On the vector side of a MIX kernel ``get_block_idx()`` is ``block * 2 + sub-block`` (PyPTO Pro
flattens the AIV index), which is how the machine numbers a MIX launch's AIVs already.
"""

from __future__ import annotations

import numpy as np

from ascsim.isa import ScalarLoad, ScalarStore, region_of
from ascsim.pto.ops.common import KernelError, current_core, user_location


def get_block_idx() -> int:
    return current_core().block_idx


def get_block_num() -> int:
    return current_core().launch.config.block_num


def get_subblock_idx() -> int:
    return current_core().sub_block_idx


def get_subblock_num() -> int:
    core = current_core()
    return 2 if core.kind == "AIV" and core.launch.kind == "MIX" else 1


# ------------------------------------------------------------------ SSBuffer
#: How a struct field's scalars are laid out in the SSBuffer: Python kind -> numpy type (the C
#: types TilingData uses: int64, float32, bool).
SSBUF_TYPES = ((bool, np.dtype(np.bool_)), (int, np.dtype(np.int64)),
               (float, np.dtype(np.float32)))


def _ssbuf_type(value, loc) -> np.dtype:
    if isinstance(value, np.generic):
        value = value.item()
    for kind, dtype in SSBUF_TYPES:  # bool first: a bool is an int too
        if isinstance(value, kind):
            return dtype
    raise KernelError(f"ssbuf: a struct field holds {type(value).__name__}; only int, float "
                      "and bool scalars (and lists of them) can be stored", loc)


def _struct_layout(struct, loc) -> list[tuple[str, int | None, int, np.dtype]]:
    """(field, list index or None, byte offset, type) of every scalar of ``struct``, in field
    order, each at its natural alignment (a C struct's layout)."""
    fields = {k: v for k, v in vars(struct).items() if not k.startswith("_")}
    if not fields or not hasattr(struct, "_struct_name"):
        raise KernelError("ssbuf_store/ssbuf_load take a pl.struct", loc)
    layout, at = [], 0
    for name, value in fields.items():
        items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
        for index, item in items:
            dtype = _ssbuf_type(item, loc)
            at = -(-at // dtype.itemsize) * dtype.itemsize
            layout.append((name, index, at, dtype))
            at += dtype.itemsize
    return layout


def _ssbuf_region(core, offset, dtype, loc):
    mem = core.launch.ssbuf(core, loc)
    return region_of((mem, int(offset), 1, dtype, mem.capacity, None, None))


def ssbuf_store(struct, offset) -> None:
    """``pl.ssbuf_store(struct, offset)``: the struct's fields into the SSBuffer from byte
    ``offset`` (scalar stores on pipe S)."""
    loc = user_location()
    core = current_core()
    for name, index, at, dtype in _struct_layout(struct, loc):
        value = getattr(struct, name)
        value = value[index] if index is not None else value
        core.execute(ScalarStore(_ssbuf_region(core, int(offset) + at, dtype, loc),
                                 dtype.type(value), loc))


def ssbuf_load(struct, offset) -> None:
    """``pl.ssbuf_load(struct, offset)``: the struct's fields from the SSBuffer at byte
    ``offset`` (scalar loads on pipe S), laid out as ``ssbuf_store`` writes them."""
    loc = user_location()
    core = current_core()
    for name, index, at, dtype in _struct_layout(struct, loc):
        value = core.execute(ScalarLoad(_ssbuf_region(core, int(offset) + at, dtype, loc), loc))
        value = value.item() if hasattr(value, "item") else value
        if index is None:
            setattr(struct, name, value)
        else:
            getattr(struct, name)[index] = value


OPS = {"ssbuf_store": ssbuf_store, "ssbuf_load": ssbuf_load}
