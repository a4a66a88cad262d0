"""The cube half of the conv operators: implicit-GEMM convolution on the AIC.

Per tile (a range of ``tp`` output pixels of one image x ``nt`` output channels, see
:mod:`ascsim.ops.conv_plan`)::

    x  --(950: DN2NZ from NCHW | 910B: ND2NZ from the NHWC pre-pass)--> L1  C1HWC0 rows
    W  --(950: DN2NZ from OIHW | 910B: ND2NZ from the OHWI pre-pass)--> L1  [c1,kh,kw][Cout][C0]
    set_fmatrix(rows in L1, W, pads of this tile)
    L1 --load_data(LoadData3DParamsV2) = img2col--> L0A         (ks*C0 columns of K per step)
    L1 --load_data(LoadData2DParams)-------------> L0B
    L0A x L0B --mmad--> L0C (fp32); the first mmad is the bias block (ones x bias)
    L0C --fixpipe (NZ, fp32 or rounded to the output type)--> GM, NC1HWC0

Pipes hand over buffers with set_flag/wait_flag: two L1 stages, two L0A/L0B buffers, two L0C
tiles, so loads of the next K step and the FixPipe of the previous tile overlap the cube.
With ``fused`` each finished tile is announced to the group's AIVs with a cross-core flag
(FixPipe done). On 950 FixPipe writes the tile straight into the AIVs' UB (L0C->UB, half of the
pixels each, two alternating buffers) and waits for the AIVs' acknowledgement of the buffer
first; on 910B it goes to the GM workspace and the AIC waits for the acknowledgement of the
tile ``LAG`` back (the flag counters hold at most 15 sets).
"""

from __future__ import annotations

import ascsim.asc as asc

TILE_READY = 0  # cross-core flag: AIC -> AIVs, a tile is in the workspace
TILE_DONE = 1  # cross-core flag: AIVs -> AIC, a tile has been consumed
LAG = 8  # tiles the AIC may run ahead of its AIVs
RESIDENT_EVENT = 2  # MTE1 -> MTE2 event id guarding a reload of the resident weights
WINDOW_EVENT = 3  # MTE1 -> MTE2 event ids 3, 4: MTE1 is done with feature-map window 0, 1

QUANT = {("float32", "float16"): asc.QuantModes.F322F16,
         ("float32", "bfloat16"): asc.QuantModes.F322BF16,
         ("float32", "float32"): asc.QuantModes.NoQuant}


def _r16(v):
    return (v + 15) // 16 * 16


