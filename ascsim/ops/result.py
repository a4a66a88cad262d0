"""What an operator reports besides its output: simulated device time and its kernels.

Every operator in :mod:`ascsim.ops` accepts ``return_report=True`` and then returns
``(output, OpInfo)``. The benchmark harness uses ``OpInfo.device_time_us`` as the candidate time
(the sum of the operator's kernels' device times, as cann-bench sums kernel durations) and the
kernel reports to explain differences between variants.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ascsim.sim.report import KernelReport


@dataclass(frozen=True)
class OpInfo:
    """Simulated cost of one operator call.

    ``variant`` is the variant that ran (what ``auto`` chose); ``cross_core_handoffs`` counts
    the Cube<->Vector hand-offs through cross-core flags (tiles of a fused kernel, the
    pre-pass barrier on 910B).
    """

    op: str
    variant: str
    soc: str
    reports: tuple[KernelReport, ...]
    workspace_bytes: int = 0
    cross_core_handoffs: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def device_time_us(self) -> float:
        """Sum of the kernels' device times (each includes its launch overhead)."""
        return sum(r.device_time_us for r in self.reports)

    @property
    def values_computed(self) -> bool:
        """False when the call was timing-only: the output holds no result."""
        return all(r.values_computed for r in self.reports)

    @property
    def kernels(self) -> tuple[KernelReport, ...]:
        """The kernel reports, in launch order (the bench's ``info.kernels``)."""
        return self.reports

    def pipe_busy_us(self) -> dict[str, float]:
        """Per pipe, busy time summed over the kernels (busiest core of each)."""
        total: dict[str, float] = {}
        for r in self.reports:
            for pipe, t in r.pipe_busy_us().items():
                total[pipe] = total.get(pipe, 0.0) + t
        return total

    def to_json(self) -> dict:
        return {
            "op": self.op, "variant": self.variant, "soc": self.soc,
            "device_time_us": self.device_time_us, "workspace_bytes": self.workspace_bytes,
            "kernels": [r.kernel for r in self.reports],
            "kernel_times_us": [r.device_time_us for r in self.reports],
            "pipe_busy_us": self.pipe_busy_us(), "notes": list(self.notes),
        }
