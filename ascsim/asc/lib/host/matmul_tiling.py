"""pyasc's host Matmul tiling classes over ascsim's own tiling algorithm.

``MatmulApiTiling`` (one core), ``MultiCoreMatmulTiling`` and ``BatchMatmulTiling`` collect
the settings a script makes (types, shapes, fixed splits, buffer limits...), and
``get_tiling(tiling)`` turns them into a :class:`ascsim.tiling.MatmulTilingRequest`, runs
:func:`ascsim.tiling.solve_matmul_tiling` and writes every ``TCubeTiling`` field in place.

Conventions kept from pyasc: setters and ``get_tiling`` return 0 on success and -1 on
failure, print nothing on success and one line naming the reason on stderr on failure;
keyword names are pyasc's (``set_fix_split(base_m_in=...)``), with the shorter spellings
(``base_m=``, ``fmt=``, ``dtype=``, ``l1=``...) accepted too. An argument of the wrong type (a
kernel-side ``asc.TPosition`` where ``asc.lib.host.TPosition`` is expected, a string for a
size) raises ``TypeError`` naming the argument.
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeVar

from ascsim.tiling import MatmulTiling, MatmulTilingRequest, TilingError, solve_matmul_tiling

from .enums import (
    DTYPE_NAMES,
    TRAVERSE_NAMES,
    CubeFormat,
    DataType,
    DequantType,
    MatrixMadType,
    MatrixTraverse,
    ScheduleType,
    TPosition,
)
from .platform import PlatformAscendC, get_ascendc_platform

OK, FAILED = 0, -1

F = TypeVar("F", bound=Callable[..., Any])
E = TypeVar("E", bound=Enum)


def _aliases(**names: str) -> Callable[[F], F]:
    """Accept extra keyword spellings (``alias=pyasc_name``) for a method's arguments."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(self: Any, *args: Any, **kwargs: Any) -> Any:
            for alias, real in names.items():
                if alias in kwargs:
                    if real in kwargs:
                        raise TypeError(f"{fn.__name__}() got both {alias!r} and {real!r}")
                    kwargs[real] = kwargs.pop(alias)
            return fn(self, *args, **kwargs)

        return inner  # type: ignore[return-value]

    return wrap


def _enum(value: Any, cls: type[E], method: str, arg: str) -> E:
    """``value`` if it is a member of host enum ``cls``, else TypeError naming ``arg``."""
    if isinstance(value, cls):
        return value
    hint = ""
    if isinstance(value, Enum) and value.name in cls.__members__:
        hint = f" (use asc.lib.host.{cls.__name__}.{value.name})"
    raise TypeError(f"{method}: argument {arg!r} must be asc.lib.host.{cls.__name__}, got "
                    f"{value!r}{hint}")


def _int(value: Any, method: str, arg: str) -> int:
    """``value`` as an int (numpy ints welcome), else TypeError naming ``arg``."""
    if isinstance(value, bool):
        raise TypeError(f"{method}: argument {arg!r} must be an int, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{method}: argument {arg!r} must be an int, got {value!r}") from None


def _bool(value: Any, method: str, arg: str) -> bool:
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{method}: argument {arg!r} must be a bool, got {value!r}")


@dataclass
class MatmulConfigParams:
    """pyasc's ``MatmulConfigParams`` (``set_matmul_config_params(config_params)``).

    Only ``traverse`` changes ascsim's tiling; the rest is recorded.
    """

    mm_config_type: int = 1
    enable_l1_cache_ub: bool = False
    schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT
    traverse: MatrixTraverse = MatrixTraverse.NOSET
    en_vec_nd2nz: bool = False


