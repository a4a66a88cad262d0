"""``ascsim demo`` (``make demo``): run the bundled examples and show what the simulator reports.

Each demo item is one script from ``examples/`` with a ``run(platform)`` function; the demo runs
it on one SoC, prints the simulated device time and the per-pipe table of every launch it made,
and writes one Chrome/Perfetto trace of all of them. The fused matmul + LeakyReLU example, when
present, is the headline and runs first.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from rich.console import Console

EXAMPLES_DIR = Path(__file__).resolve().parent.parent / "examples"
DEMO_SOC = "Ascend910B1"
TRACE_PATH = os.path.join("out", "demo_trace.json")


@dataclass(frozen=True)
class DemoItem:
    """One example the demo runs: ``examples/<name>.py`` and a line saying what it shows."""

    name: str
    blurb: str

    def __post_init__(self):
        if not self.name.isidentifier():
            raise ValueError(f"demo item name {self.name!r} is not a module name")

    @property
    def path(self) -> Path:
        return EXAMPLES_DIR / f"{self.name}.py"


HEADLINE = DemoItem("matmul_leakyrelu", "Cube matmul fused with a vector LeakyReLU (MIX kernel)")
VECTOR_ITEMS = (
    DemoItem("vector_add_flags", "vector add, static UB buffers and hand-written set/wait flags"),
    DemoItem("vector_add_queues", "vector add with TPipe/TQue double buffering"),
    DemoItem("gelu", "GELU (tanh form) with a TBuf scratch tile and asc.adv.tanh"),
    DemoItem("swiglu", "SwiGLU with asc.adv.swiglu over all vector cores"),
    DemoItem("rmsnorm", "RMSNorm with asc.adv.rmsnorm, gamma loaded once per core"),
)

_LOADED: dict[str, ModuleType] = {}


def load_example(name: str) -> ModuleType:
    """Import ``examples/<name>.py`` as a module (``import asc`` inside it resolves to ascsim)."""
    module = _LOADED.get(name)
    if module is not None:
        return module
    from ascsim.runner import install_asc_alias

    path = EXAMPLES_DIR / f"{name}.py"
    if not path.is_file():
        raise FileNotFoundError(f"no example {path} (the examples ship with the source tree)")
    install_asc_alias()
    # Examples import their shared command-line helper (example_cli) as a sibling module.
    if str(EXAMPLES_DIR) not in sys.path:
        sys.path.append(str(EXAMPLES_DIR))
    spec = importlib.util.spec_from_file_location(f"ascsim_examples.{name}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    _LOADED[name] = module
    return module


def demo_items() -> list[DemoItem]:
    """What the demo runs, headline first when its example exists."""
    return ([HEADLINE] if HEADLINE.path.is_file() else []) + list(VECTOR_ITEMS)


def _run_item(item: DemoItem, console: Console) -> bool:
    from ascsim.display import print_findings, report_table
    from ascsim.session import SESSION

    console.rule(f"[bold]{item.name}[/]: {item.blurb}")
    try:
        with SESSION.collect() as item_run:
            load_example(item.name).run(DEMO_SOC)
    except Exception as exc:  # noqa: BLE001 - one broken example must not hide the others
        console.print(f"[red]{item.name} failed:[/] {type(exc).__name__}: {exc}")
        return False
    for report in item_run.reports:
        console.print(f"{report.kernel}: [bold]{report.device_time_us:.2f} µs[/] simulated "
                      f"(incl. {report.launch_overhead_us:.2f} µs launch), "
                      f"{report.block_num} {report.kernel_type} block(s), output matches torch")
        table = report_table(report)
        table.title = None  # said on the line above, without wrapping
        table.min_width = None
        console.print(table)
        print_findings(report, console)
    return True


def run_demo(console: Console) -> int:
    """Run every demo item on Ascend910B1; returns the exit status (1 if any item failed)."""
    from ascsim.session import SESSION
    from ascsim.sim.trace import write_trace

    SESSION.request_soc(DEMO_SOC)
    console.print(f"ascsim demo: pyasc kernels simulated on {DEMO_SOC}, no NPU involved.")
    with SESSION.collect(launches=True) as demo:
        failed = [item.name for item in demo_items() if not _run_item(item, console)]
    os.makedirs(os.path.dirname(TRACE_PATH), exist_ok=True)
    events = write_trace(TRACE_PATH, demo.launches, demo.reports)
    console.rule()
    console.print(f"trace of all {len(demo.reports)} launches: {TRACE_PATH} ({events} events)."
                  " Open https://ui.perfetto.dev and drag the file in (or use chrome://tracing):"
                  " one track per pipe per core.")
    if failed:
        console.print(f"[red]failed:[/] {', '.join(failed)}")
        return 1
    return 0
