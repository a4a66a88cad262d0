"""The NPU stand-in's PyPTO-Pro side: torch_npu storage formats (FRACTAL_NZ tensors in fractal
order for kernels, logical order for the host) and torch_npu.profiler's output files."""

from __future__ import annotations

import csv
import glob
import json
import os

import numpy as np
import pytest
import torch

import ascsim.pto.language as pl
from ascsim import npu, npu_profiler
from ascsim.session import SESSION

SOC = "Ascend950PR_9579"


@pytest.fixture(autouse=True)
def _soc():
    with SESSION.using_soc(SOC):
        yield


def test_nz_storage_round_trip_and_layout():
    values = np.arange(20 * 12, dtype=np.float32).reshape(20, 12)
    storage = npu.nz_storage(values)
    # fp32: 8-column fractal blocks of 32 padded rows; element (r, c) at block c // 8.
    assert storage.size == 2 * 32 * 8
    assert storage[(1 * 32 + 3) * 8 + 2] == values[3, 10]
    assert storage[(0 * 32 + 25) * 8] == 0  # padding rows hold zeros
    np.testing.assert_array_equal(npu.nz_logical(storage, values.shape), values)
    batched = np.arange(2 * 16 * 16, dtype=np.float16).reshape(2, 16, 16)
    np.testing.assert_array_equal(npu.nz_logical(npu.nz_storage(batched), batched.shape),
                                  batched)


def test_format_cast_marks_a_copy():
    base = torch.zeros(16, 16)
    nz = npu.npu_format_cast(base, npu.FORMAT_FRACTAL_NZ)
    assert npu.get_npu_format(nz) == 29 and npu.get_npu_format(base) == 2
    assert nz is not base and torch.equal(nz, base)
    with pytest.raises(ValueError, match="not simulated"):
        npu.npu_format_cast(base, 3)


@pl.jit
def read_and_write_nz(t: pl.Tensor[[16, 16], pl.DT_FP32, pl.NZ], out: pl.Tensor[[2], pl.DT_FP32]):
    with pl.section_vector():
        out[0] = t[9]  # storage element 9: row 1, column 1 of the first 8-column block
        t[8 * 16] = -1.0  # storage element 128: row 0, column 8 (the second block)


def test_a_kernel_sees_nz_storage_and_the_host_logical_values():
    logical = torch.arange(256, dtype=torch.float32).reshape(16, 16)
    nz = npu.npu_format_cast(logical, npu.FORMAT_FRACTAL_NZ)
    out = torch.zeros(2)
    read_and_write_nz(nz, out)
    assert out[0].item() == logical[1, 1].item()
    expected = logical.clone()
    expected[0, 8] = -1.0
    torch.testing.assert_close(nz, expected)


@pl.jit
def tiny(out: pl.Tensor[[1], pl.DT_INT32]):
    with pl.section_vector():
        out[0] = 1


def test_profiler_writes_kernel_details_and_a_trace(tmp_path):
    prof_sched = npu_profiler.schedule(wait=1, warmup=0, active=2, repeat=1, skip_first=1)
    out = torch.zeros(1, dtype=torch.int32)
    with npu_profiler.profile(
            activities=[npu_profiler.ProfilerActivity.NPU], schedule=prof_sched,
            on_trace_ready=npu_profiler.tensorboard_trace_handler(str(tmp_path)),
            experimental_config=npu_profiler._ExperimentalConfig(
                profiler_level=npu_profiler.ProfilerLevel.Level1)) as prof:
        for _ in range(6):
            tiny(out)
            prof.step()
    details = glob.glob(os.path.join(tmp_path, "*", "ASCEND_PROFILER_OUTPUT",
                                     "kernel_details.csv"))
    assert len(details) == 1  # one active cycle: steps 2 and 3 recorded, saved once
    with open(details[0], newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["Name"] for r in rows] == ["tiny", "tiny"]
    assert rows[0]["Accelerator Core"] == "AI_VECTOR_CORE" and float(rows[0]["Duration(us)"]) > 0
    trace = os.path.join(os.path.dirname(details[0]), "trace_view.json")
    with open(trace) as fh:
        events = json.load(fh)["traceEvents"]
    assert any(e.get("ph") == "M" and "tiny" in str(e.get("args")) for e in events)


def test_profiler_schedule_actions():
    action = npu_profiler.schedule(wait=1, warmup=1, active=2, repeat=2)
    names = [action(step).name for step in range(9)]
    assert names == ["NONE", "WARMUP", "RECORD", "RECORD_AND_SAVE"] * 2 + ["NONE"]
    with pytest.raises(ValueError):
        npu_profiler.schedule(wait=0, warmup=0, active=0)
