"""The Matmul high-level API, MIX kernels and cross-core flags.

Numerics are compared with torch in fp32 (or int32) over random shapes whose M, N and K are not
multiples of 16 nor of the base block, with transposed operands, bias, and fp16/bf16/fp32/int8
inputs. The references are computed independently of ascsim (torch on the host tensors).
"""

from __future__ import annotations

import os
import sys

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import ascsim.asc as asc
from ascsim.asc.adv import TCubeTiling
from ascsim.asc.runtime.config import KernelType
from ascsim.runner import install_asc_alias, run_script
from ascsim.session import SESSION
from ascsim.sim.errors import DeadlockError, KernelError

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, "examples")
TUTORIALS = "/work/pyasc_tutorials"
SOCS = ("Ascend910B1", "Ascend950PR_9579")
BF16 = np.dtype(ml_dtypes.bfloat16)


@pytest.fixture
def soc():
    """Run on a chosen SoC and restore the default afterwards."""
    saved = SESSION.soc.name

    def use(name):
        SESSION.set_soc(name)

    yield use
    SESSION.set_soc(saved)


def _mtype(dtype, trans=False, pos=asc.TPosition.GM, fmt=asc.CubeFormat.ND):
    return asc.adv.MatmulType(pos, fmt, dtype, trans)


@asc.jit(matmul_cube_only=True)
def _cube_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                 bias: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress,
                 trans_a: asc.ConstExpr[bool], trans_b: asc.ConstExpr[bool],
                 with_bias: asc.ConstExpr[bool], per_block: asc.ConstExpr[bool]):
    a_gm, b_gm, c_gm, bias_gm = (asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor(),
                                 asc.GlobalTensor())
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    bias_gm.set_global_buffer(bias)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(_mtype(a.dtype, trans_a), _mtype(b.dtype, trans_b), _mtype(c.dtype),
                        _mtype(bias.dtype))
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    mm.set_tensor_a(a_gm, trans_a)
    mm.set_tensor_b(b_gm, trans_b)
    if with_bias:
        mm.set_bias(bias_gm)
    if per_block:
        with mm.iterate() as count:  # noqa: F841 - the block counter is not needed here
            mm.get_tensor_c(c_gm)
    else:
        mm.iterate_all(c_gm)
    mm.end()


def _tiling(m, n, k, base_m, base_n, base_k, **extra) -> TCubeTiling:
    return TCubeTiling(used_core_num=1, m=m, n=n, k_a=k, k_b=k, single_core_m=m,
                       single_core_n=n, single_core_k=k, base_m=base_m, base_n=base_n,
                       base_k=base_k, step_m=1, step_n=1, step_k_a=1, step_k_b=1,
                       depth_a1=1, depth_b1=1, **extra)


def _random(shape, dtype, rng):
    if np.dtype(dtype).kind == "i":
        return rng.integers(-8, 8, size=shape).astype(dtype)
    return rng.uniform(-2, 2, size=shape).astype(np.float32).astype(dtype)


def _reference(a, b, bias):
    acc = torch.int64 if a.dtype == np.int8 else torch.float64
    out = torch.from_numpy(a.astype(np.float64 if acc == torch.float64 else np.int64)) @ \
        torch.from_numpy(b.astype(np.float64 if acc == torch.float64 else np.int64))
    if bias is not None:
        out = out + torch.from_numpy(bias.astype(np.float64))
    return out.numpy()


def _run_cube(m, n, k, dtype, trans_a, trans_b, with_bias, per_block, base=(32, 48, 32),
              seed=0, iterate_order=0):
    rng = np.random.default_rng(seed)
    a = _random((m, k), dtype, rng)
    b = _random((k, n), dtype, rng)
    out_dtype = np.int32 if np.dtype(dtype) == np.int8 else np.float32
    bias = _random((1, n), out_dtype, rng)
    c = np.zeros((m, n), out_dtype)
    tiling = _tiling(m, n, k, *base, iterate_order=iterate_order)
    a_dev = np.ascontiguousarray(a.T) if trans_a else a
    b_dev = np.ascontiguousarray(b.T) if trans_b else b
    report = _cube_kernel[1](a_dev, b_dev, c, bias, tiling, np.zeros(64, np.uint8), trans_a,
                             trans_b, with_bias, per_block)
    return c, _reference(a, b, bias if with_bias else None), report


@settings(max_examples=12)
@given(m=st.integers(1, 90), n=st.integers(1, 100), k=st.integers(1, 80),
       dtype=st.sampled_from([np.float16, BF16, np.float32]), trans_a=st.booleans(),
       trans_b=st.booleans(), with_bias=st.booleans(), per_block=st.booleans(),
       order=st.sampled_from([0, 1]))