class MatmulApiTilingBase:
    """Settings and results common to every Matmul tiling class."""

    def __init__(self, ascendc_platform: PlatformAscendC | None = None) -> None:
        if ascendc_platform is None:
            ascendc_platform = get_ascendc_platform()
        if not isinstance(ascendc_platform, PlatformAscendC):
            raise TypeError(f"{type(self).__name__}: argument 'ascendc_platform' must be a "
                            f"PlatformAscendC (asc.lib.host.get_ascendc_platform()), got "
                            f"{type(ascendc_platform).__name__}")
        self._platform = ascendc_platform
        # MatmulTilingRequest keyword arguments collected from the setters.
        self._request: dict[str, Any] = {}
        self._shape: tuple[int, int, int] | None = None
        self._org: tuple[int, int, int, int] | None = None
        self._layout: dict[str, int] = {}
        self._batch: tuple[int, int] | None = None
        self._recorded: dict[str, Any] = {}  # accepted settings with no effect on the tiling
        self._result: MatmulTiling | None = None

    # --- reporting -----------------------------------------------------------------------

    def _fail(self, method: str, reason: str) -> int:
        print(f"ascsim: {type(self).__name__}.{method} failed: {reason}", file=sys.stderr)
        return FAILED

    def _sizes(self, method: str, names: tuple[str, ...], values: tuple[Any, ...],
               allow_unset: bool = True) -> tuple[int, ...] | str:
        """Validated ints (TypeError for non-ints); a message string if any is out of range."""
        ints = tuple(_int(v, method, n) for n, v in zip(names, values, strict=True))
        for name, value in zip(names, ints, strict=True):
            if value < 1 and not (allow_unset and value == -1):
                return f"{name}={value} must be >= 1" + (" or -1" if allow_unset else "")
        return ints

    # --- operand types -------------------------------------------------------------------

    def _set_type(self, op: str, method: str, pos: Any, fmt: Any, data_type: Any,
                  is_trans: Any) -> int:
        position = _enum(pos, TPosition, method, "pos")
        cube_format = _enum(fmt, CubeFormat, method, "type")
        dtype = _enum(data_type, DataType, method, "data_type")
        if dtype not in DTYPE_NAMES:
            return self._fail(method, f"data_type {dtype.name} is not a Matmul type; use one of "
                              f"{', '.join(sorted(d.name for d in DTYPE_NAMES))}")
        self._request.update({f"{op}_position": position.name, f"{op}_dtype": DTYPE_NAMES[dtype]})
        if op != "bias":
            self._request[f"{op}_format"] = cube_format.name
        if op in ("a", "b"):
            self._request[f"trans_{op}"] = _bool(is_trans, method, "is_trans")
        return OK

    @_aliases(fmt="type", dtype="data_type")
    def set_a_type(self, pos: TPosition, type: CubeFormat, data_type: DataType,
                   is_trans: bool = False) -> int:
        """Position, format and element type of A, and whether A is stored transposed."""
        return self._set_type("a", "set_a_type", pos, type, data_type, is_trans)

    @_aliases(fmt="type", dtype="data_type")
    def set_b_type(self, pos: TPosition, type: CubeFormat, data_type: DataType,
                   is_trans: bool = False) -> int:
        """Position, format and element type of B, and whether B is stored transposed."""
        return self._set_type("b", "set_b_type", pos, type, data_type, is_trans)

    @_aliases(fmt="type", dtype="data_type")
    def set_c_type(self, pos: TPosition, type: CubeFormat, data_type: DataType,
                   is_trans: bool = False) -> int:
        """Position, format and element type of C (``is_trans`` is accepted and ignored)."""
        return self._set_type("c", "set_c_type", pos, type, data_type, False)

    @_aliases(fmt="type", dtype="data_type")
    def set_bias_type(self, pos: TPosition, type: CubeFormat,
                      data_type: DataType) -> int:
        """Position, format and element type of the bias row."""
        return self._set_type("bias", "set_bias_type", pos, type, data_type, False)

    # --- shapes --------------------------------------------------------------------------

    def set_shape(self, m: int, n: int, k: int) -> int:
        """The M, N, K this tiling computes (may be part of the org shape)."""
        sizes = self._sizes("set_shape", ("m", "n", "k"), (m, n, k), allow_unset=False)
        if isinstance(sizes, str):
            return self._fail("set_shape", sizes)
        self._shape = sizes  # type: ignore[assignment]
        return OK

    @_aliases(m="org_m_in", n="org_n_in", k="org_ka_in", ka="org_ka_in", kb="org_kb_in",
              org_k_in="org_ka_in")
    def set_org_shape(self, org_m_in: int, org_n_in: int, org_ka_in: int,
                      org_kb_in: int | None = None) -> int:
        """The full GM matrices: ``(m, n, k)`` or ``(m, n, ka, kb)`` (row strides)."""
        kb = org_ka_in if org_kb_in is None else org_kb_in
        sizes = self._sizes("set_org_shape", ("org_m", "org_n", "org_ka", "org_kb"),
                            (org_m_in, org_n_in, org_ka_in, kb), allow_unset=False)
        if isinstance(sizes, str):
            return self._fail("set_org_shape", sizes)
        self._org = sizes  # type: ignore[assignment]
        return OK

    # --- options -------------------------------------------------------------------------

    @_aliases(is_bias="is_bias_in", flag="is_bias_in")
    def enable_bias(self, is_bias_in: bool = False) -> int:
        """Whether a bias row is added to C."""
        self._request["has_bias"] = _bool(is_bias_in, "enable_bias", "is_bias_in")
        return OK

    set_bias = enable_bias

    @_aliases(base_m="base_m_in", base_n="base_n_in", base_k="base_k_in")
    def set_fix_split(self, base_m_in: int = -1, base_n_in: int = -1,
                      base_k_in: int = -1) -> int:
        """Fix the base block (-1 leaves a dimension to the tiling)."""
        sizes = self._sizes("set_fix_split", ("base_m", "base_n", "base_k"),
                            (base_m_in, base_n_in, base_k_in))
        if isinstance(sizes, str):
            return self._fail("set_fix_split", sizes)
        self._request.update(zip(("base_m", "base_n", "base_k"), sizes, strict=True))
        return OK

    @_aliases(l1="l1_size", l0c="l0_c_size", ub="ub_size", bt="bt_size")
    def set_buffer_space(self, l1_size: int = -1, l0_c_size: int = -1, ub_size: int = -1,
                         bt_size: int = -1) -> int:
        """Bytes of L1, L0C, UB and bias table the Matmul may use (-1 = all of it)."""
        names = ("l1_size", "l0_c_size", "ub_size", "bt_size")
        values = tuple(_int(v, "set_buffer_space", n)
                       for n, v in zip(names, (l1_size, l0_c_size, ub_size, bt_size),
                                       strict=True))
        bad = [f"{n}={v}" for n, v in zip(names, values, strict=True) if v < -1]
        if bad:
            return self._fail("set_buffer_space", f"{', '.join(bad)}: sizes must be >= 0 or -1")
        self._request.update(zip(("l1_bytes", "l0c_bytes", "ub_bytes", "bt_bytes"), values,
                                 strict=True))
        return OK

    def set_traverse(self, traverse: MatrixTraverse) -> int:
        """Walk order of a core's base blocks: FIRSTM (M first), FIRSTN, or NOSET (choose)."""
        order = _enum(traverse, MatrixTraverse, "set_traverse", "traverse")
        self._request["traverse"] = TRAVERSE_NAMES[order]
        return OK

    def set_double_buffer(self, a: bool = True, b: bool = True, c: bool = False,
                          bias: bool = False, trans_nd2nz: bool = True,
                          trans_nz2nd: bool = True) -> int:
        """Double buffering switches. ascsim reads ``a``, ``b``, ``c`` as L0A, L0B, L0C
        double buffering; ``bias`` and the ND/NZ conversion flags are recorded only."""
        method = "set_double_buffer"
        self._request.update(db_l0a=_bool(a, method, "a"), db_l0b=_bool(b, method, "b"),
                             db_l0c=_bool(c, method, "c"))
        self._recorded.update(double_buffer_bias=_bool(bias, method, "bias"),
                              trans_nd2nz=_bool(trans_nd2nz, method, "trans_nd2nz"),
                              trans_nz2nd=_bool(trans_nz2nd, method, "trans_nz2nd"))
        return OK

    def set_mad_type(self, mad_type: MatrixMadType) -> int:
        """NORMAL, HF32 (fp32 inputs at twice the rate) or MXMODE."""
        self._request["mad_type"] = _enum(mad_type, MatrixMadType, "set_mad_type",
                                          "mad_type").name
        return OK

    def set_dequant_type(self, dequant_type: DequantType) -> int:
        """Quantisation mode of C (recorded; no effect on the tiling)."""
        self._recorded["dequant_type"] = _enum(dequant_type, DequantType, "set_dequant_type",
                                               "dequant_type")
        return OK

    def set_sparse(self, is_sparce_in: bool = False) -> int:
        """Sparse Matmul (recorded; no effect on the tiling)."""
        self._recorded["sparse"] = _bool(is_sparce_in, "set_sparse", "is_sparce_in")
        return OK

    def set_split_range(self, max_base_m: int = -1, max_base_n: int = -1, max_base_k: int = -1,
                        min_base_m: int = -1, min_base_n: int = -1, min_base_k: int = -1) -> int:
        """Bounds on the base block (recorded; like CANN, the tiling does not use them)."""
        names = ("max_base_m", "max_base_n", "max_base_k", "min_base_m", "min_base_n",
                 "min_base_k")
        values = (max_base_m, max_base_n, max_base_k, min_base_m, min_base_n, min_base_k)
        self._recorded["split_range"] = tuple(
            _int(v, "set_split_range", n) for n, v in zip(names, values, strict=True))
        return OK

    def set_matmul_config_params(self, mm_config_type: int | MatmulConfigParams = 1,
                                 enable_l1_cache_ub: bool = False,
                                 schedule_type: ScheduleType = ScheduleType.INNER_PRODUCT,
                                 traverse: MatrixTraverse = MatrixTraverse.NOSET,
                                 en_vec_nd2nz: bool = False, *,
                                 config_params: MatmulConfigParams | None = None) -> None:
        """MatmulConfig settings the kernel uses; a traverse other than NOSET applies. Returns
        nothing, as CANN's (void) SetMatmulConfigParams; bad arguments raise."""
        method = "set_matmul_config_params"
        if isinstance(mm_config_type, MatmulConfigParams):
            config_params = mm_config_type
        if config_params is None:
            config_params = MatmulConfigParams(
                _int(mm_config_type, method, "mm_config_type"),
                _bool(enable_l1_cache_ub, method, "enable_l1_cache_ub"),
                _enum(schedule_type, ScheduleType, method, "schedule_type"),
                _enum(traverse, MatrixTraverse, method, "traverse"),
                _bool(en_vec_nd2nz, method, "en_vec_nd2nz"))
        self._recorded["matmul_config"] = config_params
        if config_params.traverse != MatrixTraverse.NOSET:
            self.set_traverse(config_params.traverse)

    # --- batch / layout ------------------------------------------------------------------

    def _set_layout(self, op: str, method: str, axes: tuple[str, ...],
                    values: tuple[Any, ...]) -> int:
        ints = tuple(_int(v, method, a) for a, v in zip(axes, values, strict=True))
        if any(v < 0 for v in ints):
            return self._fail(method, f"layout sizes must be >= 0, got {ints}")
        self._layout.update({f"{op}_layout_info_{a}": v for a, v in zip(axes, ints,
                                                                          strict=True)})
        return OK

    def set_a_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        """B, S, N, G, D axes of A for batched layouts (written to a_layout_info_*)."""
        return self._set_layout("a", "set_a_layout", ("b", "s", "n", "g", "d"), (b, s, n, g, d))

    def set_b_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        """B, S, N, G, D axes of B for batched layouts (written to b_layout_info_*)."""
        return self._set_layout("b", "set_b_layout", ("b", "s", "n", "g", "d"), (b, s, n, g, d))

    def set_c_layout(self, b: int, s: int, n: int, g: int, d: int) -> int:
        """B, S1, N, G, S2 axes of C for batched layouts (written to c_layout_info_*)."""
        return self._set_layout("c", "set_c_layout", ("b", "s1", "n", "g", "s2"),
                                (b, s, n, g, d))

    def set_batch_num(self, batch: int) -> int:
        """Batches of a batched Matmul: the larger of A's and B's batch counts."""
        sizes = self._sizes("set_batch_num", ("batch",), (batch,), allow_unset=False)
        if isinstance(sizes, str):
            return self._fail("set_batch_num", sizes)
        (count,) = sizes
        if self._batch is None or max(self._batch) != count:
            self._batch = (count, count)
        return OK

    def set_batch_info_for_normal(self, batch_a: int, batch_b: int, m: int, n: int,
                                  k: int) -> int:
        """Batch counts of A and B and the per-batch M, N, K of a NORMAL-layout batch."""
        method = "set_batch_info_for_normal"
        sizes = self._sizes(method, ("batch_a", "batch_b", "m", "n", "k"),
                            (batch_a, batch_b, m, n, k), allow_unset=False)
        if isinstance(sizes, str):
            return self._fail(method, sizes)
        self._batch = (sizes[0], sizes[1])
        if self._shape is None:
            self._shape = sizes[2:]  # type: ignore[assignment]
        return OK

    # --- results -------------------------------------------------------------------------

    def _dim(self) -> int:
        """Cores the tiling may use: one, unless the class has set_dim."""
        return 1

    def _build_request(self) -> MatmulTilingRequest:
        if self._shape is None and self._org is None:
            raise TilingError("no shape: call set_shape(m, n, k) or set_org_shape(m, n, k)")
        org = self._org
        # Without set_shape the tiling computes the org shape; with Ka != Kb (row strides of
        # A and B) the K both operands hold is the smaller one.
        shape = self._shape if self._shape is not None else (org[0], org[1], min(org[2], org[3]))
        org = org if org is not None else (*shape, shape[2])
        fields = dict(self._request)
        fields.update(m=shape[0], n=shape[1], k=shape[2], org_m=org[0], org_n=org[1],
                      org_ka=org[2], org_kb=org[3], dim=self._dim())
        return MatmulTilingRequest(**fields)

    def _batch_fields(self, request: MatmulTilingRequest) -> dict[str, int]:
        """Batch and layout fields (our convention for a NORMAL layout: A is batch_a x M x K,
        B batch_b x K x N, C batch x M x N, one batch per iteration)."""
        out: dict[str, int] = {}
        if self._batch is not None:
            batch_a, batch_b = self._batch
            out.update(batch_m=batch_a, batch_n=batch_b, batch_num=max(batch_a, batch_b),
                       single_batch_m=1, single_batch_n=1)
            m, n, k = request.m, request.n, request.k
            defaults = {"a": (batch_a, m, 1, 1, k), "b": (batch_b, k, 1, 1, n),
                        "c": (max(batch_a, batch_b), m, 1, 1, n)}
            for op, values in defaults.items():
                axes = ("b", "s1", "n", "g", "s2") if op == "c" else ("b", "s", "n", "g", "d")
                out.update({f"{op}_layout_info_{a}": v for a, v in zip(axes, values,
                                                                          strict=True)})
        out.update(self._layout)
        return out

    def get_tiling(self, tiling: Any) -> int:
        """Compute the tiling and write every TCubeTiling field of ``tiling`` in place."""
        try:
            request = self._build_request()
            result = solve_matmul_tiling(request, self._platform.soc)
        except TilingError as exc:
            self._result = None
            return self._fail("get_tiling", str(exc))
        values = {**result.values, **self._batch_fields(request)}
        missing = [name for name in values if not hasattr(tiling, name)]
        if missing:
            raise TypeError(f"get_tiling: argument 'tiling' must be a TCubeTiling "
                            f"(asc.adv.TCubeTiling()), got {type(tiling).__name__} without "
                            f"field {missing[0]!r}")
        for name, value in values.items():
            setattr(tiling, name, value)
        self._result = result
        return OK

    def _base(self, name: str) -> int:
        if self._result is not None:
            return self._result.values[name]
        return self._request.get(name, -1)

    def get_base_m(self) -> int:
        """base_m of the last get_tiling (before one: the fixed value, or -1)."""
        return self._base("base_m")

    def get_base_n(self) -> int:
        """base_n of the last get_tiling (before one: the fixed value, or -1)."""
        return self._base("base_n")

    def get_base_k(self) -> int:
        """base_k of the last get_tiling (before one: the fixed value, or -1)."""
        return self._base("base_k")


