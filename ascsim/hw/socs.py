"""The SoC table: one :class:`~ascsim.hw.spec.SocSpec` per supported Ascend SoC.

Each architecture has one template written out in full; every SKU is that template plus the
few numbers the SKU changes (:func:`_sku`). Every number carries its source:

* ``[Sx]`` tags refer to ``shared/reference/ascend-hw.md`` (S7 = CANN 8.1.RC1
  ``platform_config/<SoC>.ini`` for 910B/910_93, S13 = the pypto simulation ini files for
  950, S14 = Huawei's pypto CA cost model, ...).
* ``[H1]`` = Huawei CANN HCCL header ``tbe_vector_reduce.h``, ``OPINFO_INDEX_SOC_STRING_MAP``:
  it runs 910_9391/9392 on the 910B1 kernels, 9381/9382 on 910B2, 9372 on 910B3 and 9362 on
  910B4-1, and calls 9392/9382 "reserved types". Used to place the A3 SKUs that have no ini.
* ``[H2]`` = a third-party vllm-ascend AGENTS.md quoting CANN 9.0 ``Ascend910B4-1.ini``
  (cube_freq=1500, l2_size 96 MB, 20 AIC / 40 AIV, 64 GB HBM). Grade S.

The pypto 950 ini files exist in two versions: the older ``950DT_958x.ini`` (quoted in the
reference, ``ddr_rate=61`` for 950DT_9582) and the newer per-SKU ``Ascend950DT_9582.ini``
(``ddr_rate=80``, AIV ``ddr_rate=40``). The table follows the newer per-SKU files.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from .spec import Bandwidths, CubeCost, SocSpec, TimingParams, VectorCost

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB

DEFAULT_SOC = "Ascend910B1"

# pypto's vector model adds a fixed vecDelay of 15 cycles to each instruction's own delay [S14].
_VEC_DELAY = 15


def _vc(parallel: int, delay: int, thrput: int = 1) -> VectorCost:
    """A row of the pypto ``def.h`` vector table [S14]: parallel B/cycle, delay, thrput."""
    return VectorCost(
        bytes_per_cycle=parallel, latency=delay + _VEC_DELAY, throughput_factor=thrput
    )


# --- Vector costs -------------------------------------------------------------------------
# Huawei pypto CA model `simulation_ca/A2A3/model/def.h` [S14] (a model, not a spec). A bare
# op name is the fallback for dtypes without their own row; for ops whose pypto row depends on
# the dtype the bare name carries the float32 row. Rows marked "assumed" are not in the pypto
# table and borrow the row of the closest listed instruction.
_A2A3_VECTOR: dict[str, VectorCost] = {
    "add": _vc(256, 6),  # [S14] VADD fp16/fp32
    "add.int16": _vc(256, 4),  # [S14] VADD int16
    "add.int32": _vc(256, 4),  # [S14] VADD int32
    "sub": _vc(256, 6),  # [S14] VSUB fp16/fp32
    "sub.int16": _vc(256, 4),  # [S14] VSUB int16
    "sub.int32": _vc(256, 4),  # [S14] VSUB int32
    "adds": _vc(256, 6),  # [S14] VADDS fp16/fp32
    "mul": _vc(256, 7),  # [S14] VMUL fp16/fp32
    "mul.int16": _vc(128, 5),  # [S14] VMUL int16
    "muls": _vc(256, 7),  # [S14] VMULS fp16/fp32
    "max": _vc(256, 4),  # [S14] VMAX
    "min": _vc(256, 4),  # [S14] VMIN
    "maxs": _vc(256, 4),  # [S14] VMAXS
    "mins": _vc(256, 4),  # [S14] VMINS
    "abs": _vc(256, 4),  # [S14] VABS
    "relu": _vc(256, 4),  # assumed = VMAX (relu is max(x, 0))
    "leaky_relu": _vc(256, 7),  # assumed = VMUL (one multiply + select per element)
    "axpy": _vc(256, 7),  # assumed = VMUL (multiply-accumulate)
    "mla": _vc(256, 7),  # assumed = VMUL
    "madd": _vc(256, 7),  # assumed = VMUL
    "exp": _vc(128, 12),  # [S14] VEXP fp32
    "exp.float16": _vc(64, 12),  # [S14] VEXP fp16: same elements/cycle as fp32 [S10]
    "exp.float32": _vc(128, 12),  # [S14] VEXP fp32
    "ln": _vc(128, 14),  # [S14] VLN fp32
    "ln.float16": _vc(64, 14),  # [S14] VLN fp16
    "ln.float32": _vc(128, 14),  # [S14] VLN fp32
    "div": _vc(128, 13),  # [S14] VDIV fp32
    "div.float16": _vc(64, 13),  # [S14] VDIV fp16
    "div.float32": _vc(128, 13),  # [S14] VDIV fp32
    "sqrt": _vc(128, 13),  # [S14] VSQRT fp32
    "sqrt.float16": _vc(64, 13),  # [S14] VSQRT fp16
    "sqrt.float32": _vc(128, 13),  # [S14] VSQRT fp32
    "rsqrt": _vc(256, 5),  # [S14] VRSQRT
    "reciprocal": _vc(256, 5),  # [S14] VREC
    "cast": _vc(256, 4),  # [S14] VCONV
    "duplicate": _vc(256, 4),  # assumed = VCONV (write-only, single-source datapath)
    "copy": _vc(128, 4),  # [S14] VCOPY
    "brcb": _vc(128, 4),  # [S14] VBRCB
    "compare": _vc(256, 4),  # assumed = VMAX (same comparator datapath)
    "select": _vc(256, 6),  # [S14] VSEL fp
    "and": _vc(256, 4),  # assumed = integer VADD
    "or": _vc(256, 4),  # assumed = integer VADD
    "not": _vc(256, 4),  # assumed = integer VADD
    "shl": _vc(256, 4),  # assumed = integer VADD
    "shr": _vc(256, 4),  # assumed = integer VADD
    # Full reductions. pypto notes a x7 read-modify-write for VCADD in "mode 0"; not modelled.
    "reduce": _vc(256, 20),  # [S14] VCADD fp32
    "reduce.float16": _vc(256, 23),  # [S14] VCADD fp16
    "reduce.float32": _vc(256, 20),  # [S14] VCADD fp32
    "reduce_max": _vc(256, 8, thrput=7),  # [S14] VCMAX fp32
    "reduce_max.float16": _vc(256, 9, thrput=7),  # [S14] VCMAX fp16
    "reduce_max.float32": _vc(256, 8, thrput=7),  # [S14] VCMAX fp32
    "reduce_min": _vc(256, 8, thrput=7),  # [S14] VCMIN fp32
    "reduce_min.float16": _vc(256, 9, thrput=7),  # [S14] VCMIN fp16
    "reduce_min.float32": _vc(256, 8, thrput=7),  # [S14] VCMIN fp32
    # VCADD accumulating across repeats into one value (a long row's sum): pypto's "mode 0"
    # read-modify-write note, x7 [S14]. Used by composites that sum rows one at a time.
    "reduce_acc": _vc(256, 20, thrput=7),  # [S14] VCADD fp32, mode 0 (x7)
    "reduce_acc.float16": _vc(256, 23, thrput=7),  # [S14] VCADD fp16, mode 0 (x7)
    # Per-DataBlock reductions.
    "block_reduce": _vc(256, 12),  # [S14] VCGADD fp32
    "block_reduce.float16": _vc(256, 15),  # [S14] VCGADD fp16
    "block_reduce_max": _vc(256, 5),  # [S14] VCGMAX fp32
    "block_reduce_max.float16": _vc(256, 6),  # [S14] VCGMAX fp16
    "block_reduce_min": _vc(256, 5),  # [S14] VCGMIN fp32
    "block_reduce_min.float16": _vc(256, 6),  # [S14] VCGMIN fp16
    "sort": _vc(128, 18),  # [S14] VBITSORT fp16
    "merge_sort": _vc(128, 18),  # [S14] VMRGSORT4 fp16
    "transpose": _vc(128, 7),  # [S14] VNCHWCONV
    "transpose.int8": _vc(128, 7, thrput=7),  # [S14] VNCHWCONV int8 (x7)
    "transpose.uint8": _vc(128, 7, thrput=7),  # [S14] VNCHWCONV int8 (x7)
    "ub_copy": _vc(256, 12),  # [S14] MOV_UB_UB (UB->UB DataCopy on PIPE_V)
}

# --- Cube costs ---------------------------------------------------------------------------
_A2A3_CUBE = CubeCost(
    # [S14] pypto kstep; fp16/bf16 = one 16x16x16 block per cycle [S3, S28]; int8 16x32x16
    # [S3, S7 DtypeMKN]; int4 16x64x16 [S7]; fp32 at 1/4 of fp16 [S10].
    k_step={"float16": 16, "bfloat16": 16, "float32": 4, "int8": 32, "uint8": 32, "int4": 64},
    startup_cycles=20,  # [S14] pypto cubeStateLatency
)

_A5_CUBE = CubeCost(
    # Same fractal rates as 2201 [S3]. The newer 950 ini lists FP8/HiF8 with MKN 16,32,16
    # [S13], i.e. the int8 shape; the rate is assumed equal to int8 (unconfirmed, §7.1).
    # int4 left out: "removed in 3510" per the migration guide [S23] (the ini still lists s4).
    k_step={
        "float16": 16,
        "bfloat16": 16,
        # Not 1/4 of fp16 as on 2201 [S10]: device-times.md cann-bench conv_2d#2 on 950PR
        # (fp32, GEMM 16384x128x1152 = 4.83 GFLOP) takes 42.95 µs for its whole chain of
        # kernels, 112 TFLOPS, above the 108 TFLOPS that k_step 4 allows on 32 AIC at 1.65 GHz.
        # So fp32 runs at least at half the fp16 rate; half is taken.
        "float32": 8,
        "int8": 32,
        "uint8": 32,
        "float8_e4m3fn": 32,
        "float8_e5m2": 32,
        "hifloat8": 32,
        # MXFP4 at twice the FP8 rate: ascend-hw §1 (950PR: 1 PFLOPS FP8/MXFP8, 2 PFLOPS
        # MXFP4 [S33]).
        "float4_e2m1": 64,
        "float4_e1m2": 64,
    },
    startup_cycles=20,  # [S14] pypto cubeStateLatency (A2/A3 model; assumed for 950)
    # The 950's published Matmul API times (device-times.md §A3) busy the M pipe ~92-99 cycles
    # per Mmad beyond its MAC blocks when the Mmads wait for their operands one by one (NORM
    # template: cases 0-3, base 64^3 and 256x256x64 alike) and ~2-21 when they issue back to
    # back (MDL with deep K steps: cases 5-8, the basic-API Matmul): a pipeline drain that
    # back-to-back Mmads overlap. Fitted over the M column of the fit points (case 2 NORM,
    # cases 5 and 7 MDL, the basic-API s2 and the GELU chain's Matmul).
    drain_cycles=75,
)

# --- Model constants ----------------------------------------------------------------------
_A2A3_TIMING = TimingParams(
    # Checked against shared/reference/calibration.md and the published points of
    # ascsim/calib/points.yaml by benchmarks/calibration.py (see docs/cost-model.md); the
    # constants marked "fitted" were fitted on fit points only, never on held-out ones.
    # The scalar unit's cost is split by what it does, because one cost per call cannot fit
    # both long streaming loops and library-heavy kernels (docs/cost-model.md):
    # - a user API call (address arithmetic, parameter set-up, dispatch): fitted by hand on the
    #   fit points whose scalar time is user calls: DataCopy GM->UB s1 on 910B1 (48 cores,
    #   one 128 B copy per loop iteration, 564.8 µs = 20.6 cycles per iteration in total) and
    #   the Add c3/c6 Scalar columns (2.8-3.4 µs for ~85 iterations of ~16 calls after the
    #   kernel start): a few cycles per call, 2 ALU ops [S14];
    scalar_cycles_per_call=4,
    scalar_cycles_per_loop_iter=10,  # guess: counter update + compare + branch
    # - a TQue alloc/enque/deque/free: one flag or pointer update [S14 2-cycle ALU op]; with
    #   20 the Add fit points' Scalar column was 4-6x the published one;
    scalar_cycles_per_queue_op=2,
    # - each further instruction a high-level library routine issues (its own loop, address
    #   arithmetic and per-step parameters): the former per-call value, which the RMSNorm and
    #   SwiGLU fit rows of calibration.md (library-bound) were checked against.
    scalar_cycles_per_library_step=20,
    # - the Matmul high-level API's own bookkeeping, per K step of a base block and per GM->L1
    #   slab load it issues: fitted jointly (exactly: three points, three constants) on the
    #   Scalar columns of the 910B1 fit points of device-times.md §A3 (asc-devkit
    #   matmul_high_performance): case 0 (NORM, one load of A and of B per K step: 449 cycles
    #   per K step in all), case 5 (MDL, stepKa 8 / stepKb 4: 220 cycles per K step) and case 7
    #   (case 5's walk with constant tiling: 0.64 of the bookkeeping is left), after the 4
    #   cycles per issued instruction. The held-out cases 2, 6, 8 and the 950PR cases (same
    #   API, same counts per K step: 459 / 247 / 172 cycles) agree within -2..-23 %.
    matmul_k_step_scalar_cycles=156,
    matmul_l1_load_scalar_cycles=136,
    matmul_const_tiling_scalar_share=0.64,
    scalar_ld_st_cycles=30,  # [S14] scalar LD 6 / ST 4, plus the pipe sync a UB access needs
    mte2_startup_cycles=20,  # [S14] DMA UE latency 9, plus descriptor decode (guess)
    mte3_startup_cycles=20,  # as MTE2
    mte1_startup_cycles=25,  # [S14] load2d extra latency 9 + 16
    fixpipe_startup_cycles=30,  # guess: FixPipe's quant/relu/layout stages; no published figure
    gm_read_latency_cycles=320,  # [S14] pypto CA model DDR read latency 307-347 cycles
    gm_write_latency_cycles=170,  # [S14] pypto CA model DDR write latency 153-203 cycles
    l2_hit_latency_cycles=50,  # [S14] pypto CacheConfig.toml L2 hit latency
    flag_latency_cycles=10,  # guess: set/wait is a hardware flag inside one core
    # guess: hardware inter-core sync (ini hardware_sync_betweencore=1 [S7]) crosses the chip
    # fabric; taken as about half a GM round trip.
    cross_core_flag_latency_cycles=150,
    # Model constant: the device-side fixed cost per launch (block dispatch, the end-of-kernel
    # drain) not spent in any pipe; published Task Durations of whole small AIV kernels are
    # 3.5-4.5 µs on 910B4 (calibration.md); a MIX launch pays more (mix_launch_head_us).
    # Fitted jointly (least squares of the relative error) over the totals of the fit rows of
    # every calibration table (benchmarks/calibration.py --fit: 0.86 µs).
    launch_overhead_us=0.86,
    # CATLASS docs/zh/1_Practice/evaluation/bottleneck_analysis_and_optimization.md: the head
    # of a full-core launch on Atlas A2 (core start, instruction-fetch TLB misses, resource
    # initialisation) is about 20-21 µs,
    # read off an empty kernel's Task Duration, and it shrinks with fewer cores and a lighter
    # kernel type. Whole small AIV-only and AIC-only kernels take 3.5-10 µs on 910B4
    # (calibration.md, the linear points), so the head is the MIX launch's: the published MIX
    # kernels of the 910B sit 8-23 µs above the model without it (CATLASS's int8 quant matmul
    # on the 910B1, all ten points; pyasc's fused infer attention on the 910B4, docs/cost-
    # model.md). 20.5 µs less the model's own empty MIX launch (0.86 µs + 2520 cycles).
    mix_launch_head_us=18.28,
    # Model constant: scalar work before the first API call of the body (kernel arguments
    # loaded from GM, TPipe/TQue set-up, tiling copy-in). calibration.md: the smallest RMSNorm
    # kernel spends 1.91 µs in Scalar with ~20 API calls. Fitted jointly over the Scalar
    # column of the RMSNorm fit rows (--fit: 2520 cycles = 1.68 µs at 1.5 GHz).
    kernel_start_cycles=2520,
    # Model constant: the bubble a PIPE_V barrier adds between dependent vector steps of a
    # high-level API (drain + re-dispatch), on top of the step's latency ([S14] latencies
    # already include vecDelay 15). Fitted jointly over the Vec column of the RMSNorm fit
    # rows (--fit: 16.9 cycles), close to pypto's vecDelay of 15 [S14].
    vector_step_cycles=17,
    burst_gap_cycles=1.0,  # guess: one cycle per extra burst descriptor of a strided copy
    # ND2NZ GM->L1 moves a row in no less than 4 cycles, with no cost per copy (the floor
    # holds over a run of back-to-back copies, ascsim/sim/cost.py copy_floor_wait): the
    # 910B1 fit point device-times.md §A3 case 0 (one core, 64x64 slabs of 128 B rows,
    # L2-resident operands) spends 514 MTE2 cycles per 128 rows (4.0 per row); the held-out
    # case 2 (24 cores, 128 B rows) 1532 cycles per 384 rows (4.0 again), though each core's
    # bytes alone would take 1.2 per row at the L2 port rate. Rows of 512 B and more (the MDL
    # slabs, DataCopy GM->L1 s2) are bound by their bytes instead.
    gm_to_l1_row_cycles=4.0,
    vector_ub_bank_conflict_factor=1.0,  # conflicts are the bank-group rule below
    # [S18] 2201 UB: 16 bank groups x 3 banks x 4 KB of 128 rows of 32 B; "the vector unit reads
    # or writes one 32 B row of each bank group per cycle", a read/read conflict is two reads in
    # one group. A 256 B repeat reads 8 consecutive rows per source: two sources that do not
    # lie 256 B apart modulo 512 B share groups and take two cycles. Checked on device-times.md
    # §A1 Add c5 -> c6 (910B1): Vec 12.85 -> 6.95 us when y moves 256 B off x.
    ub_bank_groups=16,
    ub_bank_row_bytes=32,
    ub_bank_group_reads_per_cycle=1,
    # [S10, S17] GM requests go out in 128/256/512 B pieces, 512 B-aligned ones at full rate;
    # a burst that starts off a 32 B boundary costs one more 512 B request. Checked on the fit
    # point DataCopy GM->UB s4 (2046 B bursts at 0.78x of the aligned rate: 2046/(2046+512)
    # = 0.80).
    gm_misaligned_extra_bytes=512,
    pipe_queue_depth=32,  # [S10] MTE1/MMAD instruction queue depth 32; pypto uses 32 [S14]
)

# No 3510 cost model is published: the A2/A3 constants, except where a 950 point says otherwise.
_A5_TIMING = replace(
    _A2A3_TIMING,
    # DataCopy GM->UB s4 on 950PR (fit point, device-times.md §A2): 2046 B bursts off 32 B
    # boundaries reach 0.98x of the aligned rate, 2046/(2046+32): the 950 pays one 32 B block.
    gm_misaligned_extra_bytes=32,
    # [S14] CATLASS 46_ascend950_matmul_fixpipe_opti: "FixPipe writes whose N is not aligned
    # perform poorly" (the example exists to route them through UB and DataCopyPad). Its
    # table (device-times.md §D): 2048 x 2038 x 256 takes 19.09 µs against 11.97 aligned, two
    # 256 x 256 fp32 blocks per core, ~3.5 µs more per block. A misaligned row written by
    # FixPipe costs 3.5 times its aligned time: fitted on the fit point 2058 x 2038 x 256
    # (20.20 against 20.69 µs); held out, 2048 x 2038 x 256 18.18 against 19.09 and
    # 1226 x 1557 x 399 14.69 against 15.06 (docs/cost-model.md).
    fixpipe_gm_misaligned_row_factor=3.5,
    # The Task Duration head, split as device-times.md breaks it down (cann-samples
    # npu_execution README): per core, the software init on the scalar pipe; per launch, the
    # AI Core scheduler (~150 ns), hardware init (~50 ns) and the ~500 ns from the last core's
    # end to the completion report, on no pipe. cann-bench sums the kernels' Task Durations,
    # so consecutive launches never hide each other's heads.
    # - kernel_start_cycles: fitted jointly over the Scalar column of the 950 fit points
    #   (benchmarks/calibration.py --points ascsim/calib/points.yaml --soc Ascend950 --fit:
    #   810 cycles = 0.49 µs; softmax c1/c5 publish 1.0-1.2 µs of Scalar in all, so the
    #   910B's 2520 cycles cannot hold here).
    kernel_start_cycles=810,
    # - launch_overhead_us: the breakdown's off-core part, 0.15 + 0.05 + 0.5 = 0.70 µs. A free
    #   fit over the totals of the 950 fit points is not identified: alone, each point asks
    #   for -18..+4.8 µs per launch (the softmax points more, the seed's two-launch conv cases
    #   and the one-core GELU less), because their residuals are the kernels' (the unmodelled
    #   vector-function layer, our conv kernels against the seed's), not the head's; both the
    #   l1 and l2 fits hit 0. 0.70 µs lies in that range and keeps the seed's two-launch
    #   cases possible: 2 x (0.70 + 0.49) = 2.4 µs < its 3.4 µs (case 5) and 3.8 µs (case 1),
    #   where the former 1.77 µs + 1.53 µs head (6.6 µs for two launches) could not.
    launch_overhead_us=0.70,
    # No MIX head on the 950: its MIX CATLASS kernels on all 32 AI cores take 6.3-12.6 µs in all
    # (device-times.md §D, matmul_fixpipe_opti), about what the model gives without one.
    mix_launch_head_us=0.0,
    # The ND2NZ copy floor (GM->L1: a cost per copy plus one per row; ascsim/sim/cost.py
    # copy_floor_wait), not the 910B's 4 cycles per row. The device's NORM Matmul API points
    # (device-times.md §A3, 8192^3 fp16, every copy 128 B rows, MTE2 column / copies) spend
    # 378 cycles per copy of 64 rows on one core (case 0, 4.19 M copies) and 713 per copy of
    # 256 rows on 32 cores (case 2): 266 + 1.745 per row through both (fit points; the model
    # without a floor: 234 and ~690). Held out: case 1 (256 rows, one core, 672 published)
    # +11 %, case 3 -2 %, DataCopy GM->L1 s1 (64 rows, HBM-bound, 346 per copy) +8 %.
    gm_to_l1_copy_cycles=266.0,
    gm_to_l1_row_cycles=1.745,
    # The 950's vector functions (RegBase VF; pyasc fuses consecutive element-wise calls into
    # one with vf_fusion): instructions stay in registers and issue out of order, two of a
    # kind per cycle (cann-samples vector_function_getting_started section 7, "two Add
    # instructions can complete in the same cycle"; only a few, such as ReduceSum, cannot).
    # Loads from and stores to UB are instructions of the function too, one per 256 B register.
    vector_function_issue_width=2,
    # [S18] 3510 UB: 8 bank groups of 2 banks, each group with 2 read ports: two sources never
    # conflict by group (only in one bank, or with more than two reads of a group, which is
    # not modelled): no bank-group rule here.
    ub_bank_groups=0,
    # The 3510's SIMT unit [S3]: 4 warp schedulers per AIV, 128 B memory access granularity
    # (and a 128 KB register file, DCache <= 128 KB reusing UB, not modelled). No issue rate
    # is published: one warp instruction per scheduler per cycle is assumed. No warp size is
    # published either (PyPTO Pro's pl.simt.warp_size() is the CCE builtin warpSize): 32, as
    # on other SIMT machines, is assumed.
    simt_warp_size=32,
    simt_warp_schedulers=4,
    simt_access_bytes=128,
)

# --- Per-core bandwidths (bytes/cycle) ----------------------------------------------------
_A2A3_BW = Bandwidths(
    # [S7] ini ddr_read/write_rate: a core's share of HBM; x AIC count = the chip's HBM
    # bandwidth, which bounds a launch's HBM traffic (ascsim/sim/l2.py). A single transfer
    # streams at the L2 port rate (ascsim/sim/cost.py).
    gm_read=32.0,
    gm_write=32.0,  # [S7] ini ddr_write_rate
    l2_read=110.0,  # [S7] ini l2_read_rate
    l2_write=86.0,  # [S7] ini l2_write_rate
    # No ini key for the MTE2 ingest itself: a GM-sourced transfer is fed at most at the L2
    # read rate (pypto models the L1 write side at 256 [S14]).
    gm_to_l1=110.0,  # = l2_read_rate [S7]
    gm_to_ub=110.0,  # = l2_read_rate [S7]
    ub_to_gm=64.0,  # [S7] ini ub_to_ddr_rate (ub_to_l2_rate also 64)
    # L1 -> L0A / L0B: pypto's cost model [S14] (§7.2), half the ini's l1_to_l0_a_rate /
    # l1_to_l0_b_rate [S7] (512 / 256). The published MTE1 columns choose between the two:
    # with the ini's rates the 910B1 Matmul points' MTE1 is 25-49 % below the device's
    # (device-times.md §A3 case 2 2260 µs, model 1301; case 5 2750, model 1395), with
    # pypto's within -11..+0 % on those two (docs/cost-model.md, "After the 910B L1 -> L0
    # rates").
    l1_to_l0a=256.0,
    l1_to_l0b=128.0,
    l1_to_bt=256.0,  # no figure; assumed = the ini's l1_to_l0_b_rate (same MTE1 read port)
    l1_to_fb=256.0,  # no figure; as l1_to_bt
    l1_to_gm=64.0,  # no figure; assumed = ub_to_gm (MTE3 egress to GM)
    l0c_to_gm=128.0,  # [S14] pypto L0C read (FixPipe) 128
    l0c_to_l1=128.0,  # [S14] pypto L0C read (FixPipe) 128
    l0c_to_ub=256.0,  # [S7] ini l0_c_to_ub_rate (the path is not exposed on 2201)
    l1_to_ub=128.0,  # [S7] ini l1_to_ub_rate (path not exposed on 2201)
    ub_to_l1=128.0,  # [S7] ini ub_to_l1_rate (path not exposed on 2201)
    ub_to_ub=256.0,  # [S14] pypto MOV_UB_UB parallel 256
)

_A5_AIC_BW = Bandwidths(
    gm_read=31.0,  # [S13] Ascend950PR_9579.ini [AICoreMemoryRates] ddr_read_rate
    gm_write=31.0,  # [S13] ddr_write_rate
    l2_read=100.0,  # [S13] l2_read_rate
    l2_write=100.0,  # [S13] l2_write_rate
    gm_to_l1=100.0,  # = l2_read_rate [S13] (see the 910B note)
    gm_to_ub=100.0,  # = l2_read_rate [S13]
    ub_to_gm=128.0,  # [S13] ub_to_ddr_rate
    l1_to_l0a=256.0,  # [S13] l1_to_l0_a_rate
    l1_to_l0b=256.0,  # [S13] l1_to_l0_b_rate
    l1_to_bt=256.0,  # no figure; assumed = l1_to_l0b
    l1_to_fb=256.0,  # no figure; assumed = l1_to_l0b
    l1_to_gm=128.0,  # path removed on 3510 [S23]; nominal = ub_to_gm
    l0c_to_gm=128.0,  # [S14] pypto A2/A3 FixPipe L0C read 128, assumed for 950
    l0c_to_l1=128.0,  # [S14] as above
    l0c_to_ub=128.0,  # [S13] l0_c_to_ub_rate
    l1_to_ub=128.0,  # [S13] l1_to_ub_rate
    ub_to_l1=128.0,  # [S13] ub_to_l1_rate
    ub_to_ub=256.0,  # [S14] MOV_UB_UB, assumed for 950
)

_A5_AIV_BW = replace(
    _A5_AIC_BW,
    gm_read=16.0,  # [S13] Ascend950PR_9579.ini [VectorCoreMemoryRates] ddr_read_rate
    gm_write=16.0,  # [S13] ddr_write_rate
    ub_to_gm=40.0,  # [S13] ub_to_ddr_rate (ub_to_l2_rate 42)
)


def _a5_rates(aic_ddr: float, aiv_ddr: float) -> dict[str, Bandwidths]:
    """950 AIC/AIV rates for one SKU: only the per-core GM (ddr) rate differs between SKUs."""
    return {
        "bw": replace(_A5_AIC_BW, gm_read=aic_ddr, gm_write=aic_ddr),
        "aiv_bw": replace(_A5_AIV_BW, gm_read=aiv_ddr, gm_write=aiv_ddr),
    }


# 950 per-core GM rates: AIC and AIV ddr_rate differ between the PR and DT SKUs [S13].
_PR_RATES = _a5_rates(31.0, 16.0)  # [S13] Ascend950PR_9579/9589.ini AIC / AIV ddr_rate
_DT_RATES = _a5_rates(80.0, 40.0)  # [S13] Ascend950DT_9572/9581/9582.ini AIC / AIV ddr_rate


# --- Data paths (reference §2.3) ---------------------------------------------------------
# [S1, S2, S7] 2201: no L0C->UB and no UB<->L1 (the intrinsic map has no ub2l1/l12ub).
_C220_PATHS = frozenset({
    "GM->L1", "GM->UB", "UB->GM", "GM->L0A", "GM->L0B", "L1->L0A", "L1->L0B", "L1->BT",
    "L1->FB", "L0C->GM", "L0C->L1", "L1->GM", "UB->UB",
})  # fmt: skip
# [S3, S23, S24] 3510 adds L0C->UB (FixPipe) and UB<->L1; removes GM->L0A/B and L1->GM.
# The MX scale loads L1->L0AMX / L1->L0BMX: PyPTO Pro move.md (Mat -> ScaleLeft/ScaleRight, MTE1).
_C310_PATHS = frozenset({
    "GM->L1", "GM->UB", "UB->GM", "L1->L0A", "L1->L0B", "L1->BT", "L1->FB", "L0C->GM",
    "L0C->L1", "L0C->UB", "UB->L1", "L1->UB", "UB->UB", "L1->L0AMX", "L1->L0BMX",
})  # fmt: skip

# --- Architecture templates ---------------------------------------------------------------
# Chip-level numbers of a template (name, core count, clock, HBM, L2, chip GM bandwidth) are
# placeholders copied from the first SKU; _sku() overwrites all of them.

_DAV_C220 = SocSpec(
    name="Ascend910B1",
    family="Ascend910B",
    npu_arch=2201,  # [S2] NPU architecture version 2201
    ccec_arch="dav-c220",  # [S7] ini CCEC_AIC_version=dav-c220-cube / dav-c220-vec
    aic_count=24,  # placeholder (see _sku)
    aiv_count=48,  # placeholder
    clock_mhz=1850.0,  # placeholder
    hbm_bytes=64 * GiB,  # placeholder
    l2_bytes=192 * MiB,  # placeholder
    gm_bandwidth_bytes_per_cycle=32.0 * 24,  # placeholder
    ub_bytes=196608,  # [S7] ini ub_size (192 KB)
    l1_bytes=524288,  # [S7] ini l1_size
    l0a_bytes=65536,  # [S7] ini l0_a_size
    l0b_bytes=65536,  # [S7] ini l0_b_size
    l0c_bytes=131072,  # [S7] ini l0_c_size; doc "L0C Buffer容量128KB" [S10]
    bt_bytes=1024,  # [S7] ini bt_size; doc "BiasTable Buffer为1KB" [S10]
    fb_bytes=(2048, 1024, 2048, 2048),  # [S7] ini fb0_size..fb3_size
    ub_bank_groups=16,  # [S18] 16 bank groups
    ub_banks_per_group=3,  # [S18] x 3 banks (the ini ubbank_* fields disagree with the doc)
    ub_bank_bytes=4096,  # [S18] 4 KB per bank (128 rows x 32 B)
    paths=_C220_PATHS,
    alignment={
        "UB": 32,  # [S2, S11] one DataBlock
        "L1": 32,  # [S11]
        "L0A": 512,  # [S11] one fractal
        "L0B": 512,  # [S11] one fractal
        "L0C": 64,  # [S11]
        "BT": 64,  # [S11]
        "FB": 128,  # [S10] 2201 hardware-constraint page (the arch page says 64 [S2])
        "GM": 1,  # [S11] no requirement (512 B recommended, gm_recommended_alignment)
        "L0AMX": 32,  # no MX scale buffers on 2201 (l0a_mx_bytes 0); the 950's figure
        "L0BMX": 32,
    },
    gm_recommended_alignment=512,  # [S17] "GM地址尽量512B对齐"
    bw=_A2A3_BW,
    vector=_A2A3_VECTOR,
    cube=_A2A3_CUBE,
    timing=_A2A3_TIMING,
    cube_vector_split=True,  # [S7] ini cube_vector_combine=split; 1 AIC : 2 AIV [S2]
    event_ids=8,  # [S12] eventID 0-7 (6, 7 reserved)
    cross_core_flag_ids=16,  # [S42] API page 0-15 (arch pages say 0-10)
    data_block_bytes=32,  # [S6]
    vector_repeat_bytes=256,  # [S6] 8 DataBlocks x 32 B
    max_repeat_times=255,  # [S6] repeatTime is uint8
)

# The 950's register-level vector functions (PyPTO Pro ``@pl.vector_function``, RegBase VF).
# Register file: PyPTO Pro vf.reg_tensor page: "the RegTensor count is limited to 32; registers
# beyond it are written to a reserved 8 KB UB area"; vf.create_addr_reg page: "at most 8
# AddrReg"; vf.store / vf.load pages: "at most 4 UnalignRegForStore". No page states a MaskReg
# count; not limited here.
_VF_REGISTERS = {"vector": 32, "address": 8, "unaligned": 4}
# No per-instruction cycle figure is published for the VF instructions: each is priced as one
# 256 B repeat of the tile instruction of the same kind (the row of the vector table named
# here), issued vector_function_issue_width at a time.
_VF_OP_CLASSES = {
    "add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min",
    "abs": "abs", "neg": "muls", "relu": "relu", "sqrt": "sqrt", "exp": "exp", "ln": "ln",
    "log2": "ln", "log10": "ln", "adds": "adds", "muls": "muls", "maxs": "maxs",
    "mins": "mins", "axpy": "axpy", "leaky_relu": "leaky_relu", "prelu": "leaky_relu",
    "mull": "mul", "addc": "add", "subc": "sub", "abs_sub": "sub", "exp_sub": "exp",
    "mul_add_dst": "mla", "mul_dst_add": "madd", "muls_cast": "muls", "and": "and",
    "or": "or", "xor": "and", "not": "not", "shl": "shl", "shr": "shr", "select": "select",
    "reduce_sum": "reduce", "reduce_max": "reduce_max", "reduce_min": "reduce_min",
    "pair_reduce_sum": "reduce", "astype": "cast", "truncate": "cast", "pack": "cast",
    "unpack": "cast", "interleave": "copy", "de_interleave": "copy", "arange": "duplicate",
    "histograms": "compare", "full": "duplicate", "move": "copy", "compare": "compare",
    "squeeze": "copy", "unsqueeze": "copy", "gather": "copy", "scatter": "copy",
    "load": "copy", "store": "copy", "mask": "compare", "mem_bar": "copy",
}

_DAV_C310 = replace(
    _DAV_C220,
    name="Ascend950PR_9579",
    family="Ascend950",
    npu_arch=3510,  # [S3] NPU architecture version 3510
    l0a_layout="NZ",  # [S3] ascend-hw §2.2: Mmad reads L0A in NZ on 3510
    l1_to_l0a_transpose=False,  # [S3] ascend-hw §2.3: the L1->L0A transpose was removed
    mte2_dn2nz=True,  # [S3] DN2NZ on the GM->L1 path
    load2d_v2=True,  # Ascend C LoadData page: LoadData2DParamsV2 on the 950 only
    vector_scatter=True,  # Ascend C Scatter page: the 950's vector unit only
    fill_l1_only=True,  # Ascend C Fill (InitConstValue) page: L1 only on the 950
    aipp_destination="UB",  # Ascend C LoadImageToLocal page: UB on the 950, L1 on 910B
    ub_access_watch=False,  # Ascend C CheckLocalMemoryIA page: not on the 950
    vf_registers=_VF_REGISTERS,
    vf_op_classes=_VF_OP_CLASSES,
    # CANN 9.0 Ascend C API page GetSsbufBaseAddr: 3 KB, shared 1:2 by AIC and AIVs in MIX
    # mode, 1 KB per core otherwise.
    ssbuf_bytes=3 * KiB,
    ccec_arch="dav-c310",  # [S13] ini CCEC_AIC_version=dav-c310-cube / dav-c310-vec
    ub_bytes=253952,  # [S13] ini ub_size (248 KB usable of 256 KB physical [S3], §7.6)
    l1_bytes=524288,  # [S13] ini l1_size
    l0a_bytes=65536,  # [S13] ini l0_a_size
    l0b_bytes=65536,  # [S13] ini l0_b_size
    l0c_bytes=262144,  # [S13] ini l0_c_size
    bt_bytes=4096,  # [S13] ini bt_size
    fb_bytes=(4096, 2048),  # [S13] ini fb0_size, fb1_size (fb2/fb3 are 0)
    ub_bank_groups=8,  # [S18] 8 groups
    ub_banks_per_group=2,  # [S18] x 2 banks
    ub_bank_bytes=16384,  # [S18] 16 KB per bank (512 rows x 32 B)
    paths=_C310_PATHS,
    alignment={
        "UB": 32,  # [S11]
        "L1": 32,  # [S11]
        "L0A": 512,  # [S11]
        "L0B": 512,  # [S11]
        "L0C": 64,  # [S11]
        "BT": 64,  # [S11]
        "FB": 64,  # arch-page value [S2]; the 128 B figure is from a 2201-only page [S10]
        "GM": 1,  # [S11]
        # PyPTO Pro TileType.md / MemorySpace.md: ScaleLeft / ScaleRight tiles 32 B aligned
        "L0AMX": 32,
        "L0BMX": 32,
    },
    # PyPTO Pro MemorySpace.md: the MX scale buffers beside L0A / L0B have 4 KB each, not
    # carved from L0A / L0B's 64 KB; mad_mx reads a scale at its data's address >> 4.
    l0a_mx_bytes=4096,
    l0b_mx_bytes=4096,
    **_PR_RATES,
    vector=_A2A3_VECTOR,  # no 3510 table published: assumed = A2/A3 (256 B/cycle [S3])
    cube=_A5_CUBE,
    timing=_A5_TIMING,
)


def _sku(
    template: SocSpec, name: str, *, aic: int, mhz: float, hbm: int, l2: int,
    hbm_aic: int | None = None, **changes: Any
) -> SocSpec:
    """One SKU: ``template`` with its AIC count, clock (MHz), HBM and L2 bytes.

    AIV count follows from the 1:2 split [S1, S2, S3]. Whole-chip GM bandwidth is the ini
    ``ddr_rate`` times the AIC count (§1.2): 1.42 TB/s on 910B1 against the commonly quoted
    1.6 TB/s. Kept because it is Huawei's own model input, and because the largest
    bandwidth-bound calibration point on 910B4 (RMSNorm 2x2048x1024 fp32: 32 MiB of traffic
    in 34.4 µs, ~0.97 TB/s) is within a few percent of the 0.96 TB/s it gives there, whereas
    1.6 TB/s would predict ~40 % less time. ``hbm_aic``: the AIC count of the full die when
    the SKU enables fewer cores on the same HBM (default ``aic``).
    """
    spec = replace(
        template,
        name=name,
        aic_count=aic,
        aiv_count=2 * aic,
        clock_mhz=float(mhz),
        hbm_bytes=hbm,
        l2_bytes=l2,
        **changes,
    )
    return replace(spec, gm_bandwidth_bytes_per_cycle=spec.bw.gm_read * (hbm_aic or aic))


_A3 = replace(_DAV_C220, family="Ascend910_93")  # A3 die = 910B-class die [S15], same ini rates

_TABLE: tuple[SocSpec, ...] = (
    # --- Ascend910B (A2): [S7] <SoC>.ini ai_core_cnt, cube_freq, memory_size, l2_size
    # [S7] Ascend910B1.ini
    _sku(_DAV_C220, "Ascend910B1", aic=24, mhz=1850, hbm=64 * GiB, l2=192 * MiB),
    # [S7] Ascend910B2.ini
    _sku(_DAV_C220, "Ascend910B2", aic=24, mhz=1800, hbm=64 * GiB, l2=192 * MiB),
    # [S7] Ascend910B2C.ini; its memory_size is empty: HBM assumed = Ascend910B2
    _sku(_DAV_C220, "Ascend910B2C", aic=24, mhz=1800, hbm=64 * GiB, l2=192 * MiB),
    # [S7] Ascend910B3.ini
    _sku(_DAV_C220, "Ascend910B3", aic=20, mhz=1800, hbm=64 * GiB, l2=192 * MiB),
    # [S7] Ascend910B4.ini
    _sku(_DAV_C220, "Ascend910B4", aic=20, mhz=1500, hbm=32 * GiB, l2=96 * MiB),
    # Not in the ini set we have: assumed = Ascend910B4 (20 AIC, 1500 MHz, 96 MiB L2, as [H2]
    # quotes its ini) but with 64 GB HBM [H2].
    _sku(_DAV_C220, "Ascend910B4-1", aic=20, mhz=1500, hbm=64 * GiB, l2=96 * MiB),
    # --- Ascend910_93 (A3): one 910B-class die per device [S15]
    # [S7] Ascend910_9362.ini
    _sku(_A3, "Ascend910_9362", aic=20, mhz=1500, hbm=32 * GiB, l2=168 * MiB),
    # Not in the ini set we have: [H1] runs it on the 910B3 kernels; assumed = 910B3 numbers.
    _sku(_A3, "Ascend910_9372", aic=20, mhz=1800, hbm=64 * GiB, l2=192 * MiB),
    # Not in the ini set we have: [H1] runs it on the 910B2 kernels; assumed = 910B2 numbers.
    _sku(_A3, "Ascend910_9381", aic=24, mhz=1800, hbm=64 * GiB, l2=192 * MiB),
    # Not in the ini set we have: assumed = Ascend910_9381 ([H1]: same kernels, "reserved").
    _sku(_A3, "Ascend910_9382", aic=24, mhz=1800, hbm=64 * GiB, l2=192 * MiB),
    # [S7] Ascend910_9391.ini (npu-smi reports 25 AI Cores on an A3 die [S30]; the ini's 24
    # is what kernels may use)
    _sku(_A3, "Ascend910_9391", aic=24, mhz=1850, hbm=64 * GiB, l2=192 * MiB),
    # Not in the ini set we have: assumed = Ascend910_9391 ([H1]: same kernels, "reserved").
    _sku(_A3, "Ascend910_9392", aic=24, mhz=1850, hbm=64 * GiB, l2=192 * MiB),
    # --- Ascend950 (A5): [S13] <SoC>.ini ai_core_cnt, cube_freq, memory_size, l2_size
    # [S13] Ascend950PR_9579.ini. Its HBM is the 9589's (same die and 128 GB HBM, 4 AICs
    # fewer): chip bandwidth = ddr_rate x 32 = 1.64 TB/s, not x 28 = 1.43 TB/s, which
    # device-times.md §B (cann-samples cv_datapath, 28 AIC) contradicts: its ReLU alone reads
    # 268 MB in 161.9 µs of MTE2 (1.66 TB/s) and, with its output, moves >= 402 MB in 302 µs.
    _sku(_DAV_C310, "Ascend950PR_9579", aic=28, mhz=1650, hbm=128 * GiB, l2=128 * MiB,
         hbm_aic=32, **_PR_RATES),
    # [S13] Ascend950PR_9589.ini
    _sku(_DAV_C310, "Ascend950PR_9589", aic=32, mhz=1650, hbm=128 * GiB, l2=128 * MiB, **_PR_RATES),
    # [S13] Ascend950DT_9572.ini
    _sku(_DAV_C310, "Ascend950DT_9572", aic=28, mhz=1650, hbm=96 * GiB, l2=128 * MiB, **_DT_RATES),
    # [S13] Ascend950DT_9581.ini
    _sku(_DAV_C310, "Ascend950DT_9581", aic=32, mhz=1650, hbm=144 * GiB, l2=128 * MiB, **_DT_RATES),
    # [S13] newer Ascend950DT_9582.ini (the older 950DT_958x.ini had AIC 61 / AIV 31)
    _sku(_DAV_C310, "Ascend950DT_9582", aic=32, mhz=1650, hbm=96 * GiB, l2=128 * MiB, **_DT_RATES),
)

SOCS: MappingProxyType[str, SocSpec] = MappingProxyType({s.name: s for s in _TABLE})

# Lower-case lookup that also accepts pyasc's enum member spelling ("Ascend910B4_1").
_LOOKUP: dict[str, SocSpec] = {}
for _spec in _TABLE:
    _LOOKUP[_spec.name.lower()] = _spec
    _LOOKUP[_spec.name.replace("-", "_").lower()] = _spec


def soc_names() -> tuple[str, ...]:
    """Names of all SoCs in table order."""
    return tuple(SOCS)


def get_soc(name: Any = DEFAULT_SOC) -> SocSpec:
    """The spec of SoC ``name``, case-insensitively; a pyasc ``config.Platform`` works too."""
    key = getattr(name, "value", name)  # pyasc's Platform enum carries the SoC string
    spec = _LOOKUP.get(str(key).lower())
    if spec is None:
        raise ValueError(f"unknown SoC {key!r}; known SoCs: {', '.join(soc_names())}")
    return spec