def test_matmul_matches_torch_with_tails(m, n, k, dtype, trans_a, trans_b, with_bias,
                                         per_block, order):
    c, ref, _ = _run_cube(m, n, k, dtype, trans_a, trans_b, with_bias, per_block,
                          iterate_order=order)
    # fp32 accumulation of exactly representable products: only summation order differs.
    np.testing.assert_allclose(c, ref, rtol=1e-4, atol=1e-3 * max(1, k) ** 0.5)


def test_int8_accumulates_in_int32():
    c, ref, _ = _run_cube(37, 50, 70, np.int8, False, True, True, False)
    assert c.dtype == np.int32
    np.testing.assert_array_equal(c, ref)


def test_cube_timing_is_charged_to_the_aic_pipes():
    _, _, report = _run_cube(64, 96, 64, np.float16, False, False, True, False)
    busy = report.cores[0].pipe_busy_us
    assert report.kernel_type == "AIC_ONLY"
    assert {"MTE2", "MTE1", "M", "FIX"} <= set(busy)
    assert report.bytes_moved["L0C->GM"] == 64 * 96 * 4


def test_base_block_too_big_for_l0_is_an_error():
    with pytest.raises(KernelError, match="L0A"):
        _run_cube(64, 64, 64, np.float32, False, False, False, False, base=(256, 16, 256))


# ------------------------------------------------------------------ MIX: C through UB
@asc.jit
def _mix_ub_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                   tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress):
    core = asc.get_block_idx()
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a + core * tiling.single_core_m * tiling.k_a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c + core * tiling.single_core_m * tiling.n)
    pipe = asc.TPipe()
    tile = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=tile, len=tiling.single_core_m * tiling.single_core_n * 4)
    mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype),
                        _mtype(c.dtype, pos=asc.TPosition.VECCALC))
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    ub = tile.get(c.dtype)
    with mm.iterate() as count:  # noqa: F841
        mm.get_tensor_c(ub)  # placed at the block's position in the region tile
    mm.end()
    asc.data_copy(c_gm, ub, tiling.single_core_m * tiling.single_core_n)


@pytest.mark.parametrize("soc_name", SOCS)
def test_mix_get_tensor_c_to_ub(soc, soc_name):
    soc(soc_name)
    rng = np.random.default_rng(1)
    m, n, k = 64, 64, 48
    a = _random((m, k), np.float16, rng)
    b = _random((k, n), np.float16, rng)
    c = np.zeros((m, n), np.float32)
    tiling = _tiling(m, n, k, 16, 32, 16)
    tiling.single_core_m = m // 2
    report = _mix_ub_kernel[1](a, b, c, tiling, np.zeros(1 << 16, np.uint8))
    np.testing.assert_allclose(c, _reference(a, b, None), rtol=1e-4, atol=1e-3)
    assert report.kernel_type == "MIX"
    if soc_name == "Ascend910B1":  # no L0C->UB path: FixPipe to GM, then MTE2 to UB
        assert report.bytes_moved["GM->UB"] == m * n * 4
        assert "L0C->UB" not in report.bytes_moved
    else:
        assert report.bytes_moved["L0C->UB"] == m * n * 4
        assert "GM->UB" not in report.bytes_moved
    aic = report.cores[0]
    assert aic.kind == "AIC" and {"M", "FIX"} <= set(aic.pipe_busy_us)
    assert all("M" not in c.pipe_busy_us for c in report.cores[1:])


# ------------------------------------------------------------------ server mode, block idx
@asc.jit
def _server_kernel(out: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress):
    out_gm = asc.GlobalTensor()
    out_gm.set_global_buffer(out)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(_mtype(asc.float16), _mtype(asc.float16), _mtype(asc.float32))
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    # Only AIVs get here: on the AIC, register_matmul handed it to the Matmul server.
    out_gm.set_value(asc.get_block_idx(), asc.get_block_idx() + 1)
    out_gm.set_value(100 + asc.get_block_idx(), 2 if asc.ascend_is_aiv() else 1)


def test_aic_enters_server_mode_and_aiv_block_idx_spans_twice_the_launch():
    out = np.zeros(128, np.int32)
    report = _server_kernel[3](out, _tiling(16, 16, 16, 16, 16, 16), np.zeros(64, np.uint8))
    assert list(out[:6]) == [1, 2, 3, 4, 5, 6]  # AIV block indices 0..5 for 3 groups
    assert list(out[100:106]) == [2] * 6  # written by AIVs only: no AIC ran past register
    assert [c.kind for c in report.cores] == ["AIC", "AIV", "AIV"] * 3


