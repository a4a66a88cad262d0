"""Host-side tiling of the implicit-GEMM convolution (integer metadata only, no data).

The GEMM is C[pixels, Cout] = im2col(x)[pixels, K] . W[K, Cout] per image, with K ordered as
Load3D produces it: (c1, kh, kw, c0), i.e. channels in C0-wide blocks. An AIC tile is a
contiguous range of ``tp`` output pixels of one image (the last of an image may be shorter; it
spans at most ``rows`` output rows, whose input rows with halo are staged) by ``nt`` output
channels. Pixel ranges rather than whole rows let the tiles split the work evenly over the AICs.
K is staged through L1 in groups of ``g`` channel blocks (feature-map rows + the matching
weights, double-buffered) and fed to the cube ``ks`` fractal columns (ks * C0 of K) per mmad.
The bias is one more K block: a column of ones in A (a fractal of ones replicated by
load_data) against the bias row in B, so it is added in fp32 in L0C.

The result leaves L0C through FixPipe in NZ order, i.e. NC1HWC0 with C0 = 16 channels:
``[N][ceil(Cout/16)][Ho*Wo][16]`` — the cube's natural output (2201 FixPipe has no
transposing write); the vector epilogue turns it into NCHW.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ascsim.hw.spec import SocSpec
from ascsim.ops.conv_spec import ConvSpec

ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4}
M_TARGET = 512  # most pixels per tile (the planner may choose fewer rows)
L0_BUDGET = 32 * 1024  # bytes per L0A / L0B buffer (two buffers each)
STAGE_BUDGET = 112 * 1024  # bytes per L1 stage (two stages + bias + ones fractal)
RESIDENT_BUDGET = 320 * 1024  # bytes of L1 for weights kept across tiles
PREPASS_ELEMS = 4096  # elements per pre-pass gather (its UB buffers and tables)
EPI_MAX_PIXELS = 1024  # most pixels (x 16 channels) per vector epilogue piece
# Planning estimate, not a timing constant: the AIC cycles a tile costs besides its mmads and
# loads (fmatrix, flags, the FixPipe start, the first load's latency). It only weighs fewer,
# larger tiles against a more even share of the tiles between the AICs.
TILE_OVERHEAD_CYCLES = 400
# Planning estimate: scalar issue cycles of one K step (two loads, an mmad, four flag calls).
STEP_SCALAR_CYCLES = 160
# Planning estimate: cycles one more L1 stage of a tile costs (its copies' issue and the
# MTE2 <-> MTE1 hand-over), weighed against a smaller first stage to wait for.
STAGE_OVERHEAD_CYCLES = 200


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def _round16(v: int) -> int:
    return _ceil(v, 16) * 16


@dataclass(frozen=True)
class ConvPlan:
    """Everything the conv kernels need to know about the problem and its tiling."""

    n: int
    cin: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    sh: int
    sw: int
    pt: int
    pb: int
    pl: int
    pr: int
    dh: int
    dw: int
    ho: int
    wo: int
    dtype: str
    c0: int  # K elements per fractal column (32 B of the input type)
    c1: int  # channel blocks
    tp: int  # most output pixels per tile (see ``even``)
    rows: int  # most output rows a tile's pixels touch
    nt: int  # output channels per tile
    g: int  # channel blocks per L1 stage (but the first)
    g0: int  # channel blocks of a tile's first L1 stage (a small one: the cube starts sooner)
    ks: int  # fractal columns of K per mmad
    cores: int  # AIC blocks launched
    dn2nz: bool  # the SoC reads NCHW / OIHW straight into L1 (950); else a vector pre-pass
    w_resident: bool  # a channel block's weights (all of Cin) stay in L1 across its tiles
    epi_pix: int  # most pixels (x 16 channels) per piece of the vector epilogue kernel
    epi_cores: int  # AIVs the epilogue kernel launches
    # Tiles per image and channel block. ``even``: tile j holds the image's 16-pixel strips
    # [j * S // pix_blocks, (j + 1) * S // pix_blocks), S = ceil(hw / 16), so tiles differ by
    # one strip at most; else tile j holds pixels [j * tp, (j + 1) * tp) (the last is short).
    pix_blocks: int
    even: bool
    # ``window``: L1 holds the whole input window of each of a core's segments (its tiles of
    # one image and channel block, :meth:`segments`), ``win_rows`` input rows at most; a tile
    # copies in only the rows the segment's earlier tiles have not, so the rows tiles share
    # (the filter's halo, and whole rows under tiles that start mid-row) are read from GM
    # once. Else each tile stages its own rows. ``win_buffers``: two windows alternate by
    # segment when they fit L1 (a segment's rows load while the previous one computes), else
    # one (a segment's first copy waits for the cube to be done with the previous one).
    window: bool = False
    win_rows: int = 0
    win_buffers: int = 0
    # ``w_prepass`` (950, Kh*Kw > 1): the AIVs of the conv launch first lay the filter out in a
    # GM workspace exactly as L1 holds it ([block][c1][kh][kw][nt_pad][C0], zero padded), then
    # all cores meet at ``sync_all`` and each AIC copies its weights in contiguously: DN2NZ
    # from OIHW costs one burst per (output, input) channel pair, on every AIC.
    w_prepass: bool = False

    # ------------------------------------------------------------------ derived sizes
    @property
    def kk(self) -> int:
        return self.kh * self.kw

    @property
    def cp(self) -> int:
        """Channels padded to whole blocks."""
        return self.c1 * self.c0

    @property
    def hw(self) -> int:
        return self.ho * self.wo

    @property
    def co1(self) -> int:
        """16-channel blocks of the NC1HWC0 conv output."""
        return _ceil(self.cout, 16)

    @property
    def span_h(self) -> int:
        return (self.kh - 1) * self.dh + 1

    @property
    def in_rows(self) -> int:
        return (self.rows - 1) * self.sh + self.span_h

    @property
    def hw_strips(self) -> int:
        """16-pixel strips of one image's output (the last one short when 16 does not divide
        hw)."""
        return _ceil(self.hw, 16)

    def tile_pixels(self, j: int) -> tuple[int, int]:
        """(first pixel, pixels) of tile ``j`` of an image (the kernels' ``tile_geometry``)."""
        if self.even:
            p0 = j * self.hw_strips // self.pix_blocks * 16
            return p0, min((j + 1) * self.hw_strips // self.pix_blocks * 16, self.hw) - p0
        p0 = j * self.tp
        return p0, min(self.tp, self.hw - p0)

    @property
    def n_blocks(self) -> int:
        return _ceil(self.cout, self.nt)

    @property
    def tiles(self) -> int:
        return self.n * self.pix_blocks * self.n_blocks

    @property
    def m_pad(self) -> int:
        return _round16(self.tp)

    @property
    def nt_pad(self) -> int:
        return _round16(self.nt)

    @property
    def stages(self) -> int:
        return 1 + _ceil(self.c1 - self.g0, self.g)

    def stage_blocks(self, s: int) -> tuple[int, int]:
        """(first channel block, channel blocks) of L1 stage ``s`` (the kernels'
        ``stage_blocks``)."""
        first = 0 if s == 0 else self.g0 + (s - 1) * self.g
        return first, min(self.g0 if s == 0 else self.g, self.c1 - first)

    @property
    def fm_elems(self) -> int:
        """Feature-map elements per L1 stage (0 with ``window``: the rows live in the window)."""
        return 0 if self.window else self.g * self.in_rows * self.w * self.c0

    @property
    def wt_elems(self) -> int:
        """Elements of the pre-pass filter workspace (every channel block at the full
        ``nt_pad`` pitch; the last block's own pitch is smaller and fits inside)."""
        return self.n_blocks * self.c1 * self.kk * self.nt_pad * self.c0

    @property
    def prepass_layout(self) -> tuple[int, int, int, int]:
        """(output channels per filter pre-pass unit, their UB row pitch, source buffer
        elements, element index of its zero block) of the 950 ``weights_prepass``: units
        small enough to reach every AIV of the launch (two per AIC; a unit's copies are
        latency-bound, not rate-bound)."""
        per_block = 32 // ITEMSIZE[self.dtype]
        chunks = max(1, _ceil(2 * self.cores, self.n_blocks * self.c1))
        wr = max(1, min(_ceil(self.nt, chunks), PREPASS_ELEMS // (self.kk * self.c0)))
        w_pitch = _ceil(self.c0 * self.kk, per_block) * per_block
        zero_at = wr * w_pitch
        return wr, w_pitch, zero_at + per_block, zero_at

    @property
    def prepass_ub_bytes(self) -> int:
        """UB bytes of the filter pre-pass: source rows, gathered output, offset table."""
        size = ITEMSIZE[self.dtype]
        return _ceil(self.prepass_layout[2] * size, 32) * 32 + PREPASS_ELEMS * (size + 4)

    @property
    def window_elems(self) -> int:
        """L1 elements of one feature-map window ([c1][win_rows][w][C0]; 0 without)."""
        return self.c1 * self.win_rows * self.w * self.c0 if self.window else 0

    def segments(self) -> list[tuple[int, int, int]]:
        """(core, first tile, end tile) of every segment: a core's contiguous tiles of one
        image and channel block (the kernel's ``tile_range`` split at image boundaries)."""
        out = []
        for c in range(self.cores):
            t, end = c * self.tiles // self.cores, (c + 1) * self.tiles // self.cores
            while t < end:
                stop = min(end, (t // self.pix_blocks + 1) * self.pix_blocks)
                out.append((c, t, stop))
                t = stop
        return out

    def segment_rows(self, first: int, end: int) -> int:
        """Input rows in L1 (padding excluded) under the output pixels of tiles [first, end)
        of one segment."""
        p0 = self.tile_pixels(first % self.pix_blocks)[0]
        q0, m = self.tile_pixels((end - 1) % self.pix_blocks)
        ho0, ho1 = p0 // self.wo, (q0 + m - 1) // self.wo
        lo = max(ho0 * self.sh - self.pt, 0)
        hi = min(ho1 * self.sh + self.span_h - self.pt, self.h)
        return max(hi - lo, 1)

    @property
    def w_elems(self) -> int:
        """Weight elements per stage (0 when they are resident)."""
        return 0 if self.w_resident else self.g * self.kk * self.nt_pad * self.c0

    @property
    def resident_elems(self) -> int:
        return self.c1 * self.kk * self.nt_pad * self.c0 if self.w_resident else 0

    @property
    def stage_elems(self) -> int:
        return self.fm_elems + self.w_elems + self.nt_pad * self.c0

    @property
    def l0a_elems(self) -> int:
        return self.m_pad * self.ks * self.c0

    @property
    def l0b_elems(self) -> int:
        return self.nt_pad * self.ks * self.c0

    @property
    def l0c_elems(self) -> int:
        return self.m_pad * self.nt_pad

    @property
    def ub_pix(self) -> int:
        """Pixels of a tile one AIV receives (the first half, rounded up to 16, goes to AIV 0):
        the strip pitch of the 950 fused hand-off buffers in UB."""
        return max(16, _round16(self.tp // 2))

    @property
    def handoff_elems(self) -> int:
        """fp32 elements of one UB hand-off buffer of the 950 fused variant: the AIV's part of
        a tile in NZ strips, [nt_pad / 16][ub_pix][16]."""
        return self.ub_pix * self.nt_pad

    @property
    def fused_ub_bytes(self) -> int:
        """UB of the 950 fused AIV: two hand-off buffers, the narrow copy (16-bit outputs), the
        transposed output tile and the [16][ub_pix] gather table."""
        out = ITEMSIZE[self.dtype]
        narrow = 0 if out == 4 else self.handoff_elems * out
        return 2 * self.handoff_elems * 4 + narrow + self.handoff_elems * out + 16 * self.ub_pix * 4

    @property
    def epi_strips(self) -> int:
        """16-pixel strips (x 16 channels) of the NC1HWC0 result, the epilogue's work: per
        (image, channel block) ``ceil(hw / 16)`` of them, the last one short when 16 does not
        divide hw."""
        return self.n * self.co1 * _ceil(self.hw, 16)

    @property
    def epi_pieces(self) -> int:
        """Most pieces of one AIV's share: its strips ``epi_pix / 16`` at a time, plus one more
        at each (image, channel block) boundary the share crosses."""
        share = _ceil(self.epi_strips, self.epi_cores)
        return _ceil(share, self.epi_pix // 16) + _ceil(share, _ceil(self.hw, 16)) + 1

    @property
    def workspace_elems(self) -> int:
        """Elements of the NC1HWC0 conv result."""
        return self.n * self.co1 * self.hw * 16

    @property
    def macs(self) -> int:
        return self.n * self.hw * self.cout * self.cin * self.kk


#: Tiling knobs a caller (or the tuner) may fix: output channels per tile (a multiple of 16),
#: the target pixels per tile (fewer when that would leave AICs idle), whether L1 holds
#: each core's feature-map window (``ConvPlan.window``) and whether the AIVs lay the filter
#: out first (``ConvPlan.w_prepass``); by default the planner decides the last two.
TILING_KNOBS = ("nt", "pixels", "window", "w_prepass")
# Planning estimate, not a timing constant: AIC cycles the filter pre-pass adds before the
# first weight copy (the AIVs' GM read, gather and write, and the sync_all), weighed against
# the DN2NZ bursts it saves on the busiest AIC.
PREPASS_CYCLES = 2400
# Planning estimate: AIC cycles one DN2NZ weight burst costs (its descriptor, and the 32 B
# that a burst starting off a 32 B boundary reads in addition: most Kh*Kw bursts do).
WEIGHT_BURST_CYCLES = 2.0


def plan_conv(spec: ConvSpec, soc: SocSpec, nt: int | None = None,
              pixels: int = M_TARGET, window: bool | None = None,
              w_prepass: bool | None = None) -> ConvPlan:
    """Tile ``spec`` for ``soc``: of the (channel-tile width, pixels per tile, window) choices
    that fit the SoC, the one with the least estimated work on the busiest AIC
    (:func:`estimate_cycles`; ties: less GM -> L1 traffic). ``nt`` fixes the channel-tile
    width, ``pixels`` caps the pixels per tile, ``window`` True / False requires / forbids
    the L1 feature-map window, ``w_prepass`` the filter pre-pass (950 only, filters larger
    than 1x1; by default when it saves more than it costs, :func:`_with_prepass`); no fitting
    plan raises ValueError."""
    if nt is not None and (nt < 16 or nt % 16 or nt > 512):
        raise ValueError(f"tiling knob nt={nt} must be a multiple of 16 from 16 to 512")
    if pixels < 16 or pixels % 16:
        raise ValueError(f"tiling knob pixels={pixels} must be a multiple of 16")
    for name, value in (("window", window), ("w_prepass", w_prepass)):
        if value not in (None, True, False):
            raise ValueError(f"tiling knob {name}={value!r} must be True, False or None")
    if w_prepass and not (soc.mte2_dn2nz and spec.kh * spec.kw > 1):
        raise ValueError("tiling knob w_prepass=True: the filter pre-pass is for SoCs that "
                         f"read OIHW by DN2NZ (not {soc.name}) and filters larger than 1x1")
    widths = range(16, min(_round16(spec.cout), 256) + 1, 16) if nt is None else (nt,)
    plans = [_plan(spec, soc, w, t, k) for w in widths
             for t, k in _tile_pixels(spec, soc, w, pixels)]
    windowed = [w for w in (_windowed(p, soc) for p in plans) if w is not None]
    plans = {None: plans + windowed, False: plans, True: windowed}[window]
    if not plans:
        raise ValueError("tiling knob window=True: no tiling of this convolution has a core "
                         "running several tiles with resident weights, which the window needs")
    plans = [_with_prepass(p, soc, w_prepass) for p in plans]
    fitting = [p for p in plans if not _problems(p, soc)]
    if not fitting:  # report the problems of the plan the search would have preferred
        _check_fits(min(plans, key=lambda p: (estimate_cycles(p, soc), _traffic(p))), soc)
    return min(fitting, key=lambda p: (estimate_cycles(p, soc), _traffic(p)))


def _tile_pixels(spec: ConvSpec, soc: SocSpec, nt: int, pixels: int) -> list[tuple]:
    """Tilings of an image to consider, as (pixels per tile, tiles per image or None), tiles
    of at most ``pixels`` and what an fp32 tile of ``nt`` channels may take of half of L0C
    (two tiles in flight): whole output rows (smallest halo, ``None``: from the image start)
    and, for each count of tiles per image, its even split into whole 16-pixel strips (the
    most even deal over the AICs)."""
    hw = spec.ho * spec.wo
    cap = min(pixels, soc.l0c_bytes // 2 // (_round16(nt) * 4) // 16 * 16, hw)
    if cap < 16:
        return [(cap, None)]
    out = {(r * spec.wo, None) for r in range(1, spec.ho + 1) if r * spec.wo <= cap}
    strips = _ceil(hw, 16)
    fewest = _ceil(hw, cap)  # up to four times the fewest tiles per image
    for k in range(fewest, min(4 * fewest, strips) + 1):
        tp = min(hw, _ceil(strips, k) * 16)
        if tp <= cap:
            out.add((tp, k))
    return sorted(out, key=lambda c: (c[0], c[1] or 0)) or [(cap, None)]


def _weight_bursts(p: ConvPlan) -> int:
    """DN2NZ weight bursts of the busiest AIC: one per (output, input) channel pair of each
    channel block it loads (resident: at most two blocks; else every tile's)."""
    loads = min(p.n_blocks, 2) if p.w_resident else _ceil(p.tiles, p.cores)
    return loads * p.nt * p.cin


def _with_prepass(p: ConvPlan, soc: SocSpec, wanted: bool | None) -> ConvPlan:
    """``p`` with the filter pre-pass on or off: as ``wanted``, or by default on where the
    DN2NZ weight bursts it saves cost the busiest AIC more than the pre-pass."""
    if not (soc.mte2_dn2nz and p.kk > 1):
        return p
    if wanted is None:
        wanted = _weight_bursts(p) * WEIGHT_BURST_CYCLES > PREPASS_CYCLES \
            and not _problems(replace(p, w_prepass=True), soc)
    return replace(p, w_prepass=wanted)


def _windowed(p: ConvPlan, soc: SocSpec) -> ConvPlan | None:
    """``p`` with the feature-map window in L1 (``ConvPlan.window``), two alternating ones
    when they fit, or None where it cannot help: the weights must stay resident (the window
    takes the stages' place in L1) and some core must run several tiles (else nothing is
    shared)."""
    if not p.w_resident or p.tiles <= p.cores:
        return None
    rows = max(p.segment_rows(first, end) for _, first, end in p.segments())
    # One channel block per stage: a Load3D reads the span of its blocks' rows, and a later
    # tile appends rows to every block, so one read must not span two blocks (the rows it does
    # not use would be written while it runs).
    one = replace(p, window=True, win_rows=rows, win_buffers=1, g=1, g0=1)
    two = replace(one, win_buffers=2)
    return one if _problems(two, soc) else two


def _busiest(p: ConvPlan) -> tuple[int, int]:
    """(tiles, 16-row fractal rows of M) of the AIC with the most rows: tiles are dealt in
    contiguous ranges (``tile_range``), the image's tile j the fastest index."""
    k = p.pix_blocks
    prefix = [0]
    for j in range(k):
        prefix.append(prefix[-1] + _ceil(p.tile_pixels(j)[1], 16))

    def rows_before(t: int) -> int:  # fractal rows of global tiles [0, t)
        return (t // k) * prefix[k] + prefix[t % k]

    best = (0, 0)
    for c in range(p.cores):
        lo, hi = c * p.tiles // p.cores, (c + 1) * p.tiles // p.cores
        best = max(best, (rows_before(hi) - rows_before(lo), hi - lo))
    return best[1], best[0]


def estimate_cycles(p: ConvPlan, soc: SocSpec) -> float:
    """A planning estimate of the busiest AIC's cycles: its tiles' mmads or their GM -> L1
    traffic (whichever is larger; they overlap), plus a fixed cost per tile. Tiles are dealt
    in contiguous ranges, so the busiest AIC runs ceil(tiles / cores) of them."""
    per_core, m16 = _busiest(p)
    k = (p.c1 * p.kk + 1) * p.c0  # + the bias block
    size = ITEMSIZE[p.dtype]
    # K steps of a tile: per stage, its g * kk fractal columns ks at a time (the last group
    # may be shorter: counted as full, a slight overestimate), plus the bias step. An mmad's
    # cycles are linear in its fractal rows of M: the busiest AIC's sum of them, plus one
    # start-up per mmad.
    steps = sum(_ceil(p.stage_blocks(s)[1] * p.kk, p.ks) for s in range(p.stages))
    startup = soc.cube.mmad_cycles(0, p.nt_pad, p.c0, p.dtype)
    per_row = (soc.cube.mmad_cycles(16, p.nt_pad, p.ks * p.c0, p.dtype) - startup,
               soc.cube.mmad_cycles(16, p.nt_pad, p.c0, p.dtype) - startup)
    cube = m16 * (steps * per_row[0] + per_row[1]) + per_core * (steps + 1) * startup
    mte1 = k * size * (16 * m16 / soc.bw.l1_to_l0a + per_core * p.nt_pad / soc.bw.l1_to_l0b)
    mte2 = _traffic(p) / soc.bw.gm_to_l1 + _bursts(p) * soc.timing.burst_gap_cycles
    scalar = per_core * (steps + 1) * STEP_SCALAR_CYCLES
    fixed = per_core * TILE_OVERHEAD_CYCLES + (PREPASS_CYCLES if p.w_prepass else 0)
    return max(cube, mte1, mte2, scalar) + fixed


def _bursts(p: ConvPlan) -> int:
    """Estimated GM -> L1 bursts of the busiest AIC. Weights: OIHW read by DN2NZ is one
    Kh*Kw-element burst per (output, input) channel pair (a 1x1 filter: one row per output
    channel; the 910B pre-pass's OHWI: one per output channel and filter position). Feature
    map: one burst per channel (DN2NZ from NCHW) or per staged pixel and stage (910B: ND2NZ
    from the NHWC pre-pass)."""
    if p.w_prepass:  # a contiguous copy per stage
        per_load = p.stages
    elif p.dn2nz:
        per_load = p.nt * (p.cin if p.kk > 1 else 1)
    else:
        per_load = p.nt * p.kk
    loads = min(p.n_blocks, 2) if p.w_resident else _ceil(p.tiles, p.cores)
    fm = p.cin if p.dn2nz else p.stages * p.in_rows * p.w  # NHWC by ND2NZ: one per pixel
    return loads * per_load + _ceil(p.tiles, p.cores) * fm


def _traffic(p: ConvPlan) -> float:
    """Estimated GM -> L1 bytes of the busiest AIC (the term the tiling changes most)."""
    per_tile = p.c1 * p.in_rows * p.w * 32 + (0 if p.w_resident else p.c1 * p.kk * p.nt_pad * 32)
    # A core's contiguous tile range crosses at most one channel-block boundary.
    reloads = min(p.n_blocks, 2)
    weights = reloads * p.resident_elems * ITEMSIZE[p.dtype]
    if p.window:  # each segment's rows once
        fm: dict[int, int] = {}
        for core, first, end in p.segments():
            fm[core] = fm.get(core, 0) + p.c1 * p.segment_rows(first, end) * p.w * 32
        return max(fm.values()) + weights
    return _ceil(p.tiles, p.cores) * per_tile + weights


def _rows_touched(ho: int, wo: int, tp: int) -> int:
    """The most output rows a tile's pixel range [j * tp, (j + 1) * tp) can touch."""
    if tp % wo == 0:  # every range starts on a row
        return min(ho, tp // wo)
    if wo % tp == 0:  # every range lies inside one row
        return 1
    return min(ho, (tp - 1) // wo + 2)


def _plan(spec: ConvSpec, soc: SocSpec, nt: int, tp: int, even_tiles: int | None = None
          ) -> ConvPlan:
    """The plan of ``nt`` channels by ``tp`` pixels per tile; ``even_tiles``: that many tiles
    per image, splitting its strips evenly (``ConvPlan.even``)."""
    size = ITEMSIZE[spec.dtype]
    c0 = 32 // size
    c1 = _ceil(spec.cin, c0)
    ho, wo = spec.ho, spec.wo
    n_blocks = _ceil(spec.cout, nt)
    even = even_tiles is not None
    pix_blocks = even_tiles if even else _ceil(ho * wo, tp)
    # An even tile starts at any strip: it may touch one row more than a tile of whole rows.
    rows = min(ho, (tp - 1) // wo + 2) if even else _rows_touched(ho, wo, tp)
    m_pad = _round16(tp)
    nt_pad = _round16(nt)
    ks = max(1, min(L0_BUDGET // (m_pad * 32), L0_BUDGET // (nt_pad * 32)))
    kk = spec.kh * spec.kw
    in_rows = (rows - 1) * spec.stride_h + (spec.kh - 1) * spec.dil_h + 1
    tiles = spec.n * pix_blocks * n_blocks
    # A channel block's weights stay in L1 when they fit and a core runs several tiles of one
    # block: its tiles are contiguous with the block the slowest index, so it loads them once
    # (twice when its range crosses blocks). With about one tile per core, loading them group
    # by group with the feature map overlaps better.
    tiles_per_core = tiles / min(soc.aic_count, tiles)
    resident = c1 * kk * nt_pad * 32 <= RESIDENT_BUDGET and (n_blocks == 1
                                                             or tiles_per_core >= 2)
    per_block = (in_rows * spec.w + (0 if resident else kk * nt_pad)) * 32
    stage_budget = min(STAGE_BUDGET, (soc.l1_bytes - c1 * kk * nt_pad * 32 * resident
                                      - 16 * 32) // 2)
    g_max = max(1, min(c1, (stage_budget - nt_pad * 32) // per_block))
    # Channel blocks per L1 stage: the first stage's load is waited for in full (cold, at the
    # core's HBM share), every further stage costs a fixed issue/sync overhead; g balances
    # the two (minimum of g * load + stages * overhead). Without DN2NZ (910B) a stage's
    # feature map comes from the NHWC pre-pass by ND2NZ, one burst per staged pixel: that
    # is part of each stage's overhead.
    load = per_block / soc.bw.gm_read
    overhead = STAGE_OVERHEAD_CYCLES + (0 if soc.mte2_dn2nz
                                        else in_rows * spec.w * soc.timing.burst_gap_cycles)
    g = max(1, min(g_max, round(math.sqrt(overhead * c1 / load))))
    # The first stage may hold a single block: the cube then waits only for that block (its
    # DN2NZ weights are one burst per output and input channel), while later stages load
    # behind the mmads; it costs one more stage per tile, whose GM latency shows on the first
    # tile (later tiles' stages load behind the previous tile's mmads).
    first = load + (nt * c0 if soc.mte2_dn2nz and kk > 1 else 0) * soc.timing.burst_gap_cycles
    per_stage = STAGE_OVERHEAD_CYCLES + soc.timing.gm_read_latency_cycles
    g0 = min((g, 1), key=lambda g0: g0 * first + per_stage * (1 + _ceil(c1 - g0, g)))
    return ConvPlan(
        n=spec.n, cin=spec.cin, h=spec.h, w=spec.w, cout=spec.cout, kh=spec.kh, kw=spec.kw,
        sh=spec.stride_h, sw=spec.stride_w, pt=spec.pad_top, pb=spec.pad_bottom,
        pl=spec.pad_left, pr=spec.pad_right, dh=spec.dil_h, dw=spec.dil_w, ho=ho, wo=wo,
        dtype=spec.dtype, c0=c0, c1=c1, tp=tp, rows=rows, nt=nt, g=g, g0=g0, ks=ks,
        cores=min(soc.aic_count, tiles), dn2nz=soc.mte2_dn2nz, w_resident=resident,
        epi_pix=_epilogue_pixels(spec, soc),
        epi_cores=min(soc.aiv_count, spec.n * _ceil(spec.cout, 16) * _ceil(ho * wo, 16)),
        pix_blocks=pix_blocks, even=even)


def epilogue_ub_bytes_per_pixel(dtype: str) -> int:
    """UB bytes per pixel (x 16 channels) of an epilogue unit, the larger of its two sources (the
    fp32 workspace of ``semi`` or the output type of ``unfused``): two input and two output
    buffers, the fp32 work buffer, the narrow copy in the output type and the gather table."""
    out = ITEMSIZE[dtype]
    src = max(4, out)
    return 16 * (2 * src + 2 * out + 4 + out + 4)


def _epilogue_pixels(spec: ConvSpec, soc: SocSpec) -> int:
    """Pixels per epilogue piece, the pitch of its UB buffers: every AIV gets an even share of
    the 16-pixel strips of the result (:attr:`ConvPlan.epi_share`) and runs it in the fewest
    pieces UB holds, of even size (whole strips)."""
    cap = min(EPI_MAX_PIXELS, soc.ub_bytes // epilogue_ub_bytes_per_pixel(spec.dtype) // 16 * 16)
    strips = spec.n * _ceil(spec.cout, 16) * _ceil(spec.ho * spec.wo, 16)
    share = _ceil(strips, soc.aiv_count) * 16
    return min(cap, _round16(_ceil(share, _ceil(share, cap))))


def _check_fits(p: ConvPlan, soc: SocSpec) -> None:
    """Raise ValueError naming what of the plan does not fit the SoC."""
    problems = _problems(p, soc)
    if problems:
        raise ValueError(f"no tiling of this convolution fits {soc.name}: "
                         f"{', '.join(problems)} ({p})")


def _problems(p: ConvPlan, soc: SocSpec) -> list[str]:
    """What of the plan's buffers does not fit the SoC or its instruction fields."""
    size = ITEMSIZE[p.dtype]
    problems = []
    if (p.resident_elems + 2 * p.stage_elems + 16 * p.c0 + p.win_buffers * p.window_elems) \
            * size \
            > soc.l1_bytes:
        problems.append("L1 stages" + (" and window" if p.window else ""))
    if 2 * p.l0a_elems * size > soc.l0a_bytes or 2 * p.l0b_elems * size > soc.l0b_bytes:
        problems.append("L0A/L0B buffers")
    if 2 * p.l0c_elems * 4 > soc.l0c_bytes:
        problems.append("L0C buffers")
    if max(p.in_rows, p.win_rows) * p.w > 16384 or p.kk * p.nt_pad > 16384:
        problems.append("DN2NZ strides")
    if p.dn2nz and p.fused_ub_bytes + p.w_prepass * p.prepass_ub_bytes > soc.ub_bytes:
        problems.append("UB hand-off buffers of the fused variant"
                        + (" and its filter pre-pass" if p.w_prepass else ""))
    if p.ks * p.nt_pad // 16 > 255 or _ceil(p.tp, 16) > 255:
        problems.append("load_data repeat count")
    return problems
