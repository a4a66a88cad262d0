"""How much more does a register-level vector function (VF) cost to simulate than the tile form
of the same kernel? Only the PyPTO-Pro cases of ``sim_speed.py``, with their ratios.

The row softmax of PyPTO Pro's ``tile_vector/test_softmax.py`` against its VF form
(``vf_api/test_softmax_tile_group_vf.py``), and the DN flash attention in its tile form against
its VF form (``sim_speed.FA_FILES``): each simulated (checks on) and timed against torch in
alternating rounds (``sim_speed.measure``), then the VF form's simulated time as a multiple of the
tile form's, measured in the same run. Needs ``PYPTO_FRONTEND`` (PyPTO Pro's frontend test
folder, see docs/upstream.md).

    PYPTO_FRONTEND=DIR/python/tests/st/pypto_pro/frontend \
        .venv/bin/python benchmarks/pto_vf_speed.py
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sim_speed  # noqa: E402 - a sibling script, found through the path line above


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny shapes, one repeat")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (5)")
    args = parser.parse_args(argv)
    if not os.environ.get(sim_speed.PYPTO_ENV):
        print(f"set {sim_speed.PYPTO_ENV} to PyPTO Pro's frontend test folder")
        return 2
    if args.quick:
        cases = [sim_speed.pto_softmax_case(64, 64), sim_speed.pto_vf_softmax_case(64, 64),
                 sim_speed.pto_fa_case("tile", 128, 128), sim_speed.pto_fa_case("VF", 128, 128)]
    else:
        cases = [sim_speed.pto_softmax_case(2048, 64), sim_speed.pto_vf_softmax_case(2048, 64),
                 sim_speed.pto_fa_case("tile", 128, 512), sim_speed.pto_fa_case("VF", 128, 512)]
    repeats = 1 if args.quick else args.repeats
    print(f"{'case':<32}{'simulated ms':>14}{'torch ms':>12}{'ratio':>10}")
    measured = {}
    for case in cases:
        m = measured[case.name] = sim_speed.measure(case, repeats)
        print(f"{case.name:<32}{m.simulated * 1e3:>14.1f}{m.reference * 1e3:>12.3f}"
              f"{sim_speed._times(m.ratio):>10}")
    sim_speed._print_vf_against_tile(measured)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
