"""The shapes a conv call is built for, and the tiling the kernels use for it.

``ConvGeometry`` is one call's shapes and attributes. ``ConvPlan`` adds what the kernels need:

- the *prepared input* ``xs``: x zero-padded and, for a stride of 2, split into its even/odd
  rows and columns (phases), each phase plane ``[HS, WV]`` with a row pitch ``WV`` that is a
  whole number of 16-element blocks. In ``xs`` every filter tap reads a contiguous run: output
  pixel ``(r, c)`` of tap ``(kh, kw)`` reads plane (phase of ``kh*dil_h``, phase of
  ``kw*dil_w``) at ``(r + row shift, c + column shift)``, so with output pixels numbered on a
  *virtual grid* ``j = r * WV + c`` the tap's B operand is ``xs_plane[j + shift]`` for a range of
  ``j`` -- several output rows in one tile, one plain load. Columns ``c >= Wo`` of the virtual
  grid are computed and thrown away.
- the cube tiling: ``TC`` output channels x ``TP`` virtual pixels per tile, ``KB`` input
  channels per K step, the filter resident in L1 per channel block when it fits.

Taps are visited in groups that share a phase plane and a column shift: their B operands are
one window of the plane, ``ROWSTEP`` (= row shift x WV, whole fractals) apart, so a group
loads its window once and each tap extracts its part in L1.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd

L1_BYTES = 512 * 1024
L0AB_BYTES = 64 * 1024
L0C_BYTES = 256 * 1024
UB_BYTES = 248 * 1024
BLOCK_BYTES = 32  # the 32-byte block every on-chip row starts on
TC_CHOICES = (128, 64, 32, 16)  # output channels per tile, largest that fits first
B_SLOTS = 2  # L1 windows of B in flight
XS_SLACK_ROWS = 2  # zero rows after the last plane: reads of thrown-away pixels stay inside


def round_up(n: int, m: int) -> int:
    return (n + m - 1) // m * m


def ceil_div(n: int, m: int) -> int:
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
    def size(self) -> int:
        """Bytes per element of the inputs and the output."""
        return 4 if self.dtype == "float32" else 2

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


def _phases(k: int, stride: int, dil: int) -> tuple[int, int, int]:
    """(phase planes used, tap step within a plane's group, row/column shift between two taps
    of a group) along one axis: the taps ``p, p + step, ...`` of group ``p`` read plane ``p``
    at shifts ``0, shift, 2 * shift, ...``."""
    step = stride // gcd(stride, dil)
    phases = min(step, k)
    return phases, step, step * dil // stride


@dataclass(frozen=True)
class ConvPlan:
    """The tiling of one geometry (see the module doc); ``fused`` plans the true-fusion kernel,
    whose tiles also live in the vector cores' UB."""

    g: ConvGeometry
    fused: bool
    cores: int = 28  # AICs the conv kernel runs on
    act: str = "tanh"

    # ------------------------------------------------------------------ activation
    @property
    def series(self) -> bool:
        """Whether the activation needs tanh's series near 0 (fp32 outputs only): three more
        fp32 scratch tiles and a mask."""
        return self.act == "tanh" and self.g.dtype == "float32"

    @property
    def scratch_units(self) -> float:
        """UB bytes per element of a vector tile besides its fp32 input and its output:
        scratch and, for the series, the mask."""
        return 4 + (8 + 1 if self.series else 0)

    # ------------------------------------------------------------------ prepared input
    @property
    def prepared(self) -> bool:
        """Whether the kernels read a prepared copy of x: always, except for an unpadded
        1x1 stride-1 conv over rows of whole 16-element blocks (x is then its own ``xs``)."""
        g = self.g
        return not (g.kh == g.kw == 1 and g.stride_h == g.stride_w == 1
                    and not any((g.pad_top, g.pad_bottom, g.pad_left, g.pad_right))
                    and g.w % 16 == 0)

    @property
    def ph(self) -> int:
        return _phases(self.g.kh, self.g.stride_h, self.g.dil_h)[0]

    @property
    def kstep_h(self) -> int:
        return _phases(self.g.kh, self.g.stride_h, self.g.dil_h)[1]

    @property
    def shift_h(self) -> int:
        return _phases(self.g.kh, self.g.stride_h, self.g.dil_h)[2]

    @property
    def pw(self) -> int:
        return _phases(self.g.kw, self.g.stride_w, self.g.dil_w)[0]

    @property
    def hs(self) -> int:
        """Rows of a phase plane."""
        return ceil_div(self.g.hp, self.g.stride_h) if self.prepared else self.g.h

    @property
    def wv(self) -> int:
        """Row pitch of a phase plane = width of the virtual output grid."""
        if not self.prepared:
            return self.g.w
        # whole 32-byte blocks: tap windows ROWSTEP apart are whole fractal columns in L1,
        # and output rows start on a block of the UB
        return round_up(ceil_div(self.g.wp, self.g.stride_w), BLOCK_BYTES // self.g.size)

    @property
    def plane(self) -> int:
        return self.hs * self.wv

    @property
    def planes(self) -> int:
        """Phase planes per input channel."""
        return self.ph * self.pw

    @property
    def xs_elems(self) -> int:
        g = self.g
        return g.n * g.cin * self.planes * self.plane + XS_SLACK_ROWS * self.wv

    @property
    def group_taps(self) -> int:
        """Taps of the largest group (one per row shift)."""
        return ceil_div(self.g.kh, self.kstep_h)

    @property
    def rowstep(self) -> int:
        """Virtual pixels between the windows of two neighbouring taps of a group."""
        return self.shift_h * self.wv

    # ------------------------------------------------------------------ cube tiling
    def _kb_for(self, tc: int) -> int:
        """K step (input channels) for tiles of ``tc`` channels: 64 fp16/bf16 channels (32
        when a tile has at most 64 output channels, so that it can be 512 pixels wide), 32 fp32
        ones; fewer when Cin is small (whole 32-byte fractal rows: 16 channels, 8 in fp32)."""
        pref = 32 if self.g.size == 4 or tc <= 64 else 64
        return min(pref, round_up(self.g.cin, 32 // self.g.size))

    @property
    def kb_rows(self) -> int:
        """Rows an L1 tile of ``kb`` rows takes: NZ frames hold whole 16-row fractals, so an
        fp32 K step of 8 channels takes 16 rows of L1."""
        return round_up(self.kb, 16)

    def _tp_for(self, tc: int) -> int:
        """Virtual pixels per tile of ``tc`` channels: as many as L0B holds two K steps of
        and L0C two fp32 tiles of; in the fused design also each AIV's half of two tiles, the
        output and the activation's scratch must fit its UB. Within that, tiles are sized so
        that every AIC gets the same number (up to a fractal)."""
        g = self.g
        tp = min(L0AB_BYTES // 2 // (self._kb_for(tc) * g.size), L0C_BYTES // 2 // (tc * 4))
        if self.fused:
            per_elem = 2 * 4 + 2 * g.size + self.scratch_units
            tp = min(tp, max(16, UB_BYTES // (ceil_div(tc, 2) * per_elem) // 16 * 16))
        total = g.n * ceil_div(g.cout, tc) * self.pixels
        rounds = ceil_div(total, self.cores * tp)
        return max(16, min(tp, round_up(ceil_div(total, rounds * self.cores), 16)))

    def _l1_bytes(self, tc: int, resident: bool) -> int:
        """L1 bytes of tiles of ``tc`` channels: the filter (resident: every tap and the
        bias; else a ring of two K steps), two B windows and the row of ones."""
        g, kb, tp = self.g, self._kb_for(tc), self._tp_for(tc)
        cinp = ceil_div(g.cin, kb) * kb
        a = tc * (g.kh * g.kw * cinp + kb) * g.size if resident else B_SLOTS * tc * kb * g.size
        window = tp + (self.group_taps - 1) * self.rowstep
        rows = round_up(kb, 16)  # the B windows and the ones row: whole 16-row NZ fractals
        return a + B_SLOTS * rows * window * g.size + rows * tp * g.size

    @property
    def _choice(self) -> tuple[int, bool]:
        """(channels per tile, filter resident): the largest of 128/64/32/16 (not past Cout)
        whose resident filter fits L1 next to the B windows; else the largest, streamed."""
        top = min(TC_CHOICES[0], round_up(self.g.cout, 16))
        for tc in TC_CHOICES:
            if tc <= top and self._l1_bytes(tc, True) <= L1_BYTES:
                return tc, True
        return top, False

    @property
    def tc(self) -> int:
        return self._choice[0]

    @property
    def resident(self) -> bool:
        return self._choice[1]

    @property
    def kb(self) -> int:
        return self._kb_for(self.tc)

    @property
    def tp(self) -> int:
        return self._tp_for(self.tc)

    @property
    def tch(self) -> int:
        """Rows (channels) of one AIV's half of the accumulator in the fused design."""
        return ceil_div(self.tc, 2)

    @property
    def ci_tiles(self) -> int:
        return ceil_div(self.g.cin, self.kb)

    @property
    def cinp(self) -> int:
        """Columns of one tap's block of the resident filter (whole K steps)."""
        return self.ci_tiles * self.kb

    @property
    def window(self) -> int:
        """Columns of one B window in L1: a tile's pixels plus the group's row shifts."""
        return self.tp + (self.group_taps - 1) * self.rowstep

    @property
    def a_cols(self) -> int:
        """Columns of the resident filter: every tap's block, then the bias block."""
        return self.g.kh * self.g.kw * self.cinp + self.kb

    @property
    def pixels(self) -> int:
        """Virtual pixels of one image."""
        return self.g.ho * self.wv

    @property
    def pix_tiles(self) -> int:
        return ceil_div(self.pixels, self.tp)

    @property
    def co_tiles(self) -> int:
        return ceil_div(self.g.cout, self.tc)

    @property
    def tiles(self) -> int:
        """Cube tiles, channel block slowest: a core's contiguous range mostly keeps one
        block of the filter resident."""
        return self.co_tiles * self.g.n * self.pix_tiles

    def check(self) -> None:
        """Refuse a plan whose buffers do not fit (a clear error instead of an overflow)."""
        g = self.g
        need = self._l1_bytes(self.tc, self.resident)
        if need > L1_BYTES:
            raise ValueError(f"conv {g}: the B windows need {need} bytes of L1 (> {L1_BYTES})")
        if 2 * self.tc * self.tp * 4 > L0C_BYTES:
            raise ValueError(f"conv {g}: accumulator tiles do not fit L0C")
