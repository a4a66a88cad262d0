"""The vector half of the conv operators, and the kernels that launch both halves.

* Epilogue unit (AIV): ``plan.epi_pix`` pixels (at most 256; fewer for small outputs, so
  the units reach more AIVs) x 16 channels of the NC1HWC0 conv result — GM -> UB (MTE2),
  cast up to fp32 if stored narrower, activation in fp32, one cast to the output type,
  ``gather`` transposes [pixels][16] to [16][pixels], UB -> GM as up to 16 NCHW row pieces
  (MTE3, data_copy_pad with a GM row pitch of Ho*Wo).
* 910B pre-pass (AIV): the 2201 MTE2 has no DN2NZ, so x (NCHW) and the filter (OIHW) are
  re-laid out on the vector side into NHWC and OHWI with channels padded to whole C0 blocks
  (GM -> UB, ``gather``, UB -> GM), then every core meets at ``sync_all`` before the AIC reads
  them with ND2NZ copies. On 950 the AIC reads NCHW / OIHW directly (DN2NZ) and the kernel is
  cube-only.
* 950 filter pre-pass (AIV, ``plan.w_prepass``): the filter OIHW laid out in GM as L1 holds
  it, so each AIC copies its weights in one contiguous copy instead of DN2NZ's burst per
  (output, input) channel pair; then every core meets at ``sync_all``.
* ``conv_kernel``: the convolution (AIC; plus a pre-pass on 910B or with ``w_prepass``)
  writing NC1HWC0 in fp32 (semi-fused workspace) or in the output type (unfused).
* ``epilogue_kernel``: K2, the AIV-only activation + layout pass over the whole result.
* ``fused_kernel``: one MIX kernel; the AIC announces each finished tile with a cross-core flag
  and the group's two AIVs run the epilogue on its two halves of the tile's pixels while the
  AIC computes the next tile, then acknowledge it. On 950 the halves arrive in the AIVs' UB by
  FixPipe L0C->UB (``fused_ub_epilogue``); on 910B through the GM workspace.
"""

from __future__ import annotations

import ascsim.asc as asc
from ascsim.asc.runtime.config import KernelType
from ascsim.ops.conv_plan import PREPASS_ELEMS
from ascsim.ops.kernels.activation import _activate
from ascsim.ops.kernels.conv_cube import (
    TILE_DONE,
    TILE_READY,
    conv_cube,
    half_split,
    tile_geometry,
    tile_range,
)

PRE_ELEMS = PREPASS_ELEMS  # elements per pre-pass gather


def _ceil(a, b):
    return (a + b - 1) // b


# ------------------------------------------------------------------------------ epilogue
class _EpiBuffers:
    """UB buffers of the epilogue (built inside a kernel)."""

    def __init__(self, pipe, src_dtype, out_dtype, table_gm, pix):
        self.pix = pix  # pixels per unit: the pitch of the [16][pix] output rows in UB
        self.in_q = asc.TQue(asc.TPosition.VECIN, 2)
        self.out_q = asc.TQue(asc.TPosition.VECOUT, 2)
        work = asc.TBuf(asc.TPosition.VECCALC)
        narrow = asc.TBuf(asc.TPosition.VECCALC)
        table = asc.TBuf(asc.TPosition.VECCALC)
        pipe.init_buffer(que=self.in_q, num=2, len=pix * 16 * src_dtype.sizeof())
        pipe.init_buffer(que=self.out_q, num=2, len=pix * 16 * out_dtype.sizeof())
        pipe.init_buffer(buf=work, num=pix * 16 * 4)
        pipe.init_buffer(buf=narrow, num=pix * 16 * out_dtype.sizeof())
        pipe.init_buffer(buf=table, num=pix * 16 * 4)
        self.work = work.get(asc.float32)
        self.narrow = narrow.get(out_dtype)
        self.table = table.get(asc.uint32)
        self.src_dtype = src_dtype
        self.out_dtype = out_dtype
        # Partial units gather past their pixels (those columns are not stored): start from
        # defined values.
        self.table_gm = table_gm  # copied in by the first unit (see epilogue_unit)
        asc.duplicate(self.work, 0.0, pix * 16)
        asc.duplicate(self.narrow, 0.0, pix * 16)


