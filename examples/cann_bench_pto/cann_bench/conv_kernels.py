"""The PyPTO-Pro kernels of the conv + activation operators (semi-fusion through GM).

Three kernels, each built for one geometry (the shapes are compile-time constants captured
from the building function, as a PyPTO-Pro kernel sees its enclosing variables):

- ``pad``: vector cores copy ``x`` into the interior of a zero-initialised padded copy
  ``xp [N, Cin, Hp, Wp]`` (followed by a zero slack), so that every window the convolution
  reads lies inside one tensor and the padding positions read zeros; skipped when the call
  does not pad and K1's whole-fractal loads stay inside x (``ConvGeometry.padded``).
- ``conv`` (K1): an implicit-GEMM convolution on the Cube. A is the filter as ``co x k``, B the
  input as ``k x spatial``, with k ordered (kh, kw, ci): for one filter tap (kh, kw) the A tile
  is a strided view of the filter (column stride Kh*Kw) and the B tile a strided view of
  ``xp`` (row stride one input plane, column stride the conv stride, the tap's dilation offset
  in its base), so no im2col buffer exists. One task is one output row's column chunk for a
  chunk of output channels; the bias enters as one more K step (A = the bias column, B = a row
  of ones). The fp32 accumulator goes to the workspace ``[N*Cout, Ho*Wo]`` (channel-major:
  the NCHW order of the output).
- ``act`` (K2): vector cores read workspace blocks, apply tanh or sigmoid in fp32 and write
  the output with one final cast.

Each kernel walks its tasks with a grid-stride loop over the launched cores; tails of every
dimension are valid shapes on fixed-size tiles.
"""

from dataclasses import dataclass

import pypto_pro.language as pl

#: torch dtype name -> PyPTO-Pro element type and its size in bytes.
PL_TYPES = {"float16": (pl.DT_FP16, 2), "float32": (pl.DT_FP32, 4), "bfloat16": (pl.DT_BF16, 2)}

TC = 128  # output channels per cube task (rows of the accumulator)
TP = 128  # output columns per cube task (one output row's chunk)
KB = 64  # input channels per K step
UB_ELEMS = 4096  # fp32 elements per vector block in K2
PAD_BYTES = 32768  # bytes of x per pad-kernel block
XP_SLACK = 64  # zeros after the padded copy: >= 16 columns x the largest stride (2)
CLAMP = 15.0  # |z| past this gives tanh = +-1 in fp32; keeps e^z finite
#: tanh's series below |z| = 0.25: the bound, then the coefficients of z^3, z^5, z^7, z^9.
TANH_SERIES = (0.25, -1.0 / 3.0, 2.0 / 15.0, -17.0 / 315.0, 62.0 / 2835.0)


def _round_up(n: int, m: int) -> int:
    return (n + m - 1) // m * m


def _ceil_div(n: int, m: int) -> int:
    return (n + m - 1) // m


@dataclass(frozen=True)
class ConvGeometry:
    """One call's shapes and attributes: what the kernels are built for."""

    dtype: str  # torch dtype name of every input and the output
    n: int
    cin: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    stride_h: int
    stride_w: int
    pad_top: int
    pad_bottom: int
    pad_left: int
    pad_right: int
    dil_h: int
    dil_w: int

    @property
    def hp(self) -> int:
        return self.h + self.pad_top + self.pad_bottom

    @property
    def wp(self) -> int:
        return self.w + self.pad_left + self.pad_right

    @property
    def ho(self) -> int:
        return (self.hp - self.dil_h * (self.kh - 1) - 1) // self.stride_h + 1

    @property
    def wo(self) -> int:
        return (self.wp - self.dil_w * (self.kw - 1) - 1) // self.stride_w + 1

    @property
    def frac_cols(self) -> int:
        """Columns of one L0B fractal: the Cube reads B in blocks of 16 N-columns."""
        return 16

    @property
    def padded(self) -> bool:
        """Whether K1 reads a padded copy of x: when the call pads, and also when an output
        row's width is not whole fractals -- K1 then loads B's last columns rounded up to a
        whole fractal (the Cube reads whole fractals), which may run past x's end into the
        copy's zero slack."""
        return (any((self.pad_top, self.pad_bottom, self.pad_left, self.pad_right))
                or self.wo % self.frac_cols != 0)

    @property
    def xp_elems(self) -> int:
        """Elements of the padded copy, its slack after the last row included."""
        return self.n * self.cin * self.hp * self.wp + XP_SLACK


