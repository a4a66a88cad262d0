"""ascsim's Matmul tiling: the pyasc examples' shapes, invariants over random requests, the
failures that must be reported, and the ``asc.lib.host`` API around it."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ascsim.asc.lib.host as host
from ascsim.asc.adv.tiling_structs import TCubeTiling
from ascsim.asc.enums import TPosition as KernelTPosition
from ascsim.hw import get_soc
from ascsim.session import SESSION
from ascsim.tiling import (
    TCUBE_TILING_FIELDS,
    MatmulTilingRequest,
    TilingError,
    compute_matmul_tiling,
    default_core_count,
    k_alignment,
    solve_matmul_tiling,
)
from ascsim.tiling.matmul import DTYPE_BITS, POSITION_STORAGE

SOCS = ("Ascend910B1", "Ascend950PR_9579")
PROPERTY = settings(max_examples=200,
                    suppress_health_check=[HealthCheck.too_slow])

# The field list of pyasc-api §3.9, in order.
EXPECTED_FIELDS = (
    "used_core_num m n k_a k_b single_core_m single_core_n single_core_k base_m base_n base_k "
    "depth_a1 depth_b1 step_m step_n is_bias trans_length iterate_order share_mode "
    "share_l1_size share_l0c_size share_ub_size batch_m batch_n single_batch_m single_batch_n "
    "step_k_a step_k_b depth_a_l1_cache_ub depth_b_l1_cache_ub db_l0a db_l0b db_l0c "
    "a_layout_info_b a_layout_info_s a_layout_info_n a_layout_info_g a_layout_info_d "
    "b_layout_info_b b_layout_info_s b_layout_info_n b_layout_info_g b_layout_info_d "
    "c_layout_info_b c_layout_info_s1 c_layout_info_n c_layout_info_g c_layout_info_s2 "
    "batch_num"
).split()


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def align(x: int, unit: int) -> int:
    return ceil_div(x, unit) * unit


def nbytes(elements: int, dtype: str) -> int:
    return ceil_div(elements * DTYPE_BITS[dtype], 8)


def budget(requested: int, available: int) -> int:
    return available if requested == -1 else requested


def check_tiling(req: MatmulTilingRequest, soc_name: str) -> dict[str, int]:
    """Solve ``req`` and assert every invariant a tiling must satisfy."""
    soc = get_soc(soc_name)
    result = solve_matmul_tiling(req, soc)
    t = dict(result.values)
    assert set(t) == set(TCUBE_TILING_FIELDS)
    dim = req.dim if req.dim != -1 else default_core_count(soc)
    scm, scn, sck = t["single_core_m"], t["single_core_n"], t["single_core_k"]
    bm, bn, bk = t["base_m"], t["base_n"], t["base_k"]
    k_align = k_alignment(req.a_dtype)

    # The core split covers C exactly once and uses at most dim cores.
    assert t["used_core_num"] == result.m_dim * result.n_dim * result.k_dim
    assert 1 <= t["used_core_num"] <= dim
    for total, piece, parts in ((req.m, scm, result.m_dim), (req.n, scn, result.n_dim),
                                (req.k, sck, result.k_dim)):
        assert 1 <= piece <= total
        assert parts * piece >= total > (parts - 1) * piece
    if not req.split_k and req.single_core_k == -1:
        assert sck == req.k
    assert (t["m"], t["n"], t["k_a"], t["k_b"]) == req.org()

    # Base block granularity, and no larger than the region unless fixed.
    assert bm % 16 == 0 and bn % 16 == 0 and bk % k_align == 0 and min(bm, bn, bk) > 0
    if req.base_m == -1:
        assert bm <= align(scm, 16)
    if req.base_n == -1:
        assert bn <= align(scn, 16)
    if req.base_k == -1:
        assert bk <= align(sck, k_align)
    for fixed in ("base_m", "base_n", "base_k"):
        if getattr(req, fixed) != -1:
            assert t[fixed] == getattr(req, fixed)

    # Every buffer holds what the tiling puts in it.
    assert t["db_l0a"] in (1, 2) and t["db_l0b"] in (1, 2) and t["db_l0c"] in (1, 2)
    assert nbytes(bm * bk, req.a_dtype) * t["db_l0a"] <= soc.l0a_bytes
    assert nbytes(bk * bn, req.b_dtype) * t["db_l0b"] <= soc.l0b_bytes
    assert bm * bn * 4 * t["db_l0c"] <= budget(req.l0c_bytes, soc.l0c_bytes)
    bias_row = bn * 4 if req.has_bias else 0
    l1 = (t["depth_a1"] * nbytes(bm * bk, req.a_dtype)
          + t["depth_b1"] * nbytes(bk * bn, req.b_dtype) + bias_row)
    assert l1 <= budget(req.l1_bytes, soc.l1_bytes)
    assert t["share_l1_size"] == l1
    if req.has_bias:
        assert bias_row <= budget(req.bt_bytes, soc.bt_bytes)
    if POSITION_STORAGE[req.c_position] == "ub":
        assert nbytes(bm * bn, req.c_dtype) <= budget(req.ub_bytes, soc.ub_bytes)

    # L1 steps are consistent with the depths and the block counts.
    for depth, step_mn, step_k, blocks in (("depth_a1", "step_m", "step_k_a", ceil_div(scm, bm)),
                                           ("depth_b1", "step_n", "step_k_b", ceil_div(scn, bn))):
        assert 1 <= t[step_mn] <= blocks
        assert 1 <= t[step_k] <= ceil_div(sck, bk)
        assert t[depth] in (t[step_mn] * t[step_k], 2 * t[step_mn] * t[step_k])
    low, high = sorted((t["step_k_a"], t["step_k_b"]))
    assert high % low == 0

    assert t["iterate_order"] in (0, 1)
    if req.traverse != "NOSET":
        assert t["iterate_order"] == (0 if req.traverse == "FIRSTM" else 1)
    assert t["is_bias"] == int(req.has_bias)
    return t


# --- the pyasc examples ------------------------------------------------------------------


def example_05() -> MatmulTilingRequest:
    """05_matmul_leakyrelu: 1024x640x256 fp16, C to VECCALC, bias, set_dim(2), 256x128 fixed."""
    return MatmulTilingRequest(m=1024, n=640, k=256, c_position="VECCALC", has_bias=True,
                               dim=2, traverse="FIRSTM", base_m=256, base_n=128)


def test_matmul_leakyrelu_example() -> None:
    t = check_tiling(example_05(), "Ascend910B1")
    assert t["used_core_num"] == 2
    assert (t["single_core_m"], t["single_core_n"], t["single_core_k"]) == (512, 640, 256)
    assert (t["base_m"], t["base_n"], t["base_k"]) == (256, 128, 64)
    assert t["iterate_order"] == 0 and t["is_bias"] == 1
    # The kernel's own offset maths: 2 M blocks x 5 N blocks per core, no tails.
    assert t["single_core_m"] % t["base_m"] == 0 and t["single_core_n"] % t["base_n"] == 0
    # All of A (2 blocks x full K) is resident; B columns at full K, double-buffered.
    assert (t["step_m"], t["step_k_a"], t["depth_a1"]) == (2, 4, 8)
    assert (t["step_n"], t["step_k_b"], t["depth_b1"]) == (1, 4, 8)


def test_matmul_mix_example() -> None:
    """03_matmul_mix: 512x1024x512, set_dim(48) AIVs."""
    t = check_tiling(MatmulTilingRequest(m=512, n=1024, k=512, dim=48), "Ascend910B1")
    assert t["used_core_num"] == 44 and t["used_core_num"] % 2 == 0
    assert (t["single_core_m"], t["single_core_n"]) == (128, 96)
    assert (t["base_m"], t["base_n"], t["base_k"]) == (128, 96, 128)


def mdl_sample_request(soc: str) -> MatmulTilingRequest:
    """asc-devkit matmul_high_performance with the MDL template and the L1 depths and K steps
    left to the library (its case 4): 8192^3 fp16, B stored [N, K], SetDim(AIC count),
    SetSingleShape(2048, 1536 (950: 1024), 8192), SetFixSplit(128 (950: 256), 256, 64)."""
    single_n, base_m = (1536, 128) if soc.startswith("Ascend910B") else (1024, 256)
    return MatmulTilingRequest(m=8192, n=8192, k=8192, trans_b=True, c_dtype="float16",
                               dim=get_soc(soc).aic_count, single_core_m=2048,
                               single_core_n=single_n, single_core_k=8192, base_m=base_m,
                               base_n=256, base_k=64)


def test_mdl_sample_tiling_910b() -> None:
    """The sample's README prints depthA1 4 (ping and pong of two K blocks each) for this
    tiling on the 910B1; its case 5 keeps the library's B side, which its constant tiling
    restates as depthB1 8, stepKb 4."""
    t = check_tiling(mdl_sample_request("Ascend910B1"), "Ascend910B1")
    assert (t["depth_a1"], t["step_k_a"], t["depth_b1"], t["step_k_b"]) == (4, 2, 8, 4)
    assert (t["step_m"], t["step_n"], t["used_core_num"]) == (1, 1, 24)


def test_mdl_sample_tiling_950() -> None:
    """The 950 build of the same sample keeps the same B side (depthB1 8, stepKb 4); its A
    side is not printed (by the rule: one K step of the 256-row block, double-buffered)."""
    t = check_tiling(mdl_sample_request("Ascend950PR_9589"), "Ascend950PR_9589")
    assert (t["depth_b1"], t["step_k_b"]) == (8, 4)
    assert (t["depth_a1"], t["step_k_a"]) == (2, 1)


@pytest.mark.parametrize("trans_a, trans_b, deep", [
    (False, True, "b"),   # both K-contiguous, B's block is the wider: B deeper
    (False, False, "a"),  # only A's rows run along K
    (True, True, "b"),    # only B's rows run along K
])
def test_streaming_plan_deepens_the_k_contiguous_operand(trans_a, trans_b, deep) -> None:
    req = dataclasses.replace(mdl_sample_request("Ascend910B1"), trans_a=trans_a,
                              trans_b=trans_b)
    t = check_tiling(req, "Ascend910B1")
    steps = {"a": t["step_k_a"], "b": t["step_k_b"]}
    shallow = "a" if deep == "b" else "b"
    assert steps[deep] > steps[shallow]
    assert 128 % steps["a"] == 0 and 128 % steps["b"] == 0  # divisors of the 128 K steps


def test_streaming_plan_one_depth_when_neither_runs_along_k() -> None:
    req = dataclasses.replace(mdl_sample_request("Ascend910B1"), trans_a=True, trans_b=False)
    t = check_tiling(req, "Ascend910B1")
    assert t["step_k_a"] == t["step_k_b"] and (t["depth_a1"], t["depth_b1"]) == (
        2 * t["step_k_a"], 2 * t["step_k_b"])


def test_matmul_cube_only_example() -> None:
    """04_matmul_cube_only: 128x30720x64 on 24 AI cores."""
    t = check_tiling(MatmulTilingRequest(m=128, n=30720, k=64, dim=24), "Ascend910B1")
    assert t["used_core_num"] == 24
    assert (t["single_core_m"], t["single_core_n"], t["single_core_k"]) == (128, 1280, 64)
    assert (t["base_m"], t["base_n"], t["base_k"]) == (128, 256, 64)


def test_large_shapes_get_large_blocks() -> None:
    t = check_tiling(MatmulTilingRequest(m=4096, n=4096, k=4096, dim=1), "Ascend910B1")
    assert t["base_m"] * t["base_n"] == 128 * 256
    t = check_tiling(MatmulTilingRequest(m=4096, n=4096, k=4096, dim=1), "Ascend950PR_9579")
    assert t["base_m"] * t["base_n"] == 256 * 256  # 256 KB of L0C


def test_tiny_and_huge_k() -> None:
    t = check_tiling(MatmulTilingRequest(m=1, n=16, k=1), "Ascend910B1")
    assert (t["single_core_m"], t["base_m"], t["base_n"], t["base_k"]) == (1, 16, 16, 16)
    t = check_tiling(MatmulTilingRequest(m=64, n=64, k=1 << 20, dim=1), "Ascend910B1")
    assert t["single_core_k"] == 1 << 20 and t["base_k"] <= 4095
    split = check_tiling(MatmulTilingRequest(m=64, n=64, k=65536, split_k=True, dim=48),
                         "Ascend910B1")
    assert split["single_core_k"] < 65536


def test_even_dim_gives_even_core_count() -> None:
    # An even dim is an AIV count of a MIX launch (used_core_num // 2 blocks).
    for m, n in ((48, 16), (40, 1000), (1000, 40)):
        t = check_tiling(MatmulTilingRequest(m=m, n=n, k=64, dim=48), "Ascend910B1")
        assert t["used_core_num"] % 2 == 0


def test_fixed_single_shape_and_alignment() -> None:
    t = check_tiling(MatmulTilingRequest(m=1000, n=1000, k=256, dim=48, single_core_m=256,
                                         single_core_n=128), "Ascend910B1")
    assert (t["used_core_num"], t["single_core_m"], t["single_core_n"]) == (32, 256, 128)
    t = check_tiling(MatmulTilingRequest(m=1000, n=1000, k=256, dim=8, align_n=64),
                     "Ascend910B1")
    assert t["single_core_n"] % 64 == 0 or t["single_core_n"] == 1000


def test_small_soc_limits_cores_and_buffers() -> None:
    """Core counts and buffer sizes of the SoC bound the tiling."""
    tiny = dataclasses.replace(get_soc("Ascend910B1"), name="Tiny", aic_count=2, aiv_count=4,
                               l1_bytes=64 * 1024, l0a_bytes=16 * 1024, l0b_bytes=16 * 1024,
                               l0c_bytes=32 * 1024, ub_bytes=32 * 1024, bt_bytes=1024)
    t = compute_matmul_tiling(MatmulTilingRequest(m=256, n=256, k=256, has_bias=True), tiny)
    assert t["used_core_num"] <= 4 and t["base_m"] * t["base_n"] * 4 <= 32 * 1024
    assert t["share_l1_size"] <= 64 * 1024


def test_dim_defaults_to_aiv_count() -> None:
    t = check_tiling(MatmulTilingRequest(m=4096, n=4096, k=256), "Ascend910B1")
    assert t["used_core_num"] <= 48


# --- properties --------------------------------------------------------------------------

DTYPES = st.sampled_from([("float16", "float32"), ("bfloat16", "float32"),
                          ("float32", "float32"), ("int8", "int32"), ("float16", "float16")])


@st.composite
def requests(draw: st.DrawFn) -> tuple[MatmulTilingRequest, str]:
    soc = draw(st.sampled_from(SOCS))
    ab, c = draw(DTYPES)
    size = st.integers(1, 8192)
    return MatmulTilingRequest(
        m=draw(size), n=draw(size), k=draw(size), a_dtype=ab, b_dtype=ab, c_dtype=c,
        has_bias=draw(st.booleans()),
        c_position=draw(st.sampled_from(["GM", "VECCALC", "VECIN", "VECOUT"])),
        dim=draw(st.sampled_from([-1, 1, 2, 3, 8, 20, 24, 48])),
        traverse=draw(st.sampled_from(["NOSET", "FIRSTM", "FIRSTN"])),
        trans_a=draw(st.booleans()), trans_b=draw(st.booleans()),
        split_k=draw(st.booleans()),
        db_l0c=draw(st.booleans()),
    ), soc


@PROPERTY
@given(requests())
def test_every_tiling_fits_and_covers(case: tuple[MatmulTilingRequest, str]) -> None:
    req, soc = case
    check_tiling(req, soc)


@PROPERTY
@given(requests(), st.sampled_from([16, 32, 64, 128, 256]), st.sampled_from([16, 64, 128, 256]),
       st.data())
def test_fixed_splits_are_honoured_or_refused(case: tuple[MatmulTilingRequest, str],
                                              base_m: int, base_n: int,
                                              data: st.DataObject) -> None:
    req, soc = case
    l1 = data.draw(st.sampled_from([-1, 64 * 1024, 128 * 1024]))
    fixed = MatmulTilingRequest(**{**vars(req), "base_m": base_m, "base_n": base_n,
                                   "l1_bytes": l1})
    try:
        check_tiling(fixed, soc)
    except TilingError as exc:
        # Only a base larger than the region or than a buffer may be refused.
        spec = get_soc(soc)
        too_big = (base_m > align(req.m, 16) or base_n > align(req.n, 16)
                   or base_m * base_n * 4 * (2 if req.db_l0c else 1) > spec.l0c_bytes
                   or (req.has_bias and base_n * 4 > spec.bt_bytes)
                   or (POSITION_STORAGE[req.c_position] == "ub"
                       and nbytes(base_m * base_n, req.c_dtype) > spec.ub_bytes))
        assert too_big, str(exc)
        assert str(exc)


@PROPERTY
@given(requests(), st.integers(0, 1023))
def test_tiny_l1_is_refused(case: tuple[MatmulTilingRequest, str], l1: int) -> None:
    req, soc = case
    # One 16-row block of A and of B at the smallest base_k is 1 KiB for every input type.
    with pytest.raises(TilingError, match="L1"):
        compute_matmul_tiling(MatmulTilingRequest(**{**vars(req), "l1_bytes": l1}),
                              get_soc(soc))


@PROPERTY
@given(requests(), st.sampled_from([(512, 512), (256, 512), (1024, 128), (512, 256)]))
def test_fixed_base_too_big_for_l0c_is_refused(case: tuple[MatmulTilingRequest, str],
                                               base: tuple[int, int]) -> None:
    req, soc = case
    spec = get_soc(soc)
    base_m, base_n = base
    if base_m * base_n * 4 <= spec.l0c_bytes:
        return
    fixed = MatmulTilingRequest(**{**vars(req), "m": max(req.m, base_m),
                                   "n": max(req.n, base_n), "base_m": base_m,
                                   "base_n": base_n})
    with pytest.raises(TilingError, match="L0C"):
        compute_matmul_tiling(fixed, spec)


# --- failures with messages --------------------------------------------------------------


def test_failures_name_the_constraint() -> None:
    soc = get_soc("Ascend910B1")
    cases = {
        "L0C": dict(m=1024, n=1024, k=64, base_m=512, base_n=512),
        "L1": dict(m=1024, n=1024, k=64, l1_bytes=512),
        "bias table": dict(m=1024, n=1024, k=64, has_bias=True, base_n=512, base_m=16),
        "UB": dict(m=1024, n=1024, k=64, c_position="VECCALC", ub_bytes=4096, base_m=64,
                   base_n=64),
        "exceeds m": dict(m=40, n=1024, k=64, base_m=256),
        "needs 64 cores": dict(m=1024, n=1024, k=64, dim=8, single_core_m=128,
                               single_core_n=128),
        "exceeds the 131072 B": dict(m=64, n=64, k=64, l0c_bytes=1 << 20),
    }
    for words, kwargs in cases.items():
        with pytest.raises(TilingError, match=words):
            compute_matmul_tiling(MatmulTilingRequest(**kwargs), soc)


@pytest.mark.parametrize("kwargs", [
    dict(m=0, n=1, k=1), dict(m=1, n=1, k=1, a_dtype="int16", b_dtype="int16"),
    dict(m=1, n=1, k=1, a_dtype="float16", b_dtype="int8"), dict(m=1, n=1, k=1, base_m=24),
    dict(m=1, n=1, k=1, c_position="TSCM"), dict(m=1, n=1, k=1, traverse="FIRSTK"),
    dict(m=1, n=1, k=1, dim=0), dict(m=8, n=1, k=1, org_m=4), dict(m=1.5, n=1, k=1),
    dict(m=1, n=1, k=1, has_bias=1), dict(m=1, n=1, k=64, base_k=8),
])
def test_invalid_requests(kwargs: dict) -> None:
    with pytest.raises(TilingError):
        MatmulTilingRequest(**kwargs)


# --- asc.lib.host ------------------------------------------------------------------------


def leakyrelu_tiling(mt: host.MultiCoreMatmulTiling) -> host.MultiCoreMatmulTiling:
    """The host code of pyasc's 05_matmul_leakyrelu, verbatim."""
    mt.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    mt.set_b_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16, False)
    mt.set_c_type(host.TPosition.VECCALC, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    mt.set_bias_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    mt.set_dim(2)
    mt.set_org_shape(1024, 640, 256)
    mt.set_shape(1024, 640, 256)
    mt.enable_bias(True)
    mt.set_traverse(host.MatrixTraverse.FIRSTM)
    mt.set_fix_split(256, 128, -1)
    mt.set_buffer_space(-1, -1, -1)
    return mt


def test_host_api_fills_tcubetiling(capsys: pytest.CaptureFixture[str]) -> None:
    mt = leakyrelu_tiling(host.MultiCoreMatmulTiling(host.get_ascendc_platform()))
    assert mt.get_core_num() is None and mt.get_single_shape() is None
    assert mt.get_base_m() == 256 and mt.get_base_k() == -1
    tiling = TCubeTiling()
    assert mt.get_tiling(tiling) == 0
    assert capsys.readouterr() == ("", "")
    expected = compute_matmul_tiling(example_05(), get_soc("Ascend910B1"))
    assert tiling.fields() == expected
    assert mt.get_core_num() == (2, 2, 1)
    assert mt.get_single_shape() == (512, 640, 256)
    assert (mt.get_base_m(), mt.get_base_n(), mt.get_base_k()) == (256, 128, 64)
    assert tiling.used_core_num // 2 == 1  # the example launches one MIX block


def test_host_failure_returns_minus_one_and_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    mt = leakyrelu_tiling(host.MultiCoreMatmulTiling())
    mt.set_fix_split(512, 512, -1)
    tiling = TCubeTiling()
    assert mt.get_tiling(tiling) == -1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "L0C" in err and "512x512" in err
    assert tiling.used_core_num == 0  # untouched
    mt.set_fix_split(-1, -1, -1)
    mt.set_buffer_space(256, -1, -1)
    assert mt.get_tiling(tiling) == -1
    assert "L1" in capsys.readouterr().err
    assert host.MatmulApiTiling().get_tiling(tiling) == -1  # no shape set
    assert "set_shape" in capsys.readouterr().err
    mt.set_buffer_space(-1, -1, -1)
    with pytest.raises(TypeError, match="'tiling'"):
        mt.get_tiling(object())


def test_host_argument_types() -> None:
    mt = host.MultiCoreMatmulTiling()
    with pytest.raises(TypeError, match="'pos'.*host.TPosition.GM"):
        mt.set_a_type(KernelTPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16)
    with pytest.raises(TypeError, match="'type'"):
        mt.set_b_type(host.TPosition.GM, "ND", host.DataType.DT_FLOAT16)
    with pytest.raises(TypeError, match="'data_type'"):
        mt.set_c_type(host.TPosition.GM, host.CubeFormat.ND, "float32")
    with pytest.raises(TypeError, match="'traverse'"):
        mt.set_traverse(1)
    with pytest.raises(TypeError, match="'m'"):
        mt.set_shape("1024", 64, 64)
    with pytest.raises(TypeError, match="'dim'"):
        mt.set_dim(2.0)
    with pytest.raises(TypeError, match="ascendc_platform"):
        host.MatmulApiTiling("Ascend910B1")
    assert mt.set_shape(0, 64, 64) == -1
    assert mt.set_a_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_DOUBLE) == -1


