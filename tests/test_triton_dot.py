"""``tl.dot`` and mix mode: results match torch on the cube path (the cube's own loads, L0C
accumulation, FixPipe out or through the workspace), correct kernels are race-free, a missing
``sync_block_wait`` is a race at its line; ``triton.autotune`` / ``heuristics`` choose by
simulated time."""

from __future__ import annotations

import ast
import textwrap

import pytest
import torch

from ascsim.isa import KernelError
from ascsim.session import SESSION
from ascsim.triton import autotune as at
from ascsim.triton import cube_loads, extension
from ascsim.triton import language as tl
from ascsim.triton.jit import jit


def _findings(report) -> list:
    return [f.category for f in report.findings]


@jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr,
           BK: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)
    cols = tl.program_id(1) * BN + tl.arange(0, BN)
    depth = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        ks = k * BK + depth
        a = tl.load(a_ptr + rows[:, None] * K + ks[None, :],
                    mask=(rows[:, None] < M) & (ks[None, :] < K), other=0.0)
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :],
                    mask=(ks[:, None] < K) & (cols[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rows[:, None] * N + cols[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rows[:, None] < M) & (cols[None, :] < N))


@pytest.mark.parametrize("dtype, out, tol", [
    (torch.float16, torch.float16, 1e-2), (torch.bfloat16, torch.float32, 1e-5),
    (torch.float32, torch.float32, 1e-4)])
def test_blocked_matmul_with_tails_matches_torch_on_the_cube(dtype, out, tol):
    torch.manual_seed(0)
    m, n, k = 40, 36, 70
    a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
    c = torch.zeros(m, n, dtype=out)
    report = matmul[(2, 2)](a, b, c, m, n, k, BM=32, BN=32, BK=32)
    torch.testing.assert_close(c.float(), (a.float() @ b.float()).to(out).float(),
                               rtol=tol, atol=tol)
    assert report.kernel_type == "MIX" and report.block_num == 4
    assert _findings(report) == []


@jit
def int8_dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b, out_dtype=tl.int32))


def test_int8_dot_accumulates_exactly_in_int32():
    torch.manual_seed(1)
    a = torch.randint(-128, 128, (16, 64), dtype=torch.int8)
    b = torch.randint(-128, 128, (64, 32), dtype=torch.int8)
    c = torch.zeros(16, 32, dtype=torch.int32)
    report = int8_dot[(1,)](a, b, c, 16, 32, 64)
    assert torch.equal(c, a.int() @ b.int())
    assert _findings(report) == []


@jit
def dot_epilogue(a_ptr, b_ptr, bias_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr,
                 K: tl.constexpr):
    """Operands made by the vector unit and a vector epilogue: both cross the workspace."""
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    acc = tl.dot(a * 2.0, tl.exp(b))
    out = tl.maximum(acc + tl.load(bias_ptr + rn)[None, :], 0.0)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], out)


def test_vector_operands_and_epilogue_go_through_the_workspace_without_races():
    torch.manual_seed(2)
    a, b, bias = torch.randn(32, 16), torch.randn(16, 48) * 0.3, torch.randn(48)
    c = torch.zeros(32, 48)
    with SESSION.collect(launches=True) as run:
        report = dot_epilogue[(1,)](a, b, bias, c, 32, 48, 16)
    torch.testing.assert_close(c, torch.relu((a * 2) @ torch.exp(b) + bias), rtol=1e-4,
                               atol=1e-4)
    assert _findings(report) == []
    ops = {i.op for core in run.launches[-1].cores for i in core.instrs}
    assert {"dot_to_cube", "dot_to_vector", "dot_load_a", "mmad", "fixpipe"} <= ops


