"""Kernel-side helpers of the language core: loops, arrays, asserts, debug output."""

from __future__ import annotations

import numpy as np

from ascsim.asc.context import current_core, user_location
from ascsim.asc.dtypes import as_dtype
from ascsim.asc.values import RuntimeInt
from ascsim.sim.errors import KernelError


def range(start, stop=None, step=1):  # noqa: A001 - pyasc's name
    """``asc.range``: a loop over runtime bounds (``scf.for`` in pyasc)."""
    import builtins

    if stop is None:
        start, stop = 0, start
    return (RuntimeInt(i) for i in builtins.range(int(start), int(stop), int(step)))


def static_range(start, stop=None, step=1):
    """``asc.static_range``: a loop unrolled at compile time."""
    import builtins

    if stop is None:
        start, stop = 0, start
    return builtins.range(int(start), int(stop), int(step))


def array(dtype, size_or_values, fill_value=0):
    """``asc.array(dtype, n, fill_value=0)`` or ``asc.array(dtype, [values])``: scalar storage."""
    dt = as_dtype(dtype).np_dtype
    if isinstance(size_or_values, (list, tuple)):
        return np.array(size_or_values, dtype=dt)
    return np.full(int(size_or_values), fill_value, dtype=dt)


def static_assert(condition, message: str = "") -> None:
    if not condition:
        raise KernelError(f"static_assert failed: {message}", user_location())


def inline(fn):
    """``@asc.inline``: accepted; every helper is inlined in the simulator anyway."""
    return fn


def number(value, dtype=None):
    return as_dtype(dtype)(value) if dtype is not None else value


def printf(fmt: str, *params) -> None:
    """Device printf: prints with the core's block index, like the device's dump buffer."""
    text = fmt.replace("\\n", "\n")
    try:
        text = text % tuple(params) if params else text
    except TypeError:
        text = text + " " + " ".join(str(p) for p in params)
    core = current_core()
    core.launch.say(f"[block {core.block_idx}] {text}" + ("" if text.endswith("\n") else "\n"))


def dump_tensor(tensor, desc: int = 0, dump_size: int | None = None, shape_info=None) -> None:
    n = tensor.get_size() if dump_size is None else int(dump_size)
    values = tensor.elements(0, n, user_location())
    core = current_core()
    core.launch.say(f"[block {core.block_idx}] dump {desc}: {values}\n")


def print_time_stamp(desc: int = 0) -> None:
    core = current_core()
    core.launch.say(f"[block {core.block_idx}] time stamp {desc}: {core.scalar:.0f} cycles\n")


def set_sys_workspace(workspace) -> None:
    """Older pyasc form: remember the system workspace for ``register_matmul``."""
    current_core().launch.shared["sys_workspace"] = workspace


def get_sys_workspace():
    return current_core().launch.shared.get("sys_workspace")


def scalar_cast(value, dtype, round_mode=None):
    return as_dtype(dtype)(value)
