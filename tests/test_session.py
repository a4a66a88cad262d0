"""Run state: the session (SoC, settings, collectors), launch options, and host arguments."""

from __future__ import annotations

import gc
import pathlib
import subprocess
import sys
import threading
import weakref

import numpy as np
import pytest
import torch

import ascsim.asc as asc
from ascsim.asc.launcher import run_launch
from ascsim.hw import DEFAULT_SOC, get_soc
from ascsim.session import SESSION, Session
from ascsim.sim.checks import KernelChecks
from ascsim.sim.errors import CheckError
from ascsim.sim.host import HostArgument, is_memory
from ascsim.sim.launch import Launch, LaunchConfig, LaunchOptions
from ascsim.sim.memory import DeviceMemory
from ascsim.sim.observer import Observer

ROOT = pathlib.Path(__file__).resolve().parents[1]


@asc.jit
def _fill(x: asc.GlobalAddress, value: float):
    """Writes ``value`` to x[0] only."""
    g = asc.GlobalTensor()
    g.set_global_buffer(x)
    g.set_value(0, value)


@pytest.fixture(autouse=True)
def _settings():
    saved = (SESSION.strict, SESSION.checks, list(SESSION.observer_factories))
    yield
    SESSION.strict, SESSION.checks = saved[:2]
    SESSION.observer_factories[:] = saved[2]
    SESSION.request_soc(DEFAULT_SOC)


class _Recorder(Observer):
    """An observer that records what it saw, and whether the launch had started when it was
    built."""

    built: list = []

    def __init__(self, launch):
        self.cores_when_built = len(launch.cores)
        self.instrs = 0
        self.ended = False
        _Recorder.built.append(self)

    def on_instr(self, core, instr):
        self.instrs += 1

    def on_launch_end(self, launch):
        self.ended = True


# ---------------------------------------------------------------------- the simulated SoC
def test_soc_by_name_or_spec_and_using_soc_restores_it():
    session = Session()
    assert session.soc.name == DEFAULT_SOC
    assert session.set_soc("Ascend910B4").name == "Ascend910B4"
    spec = get_soc("Ascend950PR_9579")
    assert session.set_soc(spec) is spec and session.soc is spec
    with pytest.raises(RuntimeError), session.using_soc("Ascend910B2") as inside:
        assert session.soc is inside and inside.name == "Ascend910B2"
        raise RuntimeError("the block failed")
    assert session.soc is spec
    with session.using_soc(None) as same:
        assert same is spec


def test_request_soc_sets_the_default_for_scripts_and_the_current_soc():
    session = Session()
    session.request_soc("Ascend910B3")
    assert session.requested_soc == "Ascend910B3" and session.soc.name == "Ascend910B3"
    session.set_soc("Ascend910B1")
    assert session.requested_soc == "Ascend910B3"
    with pytest.raises(ValueError, match="unknown SoC .Ascend999."):
        session.request_soc("Ascend999")
    assert session.requested_soc == "Ascend910B3"