@jit
def user_sync(a_ptr, b_ptr, c_ptr, t_ptr, N: tl.constexpr, WAIT: tl.constexpr):
    r = tl.arange(0, N)
    offs = r[:, None] * N + r[None, :]
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(t_ptr + offs, tl.dot(a, b))  # the cube's FixPipe, straight to GM
    extension.sync_block_set("cube", "vector", 5)
    if WAIT:
        extension.sync_block_wait("cube", "vector", 5)
    tl.store(c_ptr + offs, tl.load(t_ptr + offs) + 1.0)  # the vector side reads it back


@pytest.mark.parametrize("wait", [True, False])
def test_a_missing_sync_block_wait_is_a_cross_core_race_at_its_line(wait):
    torch.manual_seed(3)
    a, b = torch.randn(16, 16), torch.randn(16, 16)
    c, t = torch.zeros(16, 16), torch.zeros(16, 16)
    report = user_sync[(1,)](a, b, c, t, 16, wait)
    torch.testing.assert_close(c, a @ b + 1.0, rtol=1e-4, atol=1e-4)
    if wait:
        assert _findings(report) == []
    else:
        race = [f for f in report.findings if f.category == "cross-core-race"]
        assert race, _findings(report)
        lines = {line for f in race for _, line in f.locations}
        source = user_sync.fn.__code__.co_firstlineno
        assert source + 7 in lines or source + 10 in lines  # the store / the reload


@jit
def wait_without_set(a_ptr, N: tl.constexpr):
    extension.sync_block_wait("cube", "vector", 1)
    r = tl.arange(0, N)
    tl.store(a_ptr + r[:, None] * N + r[None, :],
             tl.dot(tl.load(a_ptr + r[:, None] * N + r[None, :]),
                    tl.load(a_ptr + r[:, None] * N + r[None, :])))


def test_a_wait_with_no_set_is_refused_as_a_deadlock():
    with pytest.raises(KernelError, match="deadlock: sync_block_wait"):
        wait_without_set[(1,)](torch.zeros(16, 16), 16)


def test_only_loads_that_feed_dot_alone_are_the_cubes():
    source = textwrap.dedent("""
        def k(p, q):
            a = tl.load(p)
            b = tl.load(q)
            c = tl.load(q)
            tl.compile_hint(a, "dot_pad_only_k")
            x = tl.dot(a, b)
            y = tl.dot(c, b) + c
            d = tl.load(p)
            d_t = tl.trans(d)
            z = tl.dot(a, d_t)
            e = tl.load(q)
            e_t = e.T
            w = tl.dot(e_t, b) + e_t
    """)
    function = ast.parse(source).body[0]
    cube_loads.mark(function)
    marked = {node.targets[0].id for node in ast.walk(function)
              if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and any(k.arg == cube_loads.CUBE_KEYWORD for k in node.value.keywords)}
    assert marked == {"a", "b", "d"}


