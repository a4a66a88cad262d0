"""The transposed batch matmul calibration kernel (ascsim/calib/tbmm.py): its product against
torch for both layouts of A, with M, N and K tails, and its refusal of what it does not do."""

from __future__ import annotations

import pytest
import torch

from ascsim.calib import tbmm
from ascsim.calib.kernels import KERNELS
from ascsim.hw import DEFAULT_SOC, get_soc
from ascsim.session import SESSION


@pytest.fixture(autouse=True)
def restore_soc():
    yield
    SESSION.request_soc(DEFAULT_SOC)


@pytest.mark.parametrize("bmnk, perm_x1, dtype", [
    ((4, 32, 128, 512), 1, "bfloat16"),  # the published shape, fewer batches
    ((3, 40, 150, 96), 0, "float16"),  # M, N tails; K shorter than one L1 chunk
    ((2, 200, 130, 320), 1, "bfloat16"),  # two M blocks; a 64-deep last K chunk
])
def test_product_matches_torch(bmnk, perm_x1, dtype):
    SESSION.request_soc("Ascend950PR_9589")
    batch, m, n, k = bmnk
    torch_dtype = tbmm.DTYPES[dtype][0]
    gen = torch.Generator().manual_seed(2)
    a_shape = (m, batch, k) if perm_x1 == 1 else (batch, m, k)
    a = torch.randint(-2, 3, a_shape, generator=gen).to(torch_dtype)
    b = torch.randint(-2, 3, (batch, k, n), generator=gen).to(torch_dtype)
    p = tbmm.plan(bmnk, perm_x1)
    c, report = tbmm.tbmm(a, b, p, dtype)
    a_bmk = a.float().permute(1, 0, 2) if perm_x1 == 1 else a.float()
    expected = torch.einsum("bik,bkj->ibj", a_bmk, b.float()).to(torch_dtype)
    assert c.shape == (m, batch, n)
    assert torch.equal(c, expected)
    assert report.device_time_us > 0
    assert KERNELS["tbmm"].run(bmnk=list(bmnk), perm_x1=perm_x1, dtype=dtype)


def test_wrong_product_is_reported():
    a = torch.ones(2, 16, 32, dtype=torch.bfloat16)
    b = torch.ones(2, 32, 16, dtype=torch.bfloat16)
    c = tbmm.reference(a, b, 0).to(torch.bfloat16)
    tbmm.check_product(c, a, b, 0)
    c[0, 1, 2] = 0
    with pytest.raises(AssertionError, match="wrong product"):
        tbmm.check_product(c, a, b, 0)


@pytest.mark.parametrize("soc, args, message", [
    ("Ascend910B1", ((16, 32, 128, 512), 1), "Ascend 950"),
    ("Ascend950PR_9589", ((16, 32, 128, 512), 2), "perm_x1"),
    ("Ascend950PR_9589", ((16, 32, 128, 500), 1), "fractals"),
    ("Ascend950PR_9589", ((16, 32, 128, 512), 1, (128, 128, 64), 1024), "half"),
    ("Ascend950PR_9589", ((16, 32, 128, 512), 1, (256, 256, 128)), "L0"),
    ("Ascend950PR_9589", ((0, 32, 128, 512), 1), "positive"),
])
def test_bad_problems_are_refused(soc, args, message):
    with pytest.raises(ValueError, match=message):
        tbmm.plan(*args, soc=get_soc(soc))


def test_bad_operands_are_refused():
    SESSION.request_soc("Ascend950PR_9589")
    p = tbmm.plan((2, 16, 16, 32), 0)
    a = torch.ones(2, 16, 32, dtype=torch.bfloat16)
    b = torch.ones(2, 32, 16, dtype=torch.bfloat16)
    with pytest.raises(ValueError, match="do not match"):
        tbmm.tbmm(a.transpose(0, 1), b, p)
    with pytest.raises(ValueError, match="must be bfloat16"):
        tbmm.tbmm(a.half(), b.half(), p)
    with pytest.raises(ValueError, match="dtype 'int8'"):
        tbmm.tbmm(a, b, p, "int8")


def test_calibration_kernel_instructions_carry_their_own_lines(monkeypatch):
    """The calibration kernels live in the package but are kernels: their instructions point at
    their lines (not at "<unknown>", past ascsim's frames)."""
    import inspect

    import ascsim.sim.launch as launch_module

    seen = []
    run = launch_module.Launch._run

    def spy(self, body):
        report = run(self, body)
        seen.extend(ins.loc for core in self.cores for ins in core.instrs)
        return report

    monkeypatch.setattr(launch_module.Launch, "_run", spy)
    with SESSION.using_soc("Ascend950PR_9589"), SESSION.values(False):
        tbmm.run_tbmm((2, 32, 32, 64), 1, (32, 32, 32), 64, "bfloat16")
    source = inspect.getsourcefile(tbmm)
    assert seen and {loc[0] for loc in seen} == {source}
    assert all(loc[1] > 0 for loc in seen)
