"""Tests of the SoC specification table (ascsim.hw)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from ascsim.hw import (
    ALL_PATHS,
    DEFAULT_SOC,
    PATH_PIPE,
    Bandwidths,
    CubeCost,
    SocSpec,
    TimingParams,
    VectorCost,
    get_soc,
    soc_names,
)

# Every member of pyasc's config.Platform, plus the 950 SKUs.
PYASC_PLATFORMS = (
    "Ascend910B1", "Ascend910B2", "Ascend910B2C", "Ascend910B3", "Ascend910B4",
    "Ascend910B4-1", "Ascend910_9362", "Ascend910_9372", "Ascend910_9381", "Ascend910_9382",
    "Ascend910_9391", "Ascend910_9392",
)  # fmt: skip
ASCEND950 = (
    "Ascend950PR_9579", "Ascend950PR_9589", "Ascend950DT_9572", "Ascend950DT_9581",
    "Ascend950DT_9582",
)  # fmt: skip


def test_table_lists_every_platform_in_order() -> None:
    assert soc_names() == PYASC_PLATFORMS + ASCEND950
    assert DEFAULT_SOC == "Ascend910B1"
    assert get_soc().name == DEFAULT_SOC


@pytest.mark.parametrize("name", soc_names())
def test_every_soc_loads_consistently(name: str) -> None:
    spec = get_soc(name)
    assert isinstance(spec, SocSpec)
    assert spec.name == name
    assert spec.aiv_count == 2 * spec.aic_count
    assert spec.paths <= ALL_PATHS
    assert {"GM->UB", "UB->GM", "GM->L1", "L1->L0A", "L1->L0B", "L0C->GM"} <= spec.paths
    # Chip GM bandwidth = ini ddr_rate x AIC count (reference §1.2); the 28-AIC 950PR keeps
    # the 32-AIC die's HBM.
    full_die = 32 if name == "Ascend950PR_9579" else spec.aic_count
    assert spec.gm_bandwidth_bytes_per_cycle == spec.bw.gm_read * full_die
    arch = {2201: ("dav-c220", ("Ascend910B", "Ascend910_93")), 3510: ("dav-c310", ("Ascend950",))}
    ccec, families = arch[spec.npu_arch]
    assert spec.ccec_arch == ccec and spec.family in families


def test_910b1_numbers() -> None:
    spec = get_soc("Ascend910B1")
    assert (spec.aic_count, spec.aiv_count) == (24, 48)
    assert spec.clock_mhz == 1850
    assert spec.ub_bytes == 196608
    assert (spec.l1_bytes, spec.l0a_bytes, spec.l0b_bytes, spec.l0c_bytes) == (
        524288,
        65536,
        65536,
        131072,
    )
    assert spec.fb_bytes == (2048, 1024, 2048, 2048)
    assert spec.npu_arch == 2201
    # 32 B/cycle/core x 24 cores x 1.85 GHz = 1.42 TB/s (reference §1.2).
    assert spec.gm_bandwidth_bytes_per_s == pytest.approx(1.42e12, rel=0.01)


def test_950pr_9579_numbers_and_paths() -> None:
    spec = get_soc("Ascend950PR_9579")
    assert spec.ub_bytes == 253952
    assert spec.l0c_bytes == 262144
    assert (spec.aic_count, spec.clock_mhz, spec.npu_arch) == (28, 1650, 3510)
    assert spec.has_path("L0C->UB")
    assert spec.has_path("UB->L1") and spec.has_path("L1->UB")
    assert not spec.has_path("GM->L0A") and not spec.has_path("L1->GM")
    # Separate vector-core GM rate in the 950 ini.
    assert spec.core_bw("aiv").gm_read == 16 and spec.core_bw("aic").gm_read == 31
    # Same die and HBM as the 32-AIC Ascend950PR_9589: the same chip HBM bandwidth.
    full_die = get_soc("Ascend950PR_9589")
    assert spec.gm_bandwidth_bytes_per_cycle == full_die.gm_bandwidth_bytes_per_cycle


@pytest.mark.parametrize("name", PYASC_PLATFORMS)
def test_910b_family_has_no_l0c_to_ub(name: str) -> None:
    spec = get_soc(name)
    assert not spec.has_path("L0C->UB")
    assert not spec.has_path("UB->L1") and not spec.has_path("L1->UB")
    assert spec.has_path("GM->L0A") and spec.has_path("L1->GM")
    assert spec.core_bw("aiv") is spec.bw


def test_has_path_rejects_unknown_spelling() -> None:
    with pytest.raises(ValueError, match="unknown path"):
        get_soc().has_path("L0C->UBUF")


def test_every_path_has_a_pipe() -> None:
    assert set(PATH_PIPE) == ALL_PATHS


def test_mmad_cycles_formula() -> None:
    cube = get_soc().cube
    # ceil(m/16) * ceil(n/16) * ceil(k/k_step) + 20
    assert cube.mmad_cycles(128, 256, 64, "float16") == 8 * 16 * 4 + 20
    assert cube.mmad_cycles(17, 1, 17, "bfloat16") == 2 * 1 * 2 + 20
    assert cube.mmad_cycles(16, 16, 16, "float32") == 4 + 20
    assert cube.mmad_cycles(16, 16, 64, "int8") == 2 + 20
    assert cube.mmad_cycles(16, 16, 16, np.dtype(np.float16)) == 1 + 20
    assert cube.mmad_cycles(16, 16, 16, "half") == 1 + 20
    with pytest.raises(ValueError, match="float16"):
        cube.mmad_cycles(16, 16, 16, "complex64")


def test_vector_cycles_follow_pypto_formula() -> None:
    cost = VectorCost(bytes_per_cycle=64, latency=27)
    assert cost.cycles(3) == (12, 27)  # ceil(3 * 256 / 64)
    assert cost.cycles(1, bytes_per_repeat=32) == (1, 27)  # at least one cycle per repeat
    assert VectorCost(bytes_per_cycle=256, latency=23, throughput_factor=7).cycles(2) == (14, 23)
    assert cost.cycles(0) == (0, 27)


def test_vector_cost_lookup_falls_back() -> None:
    spec = get_soc()
    assert spec.vector_cost("exp", "float16") is spec.vector["exp.float16"]
    assert spec.vector_cost("exp", "float32") is spec.vector["exp.float32"]
    # No bf16 row: falls back to the bare op.
    assert spec.vector_cost("exp", "bfloat16") is spec.vector["exp"]
    assert spec.vector_cost("add", "float32") is spec.vector["add"]
    assert spec.vector_cost("add", "int32") is spec.vector["add.int32"]
    # Exp/Ln take the same time for half and float [S10]: same elements per cycle.
    half, single = spec.vector_cost("exp", "float16"), spec.vector_cost("exp", "float32")
    assert half.bytes_per_cycle / 2 == single.bytes_per_cycle / 4
    with pytest.raises(ValueError, match="no vector cost for op 'frobnicate'"):
        spec.vector_cost("frobnicate", "float32")


def test_get_soc_spellings() -> None:
    assert get_soc("ascend910b1") is get_soc("Ascend910B1")
    assert get_soc("ASCEND950PR_9579").name == "Ascend950PR_9579"
    assert get_soc("Ascend910B4_1").name == "Ascend910B4-1"  # pyasc enum member spelling

    class Platform:  # stands in for pyasc's config.Platform enum member
        value = "Ascend910_9391"

    assert get_soc(Platform()).name == "Ascend910_9391"


def test_get_soc_error_names_known_socs() -> None:
    with pytest.raises(ValueError) as info:
        get_soc("Ascend310P3")
    message = str(info.value)
    assert "Ascend310P3" in message
    for name in soc_names():
        assert name in message


def test_specs_are_frozen() -> None:
    spec = get_soc()
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.aic_count = 1  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.bw.gm_read = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.timing.launch_overhead_us = 0.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        spec.vector["add"] = VectorCost(bytes_per_cycle=1, latency=1)  # type: ignore[index]
    with pytest.raises(TypeError):
        spec.cube.k_step["float16"] = 1  # type: ignore[index]


def test_specs_hash_and_pickle() -> None:
    spec = get_soc("Ascend950DT_9581")
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert len({get_soc(n) for n in soc_names()}) == len(soc_names())


def test_validation_on_construction() -> None:
    spec = get_soc()
    with pytest.raises(ValueError, match="aiv_count == 2 \\* aic_count"):
        dataclasses.replace(spec, aiv_count=47)
    with pytest.raises(ValueError, match="ub_bytes must be > 0"):
        dataclasses.replace(spec, ub_bytes=0)
    with pytest.raises(ValueError, match="unknown paths"):
        dataclasses.replace(spec, paths=spec.paths | {"UB->L0C"})
    with pytest.raises(ValueError, match="lacks fallback entries"):
        dataclasses.replace(spec, vector={"add": spec.vector["add"]})
    with pytest.raises(ValueError, match="gm_read must be > 0"):
        dataclasses.replace(spec.bw, gm_read=0.0)
    with pytest.raises(ValueError, match="k_step"):
        CubeCost(k_step={"float16": 0}, startup_cycles=20)
    with pytest.raises(ValueError, match="bank_conflict"):
        dataclasses.replace(spec.timing, vector_ub_bank_conflict_factor=0.5)
    assert isinstance(spec.timing, TimingParams)


def test_bandwidth_for_path_caps_gm_side() -> None:
    bw: Bandwidths = get_soc("Ascend910B1").bw
    assert bw.for_path("GM->UB") == 32  # HBM-bound
    assert bw.for_path("GM->UB", l2_hit=True) == 110  # L2 read rate
    assert bw.for_path("UB->GM", l2_hit=True) == 64  # UB egress below the L2 write rate
    assert bw.for_path("L1->L0A") == 256  # pypto's L1 -> L0A rate
    with pytest.raises(ValueError, match="unknown path"):
        bw.for_path("GM->GM")


def test_clock_conversions() -> None:
    spec = get_soc("Ascend910B4")
    assert spec.cycle_ns == pytest.approx(1000 / 1500)
    assert spec.cycles_to_us(1500) == pytest.approx(1.0)
    assert spec.us_to_cycles(2.0) == pytest.approx(3000)
