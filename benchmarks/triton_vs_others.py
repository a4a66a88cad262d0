"""The Triton examples' simulated times beside the same operators in pyasc and PyPTO Pro.

    .venv/bin/python benchmarks/triton_vs_others.py

Two operators, each on one shape, on the Ascend 910B1 and the Ascend 950 (PyPTO Pro runs on
the 950 only):

* ``leaky_relu(A @ B)`` fp16, 256 x 128 x 256: ``examples/triton/matmul.py`` (each of its
  autotune configs), the operator library's pyasc kernel ``ascsim.ops.matmul_leaky_relu``
  (with a zero bias: it computes ``A @ B + bias``) and ``examples/pto/matmul_leakyrelu.py``;
* ``tanh(conv2d(x, w) + b)`` fp16, x 2 x 16 x 12 x 12, w 32 x 16 x 3 x 3, stride 1, pad 1:
  ``examples/triton/conv_tanh.py``, ``ascsim.ops.fused_conv_tanh`` (pyasc) and cann-bench's
  PyPTO Pro package ``examples/cann_bench_pto``.

The times are the simulator's: device time (launch overhead included, as a profiler shows it)
and kernel time (without it), of each version's second call; docs/triton.md says why they
differ.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
SOCS = ("Ascend910B1", "Ascend950PR_9579")


def _install() -> None:
    from ascsim.pto import aliases as pto_aliases
    from ascsim.runner import install_asc_alias
    from ascsim.triton import aliases as triton_aliases

    install_asc_alias()
    pto_aliases.install()
    triton_aliases.install()
    for folder in (ROOT / "examples" / "triton", ROOT / "examples" / "cann_bench_pto"):
        sys.path.insert(0, str(folder))


def _timed(fn) -> tuple[float, float, int]:
    """(device time, kernel time = device time less the launch overhead) in µs, summed over
    the launches of the operator's last call (an operator of the library that picks its
    variant by simulating each first calls itself more than once: only the chosen variant's
    launches count), and how many launches that is."""
    from ascsim.session import SESSION

    with SESSION.collect() as run:
        fn()
    with SESSION.collect() as run:  # again: the choices are cached, the launches are the pick's
        fn()
    reports = run.reports
    return (sum(r.device_time_us for r in reports),
            sum(r.device_time_us - r.launch_overhead_us for r in reports), len(reports))


def _matmul_rows(soc: str) -> list[tuple]:
    import matmul as triton_matmul

    from ascsim.ops import matmul_leaky_relu
    from ascsim.runner import run_script

    torch.manual_seed(0)
    a, b = torch.randn(256, 128).half(), torch.randn(128, 256).half()
    rows = []
    for config in triton_matmul.CONFIGS:
        name = "triton BM{BLOCK_M} BN{BLOCK_N} BK{BLOCK_K}".format(**config.kwargs)
        rows.append((name, *_timed(lambda c=config: triton_matmul.matmul(
            a, b, triton_matmul.matmul_kernel, **c.kwargs))))
    bias = torch.zeros(256, dtype=torch.float32)
    rows.append(("pyasc ops.matmul_leaky_relu", *_timed(
        lambda: matmul_leaky_relu(a, b, bias, triton_matmul.ALPHA))))
    if soc.startswith("Ascend950"):
        rows.append(("pypto examples/pto/matmul_leakyrelu", *_timed(
            lambda: run_script(str(ROOT / "examples" / "pto" / "matmul_leakyrelu.py"), []))))
    return rows


def _conv_rows(soc: str) -> list[tuple]:
    import conv_tanh as triton_conv

    from ascsim.ops import fused_conv_tanh

    torch.manual_seed(0)
    x = torch.randn(2, 16, 12, 12).half()
    w = (torch.randn(32, 16, 3, 3) * 0.1).half()
    b = torch.randn(32).half()
    rows = [("triton examples/triton/conv_tanh", *_timed(lambda: triton_conv.conv_tanh(x, w, b)))]
    rows.append(("pyasc ops.fused_conv_tanh", *_timed(
        lambda: fused_conv_tanh(x, w, b, (1, 1), (1, 1, 1, 1)))))
    if soc.startswith("Ascend950"):
        import cann_bench

        rows.append(("pypto cann_bench_pto fused_conv_tanh", *_timed(
            lambda: cann_bench.fused_conv_tanh(x, w, b, (1, 1), (1, 1, 1, 1), (1, 1)))))
    return rows


def main() -> None:
    _install()
    from ascsim.session import SESSION

    for soc in SOCS:
        with SESSION.using_soc(soc):
            for title, rows in (("leaky_relu(A @ B) 256x128x256 fp16", _matmul_rows(soc)),
                                ("tanh(conv2d + b) 2x16x12x12 * 32x16x3x3", _conv_rows(soc))):
                print(f"\n{soc}: {title}")
                print(f"  {'version':40s} {'device us':>10s} {'kernel us':>10s} launches "
                      "kernel / first row's")
                base = rows[0][2]
                for name, device, kernel, launches in rows:
                    print(f"  {name:40s} {device:10.2f} {kernel:10.2f} {launches:8d} "
                          f"{kernel / base:6.2f}x")


if __name__ == "__main__":
    main()