def test_host_keyword_spellings() -> None:
    mt = host.MultiCoreMatmulTiling()
    assert mt.set_a_type(pos=host.TPosition.GM, fmt=host.CubeFormat.ND,
                         dtype=host.DataType.DT_BF16, is_trans=True) == 0
    assert mt.set_b_type(pos=host.TPosition.GM, type=host.CubeFormat.ND,
                         data_type=host.DataType.DT_BFLOAT16) == 0
    assert mt.set_fix_split(base_m=128, base_n_in=128) == 0
    assert mt.set_buffer_space(l1=256 * 1024, l0_c_size=-1) == 0
    assert mt.set_org_shape(512, 512, 256, 320) == 0
    assert mt.set_shape(512, 512, 256) == 0
    assert mt.set_single_shape(m=256) == 0
    tiling = TCubeTiling()
    assert mt.get_tiling(tiling) == 0
    assert (tiling.base_m, tiling.base_n, tiling.single_core_m) == (128, 128, 256)
    assert (tiling.k_a, tiling.k_b) == (256, 320)
    assert tiling.share_l1_size <= 256 * 1024


def test_single_core_and_batch_classes() -> None:
    mt = host.MatmulApiTiling(host.get_ascendc_platform())
    for setter in (mt.set_a_type, mt.set_b_type):
        setter(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16)
    mt.set_c_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    mt.set_shape(1024, 1024, 1024)
    tiling = TCubeTiling()
    assert mt.get_tiling(tiling) == 0
    assert (tiling.used_core_num, tiling.single_core_m, tiling.single_core_n) == (1, 1024, 1024)

    bt = host.BatchMatmulTiling()
    for setter in (bt.set_a_type, bt.set_b_type):
        setter(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT16)
    bt.set_c_type(host.TPosition.GM, host.CubeFormat.ND, host.DataType.DT_FLOAT)
    bt.set_dim(8)
    assert bt.set_batch_info_for_normal(3, 3, 64, 256, 128) == 0
    assert bt.get_tiling(tiling) == 0
    assert (tiling.batch_m, tiling.batch_n, tiling.batch_num) == (3, 3, 3)
    assert (tiling.a_layout_info_b, tiling.a_layout_info_s, tiling.a_layout_info_d) == (3, 64, 128)
    assert bt.get_core_num()[3:] == (1, 1)


