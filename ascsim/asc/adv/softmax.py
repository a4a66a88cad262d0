"""``asc.adv.softmax_flash_v2`` (Ascend C ``SoftmaxFlashV2``, the FlashAttention-2 online softmax)
with its parameter types ``SoftmaxTiling``, ``SoftMaxShapeInfo`` and ``SoftmaxConfig``.

Per row of an ``[m, k]`` source (Ascend C documentation, SoftmaxFlashV2):

- first tile (``is_update=False``): ``M = rowmax(x)``, ``dst = exp(x - M)``, ``S = rowsum(dst)``;
- update (``is_update=True``), given the running ``inmax``/``insum`` of the earlier tiles:
  ``M = max(inmax, rowmax(x))``, ``dst = exp(x - M)``, ``E = exp(inmax - M)``,
  ``S = E * insum + rowsum(dst)``.

``dst`` is not normalised: the caller rescales its running output by ``E`` and divides by the
final ``S``. The per-row outputs (``S``, ``M``, ``E``) and inputs (``insum``, ``inmax``) each
hold one 32-byte block per row, the row's value repeated (8 floats or 16 halves). Two type
combinations exist: everything in one type, or half data (``src``, ``dst``, ``E``) with float
state (``S``, ``M``, ``insum``, ``inmax``). The vector unit computes in fp32 either way (half
data is cast up first); each output is rounded once to its own type.

Only the ND layout is simulated (``is_data_format_nz=True`` is refused).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ascsim.asc.adv.composite import sequence
from ascsim.asc.context import current_core, user_location
from ascsim.asc.struct import Struct
from ascsim.isa import ScalarOps, count_repeats
from ascsim.sim.errors import KernelError

BLOCK_BYTES = 32  # one data block: the per-row state is one block wide
FP32_BYTES = 4
#: SoftmaxConfig.mode values: 0 = SOFTMAX_NORMAL (state broadcast to a block per row).
SOFTMAX_NORMAL = 0

#: (data dtype, state dtype) pairs SoftmaxFlashV2 accepts.
TYPE_PAIRS = frozenset({("float16", "float16"), ("float32", "float32"), ("float16", "float32")})


class SoftmaxTiling(Struct):
    """Ascend C ``SoftMaxTiling``: how the library splits an ``[src_m, src_k]`` source
    (rows per pass ``split_m``, passes ``range_m``, a tail of ``tail_m`` rows) and sizes its
    reduction buffers. Built on the host (``asc.adv.SoftmaxTiling(src_m=..., ...)``)."""

    _fields_ = tuple((name, "uint32", 0) for name in (
        "src_m", "src_k", "src_size", "out_max_m", "out_max_k", "out_max_size", "split_m",
        "split_k", "split_size", "reduce_m", "reduce_k", "reduce_size", "range_m", "tail_m",
        "tail_split_size", "tail_reduce_size"))


@dataclass(frozen=True)
class SoftMaxShapeInfo:
    """The source shape of one call: ``src_m x src_k`` as laid out in UB (row pitch
    ``src_k``), of which ``ori_src_m x ori_src_k`` are real data (the rest is padding)."""

    src_m: int
    src_k: int
    ori_src_m: int
    ori_src_k: int

    def __post_init__(self):
        for name in ("src_m", "src_k", "ori_src_m", "ori_src_k"):
            object.__setattr__(self, name, int(getattr(self, name)))
            if getattr(self, name) < 0:
                raise ValueError(f"SoftMaxShapeInfo.{name} is negative ({getattr(self, name)})")
        if self.ori_src_m > self.src_m or self.ori_src_k > self.src_k:
            raise ValueError(f"SoftMaxShapeInfo: the real {self.ori_src_m}x{self.ori_src_k} "
                             f"exceeds the padded {self.src_m}x{self.src_k}")


@dataclass(frozen=True)
class SoftmaxConfig:
    """Ascend C ``SoftmaxConfig`` (a compile-time argument).

    ``is_check_tiling``: the library checks the tiling against the call's shape and recomputes
    it on the device when they differ; with False it trusts the tiling. ``ori_src_m`` /
    ``ori_src_k`` (0 = not fixed) declare the shape at compile time. ``mode`` 0 is
    SOFTMAX_NORMAL (per-row state broadcast to a 32-byte block).
    """

    is_check_tiling: bool = True
    ori_src_m: int = 0
    ori_src_k: int = 0
    mode: int = SOFTMAX_NORMAL

    def __post_init__(self):
        object.__setattr__(self, "is_check_tiling", bool(self.is_check_tiling))
        for name in ("ori_src_m", "ori_src_k", "mode"):
            object.__setattr__(self, name, int(getattr(self, name)))
            if getattr(self, name) < 0:
                raise ValueError(f"SoftmaxConfig.{name} is negative ({getattr(self, name)})")


DEFAULT_CONFIG = SoftmaxConfig()


def _lanes(t) -> int:
    return BLOCK_BYTES // t.dtype.sizeof()


def _row_state(values: np.ndarray, rows: int) -> np.ndarray:
    """Lane 0 of each row's 32-byte block (``values``: the state's elements), in fp32."""
    return values.reshape(rows, -1)[:, 0].astype(np.float32)


def _broadcast_state(t, values: np.ndarray) -> np.ndarray:
    """One value per row, repeated across the row's 32-byte block of ``t``."""
    return np.repeat(values[:, None], _lanes(t), axis=1)


