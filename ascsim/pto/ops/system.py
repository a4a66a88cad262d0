"""System variables: block and sub-block indices and counts as PyPTO Pro defines them.

On the vector side of a MIX kernel ``get_block_idx()`` is ``block * 2 + sub-block`` (PyPTO Pro
flattens the AIV index), which is how the machine numbers a MIX launch's AIVs already.
"""

from __future__ import annotations

from ascsim.pto.ops.common import current_core


def get_block_idx() -> int:
    return current_core().block_idx


def get_block_num() -> int:
    return current_core().launch.config.block_num


def get_subblock_idx() -> int:
    return current_core().sub_block_idx


def get_subblock_num() -> int:
    core = current_core()
    return 2 if core.kind == "AIV" and core.launch.kind == "MIX" else 1