def test_tcubetiling_fields_in_order() -> None:
    tiling = TCubeTiling(base_m=256)
    assert list(tiling.fields()) == EXPECTED_FIELDS == list(TCUBE_TILING_FIELDS)
    assert tiling.base_m == 256 and tiling.m == 0
    assert len(tiling.pack()) == 4 * len(EXPECTED_FIELDS)


def test_platform_reports_the_current_soc() -> None:
    previous = SESSION.soc
    try:
        SESSION.set_soc("Ascend950PR_9579")
        platform = host.get_ascendc_platform()
        assert platform.get_soc_version() == "Ascend950PR_9579"
        assert (platform.get_core_num_aic(), platform.get_core_num_aiv()) == (28, 56)
        assert platform.get_core_num() == 56
        assert platform.get_core_mem_size(host.CoreMemType.L0_C) == 262144
        assert platform.calc_tsch_block_dim(56, 28, 56) == 28
        with pytest.raises(TypeError, match="mem_type"):
            platform.get_core_mem_size("L1")
        tiling = TCubeTiling()
        mt = leakyrelu_tiling(host.MultiCoreMatmulTiling())
        assert mt.get_tiling(tiling) == 0
        assert tiling.used_core_num == 2
    finally:
        SESSION.set_soc(previous)
    assert host.PlatformAscendCManager.get_instance("Ascend910B4").get_core_num_aic() == 20


