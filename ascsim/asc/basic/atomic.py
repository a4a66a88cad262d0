"""Atomic stores to GM: ``set_atomic_add/max/min(dtype)``, ``set_atomic_type``,
``set_atomic_none``, ``set_store_atomic_config`` / ``get_store_atomic_config``.

The setting is a register of the core: while it is on, every ``data_copy`` / ``data_copy_pad``
to GM combines its elements with what GM holds (sum, max or min, in the configured type)
instead of overwriting them. The front-end keeps the register per core and marks each copy
record with it (``Copy.atomic``); the machine does the combining, and the race check does not
report two atomic writes to the same bytes.
"""

from __future__ import annotations

from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import as_dtype
from ascsim.asc.enums import AtomicDtype, AtomicOp
from ascsim.isa import KernelError, ScalarOps

#: The register's operation field: AtomicOp -> the machine's combining operation.
OPS = {AtomicOp.ATOMIC_SUM: "add", AtomicOp.ATOMIC_MAX: "max", AtomicOp.ATOMIC_MIN: "min"}
#: The register's type field: AtomicDtype -> element type name.
TYPES = {AtomicDtype.ATOMIC_F32: "float32", AtomicDtype.ATOMIC_F16: "float16",
         AtomicDtype.ATOMIC_S16: "int16", AtomicDtype.ATOMIC_S32: "int32",
         AtomicDtype.ATOMIC_S8: "int8", AtomicDtype.ATOMIC_BF16: "bfloat16"}
_TYPE_CODES = {name: code for code, name in TYPES.items()}
_OP_CODES = {name: code for code, name in OPS.items()}


def _register(core) -> dict:
    """This core's atomic store register: {"op": None | "add" | ..., "dtype": name | None}."""
    return core.launch.shared.setdefault("store_atomic", {}).setdefault(
        core.core_id, {"op": None, "dtype": None})


def _set(op: str | None, dtype=None) -> None:
    core = current_core()
    core.execute(ScalarOps(1, user_location()))
    register = _register(core)
    register["op"] = op
    if dtype is not None:
        name = as_dtype(dtype).name
        if name not in _TYPE_CODES:
            raise KernelError(f"atomic stores take {', '.join(sorted(_TYPE_CODES))}, not {name}",
                              user_location())
        register["dtype"] = name


def set_atomic_add(dtype=None) -> None:
    """``set_atomic_add(dtype)``: copies to GM add their elements to GM's."""
    _set("add", dtype)


def set_atomic_max(dtype=None) -> None:
    _set("max", dtype)


def set_atomic_min(dtype=None) -> None:
    _set("min", dtype)


def set_atomic_none() -> None:
    """Copies to GM overwrite again."""
    _set(None)


def set_atomic_type(dtype) -> None:
    """Change the element type of the atomic operation, keeping the operation."""
    core = current_core()
    _set(_register(core)["op"], dtype)


def set_store_atomic_config(atomic_type, atomic_op) -> None:
    """``set_store_atomic_config(AtomicDtype, AtomicOp)``; ``ATOMIC_NONE`` turns it off."""
    atomic_type = AtomicDtype(atomic_type)
    if atomic_type == AtomicDtype.ATOMIC_NONE:
        _set(None)
        return
    _set(OPS[AtomicOp(atomic_op)], TYPES[atomic_type])


def get_store_atomic_config() -> tuple[int, int]:
    """``(AtomicDtype, AtomicOp)`` of the register (ATOMIC_NONE, ATOMIC_SUM when off)."""
    core = current_core()
    core.execute(ScalarOps(1, user_location()))
    register = _register(core)
    if register["op"] is None or register["dtype"] is None:
        return int(AtomicDtype.ATOMIC_NONE), int(AtomicOp.ATOMIC_SUM)
    return int(_TYPE_CODES[register["dtype"]]), int(_OP_CODES[register["op"]])


def store_atomic(dst, loc) -> str | None:
    """The atomic operation a copy to ``dst`` (a GM tensor) is done with, or None."""
    core = current_core()
    register = core.launch.shared.get("store_atomic", {}).get(core.core_id)
    if register is None or register["op"] is None:
        return None
    if register["dtype"] is not None and register["dtype"] != dst.dtype.name:
        raise KernelError(f"atomic {register['op']} is set for {register['dtype']}, but this "
                          f"copy stores {dst.dtype.name} to GM", loc)
    return register["op"]


__all__ = ["get_store_atomic_config", "set_atomic_add", "set_atomic_max", "set_atomic_min",
           "set_atomic_none", "set_atomic_type", "set_store_atomic_config"]
