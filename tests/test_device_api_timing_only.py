"""The device-side families of docs/asc-device-api.md in timing-only runs: the same simulated
times and findings as the full run, no values computed."""

from __future__ import annotations

import numpy as np
import pytest
import test_aipp
import test_block_sync
import test_copy_forms
import test_debug_check
import test_init_const
import test_sparse_mmad
from kernel_helpers import run_vector

import ascsim.asc as asc
from ascsim.session import SESSION
from ascsim.sim import fractal


def _gatherb():
    src = np.arange(512, dtype=np.float32)
    offsets = (np.arange(8) * 64).astype(np.uint32)
    return run_vector(lambda d, s, o: asc.gatherb(d, s, o, 1, asc.GatherRepeatParams()),
                      np.zeros(64, np.float32), src, offsets)[1]


def _scatter():
    SESSION.set_soc("Ascend950PR_9579")
    try:
        src = np.arange(64, dtype=np.float32)
        offsets = (np.arange(64)[::-1] * 4).astype(np.uint32)
        return run_vector(lambda d, s, o: asc.scatter(d, s, o, 0, 64),
                          np.zeros(64, np.float32), src, offsets)[1]
    finally:
        SESSION.set_soc("Ascend910B1")


def _fused():
    a = np.ones(256, np.float16)
    return run_vector(lambda d, s0, s1: asc.add_relu_cast(d, s0, s1, 256),
                      np.zeros(256, np.int8), a, a)[1]


def _cmp_mask():
    a = np.ones(64, np.float32)

    def body(d, s0, s1):
        asc.compare(s0, s1, asc.CMPMODE.LT, 64, asc.BinaryRepeatParams())
        asc.get_cmp_mask(d)

    return run_vector(body, np.zeros(16, np.uint8), a, a)[1]


def _ordered():
    return test_block_sync._ordered[3](np.zeros(24, np.int32), np.zeros(8, np.int32),
                                       np.zeros(6, np.int32), 2)


def _sparse():
    rng = np.random.default_rng(1)
    a, _, dense, idx = test_sparse_mmad.sparse_case(rng, 16, 16, 64)
    return test_sparse_mmad._sparse_kernel[1](
        fractal.nd_to_zz(a, 32).reshape(-1), fractal.nd_to_zn(dense, 32).reshape(-1),
        test_sparse_mmad.pack(fractal.nd_to_zn(idx, 32).reshape(-1)),
        np.zeros((16, 16), np.int32), (16, 16, 64))


def _aipp():
    params = asc.AippParams(asc.int8)
    load = asc.LoadImageToLocalParams(4, 2, 0, 0, 4)
    out = {}
    return test_aipp._aipp_kernel[1](np.zeros(48, np.uint8), np.zeros(32, np.uint8),
                                     (asc.AippInputFormat.RGB888_U8, params, load), 256,
                                     asc.int8, out)


def _watch():
    return test_debug_check._watched[1](np.zeros(64, np.float32), {"vw": True}, False)


def _fill():
    return test_init_const._fill_kernel[1](asc.TPosition.A1, asc.float16,
                                           asc.InitConstValueParams(2, 2, 1, 1.0), 128, {})


def _slices():
    x = np.zeros(3 * 87, np.float32)
    src = (asc.SliceInfo(16, 70, 7, 3, 87), asc.SliceInfo(0, 2, 1, 1, 3))
    dst = (asc.SliceInfo(0, 47, 0, 3, 48), asc.SliceInfo(0, 1, 0, 1, 2))
    return test_copy_forms._slice_kernel[1](x, x.copy(), 96, (dst, src), (src, dst), 2)


CASES = {"gatherb": _gatherb, "scatter": _scatter, "fused_cast": _fused,
         "cmp_mask": _cmp_mask, "ordered_blocks": _ordered, "sparse_mmad": _sparse,
         "aipp": _aipp, "watch": _watch, "fill": _fill, "slices": _slices}


@pytest.mark.parametrize("name", sorted(CASES))
def test_timing_only_matches_the_full_run(name):
    full = CASES[name]()
    with SESSION.values(False):
        timing = CASES[name]()
    assert timing.device_time_us == pytest.approx(full.device_time_us)
    assert sorted(f.category for f in timing.findings) == \
        sorted(f.category for f in full.findings)
