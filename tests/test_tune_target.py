"""Loading a tuning target: its kernels are compiled once, in the loading process."""

from __future__ import annotations

import textwrap

import pytest

from ascsim.sim.errors import KernelError
from ascsim.tune.target import parse_target

SCRIPT = textwrap.dedent("""
    import asc

    @asc.jit
    def twice(x):
        return x + x

    @asc.jit
    def kernel(out: asc.GlobalAddress):
        out_gm = asc.GlobalTensor()
        out_gm.set_global_buffer(out, 64)
        t = asc.LocalTensor(asc.float32, asc.TPosition.VECCALC, 0, 64)
        asc.duplicate(t, float(twice(1)), 64)
        asc.set_flag(asc.HardEvent.V_MTE3, 0)
        asc.wait_flag(asc.HardEvent.V_MTE3, 0)
        asc.data_copy(out_gm, t, 64)

    @asc.jit
    def broken(out: asc.GlobalAddress):
        return 1

    def entry(n: int = 1):
        import numpy as np
        out = np.zeros(64, dtype=np.float32)
        kernel[1](out)
        return out

    def entry_broken(n: int = 1):
        import numpy as np
        broken[1](np.zeros(64, dtype=np.float32))
""")


@pytest.fixture()
def script(tmp_path):
    path = tmp_path / "target_script.py"
    path.write_text(SCRIPT)
    return path


def test_loading_compiles_kernels_and_helpers_once(script):
    target = parse_target(f"{script}:entry")
    namespace = target.resolve().__globals__
    assert set(namespace["kernel"]._compiled) == {True}
    assert set(namespace["twice"]._compiled) == {False}  # a helper: it returns a value
    assert set(namespace["broken"]._compiled) == {False}  # it may be a helper too
    kernel_body = namespace["kernel"]._compiled[True]
    from ascsim.session import SESSION

    with SESSION.collect() as reports:
        assert (target() == 2.0).all()
    assert [list(r.findings) for r in reports.reports] == [[]]
    assert namespace["kernel"]._compiled[True] is kernel_body  # the launch compiled nothing


def test_a_broken_kernel_loads_and_fails_at_its_launch_with_its_line(script):
    target = parse_target(f"{script}:entry_broken")
    with pytest.raises(KernelError, match=r"target_script\.py:\d+: a kernel cannot return"):
        target()
