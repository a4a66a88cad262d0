"""How the op profiler and the op simulator name a core: block id, sub-block, directory.

A MIX launch's block ``b`` is one AI Core: its AIC is ``cube0`` and its two AIVs ``vector0`` and
``vector1`` (directories ``core{b}.cubecore0``, ``core{b}.veccore{0,1}``); the simulator numbers
those AIVs' block indices 2·b and 2·b+1 (ascsim/sim/launch.py). A one-kind launch's block ``b``
is one core, sub-block 0.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The vendor's word for each core kind, in sub-block names and directory names.
SUB_BLOCK_WORD = {"AIC": "cube", "AIV": "vector"}
DIRECTORY_WORD = {"AIC": "cubecore", "AIV": "veccore"}


@dataclass(frozen=True)
class VendorCore:
    """One simulated core as the vendor's files name it.

    Fields:
        block_id: the launch block the core belongs to.
        sub: its index among the cores of its kind in that block (0, or 0/1 for MIX AIVs).
        kind: "AIC" or "AIV".
    """

    block_id: int
    sub: int
    kind: str

    @property
    def sub_block_id(self) -> str:
        """``cube0``, ``vector0``, ``vector1``: PipeUtilization.csv's ``sub_block_id``."""
        return f"{SUB_BLOCK_WORD[self.kind]}{self.sub}"

    @property
    def directory(self) -> str:
        """``core0.veccore1``: the op simulator's per-core directory and file prefix."""
        return f"core{self.block_id}.{DIRECTORY_WORD[self.kind]}{self.sub}"


def vendor_core(kernel_type: str, kind: str, block_idx: int) -> VendorCore:
    """The vendor name of a core of ``kind`` whose simulated block index is ``block_idx``."""
    if kernel_type == "MIX" and kind == "AIV":
        return VendorCore(block_idx // 2, block_idx % 2, kind)
    return VendorCore(block_idx, 0, kind)
