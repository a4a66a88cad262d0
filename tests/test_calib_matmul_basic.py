"""The basic-API Matmul calibration kernel (ascsim/calib/matmul_basic.py) on small shapes: its
product against torch on both cube architectures, with the L2 split and with tails, and its
refusal of knobs that do not fit."""

from __future__ import annotations

import pytest
import torch

from ascsim.calib import matmul_basic
from ascsim.calib.kernels import KERNELS, knob_problem
from ascsim.hw import DEFAULT_SOC, get_soc
from ascsim.isa.instr import IndexedCopy
from ascsim.session import SESSION


@pytest.fixture(autouse=True)
def restore_soc():
    yield
    SESSION.request_soc(DEFAULT_SOC)


# (soc, mnk, base, single, step_ka, step_kb, rounds): the published knobs scaled down.
CASES = [
    ("Ascend910B1", (512, 512, 256), (128, 256, 64), (256, 256), 2, 1, 1),
    ("Ascend910B1", (512, 512, 256), (128, 256, 64), (128, 256), 2, 1, 2),
    ("Ascend950PR_9589", (512, 512, 256), (256, 256, 64), (256, 256), 1, 2, 1),
    ("Ascend950PR_9589", (512, 512, 256), (256, 256, 64), (128, 256), 2, 2, 2),
    # Tails: 500 rows / 600 columns leave 16-unaligned base blocks and a narrow last region.
    ("Ascend910B1", (500, 600, 256), (128, 256, 64), (256, 384), 2, 1, 1),
    ("Ascend950PR_9589", (500, 600, 256), (256, 256, 64), (256, 384), 1, 2, 1),
]


@pytest.mark.parametrize("soc, mnk, base, single, step_ka, step_kb, rounds", CASES)
def test_product_matches_torch(soc, mnk, base, single, step_ka, step_kb, rounds):
    SESSION.request_soc(soc)
    m, n, k = mnk
    gen = torch.Generator().manual_seed(1)
    a = torch.randint(-3, 4, (m, k), generator=gen).to(torch.float16)
    b = torch.randint(-3, 4, (n, k), generator=gen).to(torch.float16)
    p = matmul_basic.plan(mnk, base, single, step_ka, step_kb, rounds)
    c, report = matmul_basic.matmul_basic(a, b, p)
    assert torch.equal(c.float(), a.float() @ b.float().T)  # small integers: exact in fp16
    assert report.device_time_us > 0
    assert matmul_basic.run_matmul_basic(mnk, base, single, step_ka, step_kb, rounds)


def test_wrong_product_and_operands_are_refused():
    a = torch.ones(32, 64, dtype=torch.float16)
    b = torch.ones(48, 64, dtype=torch.float16)
    c = (a.float() @ b.float().T).to(torch.float16)
    matmul_basic.check_product(c, a, b)
    c[3, 5] += 1
    with pytest.raises(AssertionError, match="wrong product"):
        matmul_basic.check_product(c, a, b)
    p = matmul_basic.plan((32, 48, 64), (32, 48, 64), (32, 48), 1, 1, soc=get_soc("Ascend910B1"))
    with pytest.raises(ValueError, match="do not match"):
        matmul_basic.matmul_basic(b, a, p)
    with pytest.raises(ValueError, match="float16"):
        matmul_basic.matmul_basic(a.float(), b, p)


def test_published_plans_use_the_published_core_counts():
    a2 = get_soc("Ascend910B1")
    s1 = matmul_basic.plan((8192,) * 3, (128, 256, 64), (2048, 1536), 8, 4, 1, a2)
    s2 = matmul_basic.plan((8192,) * 3, (128, 256, 64), (1024, 1536), 8, 4, 2, a2)
    assert (s1.cores, s1.m_per_round, s1.n_regions) == (24, 4, 6)
    assert (s2.cores, s2.m_per_round, s2.m_regions) == (24, 4, 8)
    p950 = get_soc("Ascend950PR_9589")
    assert matmul_basic.plan((8192,) * 3, (256, 256, 64), (2048, 1024), 4, 4, 1,
                             p950).cores == 32
    assert matmul_basic.plan((8192,) * 3, (256, 256, 64), (1024, 1024), 4, 4, 2,
                             p950).cores == 32


@pytest.mark.parametrize("knobs, message", [
    (dict(mnk=(512, 512, 200), base=(128, 256, 64), single=(256, 256), step_ka=2, step_kb=1),
     "whole chunks"),
    (dict(mnk=(512, 512, 256), base=(128, 250, 64), single=(256, 256), step_ka=2, step_kb=1),
     "16x16 fractals"),
    (dict(mnk=(512, 512, 1024), base=(128, 256, 64), single=(256, 256), step_ka=16,
          step_kb=1), "half of"),
    (dict(mnk=(512, 512, 256), base=(256, 256, 128), single=(256, 256), step_ka=1,
          step_kb=1), "32 KiB half"),
    (dict(mnk=(512, 512, 256), base=(256, 256, 64), single=(256, 256), step_ka=1, step_kb=1),
     "L0C"),
    (dict(mnk=(8192, 8192, 256), base=(128, 256, 64), single=(256, 256), step_ka=1,
          step_kb=1), "AIC cores"),
    (dict(mnk=(768, 512, 256), base=(128, 256, 64), single=(256, 256), step_ka=1, step_kb=1,
          rounds=2), "rounds"),
    (dict(mnk=(512, 512, 256), base=(128, 256, 64), single=(256, 256), step_ka=0, step_kb=1),
     "positive"),
])
def test_bad_knobs_are_refused(knobs, message):
    with pytest.raises(ValueError, match=message):
        matmul_basic.plan(soc=get_soc("Ascend910B1"), **knobs)


def test_registered_with_its_knobs():
    assert "matmul_basic" in KERNELS
    assert knob_problem("matmul_basic", dict(mnk=[1, 1, 1], base=[16, 16, 16],
                                             single=[16, 16], step_ka=1, step_kb=1)) is None
    assert "missing" in knob_problem("matmul_basic", dict(mnk=[1, 1, 1]))


def test_finished_copies_are_kept_without_their_index_arrays():
    """A launch keeps its instruction records until the report; the fractal copies' index
    arrays are dropped from them once executed (an 8192³ pipeline would not fit in memory)."""
    SESSION.request_soc("Ascend910B1")
    p = matmul_basic.plan((128, 256, 128), (128, 256, 64), (128, 256), 1, 1)
    a = torch.ones(128, 128, dtype=torch.float16)
    b = torch.ones(256, 128, dtype=torch.float16)
    with SESSION.collect(launches=True) as run:
        c, _ = matmul_basic.matmul_basic(a, b, p)
    kept = [i.record for launch in run.launches for core in launch.cores for i in core.instrs
            if type(i.record) is IndexedCopy]
    assert len(kept) == 2 * 2 + 4 * 2 + 2  # chunk copies, B's strip loads, A's Load3D
    assert all(r.src_index.size == 0 and r.dst_index is None and r.nbytes > 0 for r in kept)
    assert torch.equal(c.float(), torch.full((128, 256), 128.0))