@pytest.mark.parametrize("soc_name", ["Ascend910B1", "Ascend950PR_9579"])
def test_a_c_block_the_tiler_picks_in_ub_fits_double_buffered(soc_name: str) -> None:
    # The kernel hands C blocks through a two-buffer queue: two of them must fit in UB.
    soc = get_soc(soc_name)
    req = MatmulTilingRequest(m=1024, n=256, k=512, c_position="VECCALC", dim=16,
                              has_bias=True)
    t = compute_matmul_tiling(req, soc)
    assert 2 * t["base_m"] * t["base_n"] * 4 <= soc.ub_bytes
    # A base the caller fixes is taken single-buffered (the caller knows its queue depth).
    fixed = compute_matmul_tiling(dataclasses.replace(req, base_m=256, base_n=128), soc)
    assert (fixed["base_m"], fixed["base_n"]) == (256, 128)


def test_set_matmul_config_params_returns_nothing_as_canns_void_setter() -> None:
    mt = host.MatmulApiTiling(host.get_ascendc_platform())
    mt.set_shape(32, 256, 64)
    assert mt.set_matmul_config_params(1, False, host.ScheduleType.OUTER_PRODUCT,
                                       host.MatrixTraverse.FIRSTM) is None
    assert mt.set_matmul_config_params(host.MatmulConfigParams(
        1, False, host.ScheduleType.OUTER_PRODUCT, host.MatrixTraverse.FIRSTM, False)) is None


