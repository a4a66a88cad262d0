"""The fused conv operators' contract: shapes, attributes, their ranges and the output size.

Validation follows the operator description (cann-bench ``desc.md``): N 1–16, C_in/C_out 3–1024,
H/W 8–256, K_h/K_w 1–7, strides 1–2, pads 0–3, dilations 1–2; x [N,Cin,H,W], filter
[Cout,Cin,Kh,Kw], bias [Cout]; one dtype for all inputs (float16, float32 or bfloat16).
"""

from __future__ import annotations

from dataclasses import dataclass

DTYPES = ("float16", "float32", "bfloat16")

# attribute / dimension -> (low, high), inclusive.
RANGES = {
    "N": (1, 16), "Cin": (3, 1024), "Cout": (3, 1024), "H": (8, 256), "W": (8, 256),
    "Kh": (1, 7), "Kw": (1, 7), "stride": (1, 2), "pad": (0, 3), "dilation": (1, 2),
}


def _check(name: str, value: int) -> None:
    lo, hi = RANGES[name]
    if not lo <= value <= hi:
        raise ValueError(f"{name} = {value} is outside the supported range [{lo}, {hi}]")


@dataclass(frozen=True, kw_only=True)
class ConvSpec:
    """One conv2d problem, validated on construction.

    Attributes:
        n, cin, h, w: input batch, channels, height, width (NCHW).
        cout, kh, kw: filter output channels and kernel size (OIHW, no groups).
        stride_h, stride_w, pad_top, pad_bottom, pad_left, pad_right, dil_h, dil_w: attributes.
        dtype: "float16", "float32" or "bfloat16", shared by every input and the output.
    """

    n: int
    cin: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    stride_h: int = 1
    stride_w: int = 1
    pad_top: int = 0
    pad_bottom: int = 0
    pad_left: int = 0
    pad_right: int = 0
    dil_h: int = 1
    dil_w: int = 1
    dtype: str = "float16"

    def __post_init__(self):
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype {self.dtype} is not supported; use one of {DTYPES}")
        for name, value in (("N", self.n), ("Cin", self.cin), ("H", self.h), ("W", self.w),
                            ("Cout", self.cout), ("Kh", self.kh), ("Kw", self.kw)):
            _check(name, value)
        for v in (self.stride_h, self.stride_w):
            _check("stride", v)
        for v in (self.pad_top, self.pad_bottom, self.pad_left, self.pad_right):
            _check("pad", v)
        for v in (self.dil_h, self.dil_w):
            _check("dilation", v)
        if self.ho < 1 or self.wo < 1:
            raise ValueError(f"the output would be {self.ho}x{self.wo}: the dilated kernel "
                             "is larger than the padded input")

    @property
    def ho(self) -> int:
        span = self.dil_h * (self.kh - 1) + 1
        return (self.h + self.pad_top + self.pad_bottom - span) // self.stride_h + 1

    @property
    def wo(self) -> int:
        span = self.dil_w * (self.kw - 1) + 1
        return (self.w + self.pad_left + self.pad_right - span) // self.stride_w + 1

    @property
    def out_shape(self) -> tuple[int, int, int, int]:
        return (self.n, self.cout, self.ho, self.wo)

    @property
    def gemm(self) -> tuple[int, int, int]:
        """Implicit-GEMM sizes (M = N·Ho·Wo, N = Cout, K = Cin·Kh·Kw)."""
        return self.n * self.ho * self.wo, self.cout, self.cin * self.kh * self.kw


def conv_spec_from(x_shape, w_shape, b_shape, dtype: str, strides, pads, dilations) -> ConvSpec:
    """Build a ConvSpec from tensor shapes and attributes, saying what disagrees."""
    if len(x_shape) != 4:
        raise ValueError(f"x must be 4-D [N, Cin, H, W], got shape {tuple(x_shape)}")
    if len(w_shape) != 4:
        raise ValueError(f"filter must be 4-D [Cout, Cin, Kh, Kw], got shape {tuple(w_shape)}")
    if len(b_shape) != 1:
        raise ValueError(f"bias must be 1-D [Cout], got shape {tuple(b_shape)}")
    n, cin, h, w = (int(v) for v in x_shape)
    cout, cin_w, kh, kw = (int(v) for v in w_shape)
    if cin_w != cin:
        raise ValueError(f"filter has {cin_w} input channels but x has {cin} (no groups)")
    if int(b_shape[0]) != cout:
        raise ValueError(f"bias has {b_shape[0]} values but the filter has {cout} outputs")
    strides, pads, dilations = list(strides), list(pads), list(dilations)
    if len(strides) != 2:
        raise ValueError(f"strides must be [stride_h, stride_w], got {strides}")
    if len(pads) != 4:
        raise ValueError(f"pads must be four values [top, bottom, left, right], got {pads}")
    if len(dilations) != 2:
        raise ValueError(f"dilations must be [dil_h, dil_w], got {dilations}")
    return ConvSpec(n=n, cin=cin, h=h, w=w, cout=cout, kh=kh, kw=kw,
                    stride_h=strides[0], stride_w=strides[1], pad_top=pads[0],
                    pad_bottom=pads[1], pad_left=pads[2], pad_right=pads[3],
                    dil_h=dilations[0], dil_w=dilations[1], dtype=dtype)