def build_pad(g: ConvGeometry):
    """The pad kernel: x's rows into xp's interior, blocks of whole rows of one plane."""
    dt, size = PL_TYPES[g.dtype]
    planes, H, W, HP, WP, PT, PLEFT = g.n * g.cin, g.h, g.w, g.hp, g.wp, g.pad_top, g.pad_left
    wcols = _round_up(W, 32 // size)  # UB rows start on 32-byte boundaries
    rows = max(1, min(H, PAD_BYTES // (wcols * size)))
    chunks = _ceil_div(H, rows)
    tasks = planes * chunks

    @pl.jit(auto_mutex=True)
    def conv_pad(x4: pl.Tensor[[g.n, g.cin, H, W], dt], xp_flat: pl.Tensor[[g.xp_elems], dt]):
        with pl.section_vector():
            x = pl.make_tensor(x4, [planes, H, W])
            xp = pl.make_tensor(xp_flat, [planes, HP, WP])
            buf = pl.make_tile_group(
                type=pl.TileType(shape=[rows, wcols], dtype=dt,
                                 target_memory=pl.MemorySpace.Vec),
                addrs=0x0, mutex_ids=[0, 1])
            for t in pl.range(pl.get_block_idx(), tasks, pl.get_block_num()):
                plane = t // chunks
                h0 = (t % chunks) * rows
                slot = buf.next()
                pl.set_validshape(slot, [pl.min(rows, H - h0), W])
                pl.load(slot, x, [plane, h0, 0])
                pl.store(xp, slot, [plane, h0 + PT, PLEFT])

    return conv_pad, tasks


def build_conv(g: ConvGeometry):
    """K1: the implicit-GEMM convolution into the fp32 workspace (see the module doc)."""
    dt, _ = PL_TYPES[g.dtype]
    N, CIN, COUT, HP, WP, HO, WO = g.n, g.cin, g.cout, g.hp, g.wp, g.ho, g.wo
    KW, TAPS = g.kw, g.kh * g.kw
    SH, SW, DH, DW = g.stride_h, g.stride_w, g.dil_h, g.dil_w
    co_tiles, wo_tiles, ci_tiles = _ceil_div(COUT, TC), _ceil_div(WO, TP), _ceil_div(CIN, KB)
    steps = TAPS * ci_tiles
    FRAC = g.frac_cols
    XP_SHAPE = [g.xp_elems] if g.padded else [N, CIN, HP, WP]  # the copy, or x itself
    tasks = N * HO * wo_tiles * co_tiles

    @pl.jit(auto_mutex=True)
    def conv_k1(xp: pl.Tensor[XP_SHAPE, dt], filt: pl.Tensor[[COUT, CIN, g.kh, KW], dt],
                bias: pl.Tensor[[COUT], dt], ones: pl.Tensor[[1, TP], dt],
                ws: pl.Tensor[[N * COUT, HO * WO], pl.DT_FP32]):
        with pl.section_cube():
            a_l1 = pl.make_tile_group(
                type=pl.TileType(shape=[TC, KB], dtype=dt, target_memory=pl.MemorySpace.Mat),
                addrs=0x00000, mutex_ids=[0, 1, 2])
            b_l1 = pl.make_tile_group(
                type=pl.TileType(shape=[KB, TP], dtype=dt, target_memory=pl.MemorySpace.Mat),
                addrs=0x20000, mutex_ids=[3, 4, 5])
            a_l0 = pl.make_tile_group(
                type=pl.TileType(shape=[TC, KB], dtype=dt, target_memory=pl.MemorySpace.Left),
                addrs=0x0, mutex_ids=[6, 7])
            b_l0 = pl.make_tile_group(
                type=pl.TileType(shape=[KB, TP], dtype=dt, target_memory=pl.MemorySpace.Right),
                addrs=0x0, mutex_ids=[8, 9])
            acc = pl.make_tile_group(
                type=pl.TileType(shape=[TC, TP], dtype=pl.DT_FP32,
                                 target_memory=pl.MemorySpace.Acc),
                addrs=0x0, mutex_ids=[10, 11])
            # The bias as a [Cout, 1] column: the extra K step's A.
            bias_col = pl.make_tensor(bias, [COUT, 1], [1, 1])
            for t in pl.range(pl.get_block_idx(), tasks, pl.get_block_num()):
                co0 = (t % co_tiles) * TC
                rest = t // co_tiles
                wo0 = (rest % wo_tiles) * TP
                rest = rest // wo_tiles
                ho = rest % HO
                n = rest // HO
                tc = pl.min(TC, COUT - co0)
                tp = pl.min(TP, WO - wo0)
                tp_whole = (tp + FRAC - 1) // FRAC * FRAC  # B's columns, whole fractals
                out = acc.next()
                pl.set_validshape(out, [tc, tp])
                for s in pl.range(0, steps):
                    tap = s // ci_tiles
                    ci0 = (s % ci_tiles) * KB
                    kb = pl.min(KB, CIN - ci0)
                    # A: filter[:, :, kh, kw] as [Cout, Cin]; B: xp's tap window as
                    # [N, Ho, Cin, Wo] (rows = input channels, columns = output columns).
                    a_view = pl.make_tensor(pl.make_ptr(filt) + tap, [COUT, CIN],
                                            [CIN * TAPS, TAPS])
                    b_view = pl.make_tensor(
                        pl.make_ptr(xp) + (tap // KW) * DH * WP + (tap % KW) * DW,
                        [N, HO, CIN, WO], [CIN * HP * WP, SH * WP, HP * WP, SW])
                    a_slot = a_l1.next()
                    b_slot = b_l1.next()
                    pl.set_validshape(a_slot, [tc, kb])
                    pl.set_validshape(b_slot, [kb, tp_whole])
                    pl.load(a_slot, a_view, [co0, ci0])
                    pl.load(b_slot, b_view, [n, ho, ci0, wo0])
                    left = a_l0.next()
                    right = b_l0.next()
                    pl.set_validshape(left, [tc, kb])
                    pl.set_validshape(right, [kb, tp])
                    pl.move(left, a_slot)
                    pl.move(right, b_slot)
                    if s == 0:
                        pl.matmul(out, left, right, phase=pl.AccPhase.Partial)
                    else:
                        pl.matmul_acc(out, out, left, right, phase=pl.AccPhase.Partial)
                # The bias step: K = 1, bias[co] * 1 added to every column.
                a_slot = a_l1.next()
                b_slot = b_l1.next()
                pl.set_validshape(a_slot, [tc, 1])
                pl.set_validshape(b_slot, [1, tp_whole])
                pl.load(a_slot, bias_col, [co0, 0])
                pl.load(b_slot, ones, [0, 0])
                left = a_l0.next()
                right = b_l0.next()
                pl.set_validshape(left, [tc, 1])
                pl.set_validshape(right, [1, tp])
                pl.move(left, a_slot)
                pl.move(right, b_slot)
                pl.matmul_acc(out, out, left, right, phase=pl.AccPhase.Final)
                pl.store(ws, out, [n * COUT + co0, ho * WO + wo0], phase=pl.STPhase.Final)

    return conv_k1, tasks


def build_act(g: ConvGeometry, act: str):
    """K2: ``act`` in fp32 over the workspace, one cast into the output's type.

    tanh: ``(e^z - e^-z) / (e^z + e^-z)`` with z clamped to [-15, 15] (tanh is +-1 there in
    fp32, and e^z stays finite); for |z| < 0.25, where the difference cancels, the odd Taylor
    polynomial to z^9 instead (chosen per element by a mask; its truncation error is below
    1e-8 relative). sigmoid: ``1 / (1 + e^-z)``, exact to fp32 rounding everywhere (e^-z = inf
    gives 0)."""
    dt, _ = PL_TYPES[g.dtype]
    rows_total, length = g.n * g.cout, g.ho * g.wo
    cols = min(_round_up(length, 16), UB_ELEMS)  # 16: rows of fp16 and fp32 on 32 B
    rows = max(1, UB_ELEMS // cols)
    col_tiles, row_tiles = _ceil_div(length, cols), _ceil_div(rows_total, rows)
    tasks = row_tiles * col_tiles
    cast_out = g.dtype != "float32"
    is_tanh = act == "tanh"
    shape = [rows, cols]
    small, c3, c5, c7, c9 = TANH_SERIES

    @pl.jit(auto_mutex=True)
    def conv_act_k2(ws: pl.Tensor[[rows_total, length], pl.DT_FP32],
                    y4: pl.Tensor[[g.n, g.cout, g.ho, g.wo], dt]):
        with pl.section_vector():
            y = pl.make_tensor(y4, [rows_total, length])
            z_in = pl.make_tile_group(
                type=pl.TileType(shape=shape, dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                addrs=0x0, mutex_ids=[0, 1])
            y_out = pl.make_tile_group(
                type=pl.TileType(shape=shape, dtype=dt, target_memory=pl.MemorySpace.Vec),
                addrs=0x8000, mutex_ids=[2, 3])
            a = pl.make_tile(pl.TileType(shape=shape, dtype=pl.DT_FP32,
                                         target_memory=pl.MemorySpace.Vec), addr=0x10000)
            b = pl.make_tile(pl.TileType(shape=shape, dtype=pl.DT_FP32,
                                         target_memory=pl.MemorySpace.Vec), addr=0x14000)
            p = pl.make_tile(pl.TileType(shape=shape, dtype=pl.DT_FP32,
                                         target_memory=pl.MemorySpace.Vec), addr=0x18000)
            near0 = pl.make_tile(pl.TileType(shape=shape, dtype=pl.DT_UINT8,
                                             target_memory=pl.MemorySpace.Vec), addr=0x1C000)
            for t in pl.range(pl.get_block_idx(), tasks, pl.get_block_num()):
                r0 = (t // col_tiles) * rows
                c0 = (t % col_tiles) * cols
                window = [pl.min(rows, rows_total - r0), pl.min(cols, length - c0)]
                z = z_in.next()
                o = y_out.next()
                pl.set_validshape(z, window)
                pl.set_validshape(o, window)
                pl.set_validshape(a, window)
                pl.set_validshape(b, window)
                pl.set_validshape(p, window)
                pl.load(z, ws, [r0, c0])
                if is_tanh:
                    pl.minimum(z, z, CLAMP)
                    pl.maximum(z, z, -CLAMP)
                    pl.abs(a, z)
                    pl.lt(near0, a, small)
                    pl.mul(b, z, z)  # the series in z^2, Horner's scheme
                    pl.mul(p, b, c9)
                    pl.add(p, p, c7)
                    pl.mul(p, p, b)
                    pl.add(p, p, c5)
                    pl.mul(p, p, b)
                    pl.add(p, p, c3)
                    pl.mul(p, p, b)
                    pl.add(p, p, 1.0)
                    pl.mul(p, p, z)
                    pl.exp(a, z)  # e^z
                    pl.neg(z, z)
                    pl.exp(b, z)  # e^-z
                    pl.sub(z, a, b)
                    pl.add(a, a, b)
                    pl.div(b, z, a)
                    if cast_out:
                        pl.select(z, near0, p, b, a)
                        pl.cast(o, z)
                    else:
                        pl.select(o, near0, p, b, a)
                else:
                    pl.neg(z, z)
                    pl.exp(a, z)  # e^-z
                    pl.add(a, a, 1.0)
                    if cast_out:
                        pl.recip(b, a)
                        pl.cast(o, b)
                    else:
                        pl.recip(o, a)
                pl.store(y, o, [r0, c0])

    return conv_act_k2, tasks
