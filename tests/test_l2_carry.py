"""L2 carried from launch to launch inside one operator call (ascsim/sim/l2_carry.py), and the
DN2NZ / NZ FixPipe transfers the L2 model now sees."""

from __future__ import annotations

import pytest
import torch

import ascsim.asc as asc
from ascsim.hw import DEFAULT_SOC, get_soc
from ascsim.session import SESSION
from ascsim.sim import l2_carry
from ascsim.sim.l2 import LINE_BYTES, L2Cache


@pytest.fixture
def soc_950():
    SESSION.set_soc("Ascend950PR_9579")
    yield get_soc("Ascend950PR_9579")
    SESSION.set_soc(DEFAULT_SOC)


def test_a_carried_buffer_starts_resident_and_ages():
    first = L2Cache(1 << 20, lambda bid: 4096)
    first.write(0, [0], [4096], t=10.0)
    stamps, dirty = first.carry_out(0)
    assert (stamps != L2Cache.NEVER).all() and dirty.all()
    assert first.carry_out(1) is None  # never touched

    second = L2Cache(1 << 20, lambda bid: 4096, prior=lambda bid, n: (stamps, dirty))
    assert second.read(0, [0], [4096], t=0.0, hit_latency=50, miss_latency=320) == (50.0, 1.0)
    # A cache too small for what came in since: the carried lines are gone.
    tiny = L2Cache(4 * LINE_BYTES, lambda bid: 4096, prior=lambda bid, n: (stamps - 4, dirty))
    latency, hit = tiny.read(0, [0], [4096], 0.0, 50, 320)
    assert hit == 0.0 and latency == 320.0


def test_carried_l2_ages_regions_the_next_launch_does_not_touch():
    carry = l2_carry.CarriedL2()
    first = L2Cache(1 << 20, lambda bid: 1024)
    first.write(0, [0], [1024], 0.0)
    carry.after_launch(first, {0: (1000, 1024)})
    second = L2Cache(1 << 20, lambda bid: 1024)
    second.read(0, [0], [1024], 0.0, 50, 320)  # 2 new lines
    carry.after_launch(second, {0: (5000, 1024)})
    old, _ = carry.lines[(1000, 1024)]
    new, _ = carry.lines[(5000, 1024)]
    # Stamps count the lines inserted since: 2 by the first launch's own write, then 2 more.
    assert (old == -4).all() and (new == -2).all()
    assert carry.prior((1000, 1024), 2) is not None and carry.prior((1000, 1024), 3) is None
    assert carry.prior(None, 2) is None


def test_nested_blocks_share_one_carry():
    assert l2_carry.active() is None
    with l2_carry.carried_l2() as outer, l2_carry.carried_l2() as inner:
        assert outer is inner is l2_carry.active()
    assert l2_carry.active() is None


@asc.jit
def _fill(y: asc.GlobalAddress, n: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=n * 4)
    t = buf.get(asc.float32)
    gy = asc.GlobalTensor()
    gy.set_global_buffer(y)
    asc.duplicate(t, 1.0, n)
    asc.pipe_barrier(asc.PipeID.PIPE_ALL)
    asc.data_copy(gy, t, n)


@asc.jit
def _read(x: asc.GlobalAddress, n: asc.ConstExpr[int]):
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=n * 4)
    t = buf.get(asc.float32)
    gx = asc.GlobalTensor()
    gx.set_global_buffer(x)
    asc.data_copy(t, gx, n)


def test_the_second_launch_of_a_call_reads_what_the_first_wrote_from_l2(soc_950):
    n = 16 * 1024
    y = torch.zeros(n, dtype=torch.float32)
    _fill[1](y, n)
    cold = _read[1](y, n)  # outside a call: every launch starts cold
    with l2_carry.carried_l2():
        _fill[1](y, n)
        warm = _read[1](y, n)
    other = torch.zeros(n, dtype=torch.float32)
    with l2_carry.carried_l2():
        _fill[1](y, n)
        elsewhere = _read[1](other, n)  # other memory: nothing carried for it
    assert warm.device_time_us < cold.device_time_us
    assert elsewhere.device_time_us == pytest.approx(cold.device_time_us)
    assert _read[1](y, n).device_time_us == pytest.approx(cold.device_time_us)


def test_conv_reads_and_fixpipe_writes_reach_the_l2_model(soc_950):
    """The 950 conv kernel reads x by DN2NZ and writes its workspace by NZ FixPipe: both are
    resident after the launch, so the activation kernel reads the workspace from L2."""
    from ascsim.ops import fused_conv_tanh

    x = torch.rand(1, 16, 16, 16, dtype=torch.float16)
    w = torch.rand(16, 16, 3, 3, dtype=torch.float16) * 0.1
    b = torch.rand(16, dtype=torch.float16) * 0.1
    with l2_carry.carried_l2() as carry:
        y = fused_conv_tanh(x, w, b, [1, 1], [1, 1, 1, 1], variant="semi")
    resident = {key: int((stamps != L2Cache.NEVER).sum())
                for key, (stamps, _) in carry.lines.items()}
    assert resident[(x.data_ptr(), x.numel() * 2)] > 0
    workspace = [n for (ptr, nbytes), n in resident.items() if nbytes == 16 * 256 * 4]
    assert workspace and workspace[0] * LINE_BYTES >= 16 * 256 * 4
    ref = torch.tanh(torch.nn.functional.conv2d(x.float(), w.float(), b.float(), padding=1))
    assert torch.allclose(y.float(), ref, atol=2e-3)
