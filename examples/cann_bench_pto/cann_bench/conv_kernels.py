"""The PyPTO-Pro kernels of the conv + activation operators, in two designs.

Both start the same way, in one MIX kernel (an AIC and two AIVs per block):

1. *prepare* (AIVs): x into the prepared input ``xs`` (zero padding, phase split for stride 2;
   see :mod:`cann_bench.conv_plan`), then an all-core barrier. Skipped when x is its own xs.
2. *conv* (AIC): an implicit GEMM, A = the filter as ``co x k`` (resident in L1 per channel
   block), B = xs as ``k x virtual pixels`` -- each tap's B is a plain window of a phase plane,
   loaded once per tap group and cut per tap in L1 -- and the bias as one more K step (A = the
   bias column, B = a row of ones). Tiles (``TC`` channels x ``TP`` virtual pixels, several
   output rows) are split over the AICs in balanced contiguous ranges; L1, L0A/L0B and L0C are
   double-buffered.

Then:

- ``semi``: the AIC drains each fp32 tile to a GM workspace ``[N*Cout, Ho*WV]``, and a second,
  vector-only kernel ``conv_act_k2`` applies the activation in fp32 over row blocks of the
  workspace (its valid ``Wo`` columns) on every AIV and writes y with one cast.
- ``fused``: the AIC moves each fp32 tile from L0C straight into its two AIVs' UB
  (``DualModeSplitM``: half the channels each), the AIVs apply the activation and store each
  output row's run of the tile into y (NCHW). Cross-core flags hand the two UB buffers over.

The activation in fp32: tanh as ``2 / (1 + e^-2z) - 1`` (one exponential, one reciprocal) and,
for fp32 outputs below |z| = 0.05 where the subtraction cancels, the odd series to z^5 chosen
per element by a compare mask; sigmoid as ``1 / (1 + e^-z)``. One final cast to fp16/bf16.
Vector tiles are as large as the UB holds with double-buffered input and output.
"""


import pypto_pro.language as pl

from cann_bench.conv_plan import UB_BYTES, ConvPlan, ceil_div, round_up

#: torch dtype name -> PyPTO-Pro element type.
PL_TYPES = {"float16": pl.DT_FP16, "float32": pl.DT_FP32, "bfloat16": pl.DT_BF16}

PREP_BYTES = 64 * 1024  # UB bytes of one prepare block
#: tanh's odd series below |z| = 0.05 (its z^7 term is below 1e-9 relative there): the bound,
#: then the coefficients of z^3 and z^5. Past the bound ``2 / (1 + e^-2z) - 1`` keeps a
#: relative error of a few 1e-6.
TANH_SERIES = (0.05, -1.0 / 3.0, 2.0 / 15.0)
TILE_READY = 0  # cross-core flag, AIC -> AIVs: a tile is in the UB
TILE_FREE = 1  # cross-core flag, AIVs -> AIC: a UB buffer has been consumed


def activation(o, z, a, b, p, near0, is_tanh, cast_out):
    """``o = act(z)`` over the tiles' valid windows, in fp32; with ``cast_out`` the fp32
    result lands in z (clobbered) and one cast writes o. a, b, p, near0 are scratch."""
    dst = z if cast_out else o
    if is_tanh:
        # tanh(z) = 2 / (1 + e^-2z) - 1 (e^-2z = inf gives -1)
        pl.mul(a, z, -2.0)
        pl.exp(a, a)
        pl.add(a, a, 1.0)
        pl.recip(a, a)
        pl.mul(a, a, 2.0)
        if not cast_out:
            # Near 0 the subtraction cancels: fp32 outputs take the odd series there (fp16 and
            # bf16 outputs are far coarser than the cancellation error).
            small, c3, c5 = TANH_SERIES
            pl.add(a, a, -1.0)
            pl.abs(b, z)
            pl.lt(near0, b, small)
            pl.mul(b, z, z)
            pl.mul(p, b, c5)
            pl.add(p, p, c3)
            pl.mul(p, p, b)
            pl.add(p, p, 1.0)
            pl.mul(p, p, z)
            pl.select(dst, near0, p, a, b)
        else:
            pl.add(dst, a, -1.0)
    else:
        # sigmoid(z) = 1 / (1 + e^-z); e^-z = inf gives 0
        pl.mul(a, z, -1.0)
        pl.exp(a, a)
        pl.add(a, a, 1.0)
        pl.recip(dst, a)
    if cast_out:
        pl.cast(o, z)