@asc.jit
def tile_geometry(t, p: asc.ConstExpr):
    """(image, first output pixel, pixels, first channel, channels) of tile ``t``. The
    channel block is the slowest index, so a core's contiguous range of tiles
    (:func:`tile_range`) mostly shares one block of weights, which then stays in L1."""
    per_block = p.n * p.pix_blocks
    co0 = (t // per_block) * p.nt
    rem = t % per_block
    nb = rem // p.pix_blocks
    j = rem % p.pix_blocks
    if p.even:  # an even split of the image's 16-pixel strips
        p0 = j * p.hw_strips // p.pix_blocks * 16
        m = min((j + 1) * p.hw_strips // p.pix_blocks * 16, p.hw) - p0
    else:
        p0 = j * p.tp
        m = min(p.tp, p.hw - p0)
    return nb, p0, m, co0, min(p.nt, p.cout - co0)


@asc.jit
def tile_range(idx, num, p: asc.ConstExpr):
    """[first, end) of the tiles of AIC ``idx`` of ``num``: contiguous and as even as whole
    tiles allow (a grid-stride deal would hand one core tiles of every channel block)."""
    return idx * p.tiles // num, (idx + 1) * p.tiles // num


@asc.jit
def _window(p0, m, p: asc.ConstExpr):
    """For output pixels [p0, p0 + m): the input rows to stage in L1 (first, count), the
    fmatrix pads of that window and the first pixel's place in the window's output rows."""
    ho0 = p0 // p.wo
    rows = (p0 + m - 1) // p.wo - ho0 + 1
    r0 = ho0 * p.sh - p.pt
    r_end = (ho0 + rows - 1) * p.sh + p.span_h - p.pt
    lo = max(r0, 0)
    hi = min(r_end, p.h)
    if hi <= lo:
        # The whole window is padding: stage any one row and pad it out of reach.
        return 0, 1, r_end - r0, 0, p0 - ho0 * p.wo
    return lo, hi - lo, lo - r0, r_end - hi, p0 - ho0 * p.wo


@asc.jit
def _load_weights(wl1, w_gm, co0, nt, ch0, chn, g, p: asc.ConstExpr):
    """Weights of channels [ch0, ch0 + chn) (g blocks) x outputs [co0, co0 + nt) into L1 as
    [c1, kh, kw][nt_pad][C0] (the ZN fractals of B)."""
    c0 = p.c0
    nt_pad = _r16(nt)
    if p.w_prepass:  # laid out by the AIVs as L1 holds it: one contiguous copy
        block = co0 // p.nt * p.c1 * p.kk * _r16(p.nt) * c0
        asc.data_copy(wl1, w_gm[block + ch0 // c0 * p.kk * nt_pad * c0:],
                      g * p.kk * nt_pad * c0)
    elif p.dn2nz and p.kk == 1:  # a 1x1 filter is an ND matrix [Cout][Cin]
        asc.data_copy(wl1, w_gm[co0 * p.cin + ch0:],
                      asc.Nd2NzParams(1, nt, chn, 0, p.cin, nt_pad, 1, 0))
    elif p.dn2nz:
        asc.data_copy(wl1, w_gm[(co0 * p.cin + ch0) * p.kk:],
                      asc.Dn2NzParams(nt, p.kk, chn, p.cin * p.kk, p.kk, p.kk * nt_pad,
                                      nt_pad, c0))
    else:
        asc.data_copy(wl1, w_gm[co0 * p.kk * p.cp + ch0:],
                      asc.Nd2NzParams(p.kk, nt, g * c0, p.cp, p.kk * p.cp, p.kk * nt_pad, 1,
                                      nt_pad * c0))


@asc.jit
def _stage_in(fm, wl1, bl1, resident, x_gm, w_gm, b_gm, nb, lo, l1h, pitch, co0, nt, s,
              reload, synced, p: asc.ConstExpr):
    """Copy channel group ``s`` of the feature-map rows [lo, lo + l1h) (none when l1h is 0)
    to ``fm``, whose channel blocks are ``pitch`` rows apart, and for the first group the bias
    into the L1 stage; the group's weights into the stage, or, when the tile starts a new
    block of resident weights (``reload``), into their place in the resident area (loaded
    group by group, so the first mmads need not wait for all of them)."""
    c0 = p.c0
    c1_0, g = stage_blocks(s, p)
    ch0 = c1_0 * c0
    chn = min(g * c0, p.cin - ch0)
    if l1h > 0 and p.dn2nz:
        asc.data_copy(fm, x_gm[((nb * p.cin + ch0) * p.h + lo) * p.w:],
                      asc.Dn2NzParams(1, l1h * p.w, chn, 0, p.h * p.w, pitch * p.w, 1, 0))
    elif l1h > 0:
        asc.data_copy(fm, x_gm[(nb * p.h * p.w + lo * p.w) * p.cp + ch0:],
                      asc.Nd2NzParams(1, l1h * p.w, g * c0, 0, p.cp, pitch * p.w, 1, 0))
    loads = not p.w_resident or reload
    if loads and not synced:  # the AIVs' filter pre-pass must be in GM (after the fm copy)
        asc.sync_all(is_aiv_only=False)
        synced = True
    if not p.w_resident:
        _load_weights(wl1, w_gm, co0, nt, ch0, chn, g, p)
    elif reload:
        _load_weights(resident[c1_0 * p.kk * _r16(nt) * c0:], w_gm, co0, nt, ch0, chn, g, p)
    if s == 0 and p.dn2nz:  # the bias as one column: one DN2NZ burst
        asc.data_copy(bl1, b_gm[co0:], asc.Dn2NzParams(1, nt, 1, 0, nt, _r16(nt), 1, 0))
    elif s == 0:  # ND2NZ: a burst per output channel
        asc.data_copy(bl1, b_gm[co0:], asc.Nd2NzParams(1, nt, 1, 0, 1, _r16(nt), 1, 0))
    return c1_0, g, synced


@asc.jit
def stage_blocks(s, p: asc.ConstExpr):
    """(first channel block, channel blocks) of L1 stage ``s``: a first stage of ``g0`` blocks
    (small, so a core's first mmad waits for little), then stages of ``g``."""
    first = 0 if s == 0 else p.g0 + (s - 1) * p.g
    return first, min(p.g0 if s == 0 else p.g, p.c1 - first)


@asc.jit
def half_split(m):
    """Pixels of an m-pixel tile that go to AIV 0 (whole 16-row strips; AIV 1 gets the rest)."""
    return min((m // 2 + 15) // 16 * 16, m)


@asc.jit
def _fix_to_ub(ub, acc, m, m_pad, nt_pad, p: asc.ConstExpr):
    """FixPipe L0C -> UB (950): the tile's first pixels to AIV 0, the rest to AIV 1, fp32 NZ
    strips of ``ub_pix`` rows in each AIV's hand-off buffer."""
    half = half_split(m)
    asc.fixpipe(ub, acc, asc.FixpipeParamsV220(n_size=nt_pad, m_size=half, src_stride=m_pad,
                                               dst_stride=p.ub_pix, sub_block_id=0),
                asc.FixpipeConfig.cfg_nz())
    if m > half:
        asc.fixpipe(ub, acc[half * 16:], asc.FixpipeParamsV220(
            n_size=nt_pad, m_size=m - half, src_stride=m_pad, dst_stride=p.ub_pix,
            sub_block_id=1), asc.FixpipeConfig.cfg_nz())


@asc.jit
def conv_cube(x_gm, w_gm, b_gm, one_gm, out_gm, p: asc.ConstExpr, fused: asc.ConstExpr[bool]):
    """The AIC body: every tile ``block_idx + j * block_num`` of the plan."""
    dt = x_gm.dtype
    c0 = p.c0
    stage = p.stage_elems
    l1 = asc.LocalTensor(dt, asc.TPosition.A1, 0, p.resident_elems + 2 * stage + 16 * c0
                         + p.win_buffers * p.window_elems)
    resident = l1[2 * stage + 16 * c0:]
    if p.window:  # [c1][rows of the segment][w][C0], after the resident weights
        windows = l1[2 * stage + 16 * c0 + p.resident_elems:]
        win = windows
    l0a = asc.LocalTensor(dt, asc.TPosition.A2, 0, 2 * p.l0a_elems)
    l0b = asc.LocalTensor(dt, asc.TPosition.B2, 0, 2 * p.l0b_elems)
    l0c = asc.LocalTensor(asc.float32, asc.TPosition.CO1, 0, 2 * p.l0c_elems)
    ones = l1[2 * stage:]
    if fused and p.dn2nz:  # the two fp32 hand-off buffers at the start of each AIV's UB
        ub = asc.LocalTensor(asc.float32, asc.TPosition.VECIN, 0, 2 * p.handoff_elems)
    # One fractal whose first column is 1: the A side of the bias block.
    if p.dn2nz:  # 16 ones in a row of GM: one DN2NZ burst (ND2NZ: a burst per row)
        asc.data_copy(ones, one_gm, asc.Dn2NzParams(1, 16, 1, 0, 16, 16, 1, 0))
    else:
        asc.data_copy(ones, one_gm, asc.Nd2NzParams(1, 16, 1, 0, 0, 16, 1, 0))
    asc.set_load_data_padding_value(0)
    loaded_co0 = -1  # the channel block whose weights are resident in L1
    quant = QUANT[("float32", out_gm.dtype.name)]
    no_reset = asc.IsResetLoad3dConfig(False, False)
    for slot in range(2):
        asc.set_flag(asc.HardEvent.MTE1_MTE2, slot)
        asc.set_flag(asc.HardEvent.M_MTE1, slot)
        asc.set_flag(asc.HardEvent.FIX_M, slot)
    stage_count = 0
    step_count = 0
    tile_count = 0
    # The window of the current segment (``p.window``): its first pixel, its input rows
    # [w_lo, w_lo + w_h) with their fmatrix pads, its first pixel's place in its output rows,
    # and the end of the rows copied in so far.
    seg_p0, w_lo, w_h, w_pt, w_pb, w_m0, loaded = 0, 0, 1, 0, 0, 0, 0
    segment_count = 0
    # With the filter pre-pass the core meets the AIVs at sync_all before its first weight
    # copy (its first feature-map copy is already under way); one without tiles meets them
    # at the end.
    synced = not p.w_prepass
    first, end = tile_range(asc.get_block_idx(), asc.get_block_num(), p)
    for t in asc.range(first, end):
        nb, p0, m, co0, nt = tile_geometry(t, p)
        reload = p.w_resident and co0 != loaded_co0
        new_segment = p.window and (t == first or t % p.pix_blocks == 0)
        one_window = new_segment and t != first and p.win_buffers == 1
        if (reload and loaded_co0 >= 0) or one_window:
            # MTE1 must be done with the previous block's weights / segment's rows.
            asc.set_flag(asc.HardEvent.MTE1_MTE2, RESIDENT_EVENT)
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, RESIDENT_EVENT)
        if new_segment and p.win_buffers == 2:
            # Two windows: MTE1 marks the previous segment's window done, and this segment
            # waits for the mark on its own window (set when the segment before the previous
            # one ended).
            if segment_count >= 1:
                asc.set_flag(asc.HardEvent.MTE1_MTE2, WINDOW_EVENT + (segment_count - 1) % 2)
            if segment_count >= 2:
                asc.wait_flag(asc.HardEvent.MTE1_MTE2, WINDOW_EVENT + segment_count % 2)
            win = windows[(segment_count % 2) * p.window_elems:]
        if new_segment:
            segment_count += 1
        if reload:
            loaded_co0 = co0
        m_pad = _r16(m)
        nt_pad = _r16(nt)
        n1 = nt_pad // 16
        lo, l1h, ptop, pbot, m0 = _window(p0, m, p)
        pitch = l1h
        if new_segment:  # the segment runs to the core's end or the image's last tile
            _, q0, qm, _, _ = tile_geometry(min(end, (t // p.pix_blocks + 1) * p.pix_blocks)
                                            - 1, p)
            w_lo, w_h, w_pt, w_pb, w_m0 = _window(p0, q0 + qm - p0, p)
            seg_p0 = p0
            loaded = w_lo
        if p.window:  # copy only the rows earlier tiles of the segment have not
            new_lo = max(loaded, lo)
            l1h = max(lo + l1h - new_lo, 0)
            lo = new_lo
            loaded = max(loaded, lo + l1h)
            pitch = w_h
            ptop, pbot = w_pt, w_pb
            m0 = w_m0 + p0 - seg_p0
        c_slot = tile_count % 2
        acc = l0c[c_slot * p.l0c_elems:]
        asc.wait_flag(asc.HardEvent.FIX_M, c_slot)
        asc.set_fmatrix(pitch, p.w, [p.pl, p.pr, ptop, pbot])
        for s in range(p.stages):
            slot = stage_count % 2
            fm = l1[slot * stage:]
            wl1 = l1[slot * stage + p.fm_elems:]
            bl1 = l1[slot * stage + p.fm_elems + p.w_elems:]
            if p.window:  # the stage's first channel block; the tile's new rows in it
                fm = win[stage_blocks(s, p)[0] * w_h * p.w * c0:]
                dst = fm[(lo - w_lo) * p.w * c0:]
            else:
                dst = fm
            asc.wait_flag(asc.HardEvent.MTE1_MTE2, slot)
            c1_0, g, synced = _stage_in(dst, wl1, bl1, resident, x_gm, w_gm, b_gm, nb, lo, l1h,
                                        pitch, co0, nt, s, reload, synced, p)
            asc.set_flag(asc.HardEvent.MTE2_MTE1, slot)
            asc.wait_flag(asc.HardEvent.MTE2_MTE1, slot)
            k1_total = g * p.kk
            # Step -1 of the first group is the bias block.
            for step in range(-1 if s == 0 else 0, (k1_total + p.ks - 1) // p.ks):
                q = step_count % 2
                a = l0a[q * p.l0a_elems:]
                b = l0b[q * p.l0b_elems:]
                asc.wait_flag(asc.HardEvent.M_MTE1, q)
                if step < 0:  # the bias block: ones x bias, initialises L0C
                    asc.load_data(a, ones, asc.LoadData2DParams(0, m_pad // 16, 0, 0, 0))
                    asc.load_data(b, bl1, asc.LoadData2DParams(0, n1, 1, 0, 0))
                    kn = 1
                else:
                    k1 = step * p.ks
                    kn = min(p.ks, k1_total - k1)
                    asc.load_data(a, fm, asc.LoadData3DParamsV2(
                        channel_size=g * c0, k_extension=kn * c0, m_extension=m,
                        k_start_pt=k1 * c0, m_start_pt=m0, stride_w=p.sw, stride_h=p.sh,
                        filter_w=p.kw, filter_h=p.kh, dilation_filter_w=p.dw,
                        dilation_filter_h=p.dh), no_reset)
                    if p.w_resident:
                        asc.load_data(b, resident, asc.LoadData2DParams(
                            (c1_0 * p.kk + k1) * n1, kn * n1, 1, 0, 0))
                    else:
                        asc.load_data(b, wl1, asc.LoadData2DParams(k1 * n1, kn * n1, 1, 0, 0))
                asc.set_flag(asc.HardEvent.MTE1_M, q)
                asc.wait_flag(asc.HardEvent.MTE1_M, q)
                asc.mmad(acc, a, b, asc.MmadParams(m, nt, kn * c0, 0, False, step < 0))
                asc.set_flag(asc.HardEvent.M_MTE1, q)
                step_count += 1
            asc.set_flag(asc.HardEvent.MTE1_MTE2, slot)
            stage_count += 1
        asc.set_flag(asc.HardEvent.M_FIX, c_slot)
        asc.wait_flag(asc.HardEvent.M_FIX, c_slot)
        if fused and p.dn2nz:  # 950: the AIVs acknowledge each UB buffer (two to start)
            asc.cross_core_wait_flag(TILE_DONE, 2, asc.PipeID.PIPE_FIX)
            _fix_to_ub(ub[(tile_count % 2) * p.handoff_elems:], acc, m, m_pad, nt_pad, p)
        else:
            if fused and tile_count >= LAG:
                asc.cross_core_wait_flag(TILE_DONE, 2, asc.PipeID.PIPE_FIX)
            asc.fixpipe(out_gm[((nb * p.co1 + co0 // 16) * p.hw + p0) * 16:], acc,
                        asc.FixpipeParamsV220(n_size=nt_pad, m_size=m, src_stride=m_pad,
                                              dst_stride=p.hw, quant_pre=quant),
                        asc.FixpipeConfig.cfg_nz())
        if fused:
            asc.cross_core_set_flag(TILE_READY, 2, asc.PipeID.PIPE_FIX)
        asc.set_flag(asc.HardEvent.FIX_M, c_slot)
        tile_count += 1
    if not synced:
        asc.sync_all(is_aiv_only=False)
    if p.win_buffers == 2 and segment_count >= 2:  # the last mark not waited for
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, WINDOW_EVENT + segment_count % 2)
    if fused:
        for _ in range(2 if p.dn2nz else min(LAG, tile_count)):
            asc.cross_core_wait_flag(TILE_DONE, 2)
    for slot in range(2):
        asc.wait_flag(asc.HardEvent.MTE1_MTE2, slot)
        asc.wait_flag(asc.HardEvent.M_MTE1, slot)
        asc.wait_flag(asc.HardEvent.FIX_M, slot)