def test_soc_changes_from_many_threads_leave_one_consistent_choice():
    session = Session()
    names = ["Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4"]
    seen: list = []

    def worker(name):
        for _ in range(200):
            session.set_soc(name)
            seen.append(session.soc.name)
            session.set_backend("Model")

    threads = [threading.Thread(target=worker, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(seen) <= set(names) and session.soc.name in names
    assert session.backend == "Model"


# ---------------------------------------------------------------------- launch options
def test_launch_options_follow_the_session_settings_and_collectors():
    session = Session()
    assert session.launch_options() == LaunchOptions(waves=session.waves)  # ASCSIM_WAVES
    session.strict, session.checks = True, False
    session.observer_factories.append(_Recorder)
    options = session.launch_options()
    assert (options.strict, options.checks, options.observers, options.keep) == \
        (True, False, (_Recorder,), False)
    with session.collect():
        assert not session.launch_options().keep
        with session.collect(launches=True):
            assert session.launch_options().keep
    assert not session.launch_options().keep


def test_launch_builds_its_observers_before_it_runs():
    soc = get_soc(DEFAULT_SOC)
    config = LaunchConfig(kernel="k", soc=soc, block_num=2)
    bare = Launch(config, DeviceMemory(), LaunchOptions(checks=False))
    assert bare.observers == [] and not bare.findings.strict

    _Recorder.built.clear()
    options = LaunchOptions(strict=True, observers=(_Recorder, lambda launch: None))
    launch = Launch(config, DeviceMemory(), options)
    checks, recorder = launch.observers
    assert isinstance(checks, KernelChecks) and isinstance(recorder, _Recorder)
    assert launch.findings.strict and launch.options is options
    assert recorder.cores_when_built == 0  # built with the launch, not added after it ran

    def body(core):
        core.issue("V", "vadd", 10, 2, ("kernel.py", 1))

    report = launch.run(body)
    assert recorder.instrs == 2 and recorder.ended and len(report.cores) == 2


def test_run_launch_runs_with_the_options_it_is_given():
    x = np.zeros(8, np.float32)

    def body(x):
        g = asc.GlobalTensor()
        g.set_global_buffer(x)
        g.set_value(0, 3.0)

    _Recorder.built.clear()
    SESSION.observer_factories.append(_Recorder)  # the session's own, not used below
    options = LaunchOptions(checks=False, observers=())
    report = run_launch("body", body, {"x": x}, set(), 1, "AIV_ONLY", options)
    assert x[0] == 3.0 and report.kernel == "body" and _Recorder.built == []
    run_launch("body", body, {"x": x}, set(), 1, "AIV_ONLY")  # the session's options
    assert len(_Recorder.built) == 1 and _Recorder.built[0].ended


def test_strict_and_checks_reach_the_launch_through_the_session():
    out = np.zeros(4, np.float32)

    @asc.jit
    def past_the_end(y: asc.GlobalAddress):
        g = asc.GlobalTensor()
        g.set_global_buffer(y)
        g.set_value(6, 1.0)  # 4 elements: index 6 lies in the allocator's padding

    report = past_the_end[1](out)
    assert [f.category for f in report.findings] == ["gm-out-of-bounds"]
    SESSION.strict = True
    with pytest.raises(CheckError, match="gm-out-of-bounds"):
        past_the_end[1](out)
    SESSION.strict, SESSION.checks = False, False  # GM bounds are checked where the access is
    assert [f.category for f in past_the_end[1](out).findings] == ["gm-out-of-bounds"]


def test_the_machine_does_not_import_the_session():
    code = ("import sys, ascsim.sim.launch, ascsim.sim.checks, ascsim.sim.host\n"
            "assert 'ascsim.session' not in sys.modules, 'the machine imported the session'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    for path in (ROOT / "ascsim" / "sim").rglob("*.py"):
        text = path.read_text()
        assert "ascsim.session" not in text and "ascsim import context" not in text, path


# ---------------------------------------------------------------------- bounded history
def test_without_a_collector_only_the_latest_report_is_kept():
    x = np.zeros(8, np.float32)
    refs = [weakref.ref(_fill[1](x, float(i))) for i in range(5)]
    gc.collect()
    alive = [r() for r in refs]
    assert alive[:4] == [None] * 4, "the session kept earlier reports"
    assert alive[4] is SESSION.last_report and x[0] == 4.0


def test_operators_leave_no_report_history_behind():
    rng = np.random.default_rng(0)
    a = torch.from_numpy(rng.standard_normal((128, 64)).astype(np.float16))
    b = torch.from_numpy(rng.standard_normal((64, 128)).astype(np.float16))
    bias = torch.from_numpy(rng.standard_normal(128).astype(np.float32))
    from ascsim.ops import matmul_leaky_relu

    refs = []
    with SESSION.collect() as run:
        for _ in range(5):
            c, info = matmul_leaky_relu(a, b, bias, 0.1, return_report=True)
            refs.extend(weakref.ref(r) for r in info.reports)
    # Inside a collector every launch is kept (the first call also tried both variants).
    assert len(run.reports) > len(refs) == 5 * len(info.reports)
    ref = torch.nn.functional.leaky_relu(a.float() @ b.float() + bias, 0.1)
    torch.testing.assert_close(c, ref, rtol=1e-3, atol=1e-3)
    del run, c, info
    gc.collect()
    # Outside it, the operator's reports live only as long as its caller keeps its info.
    assert [r() for r in refs[:-1]] == [None] * (len(refs) - 1)


def test_collectors_nest_and_close():
    x = np.zeros(8, np.float32)
    with SESSION.collect() as outer:
        first = _fill[1](x, 1.0)
        with SESSION.collect(launches=True) as inner:
            second = _fill[1](x, 2.0)
        third = _fill[1](x, 3.0)
    _fill[1](x, 4.0)
    assert outer.reports == [first, second, third] and outer.launches == []
    assert inner.reports == [second] and len(inner.launches) == 1
    # A kept launch's GM stays readable (a trace or a test may look at it).
    kept = inner.launches[0]
    assert kept.memory.buffers[0].data[:4].view(np.float32)[0] == 2.0


def test_a_failed_launch_reaches_the_collector_with_its_partial_report():
    x = np.zeros(8, np.float32)

    @asc.jit
    def faulty(y: asc.GlobalAddress):
        g = asc.GlobalTensor()
        g.set_global_buffer(y)
        g.set_value(0, 1.0)
        asc.trap()  # the kernel stops here

    with SESSION.collect() as run, pytest.raises(Exception):  # noqa: B017,PT011 - any error
        faulty[1](x)
    assert len(run.reports) == 1 and run.reports[0].failed
    assert SESSION.last_report is run.reports[0]


# ---------------------------------------------------------------------- host arguments
def _touch(host: HostArgument, values: np.ndarray) -> None:
    host.buffer.data[: values.nbytes] = values.view(np.uint8)


def test_numpy_argument_round_trip_and_read_only_arrays():
    memory = DeviceMemory()
    own = np.arange(6, dtype=np.float32)
    host = HostArgument("a", own, memory)
    assert bytes(host.buffer.data[:24]) == own.tobytes()
    _touch(host, np.full(6, 7, np.float32))
    host.copy_back()
    assert (own == 7).all()

    strided = np.arange(12, dtype=np.int16)[::2]  # not contiguous: copied, then written back
    host = HostArgument("s", strided, memory)
    _touch(host, np.full(6, -1, np.int16))
    host.copy_back()
    assert (strided == -1).all()

    frozen = np.arange(4, dtype=np.float32)
    frozen.flags.writeable = False
    host = HostArgument("f", frozen, memory)
    _touch(host, np.zeros(4, np.float32))
    host.copy_back()
    assert (frozen == np.arange(4)).all()


def test_torch_arguments_bool_and_transposed():
    memory = DeviceMemory()
    flags = torch.tensor([True, False, True])
    host = HostArgument("b", flags, memory)
    _touch(host, np.array([0, 1, 0], np.uint8))
    host.copy_back()
    assert flags.tolist() == [False, True, False]

    t = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # a view, not contiguous
    host = HostArgument("t", t, memory)
    assert host.buffer.data[:24].view(np.float32).tolist() == [0, 3, 1, 4, 2, 5]
    _touch(host, np.arange(10, 16, dtype=np.float32))
    host.copy_back()
    assert t.contiguous().reshape(-1).tolist() == [10, 11, 12, 13, 14, 15]


def test_untouched_buffers_and_bytes_are_not_copied_back():
    memory = DeviceMemory()
    x = np.ones(4, np.float32)
    host = HostArgument("x", x, memory)
    x[0] = 5.0  # changed on the host after the copy: the device never looked at it
    host.copy_back()
    assert x[0] == 5.0

    raw = bytearray(b"abcd")
    host = HostArgument("r", raw, memory)
    host.buffer.data[:4] = np.frombuffer(b"wxyz", np.uint8)
    host.copy_back()
    assert raw == bytearray(b"wxyz")
    frozen = b"abcd"
    HostArgument("f", frozen, memory).copy_back()
    assert frozen == b"abcd"


def test_host_arguments_reject_what_is_not_host_memory():
    memory = DeviceMemory()
    assert not is_memory([1.0, 2.0]) and is_memory(b"") and is_memory(torch.zeros(1))
    with pytest.raises(TypeError, match="argument 'xs' of type list"):
        HostArgument("xs", [1.0, 2.0], memory)
    with pytest.raises(TypeError, match="device meta.*CPU tensors"):
        HostArgument("m", torch.zeros(4, device="meta"), memory)
