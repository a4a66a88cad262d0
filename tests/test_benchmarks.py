"""The benchmark scripts run end to end in their quick modes (this checks they work, not timing)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

from ascsim.hw import DEFAULT_SOC
from ascsim.session import SESSION

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"ascsim_benchmarks_{name}",
                                                  BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def restore_soc():
    yield
    SESSION.request_soc(DEFAULT_SOC)


def test_sim_speed_quick(capsys):
    assert _load("sim_speed").main(["--quick"]) == 0
    out = capsys.readouterr().out
    ratios = re.findall(r"^(add fp32|swiglu fp32|matmul\+leakyrelu) .*?(\d+)x$", out, flags=re.M)
    assert [kind for kind, _ in ratios] == ["add fp32", "swiglu fp32", "matmul+leakyrelu"]
    assert all(int(r) >= 0 for _, r in ratios)
    # Every example's kernel launches are listed with their wall time.
    launches = re.findall(r"^(\w+)\s+(\w+)\s+([\d.]+)( +SLOW)?$", out, flags=re.M)
    assert {"vector_add_queues", "swiglu", "matmul_leakyrelu"} <= {e for e, *_ in launches}
    assert "slowest:" in out


def test_check_replay_quick(capsys):
    assert _load("check_replay").main(["--quick"]) == 0
    out = capsys.readouterr().out
    events = re.search(r"(\d+) instructions, (\d+) gate operations", out)
    # SwiGLU (2, 64, 64): 16 tiles of 512 elements, four instructions and twelve queue
    # operations a tile.
    assert events and (int(events[1]), int(events[2])) == (16 * 4, 16 * 12)
    assert re.search(r"replay of every check: [\d.]+ ms .*, 0 findings", out)
    rows = dict(re.findall(r"^(races|uninit|leases|alignment|queues)\s+[\d.]+\s+-?[\d.]+\s+"
                           r"(\d+)$", out, flags=re.M))
    assert set(rows) == {"races", "uninit", "leases", "alignment", "queues"}
    # The replay really drives the checks: without the queue edges, the race check reports
    # the hand-overs as races; with every check on, the correct kernel reports nothing.
    assert int(rows["queues"]) > 0
    assert all(int(rows[name]) == 0 for name in ("races", "uninit", "leases", "alignment"))


def test_calibration_quick(capsys):
    calibration = _load("calibration")
    assert calibration.main(["--quick"]) == 0
    out = capsys.readouterr().out
    # One SwiGLU and one RMSNorm point, each with its simulated and published time.
    points = re.findall(r"^\(2, 64, 256\)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([+-]\d+)%", out,
                        flags=re.M)
    assert len(points) == 2
    published = sorted(float(p[2]) for p in points)
    assert published == [3.56, 4.22]
    assert all(int(cores) == 40 or int(cores) == 32 for cores, *_ in points)
    assert "Scalar" in out and "worst" in out


def test_calibration_error_is_relative_to_published():
    calibration = _load("calibration")
    assert calibration.error(5.0, 4.0) == pytest.approx(0.25)
    assert calibration.error(3.0, 4.0) == pytest.approx(-0.25)


def test_tune_scaling_quick(capsys):
    assert _load("tune_scaling").main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^process pool \([a-z ,0-9]+\), 2 workers +\d+\.\d s +\d+\.\d\dx of "
                     r"1 worker +\d+\.\d s +\d+\.\d\dx of 1 worker +\(8 trials", out, flags=re.M)
    assert "same best everywhere: True" in out


def test_conv_seed_gap_prints_each_kernel_next_to_the_seed_time(capsys):
    """One published case: both kernels of the semi variant with their launch, start-up, span
    and pipe times, and the total against the seed article's 3.4 µs."""
    assert _load("conv_seed_gap").main(["--cases", "5"]) == 0
    out = capsys.readouterr().out
    rows = re.findall(r"^\s+5 (conv_kernel|epilogue_kernel)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)"
                      r"\s+([\d.]+)", out, flags=re.M)
    assert [r[0] for r in rows] == ["conv_kernel", "epilogue_kernel"]
    for _, device, launch, start, span in rows:
        assert float(device) == pytest.approx(float(launch) + float(span), abs=0.02)
        assert 0 < float(start) < float(span)
    total = re.search(r"^\s+5 total\s+([\d.]+)\s+seed\s+3\.4\s+ours/seed\s+([\d.]+)x", out,
                      flags=re.M)
    assert total and float(total.group(2)) == pytest.approx(float(total.group(1)) / 3.4,
                                                            abs=0.01)
    assert "at or below the seed's time on" in out
    # The model's floor of two kernels: 2 x (launch + start-up) plus 12.8 MFLOP at the cube
    # peak; with the 950 head fitted on the seed's cases it is below the seed's 3.4 µs.
    floor = re.search(r"^\s+5 total .* model floor\s+([\d.]+)\s+2-kernel floor\s+([\d.]+)"
                      r"\s+seed design floor\s+([\d.]+)$", out, flags=re.M)
    fixed = sum(float(launch) + float(start) for _, _, launch, start, _ in rows)
    assert floor and fixed < float(floor.group(1)) < 3.4
    # Any two-kernel design adds GM latencies and its least traffic and exp work; the seed's
    # own design its whole tanh chain: more each time, and still below ours.
    model, any_design, seed_design = (float(floor.group(i)) for i in (1, 2, 3))
    assert model < any_design <= seed_design < float(total.group(1))
    assert "below the 2-kernel floor on 0, below the seed design's floor on 0" in out
    assert "the seed's time is below the model's floor on 0" in out