def build_conv(plan: ConvPlan, act: str):
    """The MIX kernel: prepare + conv, then the workspace store (semi) or the on-chip
    activation (fused, ``plan.fused``). Returns (kernel, blocks to launch)."""
    plan.check()
    g = plan.g
    dt = PL_TYPES[g.dtype]
    SIZE = g.size
    N, CIN, COUT, H, W, HO, WO = g.n, g.cin, g.cout, g.h, g.w, g.ho, g.wo
    KH, KW, SH, SW, DW = g.kh, g.kw, g.stride_h, g.stride_w, g.dil_w
    PT, PLEFT = g.pad_top, g.pad_left
    PREPARED, FUSED, RESIDENT = plan.prepared, plan.fused, plan.resident
    PH, PW, KSTEP, HS, WV = plan.ph, plan.pw, plan.kstep_h, plan.hs, plan.wv
    PLANE, PLANES, ROWSTEP = plan.plane, plan.planes, plan.rowstep
    TC, TP, KB, TCH = plan.tc, plan.tp, plan.kb, plan.tch
    KB_ROWS = plan.kb_rows  # L1 rows of a KB-row tile (an fp32 K step of 8: 16)
    CI_TILES, CINP, A_COLS, WIN = plan.ci_tiles, plan.cinp, plan.a_cols, plan.window
    TAPS, BIAS_COL = KH * KW, KH * KW * plan.cinp
    PIX, PIX_TILES, TILES = plan.pixels, plan.pix_tiles, plan.tiles
    PER_CB = N * PIX_TILES
    XS_SHAPE = [plan.xs_elems] if PREPARED else [N, CIN, H, W]
    # a tap's window may run a row past its plane (into pixels that are thrown away)
    XS_VIEW_LEN = HS * WV + (WV if PREPARED else 0)
    OUT_SHAPE = [N, COUT, HO, WO] if FUSED else [N * COUT, PIX]
    OUT_DT = dt if FUSED else pl.DT_FP32
    # prepare: one task = a block of rows of one phase plane of one (image, channel)
    PREP_COLS = round_up(ceil_div(W, SW), 32 // SIZE)
    PREP_ROWS = max(1, min(HS, PREP_BYTES // (PREP_COLS * SIZE)))
    PREP_CHUNKS = ceil_div(HS, PREP_ROWS)
    PREP_TASKS = N * CIN * PLANES * PREP_CHUNKS
    # fused epilogue
    IS_TANH, CAST_OUT = act == "tanh", g.dtype != "float32"
    UNIT = TCH * TP * 4
    SERIES = plan.series
    SCRATCH = 2 * UNIT + 2 * TCH * TP * SIZE  # after the two inputs and the two outputs
    blocks = TILES

    @pl.jit(auto_mutex=True)
    def conv_k1(x4: pl.Tensor[[N, CIN, H, W], dt], xs: pl.Tensor[XS_SHAPE, dt],
                filt: pl.Tensor[[COUT, CIN, KH, KW], dt], bias: pl.Tensor[[COUT], dt],
                ones: pl.Tensor[[1, TP], dt], out: pl.Tensor[OUT_SHAPE, OUT_DT]):
        # The fused design's hand-over buffers: one AIV's half of an fp32 tile, two of them.
        prod = pl.make_tile_group(
            type=pl.TileType(shape=[TCH, TP], dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
            addrs=0x0, depth=2)
        if PREPARED:
            with pl.section_vector():
                xsp = pl.make_tensor(xs, [N * CIN * PLANES, HS, WV])
                buf = pl.make_tile_group(
                    type=pl.TileType(shape=[PREP_ROWS, PREP_COLS], dtype=dt,
                                     target_memory=pl.MemorySpace.Vec),
                    addrs=0x0, mutex_ids=[0, 1])
                for t in pl.range(pl.get_block_idx(), PREP_TASKS,
                                  pl.get_block_num() * pl.get_subblock_num()):
                    chunk = t % PREP_CHUNKS
                    rest = t // PREP_CHUNKS
                    phase = rest % PLANES
                    ch = rest // PLANES
                    ph_h = phase // PW
                    ph_w = phase % PW
                    # plane rows r' hold x row r' * SH + ph_h - PT; columns likewise
                    r_lo = (PT - ph_h + SH - 1) // SH
                    r_hi = (H - 1 + PT - ph_h) // SH + 1
                    c_lo = (PLEFT - ph_w + SW - 1) // SW
                    c_hi = (W - 1 + PLEFT - ph_w) // SW + 1
                    r0 = r_lo + chunk * PREP_ROWS
                    rows = pl.min(PREP_ROWS, r_hi - r0)
                    if rows > 0:
                        src = pl.make_tensor(
                            pl.make_ptr(x4) + (ch * H * W + (r_lo * SH + ph_h - PT) * W
                                               + c_lo * SW + ph_w - PLEFT),
                            [r_hi - r_lo, c_hi - c_lo], [SH * W, SW])
                        slot = buf.next()
                        pl.set_validshape(slot, [rows, c_hi - c_lo])
                        pl.load(slot, src, [chunk * PREP_ROWS, 0])
                        pl.store(xsp, slot, [ch * PLANES + phase, r0, c_lo])
            pl.system.sync_all()
        with pl.section_cube():
            if RESIDENT:  # one filter block, no token (explicit events, below)
                a_l1 = pl.make_tile_group(
                    type=pl.TileType(shape=[TC, A_COLS], dtype=dt,
                                     target_memory=pl.MemorySpace.Mat),
                    addrs=0x0, depth=1)
            else:  # a ring of two K steps of the filter
                a_l1 = pl.make_tile_group(
                    type=pl.TileType(shape=[TC, KB], dtype=dt, target_memory=pl.MemorySpace.Mat),
                    addrs=0x0, mutex_ids=[0, 1])
            a_bytes = TC * (A_COLS if RESIDENT else 2 * KB) * SIZE
            b_l1 = pl.make_tile_group(
                type=pl.TileType(shape=[KB, WIN], dtype=dt, target_memory=pl.MemorySpace.Mat),
                addrs=a_bytes, mutex_ids=[2, 3])
            ones_l1 = pl.make_tile_group(
                type=pl.TileType(shape=[KB, TP], dtype=dt, target_memory=pl.MemorySpace.Mat),
                addrs=a_bytes + 2 * KB_ROWS * WIN * SIZE, depth=1)
            a_l0 = pl.make_tile_group(
                type=pl.TileType(shape=[TC, KB], dtype=dt, target_memory=pl.MemorySpace.Left),
                addrs=0x0, mutex_ids=[5, 6])
            b_l0 = pl.make_tile_group(
                type=pl.TileType(shape=[KB, TP], dtype=dt, target_memory=pl.MemorySpace.Right),
                addrs=0x0, mutex_ids=[5, 6])
            acc = pl.make_tile_group(
                type=pl.TileType(shape=[TC, TP], dtype=pl.DT_FP32,
                                 target_memory=pl.MemorySpace.Acc),
                addrs=0x0, mutex_ids=[9, 10])
            bias_col = pl.make_tensor(bias, [COUT, 1], [1, 1])
            ones_t = ones_l1.next()
            pl.set_validshape(ones_t, [1, TP])
            pl.load(ones_t, ones, [0, 0])
            # The ones row and the resident filter carry no buffer token (they are loaded
            # rarely): explicit MTE2 -> MTE1 events order their loads before the moves, and
            # MTE1 -> MTE2 events a reload after the last move of the previous block.
            pl.system.sync_src(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1,
                               event_id=0)
            pl.system.sync_dst(set_pipe=pl.PipeType.MTE2, wait_pipe=pl.PipeType.MTE1,
                               event_id=0)
            core, cores = pl.get_block_idx(), pl.get_block_num()
            t_begin = core * TILES // cores
            t_end = (core + 1) * TILES // cores
            loaded = -1  # channel block whose filter is resident
            drained = 0  # tiles handed to the AIVs (fused)
            for t in pl.range(t_begin, t_end):
                cb = t // PER_CB
                rest = t % PER_CB
                n = rest // PIX_TILES
                j0 = (rest % PIX_TILES) * TP
                co0 = cb * TC
                tc = pl.min(TC, COUT - co0)
                tp = pl.min(TP, PIX - j0)
                a_res = a_l1.current()
                if RESIDENT:
                    if cb != loaded:
                        # filter[co0:co0+tc, :, kh, kw] per tap, then the bias column
                        if loaded >= 0:
                            pl.system.sync_src(set_pipe=pl.PipeType.MTE1,
                                               wait_pipe=pl.PipeType.MTE2, event_id=1)
                            pl.system.sync_dst(set_pipe=pl.PipeType.MTE1,
                                               wait_pipe=pl.PipeType.MTE2, event_id=1)
                        a_res = a_l1.next()
                        pl.set_validshape(a_res, [tc, A_COLS])
                        for tap in pl.range(0, TAPS):
                            a_view = pl.make_tensor(pl.make_ptr(filt) + tap, [COUT, CIN],
                                                    [CIN * TAPS, TAPS])
                            part = a_res[0:TC, tap * CINP:tap * CINP + CIN]
                            pl.set_validshape(part, [tc, CIN])
                            pl.load(part, a_view, [co0, 0])
                        part = a_res[0:TC, BIAS_COL:BIAS_COL + 1]
                        pl.set_validshape(part, [tc, 1])
                        pl.load(part, bias_col, [co0, 0])
                        pl.system.sync_src(set_pipe=pl.PipeType.MTE2,
                                           wait_pipe=pl.PipeType.MTE1, event_id=0)
                        pl.system.sync_dst(set_pipe=pl.PipeType.MTE2,
                                           wait_pipe=pl.PipeType.MTE1, event_id=0)
                        loaded = cb
                out_acc = acc.next()
                pl.set_validshape(out_acc, [tc, tp])
                step = 0
                for p in pl.range(0, PH):
                    taps = (KH - p + KSTEP - 1) // KSTEP
                    for kw in pl.range(0, KW):
                        ph_w = (kw * DW) % SW
                        b_view = pl.make_tensor(
                            pl.make_ptr(xs) + ((p * PW + ph_w) * PLANE + (kw * DW) // SW),
                            [N, CIN, XS_VIEW_LEN], [CIN * PLANES * PLANE, PLANES * PLANE, 1])
                        for ci in pl.range(0, CI_TILES):
                            ci0 = ci * KB
                            kb = pl.min(KB, CIN - ci0)
                            win = b_l1.next()
                            pl.set_validshape(win, [kb, tp + (taps - 1) * ROWSTEP])
                            pl.load(win, b_view, [n, ci0, j0])
                            for i in pl.range(0, taps):
                                tap = (p + i * KSTEP) * KW + kw
                                left = a_l0.next()
                                pl.set_validshape(left, [tc, kb])
                                if RESIDENT:
                                    pl.move(left, a_res, offset=[0, tap * CINP + ci0])
                                else:
                                    a_view = pl.make_tensor(pl.make_ptr(filt) + tap, [COUT, CIN],
                                                            [CIN * TAPS, TAPS])
                                    a_slot = a_l1.next()
                                    pl.set_validshape(a_slot, [tc, kb])
                                    pl.load(a_slot, a_view, [co0, ci0])
                                    pl.move(left, a_slot)
                                right = b_l0.next()
                                pl.set_validshape(right, [kb, tp])
                                pl.move(right, win, offset=[0, i * ROWSTEP])
                                # semi: unit-flag phases order the accumulator against its
                                # store; fused: its token orders it against the move
                                if FUSED:
                                    if step == 0:
                                        pl.matmul(out_acc, left, right)
                                    else:
                                        pl.matmul_acc(out_acc, out_acc, left, right)
                                elif step == 0:
                                    pl.matmul(out_acc, left, right, phase=pl.AccPhase.Partial)
                                else:
                                    pl.matmul_acc(out_acc, out_acc, left, right,
                                                  phase=pl.AccPhase.Partial)
                                step = step + 1
                # The bias step: K = 1, bias[co] * 1 added to every column.
                left = a_l0.next()
                pl.set_validshape(left, [tc, 1])
                if RESIDENT:
                    pl.move(left, a_res, offset=[0, BIAS_COL])
                else:
                    a_slot = a_l1.next()
                    pl.set_validshape(a_slot, [tc, 1])
                    pl.load(a_slot, bias_col, [co0, 0])
                    pl.move(left, a_slot)
                right = b_l0.next()
                pl.set_validshape(right, [1, tp])
                pl.move(right, ones_t)
                if FUSED:
                    pl.matmul_acc(out_acc, out_acc, left, right)
                else:
                    pl.matmul_acc(out_acc, out_acc, left, right, phase=pl.AccPhase.Final)
                if FUSED:
                    if drained >= 2:  # the AIVs are done with this UB buffer's previous tile
                        pl.system.wait_cross_core(pipe=pl.PipeType.FIX, event_id=TILE_FREE)
                    half = prod.next()
                    pl.set_validshape(half, [(tc + 1) // 2, tp])
                    pl.move(half, out_acc, acc_to_vec_mode=pl.AccToVecMode.DualModeSplitM)
                    pl.system.set_cross_core(pipe=pl.PipeType.FIX, event_id=TILE_READY)
                    drained = drained + 1
                else:
                    pl.store(out, out_acc, [n * COUT + co0, j0], phase=pl.STPhase.Final)
        if FUSED:
            with pl.section_vector():
                y = pl.make_tensor(out, [N * COUT, HO * WO])
                res = pl.make_tile_group(
                    type=pl.TileType(shape=[TCH, TP], dtype=dt, target_memory=pl.MemorySpace.Vec),
                    addrs=2 * UNIT, mutex_ids=[2, 3])
                a = pl.make_tile(pl.TileType(shape=[TCH, TP], dtype=pl.DT_FP32,
                                             target_memory=pl.MemorySpace.Vec), addr=SCRATCH)
                b, pp, near0 = a, a, a  # scratch of the series only
                if SERIES:
                    b = pl.make_tile(pl.TileType(shape=[TCH, TP], dtype=pl.DT_FP32,
                                                 target_memory=pl.MemorySpace.Vec),
                                     addr=SCRATCH + UNIT)
                    pp = pl.make_tile(pl.TileType(shape=[TCH, TP], dtype=pl.DT_FP32,
                                                  target_memory=pl.MemorySpace.Vec),
                                      addr=SCRATCH + 2 * UNIT)
                    near0 = pl.make_tile(pl.TileType(shape=[TCH, TP], dtype=pl.DT_UINT8,
                                                     target_memory=pl.MemorySpace.Vec),
                                         addr=SCRATCH + 3 * UNIT)
                sub = pl.get_subblock_idx()
                core, cores = pl.get_block_idx() // pl.get_subblock_num(), pl.get_block_num()
                for t in pl.range(core * TILES // cores, (core + 1) * TILES // cores):
                    cb = t // PER_CB
                    rest = t % PER_CB
                    n = rest // PIX_TILES
                    j0 = (rest % PIX_TILES) * TP
                    co0 = cb * TC
                    tc = pl.min(TC, COUT - co0)
                    tp = pl.min(TP, PIX - j0)
                    top = (tc + 1) // 2
                    rows = top if sub == 0 else tc - top
                    z = prod.next()
                    o = res.next()
                    pl.system.wait_cross_core(pipe=pl.PipeType.V, event_id=TILE_READY)
                    if rows > 0:
                        window = [rows, tp]
                        pl.set_validshape(z, window)
                        pl.set_validshape(o, window)
                        pl.set_validshape(a, window)
                        if SERIES:
                            pl.set_validshape(b, window)
                            pl.set_validshape(pp, window)
                            pl.set_validshape(near0, window)
                        activation(o, z, a, b, pp, near0, IS_TANH, CAST_OUT)
                    pl.system.set_cross_core(pipe=pl.PipeType.V, event_id=TILE_FREE)
                    if rows > 0:
                        # each output row's run of the tile's virtual pixels
                        ch = n * COUT + co0 + sub * top
                        for r in pl.range(j0 // WV, (j0 + tp - 1) // WV + 1):
                            c_start = pl.max(j0, r * WV)
                            c_end = pl.min(j0 + tp, r * WV + WO)
                            if c_end > c_start:
                                run = o[0:TCH, c_start - j0:c_end - j0]
                                pl.store(y, run, [ch, r * WO + c_start - r * WV])

    return conv_k1, blocks


def build_act(plan: ConvPlan, act: str, vectors: int):
    """K2 of the semi design: ``act`` in fp32 over the workspace's valid columns, one cast
    into the output's type. One task = a block of (channel, output row) rows, sized so that
    every one of the ``vectors`` AIVs gets work."""
    g = plan.g
    dt = PL_TYPES[g.dtype]
    total_rows, WV, WO = g.n * g.cout * g.ho, plan.wv, g.wo
    cols = round_up(WO, 16)  # 16: rows of fp16 and fp32 on 32-byte blocks
    per_elem = 2 * 4 + 2 * g.size + plan.scratch_units  # double-buffered in/out, scratch
    rows = max(1, min(UB_BYTES // per_elem // cols, ceil_div(total_rows, vectors)))
    tasks = ceil_div(total_rows, rows)
    shape = [rows, cols]
    IS_TANH, CAST_OUT, SERIES = act == "tanh", g.dtype != "float32", plan.series
    E = rows * cols
    OUT0, SCRATCH = 8 * E, 8 * E + 2 * g.size * E

    @pl.jit(auto_mutex=True)
    def conv_act_k2(ws: pl.Tensor[[g.n * g.cout, g.ho * WV], pl.DT_FP32],
                    y4: pl.Tensor[[g.n, g.cout, g.ho, WO], dt]):
        with pl.section_vector():
            wsv = pl.make_tensor(ws, [total_rows, WO], [WV, 1])
            y = pl.make_tensor(y4, [total_rows, WO])
            z_in = pl.make_tile_group(
                type=pl.TileType(shape=shape, dtype=pl.DT_FP32, target_memory=pl.MemorySpace.Vec),
                addrs=0x0, mutex_ids=[0, 1])
            y_out = pl.make_tile_group(
                type=pl.TileType(shape=shape, dtype=dt, target_memory=pl.MemorySpace.Vec),
                addrs=OUT0, mutex_ids=[2, 3])
            a = pl.make_tile(pl.TileType(shape=shape, dtype=pl.DT_FP32,
                                         target_memory=pl.MemorySpace.Vec), addr=SCRATCH)
            b, p, near0 = a, a, a  # scratch of the series only
            if SERIES:
                b = pl.make_tile(pl.TileType(shape=shape, dtype=pl.DT_FP32,
                                             target_memory=pl.MemorySpace.Vec),
                                 addr=SCRATCH + 4 * E)
                p = pl.make_tile(pl.TileType(shape=shape, dtype=pl.DT_FP32,
                                             target_memory=pl.MemorySpace.Vec),
                                 addr=SCRATCH + 8 * E)
                near0 = pl.make_tile(pl.TileType(shape=shape, dtype=pl.DT_UINT8,
                                                 target_memory=pl.MemorySpace.Vec),
                                     addr=SCRATCH + 12 * E)
            for t in pl.range(pl.get_block_idx(), tasks, pl.get_block_num()):
                r0 = t * rows
                window = [pl.min(rows, total_rows - r0), WO]
                z = z_in.next()
                o = y_out.next()
                pl.set_validshape(z, window)
                pl.set_validshape(o, window)
                pl.set_validshape(a, window)
                if SERIES:
                    pl.set_validshape(b, window)
                    pl.set_validshape(p, window)
                    pl.set_validshape(near0, window)
                pl.load(z, wsv, [r0, 0])
                activation(o, z, a, b, p, near0, IS_TANH, CAST_OUT)
                pl.store(y, o, [r0, 0])

    return conv_act_k2, tasks