class MatmulApiTiling(MatmulApiTilingBase):
    """Tiling of a Matmul computed by one core (``used_core_num`` = 1)."""


class MultiCoreMatmulTiling(MatmulApiTilingBase):
    """Tiling of a Matmul split over up to ``set_dim(n)`` cores."""

    def __init__(self, ascendc_platform: PlatformAscendC | None = None) -> None:
        super().__init__(ascendc_platform)
        self._dim_value = -1

    def _dim(self) -> int:
        return self._dim_value

    def set_dim(self, dim: int) -> int:
        """Cores the Matmul may use (AIV cores in MIX mode on split SoCs; -1 = all)."""
        value = _int(dim, "set_dim", "dim")
        if value < 1 and value != -1:
            return self._fail("set_dim", f"dim={value} must be >= 1 or -1")
        self._dim_value = value
        return OK

    @_aliases(m="single_m_in", n="single_n_in", k="single_k_in")
    def set_single_shape(self, single_m_in: int = -1, single_n_in: int = -1,
                         single_k_in: int = -1) -> int:
        """Fix the per-core extents (-1 leaves a dimension to the tiling)."""
        sizes = self._sizes("set_single_shape", ("single_m", "single_n", "single_k"),
                            (single_m_in, single_n_in, single_k_in))
        if isinstance(sizes, str):
            return self._fail("set_single_shape", sizes)
        self._request.update(zip(("single_core_m", "single_core_n", "single_core_k"), sizes,
                                 strict=True))
        return OK

    def set_single_range(self, max_m: int = -1, max_n: int = -1, max_k: int = -1,
                         min_m: int = -1, min_n: int = -1, min_k: int = -1) -> int:
        """Bounds on the per-core extents (recorded; no effect on the tiling)."""
        names = ("max_m", "max_n", "max_k", "min_m", "min_n", "min_k")
        values = (max_m, max_n, max_k, min_m, min_n, min_k)
        self._recorded["single_range"] = tuple(
            _int(v, "set_single_range", n) for n, v in zip(names, values, strict=True))
        return OK

    def set_align_split(self, align_m: int, align_n: int, align_k: int) -> int:
        """Granularity of the per-core extents (-1 or 0 = the tiling's default)."""
        names = ("align_m", "align_n", "align_k")
        values = tuple(_int(v, "set_align_split", n)
                       for n, v in zip(names, (align_m, align_n, align_k), strict=True))
        if any(v < -1 for v in values):
            return self._fail("set_align_split", f"alignments must be >= 0 or -1, got {values}")
        self._request.update({n: (v if v > 0 else -1) for n, v in zip(names, values,
                                                                       strict=True)})
        return OK

    def enable_multi_core_split_k(self, flag: bool) -> None:
        """Allow cutting K across cores (partial C results then add up in GM)."""
        self._request["split_k"] = _bool(flag, "enable_multi_core_split_k", "flag")

    def get_core_num(self) -> tuple[int, int, int] | None:
        """(used cores, M pieces, N pieces) of the last get_tiling, or None before one."""
        if self._result is None:
            return None
        r = self._result
        return r.values["used_core_num"], r.m_dim, r.n_dim

    def get_single_shape(self) -> tuple[int, int, int] | None:
        """(single_core_m, single_core_n, single_core_k) of the last get_tiling, or None."""
        if self._result is None:
            return None
        v = self._result.values
        return v["single_core_m"], v["single_core_n"], v["single_core_k"]


class BatchMatmulTiling(MultiCoreMatmulTiling):
    """Tiling of a batched Matmul: each core walks every batch of its M x N region.

    Unlike MultiCoreMatmulTiling it tiles for one core until ``set_dim`` says otherwise (the
    operator spreads batches over cores itself; CANN's batch tiling of a 32x32x32 problem
    reports one core, which pyasc's unit tests check)."""

    def __init__(self, ascendc_platform: PlatformAscendC | None = None) -> None:
        super().__init__(ascendc_platform)
        self._dim_value = 1

    def get_core_num(self) -> tuple[int, int, int, int, int] | None:  # type: ignore[override]
        """(used cores, M pieces, N pieces, batch pieces of A, of B), or None before
        get_tiling. Batches are not split across cores, so the last two are 1."""
        base = super().get_core_num()
        return None if base is None else (*base, 1, 1)
