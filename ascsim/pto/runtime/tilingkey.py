"""``TilingKeyField``: one field of a kernel's tiling key (a compile-time switch)."""

from __future__ import annotations


class TilingKeyField:
    """``TilingKeyField(*, bits, values)``: a field of ``bits`` bits taking one of ``values``."""

    def __init__(self, *, bits: int, values):
        values = tuple(values)
        if not isinstance(bits, int) or bits <= 0:
            raise ValueError(f"TilingKeyField bits must be a positive int, got {bits!r}")
        if not values or len(set(values)) != len(values) or not all(
                isinstance(v, int) for v in values):
            raise ValueError("TilingKeyField values must be a non-empty list of unique ints")
        if len(values) > 2 ** bits:
            raise ValueError(f"{len(values)} values do not fit in {bits} bits")
        self.bits = bits
        self.values = values

    def __repr__(self) -> str:
        return f"TilingKeyField(bits={self.bits}, values={list(self.values)})"