def test_handover_cost_quick(capsys):
    assert _load("handover_cost").main(["--quick"]) == 0
    assert "one hand-over between two simulated cores" in capsys.readouterr().out


def test_catlass_quant_cores_prints_the_last_and_the_median_core(capsys):
    assert _load("catlass_quant_cores").main(["--match", "512x4096x1024-44"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [row[0] for row in rows] == ["catlass-qmm-b1-512x4096x1024-44_full_loadA"]
    sim, pub, last, mte2, median = (float(v) for v in rows[0][1:6])
    assert pub == 31.73 and last <= sim and 0 < mte2 <= last and 0 < median <= last


def test_catlass_quant_published_rates_builds_the_published_a2_costs():
    from ascsim.hw import get_soc

    costs = _load("catlass_quant_published_rates").PublishedA2Costs()
    soc = get_soc("Ascend910B1")  # 1850 MHz
    capped = costs.with_cap(soc)
    assert capped.bw.gm_to_l1 == pytest.approx(80e9 / 1.85e9)
    assert capped.timing == soc.timing and capped.bw.l2_read == soc.bw.l2_read
    rated = costs.with_rates(soc)
    assert rated.bw.gm_to_l1 == capped.bw.gm_to_l1
    assert 256 / rated.timing.gm_to_l1_row_cycles * 1.85 == pytest.approx(60.47)  # GB/s
    assert costs.mix_head_us(soc, soc.aic_count) == pytest.approx(8.0)
    assert costs.mix_head_us(soc, soc.aic_count // 2) == pytest.approx(4.5)
    assert get_soc("Ascend910B1") == soc  # the SoC table is left alone


def test_catlass_quant_published_rates_measures_the_models_own_head():
    from ascsim.hw import get_soc

    soc = get_soc("Ascend910B1")
    rates = _load("catlass_quant_published_rates")
    head = rates.empty_mix_us(rates.without_mix_head(soc))
    assert soc.timing.launch_overhead_us < head < 5.0  # the launch cost plus the core start
    # With its MIX head, the model's empty full-core MIX launch is the guide's 20.5 µs.
    assert rates.empty_mix_us(soc) == pytest.approx(20.5, abs=0.01)


@pytest.mark.slow
def test_catlass_quant_published_rates_prints_the_five_columns(capsys):
    assert _load("catlass_quant_published_rates").main(["--match", "512x4096x1024-44"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cells = [c.split() for c in lines[1].split("|")]
    assert cells[0] == ["512x4096x1024-44_full_loadA", "31.73"]
    bare, mix, model, cap, rates = (float(c[0]) for c in cells[1:6])
    assert bare < mix < model and bare < cap <= rates  # each published cost only adds time
    assert lines[-2].startswith("median sim/pub: no head ")


def test_speed_ab_worker_times_every_case(capsys, tmp_path):
    speed_ab = _load("speed_ab")
    speed_ab.worker(1)
    result = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert Path(result["ascsim"]) == Path(__file__).resolve().parent.parent
    for case in speed_ab.CASES:
        times = result[case]
        assert set(times) == {"wall", "thread", "process", "reference"}
        assert all(value > 0 for value in times.values())
    # Two paths that are not checkouts are refused before anything runs.
    with pytest.raises(SystemExit):
        speed_ab.main([str(tmp_path), str(tmp_path), "--rounds", "1"])