@asc.jit
def epilogue_unit(bufs, src_gm, dst_gm, src_off, dst_off, npix, nch, hw,
                  act: asc.ConstExpr[str], alpha, first):
    """NC1HWC0 piece (npix pixels x 16 channels at ``src_off``) -> act -> NCHW rows. The
    ``first`` piece of a core also copies in the transpose table, after its input: the
    activation needs only the input, so the table's copy overlaps it instead of delaying it
    (MTE2 runs in order: the queue's hand-over after the input covers the table too)."""
    n = npix * 16
    x = bufs.in_q.alloc_tensor(bufs.src_dtype)
    asc.data_copy(x, src_gm[src_off:], n)
    if first:
        asc.data_copy(bufs.table, bufs.table_gm, bufs.pix * 16)
    bufs.in_q.enque(x)
    x = bufs.in_q.deque(bufs.src_dtype)
    work = bufs.work
    if bufs.src_dtype != asc.float32:
        asc.cast(work, x, asc.RoundMode.CAST_NONE, n)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        _activate(work, work, act, alpha, n, bufs.out_dtype != asc.float32)
    else:
        _activate(work, x, act, alpha, n, bufs.out_dtype != asc.float32)
    bufs.in_q.free_tensor(x)
    y = bufs.out_q.alloc_tensor(bufs.out_dtype)
    asc.pipe_barrier(asc.PipeID.PIPE_V)
    if bufs.out_dtype != asc.float32:
        asc.cast(bufs.narrow, work, asc.RoundMode.CAST_RINT, n)
        asc.pipe_barrier(asc.PipeID.PIPE_V)
        asc.gather(y, bufs.narrow, bufs.table, 0, bufs.pix * 16)
    else:
        asc.gather(y, work, bufs.table, 0, bufs.pix * 16)
    bufs.out_q.enque(y)
    y = bufs.out_q.deque(bufs.out_dtype)
    size = bufs.out_dtype.sizeof()
    row = _ceil(npix * size, 32) * 32
    asc.data_copy_pad(dst_gm[dst_off:], y, asc.DataCopyExtParams(
        nch, npix * size, (bufs.pix * size - row) // 32, (hw - npix) * size, 0))
    bufs.out_q.free_tensor(y)


@asc.jit
def _epilogue_pixels(bufs, src_gm, dst_gm, p: asc.ConstExpr, nb, c1_lo, c1_hi, pix_lo, pix_hi,
                     act: asc.ConstExpr[str], alpha, first):
    """Epilogue of channel blocks [c1_lo, c1_hi) x pixels [pix_lo, pix_hi) of image nb;
    ``first``: these are the core's first pieces (the first one copies in the table)."""
    for c1 in range(c1_lo, c1_hi):
        nch = min(16, p.cout - c1 * 16)
        for pix in range(pix_lo, pix_hi, bufs.pix):
            npix = min(bufs.pix, pix_hi - pix)
            epilogue_unit(bufs, src_gm, dst_gm, ((nb * p.co1 + c1) * p.hw + pix) * 16,
                          (nb * p.cout + c1 * 16) * p.hw + pix, npix, nch, p.hw, act, alpha,
                          first and c1 == c1_lo and pix == pix_lo)


@asc.jit(kernel_type=KernelType.AIV_ONLY)
def epilogue_kernel(src: asc.GlobalAddress, dst: asc.GlobalAddress, table: asc.GlobalAddress,
                    p: asc.ConstExpr, act: asc.ConstExpr[str], alpha: float):
    """K2: NC1HWC0 conv result (fp32 workspace, or the output type) -> act -> NCHW output."""
    src_gm, dst_gm, table_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    src_gm.set_global_buffer(src)
    dst_gm.set_global_buffer(dst)
    table_gm.set_global_buffer(table)
    pipe = asc.TPipe()
    bufs = _EpiBuffers(pipe, src.dtype, dst.dtype, table_gm, p.epi_pix)
    # This AIV's even share of the strips, flattened over (image, channel block, strip), run in
    # pieces of at most epi_pix pixels that stay inside one (image, channel block).
    spi = (p.hw + 15) // 16  # strips per (image, channel block)
    me = asc.get_block_idx()
    num = asc.get_block_num()
    begin = me * p.epi_strips // num
    end = (me + 1) * p.epi_strips // num
    pos = begin
    for _ in asc.range(p.epi_pieces):
        if pos < end:
            blk = pos // spi
            s0 = pos % spi
            s1 = min(end - blk * spi, spi, s0 + p.epi_pix // 16)
            pix = s0 * 16
            npix = min(s1 * 16, p.hw) - pix
            nb = blk // p.co1
            c1 = blk % p.co1
            epilogue_unit(bufs, src_gm, dst_gm, (blk * p.hw + pix) * 16,
                          (nb * p.cout + c1 * 16) * p.hw + pix, npix,
                          min(16, p.cout - c1 * 16), p.hw, act, alpha, pos == begin)
            pos = blk * spi + s1


# ------------------------------------------------------------------------------ 910B pre-pass
@asc.jit
def prepass(x_gm, w_gm, xt_gm, wt_gm, tables_gm, p: asc.ConstExpr):
    """AIV part of the 910B conv: NCHW -> NHWC (channels padded to C1*C0) and OIHW -> OHWI
    (same padding) in GM, spread over every AIV of the launch, then a barrier with the AICs."""
    dt = x_gm.dtype
    size = dt.sizeof()
    pipe = asc.TPipe()
    src_buf = asc.TBuf(asc.TPosition.VECCALC)
    out_buf = asc.TBuf(asc.TPosition.VECCALC)
    tab_buf = asc.TBuf(asc.TPosition.VECCALC)
    xq, x_pitch, wr, w_pitch, src_elems, zero_at = pre_layout(p)
    pipe.init_buffer(buf=src_buf, num=src_elems * size)
    pipe.init_buffer(buf=out_buf, num=PRE_ELEMS * size)
    pipe.init_buffer(buf=tab_buf, num=PRE_ELEMS * 4)
    src = src_buf.get(dt)
    out = out_buf.get(dt)
    table = tab_buf.get(asc.uint32)
    # A zeroed block at zero_at: the padding channels are gathered from it.
    asc.duplicate(src[zero_at:], 0.0, 32 // size)
    me = asc.get_block_idx()
    cores = asc.get_block_num()
    hw_in = p.h * p.w
    # --- x: units of xq pixels of one image, all channels.
    asc.data_copy(table, tables_gm, PRE_ELEMS)
    chunks = _ceil(hw_in, xq)
    for u in asc.range(me, p.n * chunks, cores):
        nb = u // chunks
        q0 = (u % chunks) * xq
        nq = min(xq, hw_in - q0)
        row = _ceil(nq * size, 32) * 32
        asc.data_copy_pad(src, x_gm[nb * p.cin * hw_in + q0:], asc.DataCopyExtParams(
            p.cin, nq * size, (hw_in - nq) * size, (x_pitch * size - row) // 32, 0),
            asc.DataCopyPadExtParams(False, 0, 0, 0))
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.gather(out, src, table, 0, nq * p.cp)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(xt_gm[(nb * hw_in + q0) * p.cp:], out, nq * p.cp)
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
    # --- filter: units of wr output channels x one channel block.
    co_chunks = _ceil(p.cout, wr)
    for u in asc.range(me, co_chunks * p.c1, cores):
        co0 = (u // p.c1) * wr
        c1 = u % p.c1
        nr = min(wr, p.cout - co0)
        ch0 = c1 * p.c0
        nv = min(p.c0, p.cin - ch0)
        tail = 1 if nv < p.c0 else 0
        asc.set_flag(asc.HardEvent.V_MTE2, 0)
        asc.wait_flag(asc.HardEvent.V_MTE2, 0)
        asc.data_copy(table, tables_gm[PRE_ELEMS * (1 + tail):], PRE_ELEMS)
        row = _ceil(nv * p.kk * size, 32) * 32
        asc.data_copy_pad(src, w_gm[(co0 * p.cin + ch0) * p.kk:], asc.DataCopyExtParams(
            nr, nv * p.kk * size, (p.cin - nv) * p.kk * size, (w_pitch * size - row) // 32, 0),
            asc.DataCopyPadExtParams(False, 0, 0, 0))
        asc.set_flag(asc.HardEvent.MTE2_V, 0)
        asc.wait_flag(asc.HardEvent.MTE2_V, 0)
        asc.gather(out, src, table, 0, nr * p.kk * p.c0)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy_pad(wt_gm[co0 * p.kk * p.cp + ch0:], out, asc.DataCopyExtParams(
            nr * p.kk, p.c0 * size, 0, (p.cp - p.c0) * size, 0))
        asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
        asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)


@asc.jit
def weights_prepass(w_gm, wt_gm, tables_gm, p: asc.ConstExpr, ub_base: asc.ConstExpr[int]):
    """AIV part of the 950 conv with ``p.w_prepass``: the filter OIHW -> the L1 layout of the
    weights, [output block][c1][kh][kw][nt_pad][C0] (channels past Cin read the zero block;
    the output block's own nt_pad is its pitch), in units of up to ``wr`` output channels of
    one output block x one input channel block, spread over every AIV of the launch (GM ->
    UB, ``gather`` to [kh, kw][rows][C0], UB -> GM one piece per filter position). Its UB
    starts at byte ``ub_base`` (the fused kernel's AIV keeps its hand-off buffers below)."""
    dt = w_gm.dtype
    size = dt.sizeof()
    c0 = p.c0
    wr, w_pitch, src_elems, zero_at = p.prepass_layout
    at = ub_base
    src = asc.LocalTensor(dt, asc.TPosition.VECCALC, at, src_elems)
    at += _ceil(src_elems * size, 32) * 32
    out = asc.LocalTensor(dt, asc.TPosition.VECCALC, at, PRE_ELEMS)
    table = asc.LocalTensor(asc.uint32, asc.TPosition.VECCALC, at + PRE_ELEMS * size,
                            PRE_ELEMS)
    # Rows past a short unit's are gathered too (and not stored): start from defined values;
    # the block at zero_at stays zero for the padding channels.
    asc.duplicate(src, 0.0, src_elems)
    me = asc.get_block_idx()
    cores = asc.get_block_num()
    chunks = _ceil(p.nt, wr)
    block_elems = p.c1 * p.kk * ((p.nt + 15) // 16 * 16) * c0
    loaded_tail = -1  # which table is in UB (none yet)
    for u in asc.range(me, p.n_blocks * chunks * p.c1, cores):
        blk = u // (chunks * p.c1)
        r0 = u % (chunks * p.c1) // p.c1 * wr
        c1 = u % p.c1
        nt_b = min(p.nt, p.cout - blk * p.nt)
        if r0 < nt_b:
            nr = min(wr, nt_b - r0)
            ch0 = c1 * c0
            nv = min(c0, p.cin - ch0)
            tail = 1 if nv < c0 else 0
            asc.set_flag(asc.HardEvent.V_MTE2, 0)
            asc.wait_flag(asc.HardEvent.V_MTE2, 0)
            row = _ceil(nv * p.kk * size, 32) * 32
            asc.data_copy_pad(src, w_gm[((blk * p.nt + r0) * p.cin + ch0) * p.kk:],
                              asc.DataCopyExtParams(nr, nv * p.kk * size,
                                                    (p.cin - nv) * p.kk * size,
                                                    (w_pitch * size - row) // 32, 0),
                              asc.DataCopyPadExtParams(False, 0, 0, 0))
            if tail != loaded_tail:  # the table for a full or a tail channel block
                asc.data_copy(table, tables_gm[PRE_ELEMS * tail:], p.kk * wr * c0)
                loaded_tail = tail
            asc.set_flag(asc.HardEvent.MTE2_V, 0)
            asc.wait_flag(asc.HardEvent.MTE2_V, 0)
            asc.gather(out, src, table, 0, p.kk * wr * c0)
            asc.set_flag(asc.HardEvent.V_MTE3, 0)
            asc.wait_flag(asc.HardEvent.V_MTE3, 0)
            pitch = (nt_b + 15) // 16 * 16
            asc.data_copy_pad(wt_gm[blk * block_elems + (c1 * p.kk * pitch + r0) * c0:], out,
                              asc.DataCopyExtParams(p.kk, nr * c0 * size, wr - nr,
                                                    (pitch - nr) * c0 * size, 0))
            asc.set_flag(asc.HardEvent.MTE3_MTE2, 0)
            asc.wait_flag(asc.HardEvent.MTE3_MTE2, 0)
    # The kernel's next UB user (the fused epilogue) starts after the last write is out.
    asc.set_flag(asc.HardEvent.MTE3_V, 0)
    asc.wait_flag(asc.HardEvent.MTE3_V, 0)


def pre_layout(p):
    """(pixels per x unit, their UB row pitch, output channels per filter unit, their UB row
    pitch, source buffer elements, element index of its zero block) of the pre-pass."""
    per_block = 32 // (4 if p.dtype == "float32" else 2)
    xq = max(1, PRE_ELEMS // p.cp)
    x_pitch = _ceil(xq, per_block) * per_block
    wr = max(1, PRE_ELEMS // (p.kk * p.c0))
    w_pitch = _ceil(p.c0 * p.kk, per_block) * per_block
    zero_at = max(p.cin * x_pitch, wr * w_pitch)
    return xq, x_pitch, wr, w_pitch, zero_at + per_block, zero_at


# ------------------------------------------------------------------------------ kernels
@asc.jit
def _gm(addr):
    t = asc.GlobalTensor()
    t.set_global_buffer(addr)
    return t


@asc.jit
def conv_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, b: asc.GlobalAddress,
                one: asc.GlobalAddress, out: asc.GlobalAddress, xt: asc.GlobalAddress,
                wt: asc.GlobalAddress, tables: asc.GlobalAddress, p: asc.ConstExpr):
    """Convolution + bias -> NC1HWC0 ``out`` (its type: fp32 workspace or the output type)."""
    if asc.ascend_is_aic():
        if p.w_prepass:  # conv_cube meets the pre-pass at sync_all
            conv_cube(_gm(x), _gm(wt), _gm(b), _gm(one), _gm(out), p, False)
        elif p.dn2nz:
            conv_cube(_gm(x), _gm(w), _gm(b), _gm(one), _gm(out), p, False)
        else:
            asc.sync_all(is_aiv_only=False)
            conv_cube(_gm(xt), _gm(wt), _gm(b), _gm(one), _gm(out), p, False)
    elif p.w_prepass:
        weights_prepass(_gm(w), _gm(wt), _gm(tables), p, 0)
        asc.sync_all(is_aiv_only=False)
    else:
        prepass(_gm(x), _gm(w), _gm(xt), _gm(wt), _gm(tables), p)
        asc.sync_all(is_aiv_only=False)


@asc.jit
def fused_ub_epilogue(y_gm, table_gm, p: asc.ConstExpr, act: asc.ConstExpr[str], alpha):
    """AIV part of the 950 fused kernel: the AIC FixPipes this AIV's half of each tile into one
    of two UB hand-off buffers (fp32 NZ strips [nt_pad/16][ub_pix][16]); per tile: wait for it
    (cross-core flag on V), activation in fp32 in place, one cast, acknowledge the buffer,
    ``gather`` each strip to [16][ub_pix] rows, one MTE3 copy of all channel rows to NCHW."""
    out_dt = y_gm.dtype
    size = out_dt.sizeof()
    h = p.handoff_elems
    pp = p.ub_pix
    narrow16 = out_dt != asc.float32
    at = 2 * h * 4  # byte address after the two hand-off buffers
    handoff = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 2 * h)
    narrow = asc.LocalTensor(out_dt, asc.TPosition.VECCALC, at, h)
    at += h * size if narrow16 else 0
    out = asc.LocalTensor(out_dt, asc.TPosition.VECOUT, at, h)
    table = asc.LocalTensor(asc.uint32, asc.TPosition.VECCALC, at + h * size, 16 * pp)
    asc.data_copy(table, table_gm, 16 * pp)
    # Strip rows past this AIV's pixels are never written by FixPipe but go through the
    # activation and the gather (they are not stored): start them from defined values.
    asc.duplicate(handoff, 0.0, 2 * h)
    asc.cross_core_set_flag(TILE_DONE, 2, asc.PipeID.PIPE_V)
    asc.cross_core_set_flag(TILE_DONE, 2, asc.PipeID.PIPE_V)
    asc.set_flag(asc.HardEvent.MTE2_V, 0)
    asc.wait_flag(asc.HardEvent.MTE2_V, 0)
    asc.set_flag(asc.HardEvent.MTE3_V, 0)
    sub = asc.get_sub_block_idx()
    count = 0
    first, end = tile_range(asc.get_block_idx() // 2, asc.get_block_num() // 2, p)
    for t in asc.range(first, end):
        nb, p0, m, co0, nt = tile_geometry(t, p)
        half = half_split(m)
        npix = m - half if sub == 1 else half
        buf = handoff[(count % 2) * h:]
        count += 1
        asc.cross_core_wait_flag(TILE_READY, 2, asc.PipeID.PIPE_V)
        if npix > 0:
            strips = (nt + 15) // 16
            n = strips * pp * 16
            _activate(buf, buf, act, alpha, n, narrow16)
            asc.pipe_barrier(asc.PipeID.PIPE_V)
            src = buf
            if narrow16:
                asc.cast(narrow, buf, asc.RoundMode.CAST_RINT, n)
                asc.pipe_barrier(asc.PipeID.PIPE_V)
                asc.cross_core_set_flag(TILE_DONE, 2, asc.PipeID.PIPE_V)
                src = narrow
            asc.wait_flag(asc.HardEvent.MTE3_V, 0)
            for j in range(strips):
                asc.gather(out[j * 16 * pp:], src, table, j * pp * 16 * size, 16 * pp)
            if not narrow16:
                asc.cross_core_set_flag(TILE_DONE, 2, asc.PipeID.PIPE_V)
            asc.set_flag(asc.HardEvent.V_MTE3, 0)
            asc.wait_flag(asc.HardEvent.V_MTE3, 0)
            row = _ceil(npix * size, 32) * 32
            pix = p0 + (half if sub == 1 else 0)
            asc.data_copy_pad(y_gm[(nb * p.cout + co0) * p.hw + pix:], out,
                              asc.DataCopyExtParams(nt, npix * size, (pp * size - row) // 32,
                                                    (p.hw - npix) * size, 0))
            asc.set_flag(asc.HardEvent.MTE3_V, 0)
        else:
            asc.cross_core_set_flag(TILE_DONE, 2, asc.PipeID.PIPE_V)
    asc.wait_flag(asc.HardEvent.MTE3_V, 0)


@asc.jit
def fused_kernel(x: asc.GlobalAddress, w: asc.GlobalAddress, b: asc.GlobalAddress,
                 one: asc.GlobalAddress, ws: asc.GlobalAddress, y: asc.GlobalAddress,
                 xt: asc.GlobalAddress, wt: asc.GlobalAddress, tables: asc.GlobalAddress,
                 epi_table: asc.GlobalAddress, p: asc.ConstExpr, act: asc.ConstExpr[str],
                 alpha: float):
    """One MIX kernel: the AIC's tiles reach its two AIVs by FixPipe L0C->UB (950) or through
    the GM workspace (910B)."""
    if asc.ascend_is_aic():
        if not p.dn2nz:
            asc.sync_all(is_aiv_only=False)
            conv_cube(_gm(xt), _gm(wt), _gm(b), _gm(one), _gm(ws), p, True)
        elif p.w_prepass:  # conv_cube meets the pre-pass at sync_all
            conv_cube(_gm(x), _gm(wt), _gm(b), _gm(one), _gm(ws), p, True)
        else:
            conv_cube(_gm(x), _gm(w), _gm(b), _gm(one), _gm(ws), p, True)
    elif p.dn2nz:
        if p.w_prepass:
            weights_prepass(_gm(w), _gm(wt), _gm(tables), p, p.fused_ub_bytes)
            asc.sync_all(is_aiv_only=False)
        fused_ub_epilogue(_gm(y), _gm(epi_table), p, act, alpha)
    else:
        prepass(_gm(x), _gm(w), _gm(xt), _gm(wt), _gm(tables), p)
        asc.sync_all(is_aiv_only=False)
        ws_gm = _gm(ws)
        y_gm = _gm(y)
        pipe = asc.TPipe()
        bufs = _EpiBuffers(pipe, ws.dtype, y.dtype, _gm(epi_table), p.epi_pix)
        group = asc.get_block_idx() // 2
        sub = asc.get_sub_block_idx()
        first, end = tile_range(group, asc.get_block_num() // 2, p)
        loaded = False  # whether this AIV has copied in the transpose table
        for t in asc.range(first, end):
            asc.cross_core_wait_flag(TILE_READY, 2)
            nb, p0, m, co0, nt = tile_geometry(t, p)
            half = (m // 2 + 15) // 16 * 16
            lo = p0 + (half if sub == 1 else 0)
            hi = p0 + (m if sub == 1 else min(half, m))
            _epilogue_pixels(bufs, ws_gm, y_gm, p, nb, co0 // 16, (co0 + nt + 15) // 16, lo,
                             hi, act, alpha, not loaded)
            loaded = loaded or hi > lo
            asc.cross_core_set_flag(TILE_DONE, 2, asc.PipeID.PIPE_MTE3)