# ------------------------------------------------------------------ cross-core flags
@asc.jit
def _handoff_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, out: asc.GlobalAddress,
                    tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress):
    """The AIC computes A @ B into a GM workspace and flags it; each AIV copies half out."""
    half = tiling.m * tiling.n // 2
    ws_gm, out_gm = asc.GlobalTensor(), asc.GlobalTensor()
    ws_gm.set_global_buffer(ws)
    out_gm.set_global_buffer(out)
    pipe = asc.TPipe()
    if asc.ascend_is_aic():
        a_gm, b_gm = asc.GlobalTensor(), asc.GlobalTensor()
        a_gm.set_global_buffer(a)
        b_gm.set_global_buffer(b)
        cfg = asc.adv.get_normal_config(enable_mix_dual_master=True)
        mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype), _mtype(ws.dtype),
                            matmul_config=cfg)
        asc.adv.register_matmul(pipe, ws, mm, tiling)
        mm.set_tensor_a(a_gm)
        mm.set_tensor_b(b_gm)
        mm.iterate_all(ws_gm)
        asc.cross_core_set_flag(3, mode_id=2, pipe=asc.PipeID.PIPE_FIX)
    else:
        q = asc.TQue(asc.TPosition.VECIN, 1)
        pipe.init_buffer(que=q, num=1, len=half * 4)
        asc.cross_core_wait_flag(3, mode_id=2)
        t = q.alloc_tensor(ws.dtype)
        part = asc.get_sub_block_idx() * half
        asc.data_copy(t, ws_gm[part:], half)
        q.enque(t)
        t = q.deque(ws.dtype)
        asc.data_copy(out_gm[part:], t, half)
        q.free_tensor(t)


def test_cross_core_flag_hands_data_from_aic_to_aivs():
    rng = np.random.default_rng(2)
    m, n, k = 32, 32, 32
    a = _random((m, k), np.float16, rng)
    b = _random((k, n), np.float16, rng)
    out = np.zeros((m, n), np.float32)
    ws = np.zeros(m * n, np.float32)
    with SESSION.collect(launches=True) as run:
        report = _handoff_kernel[1](a, b, out, _tiling(m, n, k, 32, 32, 32), ws)
    launch = run.launches[-1]
    np.testing.assert_allclose(out, _reference(a, b, None), rtol=1e-4, atol=1e-3)
    assert not [f for f in report.findings if "race" in f.category]
    aic, aiv0, aiv1 = launch.cores
    fix_done = max(i.done for i in aic.instrs if i.pipe == "FIX")
    latency = aic.timing.cross_core_flag_latency_cycles
    for aiv in (aiv0, aiv1):
        first_copy = min(i.start for i in aiv.instrs if i.pipe == "MTE2")
        assert first_copy >= fix_done + latency


@asc.jit(kernel_type=KernelType.MIX_AIC_1_2)
def _never_set_kernel(x: asc.GlobalAddress):
    if asc.ascend_is_aiv():
        asc.cross_core_wait_flag(5, mode_id=2)


def test_wait_on_a_flag_nobody_sets_is_a_deadlock_naming_core_flag_and_line():
    with pytest.raises(DeadlockError) as err:
        _never_set_kernel[1](np.zeros(8, np.float32))
    text = str(err.value)
    line = _never_set_kernel.fn.__code__.co_firstlineno + 3
    assert "cross-core flag 5" in text and "mode 2" in text
    assert "core 1 (AIV" in text and "core 2 (AIV" in text
    assert f"test_matmul.py:{line}" in text


@asc.jit
def _aiv_only_flag(x: asc.GlobalAddress):
    asc.cross_core_set_flag(0, mode_id=0, pipe=asc.PipeID.PIPE_MTE3)


def test_cross_core_flags_need_a_mix_kernel():
    with pytest.raises(KernelError, match="MIX kernel"):
        _aiv_only_flag[1](np.zeros(8, np.float32))


@asc.jit(kernel_type=KernelType.MIX_AIC_1_2)
def _barrier_kernel(out: asc.GlobalAddress):
    out_gm = asc.GlobalTensor()
    out_gm.set_global_buffer(out)
    if asc.ascend_is_aiv():
        # Mode 1: both AIVs of the group set, then each waits for the pair.
        asc.cross_core_set_flag(1, mode_id=1, pipe=asc.PipeID.PIPE_MTE3)
        asc.cross_core_wait_flag(1, mode_id=1)
        asc.sync_all()
        out_gm.set_value(asc.get_block_idx(), asc.get_system_cycle())


