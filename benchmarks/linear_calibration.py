"""Simulated vs published device time of the linear layer on Ascend910B4.

The published points (pyasc column of shared/reference/calibration.md, "Linear") time
C[M,N] = A[M,K] . B[N,K]^T in fp16 with fp32 accumulation. We run examples/linear_cube.py, which
follows the same algorithm (128x128 output blocks, 64-row blocks when blocks are scarce, blocks
dealt round-robin to min(AIC count, blocks) cores, K in 512-element segments), and print the
error of every point. One difference: the published kernel converts the weight to NZ on the
host, ours converts it on the fly in the GM->L1 copy (same bytes, one burst per row).

    .venv/bin/python benchmarks/linear_calibration.py [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOC = "Ascend910B4"

#: (M, N, K) and published pyasc µs (calibration.md, Linear, fp16).
POINTS = (
    ((128, 512, 512), 4.48),
    ((128, 1536, 512), 7.76),
    ((128, 512, 1024), 5.98),
    ((1024, 512, 512), 10.42),
)


def _example():
    spec = importlib.util.spec_from_file_location("linear_cube_example",
                                                  ROOT / "examples" / "linear_cube.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(points=POINTS) -> list[dict]:
    """Run every point on the simulated 910B4; one row of results per point."""
    from ascsim.session import SESSION

    example = _example()
    before = SESSION.soc.name
    rows = []
    try:
        for (m, n, k), published in points:
            report = example.run(SOC, m, n, k)
            sim = report.device_time_us
            rows.append({"m": m, "n": n, "k": k, "published_us": published,
                         "simulated_us": sim, "error": (sim - published) / published,
                         "cores": report.block_num})
    finally:
        SESSION.set_soc(before)
    return rows


def print_table(rows: list[dict]) -> None:
    print(f"Linear fp16 on {SOC}: simulated vs published (pyasc) device time")
    print(f"{'x [M,K]':>12} {'weight [N,K]':>13} {'cores':>5} {'published':>10} "
          f"{'simulated':>10} {'error':>8}")
    for r in rows:
        x_shape, w_shape = f"[{r['m']},{r['k']}]", f"[{r['n']},{r['k']}]"
        print(f"{x_shape:>12} {w_shape:>13} {r['cores']:>5} "
              f"{r['published_us']:>8.2f}us {r['simulated_us']:>8.2f}us {r['error']:>+8.1%}")
    if rows:
        mean_abs = sum(abs(r["error"]) for r in rows) / len(rows)
        print(f"mean |error| {mean_abs:.1%} over {len(rows)} point(s)")


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the smallest point")
    args = parser.parse_args(argv)
    rows = measure(POINTS[:1] if args.quick else POINTS)
    print_table(rows)
    return rows


if __name__ == "__main__":
    main()