def _shape(tiling, shape_info, config: SoftmaxConfig, loc) -> SoftMaxShapeInfo:
    """The call's shape, checked against the tiling and the config the way the library is
    configured to (a mismatched, unchecked tiling would make the device compute garbage)."""
    if shape_info is None:
        m, k = int(tiling.src_m), int(tiling.src_k)
        shape_info = SoftMaxShapeInfo(m, k, m, k)
    if not isinstance(shape_info, SoftMaxShapeInfo):
        raise KernelError("softmax_flash_v2: softmax_shape_info must be an "
                          f"asc.adv.SoftMaxShapeInfo, got {type(shape_info).__name__}", loc)
    if config.ori_src_m and config.ori_src_k and (
            (config.ori_src_m, config.ori_src_k) != (shape_info.ori_src_m, shape_info.ori_src_k)):
        raise KernelError(f"softmax_flash_v2: the config fixes the shape to {config.ori_src_m}x"
                          f"{config.ori_src_k} but this call is {shape_info.ori_src_m}x"
                          f"{shape_info.ori_src_k}", loc)
    tiled = (int(tiling.src_m), int(tiling.src_k))
    if not config.is_check_tiling and tiled != (shape_info.src_m, shape_info.src_k):
        raise KernelError(f"softmax_flash_v2: the tiling is for {tiled[0]}x{tiled[1]} but the "
                          f"source is {shape_info.src_m}x{shape_info.src_k}, and "
                          "SoftmaxConfig(is_check_tiling=False) stops the library from "
                          "recomputing it", loc)
    if shape_info.src_m == 0 or shape_info.src_k == 0 or shape_info.ori_src_k == 0:
        raise KernelError(f"softmax_flash_v2: empty source {shape_info.src_m}x"
                          f"{shape_info.src_k} (real columns {shape_info.ori_src_k})", loc)
    return shape_info


def _check_types(dst, src, sum_t, max_t, exp_max, in_sum, in_max, update: bool, loc) -> None:
    data, state = src.dtype.name, sum_t.dtype.name
    if (data, state) not in TYPE_PAIRS:
        raise KernelError(f"softmax_flash_v2: {data} data with {state} state is not a "
                          "SoftmaxFlashV2 form (all float16, all float32, or float16 data "
                          "with float32 state)", loc)
    same_as = {"dst": (dst, data), "max": (max_t, state), "exp_max": (exp_max, data)}
    if update:
        same_as.update(in_sum=(in_sum, state), in_max=(in_max, state))
    for name, (t, want) in same_as.items():
        if t.dtype.name != want:
            raise KernelError(f"softmax_flash_v2: {name} is {t.dtype.name} but must be {want} "
                              f"(src {data}, sum {state})", loc)