def test_mode_1_flags_and_sync_all_are_barriers():
    out = np.zeros(8, np.int32)
    _barrier_kernel[2](out)
    # After sync_all every AIV resumes at the same cycle (the last arrival + latency).
    assert len(set(out[:4].tolist())) == 1 and out[0] > 0


# ------------------------------------------------------------------ examples and tutorials
@pytest.fixture(scope="module")
def examples():
    install_asc_alias()
    sys.path.insert(0, EXAMPLES)
    import matmul_cube_only
    import matmul_leakyrelu
    import matmul_mix

    yield {"mix": matmul_mix, "cube_only": matmul_cube_only, "leakyrelu": matmul_leakyrelu}
    sys.path.remove(EXAMPLES)


@pytest.mark.parametrize("name", ["mix", "cube_only", "leakyrelu"])
@pytest.mark.parametrize("soc_name", SOCS)
def test_examples_pass_their_checks(examples, soc, name, soc_name):
    report = examples[name].run(soc_name)  # raises if the result is wrong
    assert report.soc == soc_name
    assert not [f for f in report.findings]
    assert report.kernel_type == ("AIC_ONLY" if name == "cube_only" else "MIX")


TUTORIAL_SCRIPTS = [os.path.join(base, script)
                    for base in (TUTORIALS, os.path.join(TUTORIALS, "hicann_python_tutorials"))
                    for script in ("03_matmul_mix/matmul_mix.py",
                                   "04_matmul_cube_only/matmul_cube_only.py",
                                   "05_matmul_leakyrelu/matmul_leakyrelu.py")]


@pytest.mark.skipif(not os.path.isdir(TUTORIALS), reason="pyasc tutorials not present")
@pytest.mark.parametrize("script", TUTORIAL_SCRIPTS,
                         ids=[p.split("pyasc_tutorials/")[-1] for p in TUTORIAL_SCRIPTS])
def test_pyasc_tutorials_run_unchanged(soc, script):
    soc("Ascend910B1")
    run_script(script, ["-r", "Model", "-v", "Ascend910B1"])  # asserts inside the script


@asc.jit(matmul_cube_only=True)
def _batch_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                  tiling: asc.adv.TCubeTiling, ws: asc.GlobalAddress,
                  batches: asc.ConstExpr[tuple], use_batch_num: asc.ConstExpr[bool],
                  asynchronous: asc.ConstExpr[bool]):
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype), _mtype(c.dtype))
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    if use_batch_num:
        mm.set_batch_num(batches[0], batches[1])
        mm.iterate_batch(c_gm)
    elif asynchronous:  # with the callback data a Matmul without callbacks keeps unread
        mm.set_self_define_data(a)
        mm.set_user_def_info(a)
        mm.iterate_batch(c_gm, batches[0], batches[1], False, sync=False)
        mm.wait_iterate_batch()
    else:
        mm.iterate_batch(c_gm, batches[0], batches[1], False)
    mm.end()


@pytest.mark.parametrize("batches, use_batch_num, asynchronous",
                         [((3, 3), False, False), ((1, 2), True, False), ((4, 2), False, False),
                          ((2, 2), False, True)])
def test_iterate_batch_computes_every_product_with_broadcast(batches, use_batch_num,
                                                             asynchronous):
    rng = np.random.default_rng(9)
    m, n, k = 32, 48, 64
    batch_a, batch_b = batches
    batch = max(batches)
    a = _random((batch_a, m, k), np.float16, rng)
    b = _random((batch_b, k, n), np.float16, rng)
    c = np.zeros((batch, m, n), np.float32)
    _batch_kernel[1](a, b, c, _tiling(m, n, k, 32, 48, 32), np.zeros(1 << 16, np.uint8),
                     batches, use_batch_num, asynchronous)
    for i in range(batch):
        ai, bi = a[i // (batch // batch_a)], b[i // (batch // batch_b)]
        np.testing.assert_allclose(c[i], _reference(ai, bi, None), rtol=1e-3, atol=1e-3)


def test_iterate_batch_refuses_batches_that_do_not_broadcast():
    a = np.zeros((2, 16, 16), np.float16)
    b = np.zeros((3, 16, 16), np.float16)
    with pytest.raises(KernelError, match="the smaller must divide the larger"):
        _batch_kernel[1](a, b, np.zeros((3, 16, 16), np.float32), _tiling(16, 16, 16, 16, 16, 16),
                         np.zeros(1 << 16, np.uint8), (2, 3), False, False)