def test_all_blocks_parallel_folds_a_mix_grid_onto_the_ai_cores(monkeypatch):
    monkeypatch.setenv("TRITON_ALL_BLOCKS_PARALLEL", "1")
    torch.manual_seed(4)
    m = 16 * (SESSION.soc.aic_count + 3)
    a, b = torch.randn(m, 16).half(), torch.randn(16, 16).half()
    c = torch.zeros(m, 16, dtype=torch.float16)
    report = matmul[(m // 16, 1)](a, b, c, m, 16, 16, BM=16, BN=16, BK=16)
    torch.testing.assert_close(c.float(), (a.float() @ b.float()).half().float())
    assert report.block_num == SESSION.soc.aic_count and _findings(report) == []


# ---------------------------------------------------------------------- autotune
@jit
def scale(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2.0, mask=offs < n)


def _grid(meta, n=8192):
    return ((n + meta["BLOCK"] - 1) // meta["BLOCK"],)


def test_autotune_keeps_the_config_with_the_least_simulated_time():
    configs = [at.Config({"BLOCK": 64}), at.Config({"BLOCK": 1024}), at.Config({"BLOCK": 128})]
    tuned = at.autotune(configs, key=["n"])(scale)
    x = torch.randn(8192)
    y = torch.zeros(8192)
    with SESSION.collect() as run:
        tuned[_grid](x, y, 8192)
    torch.testing.assert_close(y, x * 2)
    times = {c.kwargs["BLOCK"]: t for c, t in tuned.configs_timings.items()}
    assert tuned.best_config.kwargs["BLOCK"] == min(times, key=times.get)
    assert len(run.reports) == len(configs) + 1  # one run per config, then the chosen one
    tuned[_grid](x, y, 8192)  # the same key: no tuning again
    assert len(tuned.cache) == 1


def test_autotune_skips_configs_that_overflow_ub():
    configs = [at.Config({"BLOCK": 1 << 17}), at.Config({"BLOCK": 512})]
    tuned = at.autotune(configs, key=["n"])(scale)
    x, y = torch.randn(8192), torch.zeros(8192)
    tuned[_grid](x, y, 8192)
    assert tuned.best_config.kwargs["BLOCK"] == 512
    torch.testing.assert_close(y, x * 2)


def test_heuristics_compute_meta_parameters_from_the_arguments():
    kernel = at.heuristics({"BLOCK": lambda args: 256 if args["n"] > 1000 else 64})(scale)
    x, y = torch.randn(4000), torch.zeros(4000)
    report = kernel[lambda meta: ((4000 + meta["BLOCK"] - 1) // meta["BLOCK"],)](x, y, 4000)
    torch.testing.assert_close(y, x * 2)
    assert report.block_num == 16


@jit
def attention_scores(q_ptr, k_ptr, out_ptr, S: tl.constexpr, D: tl.constexpr):
    """softmax(q @ k^T) with k's block pointer loaded by the cube, transposed."""
    rows, cols = tl.arange(0, S), tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + cols[None, :])
    k_block = tl.make_block_ptr(k_ptr, (S, D), (D, 1), (0, 0), (S, D), (1, 0))
    k = tl.load(k_block, boundary_check=(0, 1))
    s = tl.dot(q, tl.trans(k))
    p = tl.exp(s - tl.max(s, axis=1)[:, None])
    tl.store(out_ptr + rows[:, None] * S + rows[None, :], p / tl.sum(p, axis=1)[:, None])


def test_a_transposed_block_pointer_operand_is_loaded_by_the_cube():
    torch.manual_seed(5)
    q, k = torch.randn(32, 16).half(), torch.randn(32, 16).half()
    out = torch.zeros(32, 32)
    with SESSION.collect(launches=True) as run:
        report = attention_scores[(1,)](q, k, out, 32, 16)
    torch.testing.assert_close(out, torch.softmax(q.float() @ k.float().T, dim=1), rtol=1e-3,
                               atol=1e-4)
    assert _findings(report) == []
    ops = [i.op for core in run.launches[-1].cores for i in core.instrs]
    assert "dot_to_cube" not in ops and ops.count("dot_load_b") == 1


def test_ascsim_tune_runs_a_triton_script_trial():
    """``ascsim tune examples/triton/matmul.py:tune_entry``: the script's ``import triton``
    is served and a trial returns the launch's report."""
    from pathlib import Path

    from ascsim.tune.target import parse_target

    script = Path(__file__).resolve().parent.parent / "examples" / "triton" / "matmul.py"
    target = parse_target(f"{script}:tune_entry")
    report = target(BLOCK_M=64, BLOCK_N=128, BLOCK_K=64)
    assert report.kernel_type == "MIX" and report.device_time_us > 0
    assert _findings(report) == []


@jit
def vector_only_sync(a_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    extension.sync_block_set("cube", "vector", 1)
    tl.store(a_ptr + r, tl.load(a_ptr + r) + 1.0)


def test_the_extensions_block_sync_is_refused_in_a_kernel_without_dot():
    with pytest.raises(Exception, match="sync_block_set.*tl.dot"):
        vector_only_sync[(1,)](torch.zeros(16), 16)
