"""Simulator speed-ups must not change what is simulated: times, outputs and findings of a few
fixed kernels are compared with values recorded in ``fixtures/sim_timings.json``.

The fixture records, per launch: the device time, every core's start/end, instruction count and
per-pipe busy time, the bytes per path, the findings (category and count) and a digest of every
GM buffer after the launch (outputs, inputs and workspaces). A legitimate change of the cost model
(new constants, an L2 model, ...) changes these values: then regenerate the fixture with

    .venv/bin/python tests/test_sim_timings.py --update

and say in the commit why the simulated times moved.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import ascsim.asc as asc
from ascsim.demo import load_example
from ascsim.hw import DEFAULT_SOC
from ascsim.session import SESSION

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "sim_timings.json"
REGENERATE = "regenerate with: .venv/bin/python tests/test_sim_timings.py --update"


@asc.jit
def buggy_copy(x: asc.GlobalAddress, y: asc.GlobalAddress, count: asc.ConstExpr[int]):
    """A kernel with findings: a copy that is not a whole number of blocks, a missing flag and
    a read of UB nobody wrote."""
    pipe = asc.TPipe()
    buf = asc.TBuf(asc.TPosition.VECCALC)
    pipe.init_buffer(buf=buf, num=8 * count)
    t = buf.get(asc.float32)
    gx, gy = asc.GlobalTensor(), asc.GlobalTensor()
    gx.set_global_buffer(x)
    gy.set_global_buffer(y)
    asc.data_copy(t, gx, count - 3)
    asc.adds(t[count:], t, 1.0, count)
    asc.data_copy(gy, t[count:], count)


def _buggy(platform):
    SESSION.set_soc(platform)
    x = np.arange(64, dtype=np.float32)
    return buggy_copy[1](x, np.zeros(64, np.float32), 64)


def _example(name: str, **kwargs):
    def run(platform):
        return load_example(name).run(platform, **kwargs)

    return run


# (case name, SoC, runner(platform) -> report). Runners launch with fixed seeds.
CASES = [
    ("vector_add_flags", "Ascend910B1", _example("vector_add_flags")),
    ("vector_add_queues", "Ascend910B1", _example("vector_add_queues")),
    ("gelu", "Ascend910B1", _example("gelu")),
    ("swiglu", "Ascend910B1", _example("swiglu")),
    ("swiglu", "Ascend950PR_9579", _example("swiglu")),
    ("rmsnorm", "Ascend910B1", _example("rmsnorm")),
    ("linear_cube", "Ascend910B1", _example("linear_cube")),
    ("matmul_mix", "Ascend910B1", _example("matmul_mix", m=256, k=256, n=512)),
    ("matmul_cube_only", "Ascend910B1", _example("matmul_cube_only", n=4096)),
    ("matmul_leakyrelu", "Ascend910B1", _example("matmul_leakyrelu")),
    ("matmul_leakyrelu", "Ascend950PR_9579", _example("matmul_leakyrelu", m=512, n=256)),
    ("buggy_copy", "Ascend910B1", _buggy),
]


def _digest(launch) -> str:
    h = hashlib.sha256()
    for buf in launch.memory.buffers:
        h.update(buf.name.encode())
        h.update(np.ascontiguousarray(buf.data).tobytes())
    return h.hexdigest()[:16]


def _record(report, launch) -> dict:
    return {
        "kernel": report.kernel,
        "soc": report.soc,
        "device_time_us": report.device_time_us,
        "cores": [[c.kind, c.start_us, c.end_us, c.instructions,
                   dict(sorted(c.pipe_busy_us.items()))] for c in report.cores],
        "bytes_moved": dict(sorted(report.bytes_moved.items())),
        "findings": sorted([f.category, f.count] for f in report.findings),
        "gm_digest": _digest(launch),
    }


def measure(name: str, platform: str, runner) -> list[dict]:
    """Run one case and return the records of its launches."""
    saved = (SESSION.strict, SESSION.checks)
    SESSION.strict, SESSION.checks = False, True
    torch.manual_seed(0)
    np.random.seed(0)
    try:
        with SESSION.collect(launches=True) as run:
            runner(platform)
        return [_record(r, launch) for r, launch in zip(run.reports, run.launches, strict=True)]
    finally:
        SESSION.strict, SESSION.checks = saved
        SESSION.request_soc(DEFAULT_SOC)
        SESSION.set_soc(DEFAULT_SOC)


def _key(name: str, platform: str) -> str:
    return f"{name}@{platform}"


def _load_fixture() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.mark.parametrize(("name", "platform", "runner"), CASES,
                         ids=[_key(n, p) for n, p, _ in CASES])
def test_simulated_results_unchanged(name, platform, runner):
    expected = _load_fixture().get(_key(name, platform))
    assert expected is not None, f"no recorded values for {_key(name, platform)}; {REGENERATE}"
    got = json.loads(json.dumps(measure(name, platform, runner)))  # same float/str forms
    assert len(got) == len(expected), f"number of launches changed; {REGENERATE}"
    for g, e in zip(got, expected):
        where = f"{_key(name, platform)} kernel {e['kernel']}"
        assert g["findings"] == e["findings"], f"{where}: findings changed; {REGENERATE}"
        assert g["gm_digest"] == e["gm_digest"], f"{where}: GM contents changed; {REGENERATE}"
        assert g["bytes_moved"] == e["bytes_moved"], f"{where}: bytes changed; {REGENERATE}"
        assert g["device_time_us"] == pytest.approx(e["device_time_us"], rel=1e-12), (
            f"{where}: simulated time {g['device_time_us']} us != recorded "
            f"{e['device_time_us']} us; if the cost model changed on purpose, {REGENERATE}")
        assert _cores_equal(g["cores"], e["cores"]), \
            f"{where}: per-core times/busy/instruction counts changed; {REGENERATE}"


def _cores_equal(got: list, expected: list) -> bool:
    if len(got) != len(expected):
        return False
    for g, e in zip(got, expected):
        kind, start, end, count, busy = g
        if [kind, count, sorted(busy)] != [e[0], e[3], sorted(e[4])]:
            return False
        numbers = [start, end, *busy.values()]
        recorded = [e[1], e[2], *(e[4][p] for p in busy)]
        if any(abs(a - b) > 1e-9 * max(1.0, abs(b)) for a, b in zip(numbers, recorded)):
            return False
    return True


def update() -> None:
    """Re-record every case (run after a deliberate cost-model change)."""
    data = {_key(name, platform): measure(name, platform, runner)
            for name, platform, runner in CASES}
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    # One line per case keeps diffs of a re-recording readable.
    lines = [f"{json.dumps(key)}: {json.dumps(value, sort_keys=True)}"
             for key, value in sorted(data.items())]
    FIXTURE.write_text("{\n" + ",\n".join(lines) + "\n}\n")
    print(f"wrote {FIXTURE} ({len(data)} cases)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="re-record the fixture")
    if not parser.parse_args().update:
        parser.error("nothing to do: pass --update to re-record the fixture")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    update()