def test_a_fixed_base_k_covering_the_whole_k_may_be_off_the_c0_grid() -> None:
    # CANN tiles set_fix_split(32, 16, 8) on an fp16 K of 8 with base_k=8 (one K step, padded
    # to C0 in L0); a base_k off the grid that leaves more K is still refused.
    soc = get_soc("Ascend910B1")
    t = compute_matmul_tiling(MatmulTilingRequest(m=32, n=16, k=8, base_m=32, base_n=16,
                                                  base_k=8), soc)
    assert (t["base_m"], t["base_n"], t["base_k"], t["single_core_k"]) == (32, 16, 8, 8)
    with pytest.raises(TilingError, match=r"base_k=8 must be .* \(or cover the core's K=64\)"):
        compute_matmul_tiling(MatmulTilingRequest(m=32, n=16, k=64, base_k=8), soc)


def test_an_org_shape_with_ka_kb_apart_tiles_the_common_k() -> None:
    mt = host.MatmulApiTiling(host.get_ascendc_platform())
    assert mt.set_org_shape(32, 16, 8, 4) == 0
    tiling = TCubeTiling()
    assert mt.get_tiling(tiling) == 0
    assert (tiling.m, tiling.n, tiling.k_a, tiling.k_b, tiling.single_core_k) == (32, 16, 8, 4, 4)


def test_batch_tiling_uses_one_core_until_set_dim() -> None:
    mt = host.BatchMatmulTiling(host.get_ascendc_platform())
    mt.set_shape(256, 256, 64)
    assert mt.get_tiling(TCubeTiling()) == 0
    assert mt.get_core_num() == (1, 1, 1, 1, 1)
    mt.set_dim(4)
    assert mt.get_tiling(TCubeTiling()) == 0
    assert mt.get_core_num()[0] > 1
