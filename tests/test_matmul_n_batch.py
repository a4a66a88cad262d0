"""Matmul.iterate_n_batch and get_batch_tensor_c: several batched products in one call.

C goes to the Matmul workspace, single M x single N per matrix, packed product after product;
it is read there directly (sync), through the GlobalTensor get_batch_tensor_c returns, or
copied into UB by get_batch_tensor_c on an AIV (async). Every case is checked against torch.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import ascsim.asc as asc
from ascsim.asc.adv import TCubeTiling
from ascsim.sim.errors import KernelError

M, N, K = 32, 48, 64
#: What the cube-only kernel's get_batch_tensor_c calls returned: (element offset in the
#: workspace, elements), one per batched product.
_RETURNED: list[tuple[int, int]] = []


def _mtype(dtype, layout=asc.LayoutMode.NONE):
    return asc.adv.MatmulType(asc.TPosition.GM, asc.CubeFormat.ND, dtype, False, layout)


def _tiling() -> TCubeTiling:
    return TCubeTiling(used_core_num=1, m=M, n=N, k_a=K, k_b=K, single_core_m=M,
                       single_core_n=N, single_core_k=K, base_m=32, base_n=32, base_k=32,
                       step_m=1, step_n=1, step_k_a=1, step_k_b=1, depth_a1=1, depth_b1=1)


def _operands(loops, batch_a, batch_b, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-2, 2, (loops * batch_a, M, K)).astype(np.float16)
    b = rng.uniform(-2, 2, (loops * batch_b, K, N)).astype(np.float16)
    return a, b


def _expected(a, b, loops, batch_a, batch_b) -> np.ndarray:
    """C of every product, (loops * max(batch_a, batch_b), M, N), the smaller batch of each
    batched product broadcast over the larger."""
    batch = max(batch_a, batch_b)
    out = []
    for loop in range(loops):
        for i in range(batch):
            ai = a[loop * batch_a + i // (batch // batch_a)].astype(np.float64)
            bi = b[loop * batch_b + i // (batch // batch_b)].astype(np.float64)
            out.append((torch.from_numpy(ai) @ torch.from_numpy(bi)).numpy())
    return np.stack(out)


@asc.jit(matmul_cube_only=True)
def _cube_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, ws: asc.GlobalAddress,
                 tiling: asc.adv.TCubeTiling, loops: asc.ConstExpr[int],
                 batches: asc.ConstExpr[tuple], asynchronous: asc.ConstExpr[bool],
                 layout: asc.ConstExpr[int]):
    a_gm, b_gm = asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    pipe = asc.TPipe()
    mm = asc.adv.Matmul(_mtype(a.dtype, layout), _mtype(b.dtype, layout),
                        _mtype(asc.float32, layout))
    asc.adv.register_matmul(pipe, ws, mm, tiling)
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    if asynchronous:
        mm.iterate_n_batch(loops, batches[0], batches[1], False, sync=False,
                           wait_iterate_batch=True)
        for _ in range(loops):
            c = mm.get_batch_tensor_c(batches[0], batches[1], False, False)
            _RETURNED.append((c.offset, c.get_size()))
        mm.wait_iterate_batch()
    else:
        mm.iterate_n_batch(loops, batches[0], batches[1], False)
    mm.end()


@pytest.mark.parametrize("loops, batches", [(2, (2, 2)), (3, (1, 2)), (2, (4, 2))])
def test_iterate_n_batch_sync_writes_every_product_to_the_workspace(loops, batches):
    a, b = _operands(loops, *batches)
    ws = np.zeros(1 << 18, np.uint8)
    _cube_kernel[1](a, b, ws, _tiling(), loops, batches, False, asc.LayoutMode.NORMAL)
    want = _expected(a, b, loops, *batches)
    got = ws.view(np.float32)[:want.size].reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_get_batch_tensor_c_returns_each_product_in_the_workspace():
    loops, batches = 3, (2, 1)
    a, b = _operands(loops, *batches, seed=1)
    ws = np.zeros(1 << 18, np.uint8)
    _RETURNED.clear()
    _cube_kernel[1](a, b, ws, _tiling(), loops, batches, True, asc.LayoutMode.NONE)
    want = _expected(a, b, loops, *batches)
    per_call = 2 * M * N
    assert _RETURNED == [(i * per_call, per_call) for i in range(loops)]
    words = ws.view(np.float32)
    for i, (offset, size) in enumerate(_RETURNED):
        np.testing.assert_allclose(words[offset:offset + size].reshape(2, M, N),
                                   want[2 * i:2 * i + 2], rtol=1e-3, atol=1e-3)


@asc.jit
def _mix_kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
                ws: asc.GlobalAddress, tiling: asc.adv.TCubeTiling, loops: asc.ConstExpr[int],
                batches: asc.ConstExpr[tuple]):
    core = asc.get_block_idx()
    size = max(batches) * tiling.single_core_m * tiling.single_core_n  # one batched product
    a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
    a_gm.set_global_buffer(a)
    b_gm.set_global_buffer(b)
    c_gm.set_global_buffer(c + core * loops * size)
    pipe = asc.TPipe()
    tile = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=tile, len=loops * size * 4)
    mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype), _mtype(c.dtype))
    asc.adv.register_matmul(pipe, ws + core * loops * size * 4, mm, tiling)  # one per AIV
    mm.set_tensor_a(a_gm)
    mm.set_tensor_b(b_gm)
    mm.iterate_n_batch(loops, batches[0], batches[1], False, sync=False)
    ub = tile.get(c.dtype)
    for i in range(loops):
        mm.get_batch_tensor_c(ub[i * size:], batches[0], batches[1], sync=False)
        asc.data_copy(c_gm[i * size:], ub[i * size:], size)
    mm.end()


def test_get_batch_tensor_c_into_ub_on_the_aivs():
    loops, batches = 2, (1, 3)
    a, b = _operands(loops, *batches, seed=2)
    want = _expected(a, b, loops, *batches)
    c = np.zeros((2,) + want.shape, np.float32)  # one copy per AIV
    report = _mix_kernel[1](a, b, c, np.zeros(1 << 19, np.uint8), _tiling(), loops, batches)
    for aiv in range(2):
        np.testing.assert_allclose(c[aiv], want, rtol=1e-3, atol=1e-3)
    assert report.kernel_type == "MIX"
    assert report.bytes_moved["GM->UB"] == 2 * want.size * 4


def test_iterate_n_batch_refuses_batched_layouts():
    a, b = _operands(1, 1, 1)
    with pytest.raises(KernelError, match="NORMAL layout only"):
        _cube_kernel[1](a, b, np.zeros(1 << 16, np.uint8), _tiling(), 1, (1, 1), False,
                        asc.LayoutMode.BSNGD)


def test_get_batch_tensor_c_needs_an_asynchronous_iterate_n_batch():
    a, b = _operands(1, 1, 1)

    @asc.jit(matmul_cube_only=True)
    def kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, ws: asc.GlobalAddress,
               tiling: asc.adv.TCubeTiling):
        pipe = asc.TPipe()
        mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype), _mtype(asc.float32))
        asc.adv.register_matmul(pipe, ws, mm, tiling)
        mm.get_batch_tensor_c(1, 1, False, False)

    with pytest.raises(KernelError, match="no batched product left"):
        kernel[1](a, b, np.zeros(1 << 16, np.uint8), _tiling())


def test_get_batch_tensor_c_refuses_sync():
    a, b = _operands(1, 1, 1)

    @asc.jit(matmul_cube_only=True)
    def kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, ws: asc.GlobalAddress,
               tiling: asc.adv.TCubeTiling):
        pipe = asc.TPipe()
        mm = asc.adv.Matmul(_mtype(a.dtype), _mtype(b.dtype), _mtype(asc.float32))
        asc.adv.register_matmul(pipe, ws, mm, tiling)
        mm.get_batch_tensor_c(1, 1)

    with pytest.raises(KernelError, match="sync=False only"):
        kernel[1](a, b, np.zeros(1 << 16, np.uint8), _tiling())


def test_iterate_batch_refuses_batched_layouts_too():
    """iterate_batch reads its operands as NORMAL matrices one after another; a batched
    layout read that way would be silently wrong, so it is refused like iterate_n_batch."""
    a, b = _operands(1, 2, 2)

    @asc.jit(matmul_cube_only=True)
    def kernel(a: asc.GlobalAddress, b: asc.GlobalAddress, c: asc.GlobalAddress,
               ws: asc.GlobalAddress, tiling: asc.adv.TCubeTiling):
        a_gm, b_gm, c_gm = asc.GlobalTensor(), asc.GlobalTensor(), asc.GlobalTensor()
        a_gm.set_global_buffer(a)
        b_gm.set_global_buffer(b)
        c_gm.set_global_buffer(c)
        pipe = asc.TPipe()
        layout = asc.LayoutMode.SBNGD
        mm = asc.adv.Matmul(_mtype(a.dtype, layout), _mtype(b.dtype, layout),
                            _mtype(asc.float32, layout))
        asc.adv.register_matmul(pipe, ws, mm, tiling)
        mm.set_tensor_a(a_gm)
        mm.set_tensor_b(b_gm)
        mm.iterate_batch(c_gm, 2, 2)
        mm.end()

    c = np.zeros((2, M, N), np.float32)
    with pytest.raises(KernelError, match="iterate_batch: the BSNGD, SBNGD and BNGS1S2 "
                                          "layouts are not supported"):
        kernel[1](a, b, c, np.zeros(1 << 16, np.uint8), _tiling())
