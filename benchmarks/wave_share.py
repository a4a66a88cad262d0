"""How much of the examples' work runs in waves of cores (ascsim/sim/wave.py)?

Runs every example's ``run()`` with waves on (``SESSION.waves``; ``--mode verify`` runs each
launch both ways and raises on any difference) and prints, per launch, its core-instructions,
how many of them ran in waves, and why a launch that tried could not (the first divergence);
last, the share over all launches, and the wall time of the examples with waves off and on,
measured in the same run (second runs, so one-time costs such as the AST rewrite are not
counted).

    .venv/bin/python benchmarks/wave_share.py [--mode on|verify]
"""

from __future__ import annotations

import argparse
import time

from ascsim.demo import EXAMPLES_DIR, load_example
from ascsim.session import SESSION
from ascsim.sim import wave


def _examples():
    for path in sorted(EXAMPLES_DIR.glob("*.py")):
        module = load_example(path.stem)
        if hasattr(module, "run"):
            yield path.stem, module


def _run_all(mode: str) -> tuple[list, float]:
    """(example, report) of every launch, and the wall seconds of the examples' second runs."""
    SESSION.waves = mode
    rows, seconds = [], 0.0
    for name, module in _examples():
        module.run()
        with SESSION.collect() as collection:
            start = time.perf_counter()
            module.run()
            seconds += time.perf_counter() - start
        rows.extend((name, report) for report in collection.reports)
    return rows, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mode", choices=("on", "verify"), default="on")
    args = parser.parse_args()
    _, off_seconds = _run_all("off")
    rows, on_seconds = _run_all(args.mode)
    total = waved = 0
    print(f"{'example':<20}{'kernel':<28}{'kind':<10}{'instr':>8}{'in waves':>10}")
    for name, report in rows:
        n = sum(core.instructions for core in report.cores)
        total += n
        waved += report.waved_instructions
        print(f"{name:<20}{report.kernel:<28}{report.kernel_type:<10}{n:>8}"
              f"{report.waved_instructions:>10}")
    for key, why in wave._CANNOT_WAVE.items():
        print(f"  {key[0]} ({key[2]} blocks) runs per core: {why[:150]}")
    print(f"core-instructions in waves: {waved} of {total} ({waved / max(total, 1):.0%})")
    print(f"examples' wall time: waves off {off_seconds * 1e3:.0f} ms, {args.mode} "
          f"{on_seconds * 1e3:.0f} ms ({off_seconds / on_seconds:.2f}x)")


if __name__ == "__main__":
    main()
