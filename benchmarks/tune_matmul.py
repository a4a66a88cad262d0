"""Tuned Matmul tilings against the host tiler's default, in simulated device time.

Three problems on Ascend910B1, each searched with ``ascsim.tune`` (64 trials, seed 0, two
pool workers):

- the matmul_leakyrelu example's own kernel (M=1024, K=256, N=640, fp16) over its tiling
  space (examples/matmul_leakyrelu_space.yaml) against the example's fixed plan (256 x 128
  base blocks on 2 vector cores);
- ``tune_matmul_tiling`` for the same problem with the LeakyReLU epilogue (the operator
  library's fused kernel) against ``MultiCoreMatmulTiling``'s default (every knob left open);
- ``tune_matmul_tiling`` for M=1024, K=1024, N=2048 bf16 with the LeakyReLU epilogue.

    .venv/bin/python benchmarks/tune_matmul.py
"""

from __future__ import annotations

import sys
from pathlib import Path

from ascsim.tune import search, tune_matmul_tiling
from ascsim.tune.target import parse_target

ROOT = Path(__file__).resolve().parent.parent
SOC = "Ascend910B1"


def _row(name: str, default: float, tuned: float, config: dict) -> None:
    knobs = ", ".join(f"{k}={v}" for k, v in config.items())
    print(f"{name:44s} default {default:8.2f} us   tuned {tuned:8.2f} us   "
          f"{default / tuned:5.2f}x   ({knobs})")


def main() -> int:
    entry = parse_target(f"{ROOT / 'examples' / 'matmul_leakyrelu.py'}:tune_entry")
    found = search(entry, ROOT / "examples" / "matmul_leakyrelu_space.yaml", budget=64,
                   workers=2, soc=SOC, first=[{"base_m": 256, "base_n": 128, "cores": 2}])
    default = found.trials[0].value  # the example's own plan, evaluated first
    _row("example kernel 1024x256x640 fp16", default, found.value, found.config)
    for m, n, k, dtype in ((1024, 640, 256, "float16"), (1024, 2048, 1024, "bfloat16")):
        t = tune_matmul_tiling(m, n, k, dtype, dtype, "float32", "float32", SOC,
                               epilogue="leaky_relu", budget=64, workers=2)
        _row(f"matmul_tiling M={m} K={k} N={n} {dtype}", t.default_time_us, t.time_us,
             t.config)
    return 0


if __name__ == "__main__":
    sys.exit(main())
