"""The result of one simulated launch: time, per-pipe busy time, per-core times, findings."""

from __future__ import annotations

from dataclasses import dataclass, field

from ascsim.sim.findings import Finding

PIPE_LABELS = {"S": "Scalar", "V": "Vector", "M": "Cube", "MTE1": "MTE1", "MTE2": "MTE2",
               "MTE3": "MTE3", "FIX": "FixPipe"}


@dataclass(frozen=True)
class CoreReport:
    """Timing of one core: when it ran and how long each of its pipes was busy (µs)."""

    core_id: int
    kind: str
    block_idx: int
    start_us: float
    end_us: float
    pipe_busy_us: dict[str, float]
    instructions: int

    @property
    def time_us(self) -> float:
        return self.end_us - self.start_us


@dataclass
class KernelReport:
    """Everything ascsim measured about one kernel launch."""

    kernel: str
    soc: str
    kernel_type: str
    block_num: int
    device_time_us: float
    launch_overhead_us: float
    cores: list[CoreReport]
    findings: list[Finding] = field(default_factory=list)
    bytes_moved: dict[str, int] = field(default_factory=dict)
    # True when the launch stopped with an error; times then cover only what ran.
    failed: bool = False
    # The :class:`ascsim.sim.profile.KernelProfile` of the launch (None if built elsewhere).
    profile: object | None = None
    # False for a timing-only launch: the outputs were not computed (times are the same).
    values_computed: bool = True
    # The memory arguments as (name, "dtype[d0,d1,...]"), in call order (LaunchConfig).
    arguments: tuple[tuple[str, str], ...] = ()
    # Of the launch's instructions, how many ran in waves of cores (ascsim/sim/wave.py).
    waved_instructions: int = 0

    @property
    def shapes(self) -> str:
        """The memory arguments in one string, ``"x=float32[16384] y=float32[16384]"``: with
        the kernel name and the SoC, what tells one launch of a kernel from another."""
        return " ".join(f"{name}={desc}" for name, desc in self.arguments)

    @property
    def busiest_core(self) -> CoreReport:
        return max(self.cores, key=lambda c: c.time_us)

    def pipe_busy_us(self) -> dict[str, float]:
        """Per pipe, the busy time of the busiest core for that pipe (what bounds the kernel)."""
        out: dict[str, float] = {}
        for core in self.cores:
            for pipe, t in core.pipe_busy_us.items():
                if t > out.get(pipe, 0.0):
                    out[pipe] = t
        return out

    def pipe_share(self) -> dict[str, float]:
        """Per pipe, busy time as a share of the kernel's compute time (without launch)."""
        span = self.device_time_us - self.launch_overhead_us
        return {p: (t / span if span > 0 else 0.0) for p, t in self.pipe_busy_us().items()}

    def to_json(self) -> dict:
        return {
            "kernel": self.kernel,
            "soc": self.soc,
            "kernel_type": self.kernel_type,
            "block_num": self.block_num,
            "device_time_us": self.device_time_us,
            "launch_overhead_us": self.launch_overhead_us,
            "pipe_busy_us": self.pipe_busy_us(),
            "bytes_moved": self.bytes_moved,
            "cores": [
                {"core": c.core_id, "kind": c.kind, "block": c.block_idx, "start_us": c.start_us,
                 "end_us": c.end_us, "pipe_busy_us": c.pipe_busy_us,
                 "instructions": c.instructions}
                for c in self.cores
            ],
            "findings": [f.to_json() for f in self.findings],
            "failed": self.failed,
            "values_computed": self.values_computed,
            "arguments": [list(a) for a in self.arguments],
            "profile": self.profile.to_json() if self.profile is not None else None,
        }