def softmax_flash_v2_steps(rows: int, cols: int, mixed: bool, update: bool,
                           basic_block: bool) -> list:
    """The vector instructions SoftmaxFlashV2 issues for ``rows x cols`` (fp32 repeats).

    Row max, broadcast to a block per row, subtract, exp, row sum, broadcast; half data is cast
    up first and the exponentials cast back down. A basic block (rows a multiple of 8, columns
    of 64) reduces all rows at once through per-block partials; otherwise each row is reduced
    on its own. The update form adds the per-row max/exp/scale/add of the running state.
    """
    per_row = count_repeats(rows, FP32_BYTES)
    row = count_repeats(cols, FP32_BYTES)
    if basic_block:
        partials = count_repeats(rows * cols // 8, FP32_BYTES)
        reduce_max = ["block_reduce_max", ("reduce_max", partials)]
        reduce_sum = ["block_reduce", ("reduce", partials)]
    else:
        reduce_max = [("reduce_max", row)] * rows
        reduce_sum = [("reduce_acc", row)] * rows
    steps = (["cast"] if mixed else []) + reduce_max + [("brcb", per_row)]
    if update:  # new max = max(inmax, rowmax); E = exp(inmax - new max)
        steps += [("max", per_row), ("sub", per_row), ("exp", per_row)]
    steps += ["sub", "exp"] + (["cast"] if mixed else []) + reduce_sum + [("brcb", per_row)]
    if update:  # S = E * insum + rowsum
        steps += [("mul", per_row), ("add", per_row)] + ([("cast", per_row)] if mixed else [])
    return steps


def softmax_flash_v2(dst_tensor, exp_sum_tensor, max_tensor, src_tensor, exp_max_tensor,
                     in_exp_sum_tensor, in_max_tensor, tiling, softmax_shape_info=None,
                     shared_tmp_buffer=None, out_reduce_max=None, is_update: bool = False,
                     is_reuse_source: bool = False, is_basic_block: bool = False,
                     is_data_format_nz: bool = False, config: SoftmaxConfig | None = None) -> None:
    """``softmax_flash_v2(dst, exp_sum, max, src, exp_max, in_exp_sum, in_max, tiling,
    softmax_shape_info=None, shared_tmp_buffer=None, out_reduce_max=None, is_update=False,
    is_reuse_source=False, is_basic_block=False, is_data_format_nz=False, config=None)``."""
    loc = user_location()
    config = DEFAULT_CONFIG if config is None else config
    if not isinstance(config, SoftmaxConfig):
        raise KernelError(f"softmax_flash_v2: config must be an asc.adv.SoftmaxConfig, got "
                          f"{type(config).__name__}", loc)
    if is_data_format_nz:
        raise KernelError("softmax_flash_v2: the NZ layout (is_data_format_nz=True) is not "
                          "simulated; use ND", loc)
    if config.mode != SOFTMAX_NORMAL or out_reduce_max is not None:
        raise KernelError("softmax_flash_v2: only SOFTMAX_NORMAL mode without out_reduce_max "
                          "is simulated (state broadcast to a 32-byte block per row)", loc)
    update = bool(is_update)
    _check_types(dst_tensor, src_tensor, exp_sum_tensor, max_tensor, exp_max_tensor,
                 in_exp_sum_tensor, in_max_tensor, update, loc)
    shape = _shape(tiling, softmax_shape_info, config, loc)
    rows, cols, real = shape.src_m, shape.src_k, shape.ori_src_k
    n = rows * cols
    state = _lanes(max_tensor) * rows

    def flash_softmax(x, *state_in):
        x = x.reshape(rows, cols).astype(np.float32)
        row_max = x[:, :real].max(axis=1)
        if update:
            in_max, in_sum = (_row_state(t, rows) for t in state_in)
            new_max = np.maximum(in_max, row_max)
        else:
            new_max = row_max
        e = np.exp(x - new_max[:, None])  # -inf rows (fully masked) give NaN as on the device
        row_sum = e[:, :real].sum(axis=1, dtype=np.float32)
        outputs = (e, _broadcast_state(max_tensor, new_max))
        if not update:
            return (*outputs, _broadcast_state(exp_sum_tensor, row_sum))
        exp_max = np.exp(in_max - new_max)
        return (*outputs, _broadcast_state(exp_sum_tensor, exp_max * in_sum + row_sum),
                _broadcast_state(exp_max_tensor, exp_max))

    outputs = [dst_tensor.region(n), max_tensor.region(state), exp_sum_tensor.region(state)]
    inputs = [src_tensor.region(n)]
    if update:
        outputs.append(exp_max_tensor.region(_lanes(exp_max_tensor) * rows))
        inputs += [in_max_tensor.region(state), in_exp_sum_tensor.region(state)]
    mixed = src_tensor.dtype.name != exp_sum_tensor.dtype.name
    steps = softmax_flash_v2_steps(rows, cols, mixed, update, bool(is_basic_block))
    if config.is_check_tiling and (int(tiling.src_m), int(tiling.src_k)) != (rows, cols):
        # The library recomputes the tiling for this shape on the device.
        current_core().execute(ScalarOps(len(SoftmaxTiling._fields_), loc))
    scratch = () if shared_tmp_buffer is None else (shared_tmp_buffer.region(),)
    sequence("softmax_flash_v2", tuple(outputs), inputs, flash_softmax, steps,
             count_repeats(n, FP32_BYTES), "float32", loc, scratch=scratch)


def _softmax_shape(tiling, src, loc) -> tuple[int, int]:
    """``softmax``'s ``[m, n]``: the tiling's, or (a tiling left at zero, as pyasc builds it)
    the source tensor's ShapeInfo, all leading axes folded into m."""
    m, k = int(tiling.src_m), int(tiling.src_k)
    if m and k:
        return m, k
    info = src.get_shape_info()
    if info is None or not info.shape:
        raise KernelError("softmax: the tiling gives no shape (src_m, src_k are 0) and the "
                          "source has no ShapeInfo: call src.set_shape_info(asc.ShapeInfo(...))"
                          " or fill the tiling", loc)
    *lead, k = (int(d) for d in info.shape)
    m = int(np.prod(lead)) if lead else 1
    if m == 0 or k == 0:
        raise KernelError(f"softmax: empty source shape {tuple(info.shape)}", loc)
    return m, k


def softmax(dst, sum, max, src, tiling, temp_buffer=None,  # noqa: A002 - pyasc's names
            reuse_source: bool = False, basic_block: bool = False,
            data_format_nz: bool = False) -> None:
    """``asc.adv.softmax(dst, sum, max, src, tiling, temp_buffer=None, reuse_source=False,
    basic_block=False, data_format_nz=False)``: per row ``max = rowmax(src)``,
    ``sum = rowsum(exp(src - max))``, ``dst = exp(src - max) / sum``; ``sum`` and ``max`` hold
    one 32-byte block per row (the row's value repeated)."""
    loc = user_location()
    if data_format_nz:
        raise KernelError("softmax: the NZ layout (data_format_nz=True) is not simulated; use "
                          "ND", loc)
    data, state = src.dtype.name, sum.dtype.name
    if (data, state) not in TYPE_PAIRS or dst.dtype.name != data or max.dtype.name != state:
        raise KernelError(f"softmax: src {data}, dst {dst.dtype.name}, sum {state}, max "
                          f"{max.dtype.name} is not a SoftMax form (all float16, all float32, "
                          "or float16 data with float32 sum and max)", loc)
    rows, cols = _softmax_shape(tiling, src, loc)
    n = rows * cols
    state_n = _lanes(max) * rows

    def row_softmax(x):
        x = x.reshape(rows, cols).astype(np.float32)
        row_max = x.max(axis=1)
        e = np.exp(x - row_max[:, None])
        row_sum = e.sum(axis=1, dtype=np.float32)
        return (e / row_sum[:, None], _broadcast_state(max, row_max),
                _broadcast_state(sum, row_sum))

    mixed = data != state
    steps = softmax_flash_v2_steps(rows, cols, mixed, False, bool(basic_block)) + ["div"]
    scratch = () if temp_buffer is None else (temp_buffer.region(),)
    sequence("softmax", (dst.region(n), max.region(state_n), sum.region(state_n)),
             (src.region(n),), row_softmax, steps, count_repeats(n, FP32_BYTES), "float32",
             loc, scratch=scratch)


__all__ = ["SoftMaxShapeInfo", "SoftmaxConfig", "SoftmaxTiling", "softmax", "softmax_flash_v2",
           "softmax_flash_v2_steps"]
