"""How fast is the simulator? Wall time of simulating a kernel vs numpy doing the same arithmetic.

The headline is the cost of one simulated instruction: SwiGLU (2, 1024, 1024)'s wall time divided
by the instructions it simulates (checks on), as a multiple of one bare numpy call on a tile of
the same kind (``np.add`` of two 512-element fp32 arrays into a third) -- the distance to the
limit of an eager simulator, which makes at least one numpy call per instruction.

Cases: the 8×2048 fp32 vector add (the TQue example), SwiGLU at (2, 1024, 1024) fp32 and the
fused 1024×256×640 matmul + LeakyReLU (fp16 in, fp32 out; MIX kernel). PyPTO-Pro kernels from
PyPTO Pro's own system tests, when ``PYPTO_FRONTEND`` names that folder
(``python/tests/st/pypto_pro/frontend`` of hicann/pypto, kept outside the repository, see
docs/upstream.md): ``tile_vector/test_softmax.py``'s row softmax (2048 x 64 fp32, 32 AIVs, tile
ops and tile groups) and the quick start's Matmul + Softmax (``docs/test_doc_quickstart.py``,
48 x 1024, a MIX kernel with a GM workspace), each against torch, on Ascend950PR_9579. The ratio
"simulated / reference" is what to track: it does not depend on the host machine as much as
absolute times do. Simulation and reference are timed in alternating rounds (see ``measure``)
and each reported time is a median over the rounds. Then every kernel launched by each
example's ``run()`` is timed on its own (target: each under 1 s). The Triton cases are the
triton-ascend tutorials' 01 vector add (98432 fp32, block 1024) and 02 fused softmax (1823 x
781 fp32, 32 programs), as written in examples/triton/, against torch -- and, when
``TRITON_INTERPRET_PATH`` names a folder holding upstream Triton, against its interpreter
(``TRITON_INTERPRET=1``) running the same kernels in a process of its own.

    .venv/bin/python benchmarks/sim_speed.py            # full sizes
    .venv/bin/python benchmarks/sim_speed.py --quick    # tiny sizes, one repeat (smoke test)
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from ascsim.demo import EXAMPLES_DIR, load_example
from ascsim.session import SESSION

sys.path.insert(0, str(Path(__file__).resolve().parent))
import eager_floor  # noqa: E402 - a sibling script, found through the path line above

SOC = "Ascend910B1"
# The module (``ascsim.asc.jit`` the attribute is the decorator): launches go through its
# ``run_launch``, which timed_launches wraps.
jit_module = importlib.import_module("ascsim.asc.jit")
REPEATS = 7
REF_REPEATS = 5  # reference runs per round: it is short, and noisier than the simulation


@dataclass(frozen=True)
class SpeedCase:
    """One measurement: ``simulate()`` runs the kernel, ``reference()`` the same maths in numpy."""

    name: str
    simulate: Callable[[], object]
    reference: Callable[[], object]


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def add_case(length: int) -> SpeedCase:
    example = load_example("vector_add_queues")
    x = torch.rand(length, dtype=torch.float32)
    y = torch.rand(length, dtype=torch.float32)
    xn, yn = x.numpy(), y.numpy()
    cores = min(example.DEFAULT_CORES, length // example.DEFAULT_TILE)
    return SpeedCase(f"add fp32 {length}", lambda: example.vector_add(x, y, cores),
                     lambda: xn + yn)


def swiglu_case(shape: tuple[int, ...]) -> SpeedCase:
    example = load_example("swiglu")
    gate = torch.rand(*shape, dtype=torch.float32) * 4 - 2
    up = torch.rand(*shape, dtype=torch.float32) * 4 - 2
    gn, un = gate.numpy(), up.numpy()

    def numpy_swiglu():
        return gn / (np.float32(1) + np.exp(-gn)) * un

    return SpeedCase(f"swiglu fp32 {shape}", lambda: example.swiglu(gate, up), numpy_swiglu)


def matmul_case(m: int, k: int, n: int) -> SpeedCase:
    """The fused matmul + LeakyReLU example's kernel alone (inputs and tiling made once)."""
    example = load_example("matmul_leakyrelu")
    a = torch.randint(-5, 5, (m, k)).to(torch.float16)
    b = torch.randint(-5, 5, (k, n)).to(torch.float16)
    bias = torch.randint(-5, 5, (1, n)).to(torch.float32)
    c = torch.zeros((m, n), dtype=torch.float32)
    workspace = torch.zeros(16 * 1024 * 1024, dtype=torch.uint8)
    tiling = example.plan(m, n, k)
    kernel = example.matmul_leakyrelu_kernel[tiling.used_core_num // 2]

    def simulate():
        return kernel(a, b, c, bias, example.ALPHA, tiling, workspace)

    def torch_reference():
        return torch.nn.functional.leaky_relu(a.float() @ b.float() + bias, example.ALPHA)

    return SpeedCase(f"matmul+leakyrelu {m}x{k}x{n}", simulate, torch_reference)


PTO_SOC = "Ascend950PR_9579"
#: Environment variable naming PyPTO Pro's ``python/tests/st/pypto_pro/frontend`` folder.
PYPTO_ENV = "PYPTO_FRONTEND"


def _pto_module(relative: str):
    """An upstream PyPTO-Pro test file imported with the PyPTO Pro names served (None when
    ``PYPTO_FRONTEND`` is unset)."""
    root = os.environ.get(PYPTO_ENV)
    if not root:
        return None
    path = Path(root) / relative
    if not path.is_file():
        raise FileNotFoundError(f"{PYPTO_ENV}={root}: no {relative} there")
    from ascsim.runner import install_frontends

    install_frontends()
    name = "pypto_st_" + path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _on_pto_soc(fn: Callable[[], object]) -> Callable[[], object]:
    def run():
        with SESSION.using_soc(PTO_SOC):
            return fn()
    return run


def _pto_row_softmax_case(path: str, label: str, rows: int, cols: int) -> SpeedCase | None:
    """The row softmax kernel ``softmax_tile_group_kernel`` of the PyPTO Pro test file ``path``
    on a rows x cols fp32 input."""
    module = _pto_module(path)
    if module is None:
        return None
    x = torch.rand(rows, cols) * 8.0 - 4.0
    y = torch.empty(rows, cols)
    cores = min(32, -(-rows // module.TILE_ROWS))
    kernel = module.softmax_tile_group_kernel[None, cores]
    return SpeedCase(f"{label} {rows}x{cols}", _on_pto_soc(lambda: kernel(x, y)),
                     lambda: torch.softmax(x, dim=-1))


def pto_softmax_case(rows: int, cols: int) -> SpeedCase | None:
    """``tile_vector/test_softmax.py``'s kernel on a rows x cols fp32 input."""
    return _pto_row_softmax_case("tile_vector/test_softmax.py", "pto softmax", rows, cols)


def pto_vf_softmax_case(rows: int, cols: int) -> SpeedCase | None:
    """``vf_api/test_softmax_tile_group_vf.py``'s kernel: the same row softmax as
    :func:`pto_softmax_case`, written as a register-level vector function."""
    return _pto_row_softmax_case("vf_api/test_softmax_tile_group_vf.py", "pto VF softmax",
                                 rows, cols)


#: The DN flash attention (QK pre-computed two KV tiles ahead) of PyPTO Pro's fa/ tests in its
#: tile form and its VF form: the same algorithm; the tile form's softmax steps are tile ops
#: whose QK, P and PV pass through GM workspaces, the VF form's are vector functions on UB.
FA_FILES = {"tile": "fa/test_fa_perf_tkv_preload_dn_tile_unalign16.py",
            "VF": "fa/test_fa_perf_tkv_preload_dn_vf_tail_tilegroup.py"}


def pto_fa_case(form: str, sq: int, skv: int) -> SpeedCase | None:
    """One launch of the DN flash attention (fp16, d = 128, one core) in ``form``."""
    module = _pto_module(FA_FILES[form])
    if module is None:
        return None
    torch.manual_seed(0)
    q, k, v = (torch.rand(n, module.TD, dtype=torch.float16) for n in (sq, skv, skv))
    o = torch.zeros(sq, module.TD, dtype=torch.float16)
    kernel = module.fa_perf_tkv_preload_dn_kernel[None, 1]
    args = [q, k, v, o]
    if "qk_buf" in kernel.kernel.signature.parameters:  # the tile form's GM workspaces
        fifo = module.FIFO_SIZE
        args += [torch.zeros(sq * fifo, skv), torch.zeros(sq * fifo, skv, dtype=torch.float16),
                 torch.zeros(sq * fifo, module.TD)]

    def reference():
        scores = (q.float() @ k.float().T) / module.TD ** 0.5
        return torch.softmax(scores, dim=-1) @ v.float()

    return SpeedCase(f"pto {form} flash-attn {sq}x{skv}", _on_pto_soc(lambda: kernel(*args)),
                     reference)


def pto_matmul_softmax_case(m: int, n: int) -> SpeedCase | None:
    """The quick start's Matmul + Softmax (``docs/test_doc_quickstart.py``), m x K_SIZE x n."""
    module = _pto_module("docs/test_doc_quickstart.py")
    if module is None:
        return None
    a = torch.randn(m, module.K_SIZE, dtype=torch.float16) * 0.1
    b = torch.randn(module.K_SIZE, n, dtype=torch.float16) * 0.1
    out = torch.zeros(m, n)
    workspace = torch.zeros(m, n)
    kernel = module.matmul_softmax_kernel
    return SpeedCase(f"pto matmul+softmax {m}x{n}",
                     _on_pto_soc(lambda: kernel(a, b, out, workspace)),
                     lambda: torch.softmax(a.float() @ b.float(), dim=-1))


#: Environment variable naming a folder that holds upstream Triton (e.g. ``pip install
#: --target DIR --no-deps triton``): the Triton cases are then also timed under its interpreter
#: (``TRITON_INTERPRET=1``), which computes values only, in a process of their own.
TRITON_INTERPRET_ENV = "TRITON_INTERPRET_PATH"
TRITON_EXAMPLES = EXAMPLES_DIR / "triton"


def _triton_example(name: str):
    """An examples/triton module imported with the Triton names served by ascsim."""
    from ascsim.runner import install_frontends

    install_frontends()
    spec = importlib.util.spec_from_file_location(f"ascsim_triton_{name}",
                                                  TRITON_EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def triton_add_case(length: int) -> SpeedCase:
    """Tutorial 01's kernel (examples/triton/vector_add.py) at its block of 1024."""
    example = _triton_example("vector_add")
    x, y = torch.rand(length), torch.rand(length)
    return SpeedCase(f"triton add fp32 {length}", lambda: example.add(x, y, block=1024),
                     lambda: x + y)


def triton_softmax_case(rows: int, cols: int) -> SpeedCase:
    """Tutorial 02's kernel (examples/triton/fused_softmax.py): 32 programs walk the rows."""
    example = _triton_example("fused_softmax")
    x = torch.randn(rows, cols)
    return SpeedCase(f"triton softmax {rows}x{cols}", lambda: example.softmax(x),
                     lambda: torch.softmax(x, dim=1))


#: What the interpreter process runs: the same example kernels on the same shapes.
INTERPRET_SCRIPT = """
import statistics, sys, time, torch
sys.path.insert(0, {examples!r})
import vector_add, fused_softmax
x, y = torch.rand({add}), torch.rand({add})
a = torch.randn({rows}, {cols})
cases = {{"add": lambda: vector_add.add(x, y, block=1024),
          "softmax": lambda: fused_softmax.softmax(a)}}
for name, fn in cases.items():
    fn()
    walls = []
    for _ in range({repeats}):
        start = time.perf_counter(); fn(); walls.append(time.perf_counter() - start)
    print(name, statistics.median(walls))
"""


def interpreter_seconds(add: int, rows: int, cols: int, repeats: int) -> dict[str, float]:
    """Median wall seconds of the Triton cases under upstream Triton's interpreter, or {}
    when TRITON_INTERPRET_PATH is unset."""
    path = os.environ.get(TRITON_INTERPRET_ENV)
    if not path:
        return {}
    import subprocess

    script = INTERPRET_SCRIPT.format(examples=str(TRITON_EXAMPLES), add=add, rows=rows,
                                     cols=cols, repeats=repeats)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=1800, check=True)
    return {name: float(sec) for name, sec in (line.split() for line in
                                               done.stdout.splitlines() if line)}


@contextlib.contextmanager
def timed_launches(log: list[tuple[str, float]]):
    """Record (kernel name, wall seconds) of every kernel launch made inside the block."""
    original = jit_module.run_launch

    def timed(name, *args, **kwargs):
        start = time.perf_counter()
        try:
            return original(name, *args, **kwargs)
        finally:
            log.append((name, time.perf_counter() - start))

    jit_module.run_launch = timed
    try:
        yield log
    finally:
        jit_module.run_launch = original


def example_launch_times(quick: bool) -> list[tuple[str, str, float]]:
    """(example, kernel, seconds) of every launch of every example's ``run()`` (the second run,
    so one-time costs such as the AST rewrite are not counted)."""
    rows = []
    for path in sorted(EXAMPLES_DIR.glob("*.py")):
        module = load_example(path.stem)
        if not hasattr(module, "run"):
            continue
        kwargs = QUICK_EXAMPLE_ARGS.get(path.stem, {}) if quick else {}
        module.run(**kwargs)
        log: list[tuple[str, float]] = []
        with timed_launches(log):
            module.run(**kwargs)
        rows.extend((path.stem, kernel, seconds) for kernel, seconds in log)
    return rows


# Smaller shapes for the quick (smoke-test) mode, where an example's defaults are large.
QUICK_EXAMPLE_ARGS = {
    "matmul_leakyrelu": {"m": 512, "n": 256},
    "matmul_cube_only": {"n": 2048},
    "matmul_mix": {"m": 256, "k": 256, "n": 512},
}


@dataclass(frozen=True)
class Measurement:
    """Medians over the rounds, and the range of the per-round ratios."""

    simulated: float  # seconds
    reference: float  # seconds
    ratio_low: float
    ratio_high: float

    @property
    def ratio(self) -> float:
        return self.simulated / self.reference


def measure(case: SpeedCase, repeats: int) -> Measurement:
    """Simulated and reference seconds, medians of ``repeats`` rounds; each round times one
    simulation and then the reference a few times (their median), so both see the same
    machine. Both are warmed up once. (This 2-core host's second core comes and goes: torch's
    two-thread product varies 3x from one second to the next, so times taken apart mislead.)"""
    case.simulate()
    case.reference()
    sims, refs = [], []
    for _ in range(repeats):
        sims.append(_seconds(case.simulate))
        refs.append(statistics.median(_seconds(case.reference) for _ in range(REF_REPEATS)))
    # The launches' records are garbage now, partly in reference cycles: collect them here, so
    # the next case's rounds do not pay for this case's garbage (SwiGLU's rounds leave ~10^5
    # objects, a 0.2 s collection that otherwise lands in some later, shorter kernel's round).
    gc.collect()
    ratios = [sim / ref for sim, ref in zip(sims, refs)]
    return Measurement(statistics.median(sims), statistics.median(refs), min(ratios),
                       max(ratios))


def per_instruction(case: SpeedCase, repeats: int) -> tuple[float, int]:
    """(median wall seconds per simulated instruction, instructions per run) of ``case``."""
    with SESSION.collect() as run:
        case.simulate()
    count = sum(core.instructions for report in run.reports for core in report.cores)
    walls = []
    for _ in range(repeats):
        walls.append(_seconds(case.simulate))
    gc.collect()
    return statistics.median(walls) / max(count, 1), count


def _times(ratio: float) -> str:
    return f"{ratio:.1f}x" if ratio < 100 else f"{ratio:.0f}x"


def _print_vf_against_tile(measured: dict) -> None:
    """The VF form of each PyPTO-Pro kernel against its tile form, both measured above
    (target: at most 2x)."""
    for name, m in measured.items():
        if " VF " not in name:
            continue
        tile = measured.get(name.replace(" VF ", " tile ")) or \
            measured.get(name.replace(" VF ", " "))
        if tile is not None:
            print(f"  {name}: the VF form costs {m.simulated / tile.simulated:.1f}x its tile "
                  "form to simulate (target: at most 2x)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes, one repeat")
    args = parser.parse_args(argv)
    SESSION.request_soc(SOC)
    if args.quick:
        cases = [add_case(2 * 1024), swiglu_case((2, 4, 256)), matmul_case(512, 256, 256)]
        pto_cases = [pto_softmax_case(64, 64), pto_vf_softmax_case(64, 64),
                     pto_matmul_softmax_case(32, 64), pto_fa_case("tile", 128, 128),
                     pto_fa_case("VF", 128, 128)]
        repeats = 1
    else:
        cases = [add_case(8 * 2048), swiglu_case((2, 1024, 1024)), matmul_case(1024, 256, 640)]
        pto_cases = [pto_softmax_case(2048, 64), pto_vf_softmax_case(2048, 64),
                     pto_matmul_softmax_case(48, 1024), pto_fa_case("tile", 128, 512),
                     pto_fa_case("VF", 128, 512)]
        repeats = REPEATS
    cases += [case for case in pto_cases if case is not None]
    triton_shapes = (2048, 64, 64) if args.quick else (98432, 1823, 781)  # tutorials 01, 02
    triton_cases = [triton_add_case(triton_shapes[0]), triton_softmax_case(*triton_shapes[1:])]
    per_instr, count = per_instruction(cases[1], repeats)
    bare = eager_floor.bare_numpy_add_seconds()
    floor = eager_floor.swiglu_floor_per_instruction()
    print(f"cost of one simulated instruction ({cases[1].name}, {count} instructions, checks "
          f"on): {per_instr * 1e6:.1f} us = {_times(per_instr / bare)} one bare np.add of 512 "
          f"fp32 ({bare * 1e6:.2f} us)")
    print(f"  the floor of an eager simulator there (benchmarks/eager_floor.py: the kernel's "
          f"Python with no-op calls, plus its numpy work): {floor * 1e6:.2f} us = "
          f"{_times(floor / bare)}\n")
    print(f"simulator speed on {SOC}, PyPTO-Pro cases on {PTO_SOC} (median of {repeats}; "
          "reference: numpy, torch for matmul and the PyPTO-Pro cases):")
    if not os.environ.get(PYPTO_ENV):
        print(f"(set {PYPTO_ENV} to PyPTO Pro's frontend test folder for the PyPTO-Pro cases)")
    print(f"{'case':<32}{'simulated ms':>14}{'ref ms':>12}{'ratio':>10}  rounds' ratios")
    measured = {}
    for case in cases:
        m = measured[case.name] = measure(case, repeats)
        print(f"{case.name:<32}{m.simulated * 1e3:>14.1f}{m.reference * 1e3:>12.3f}"
              f"{_times(m.ratio):>10}  {_times(m.ratio_low)}-{_times(m.ratio_high)}")
    _print_vf_against_tile(measured)
    # The Triton cases: fewer rounds (the softmax simulates ~10^5 instructions).
    triton_repeats = 1 if args.quick else 3
    triton_times = {}
    for case in triton_cases:
        m = measure(case, triton_repeats)
        triton_times[case.name] = m.simulated
        print(f"{case.name:<32}{m.simulated * 1e3:>14.1f}{m.reference * 1e3:>12.3f}"
              f"{_times(m.ratio):>10}  {_times(m.ratio_low)}-{_times(m.ratio_high)}")
    interpreted = interpreter_seconds(*triton_shapes, triton_repeats)
    if interpreted:
        print("  the same Triton kernels under upstream Triton's interpreter (TRITON_INTERPRET=1,"
              " values only; target: ascsim <= 2x):")
        for case, seconds in zip(triton_cases, (interpreted["add"], interpreted["softmax"])):
            ours = triton_times[case.name]
            print(f"  {case.name:<30}{seconds * 1e3:>14.1f} ms interpreted, ascsim "
                  f"{_times(ours / seconds)} that")
    else:
        print(f"  (set {TRITON_INTERPRET_ENV} to a folder holding upstream triton to compare "
              "with TRITON_INTERPRET=1)")
    mm_floor, mm_ref = eager_floor.matmul_floor_ratio(rounds=3 if args.quick else 15)
    print(f"  the floor of an eager simulator on the matmul (its products on the workers and "
          f"its C blocks' numpy moves): {mm_floor * 1e3:.2f} ms = {_times(mm_floor / mm_ref)} "
          f"torch ({mm_ref * 1e3:.2f} ms)")
    print("\nevery kernel launch of the examples (target: under 1 s each):")
    print(f"{'example':<22}{'kernel':<28}{'wall ms':>10}")
    rows = example_launch_times(args.quick)
    for example, kernel, seconds in rows:
        flag = "  SLOW" if seconds > 1.0 else ""
        print(f"{example:<22}{kernel:<28}{seconds * 1e3:>10.1f}{flag}")
    slowest = max(rows, key=lambda row: row[2])
    print(f"slowest: {slowest[0]} ({slowest[2] * 1e3:.0f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
