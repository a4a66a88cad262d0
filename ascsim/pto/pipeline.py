"""``pl.pipeline``: stage tags and the configuration of PyPTO Pro's automatic cross-core pipeline.

On the device, ``@pl.jit(pipeline=PipelineConfig(...))`` rewrites a loop whose body calls
``@pl.pipeline.stage`` functions in alternating cube and vector sections: it inserts cross-core
flags between producer and consumer stages and reorders the iterations into a preload schedule.
ascsim runs a kernel whose stages all sit on one side (there is no cross-core hand-over to
insert, and the serial order is the schedule); a kernel with stages on both sides is refused
(:func:`check_supported`), since running it serially without the inserted flags would hide the
synchronisation the transform adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from ascsim.pto.errors import UnsupportedFeatureError

#: Attribute marking a function as a pipeline stage.
STAGE = "__pto_pipeline_stage__"


def stage(fn):
    """``@pl.pipeline.stage``: tags ``fn`` as a stage (it is inlined like any helper)."""
    setattr(fn, STAGE, True)
    return fn


@dataclass(frozen=True)
class PipelineConfig:
    """``pl.pipeline.PipelineConfig(preload=1, sync_only=False)``: how many iterations of the
    producer stage run ahead, and whether only the flags are inserted (serial order kept)."""

    preload: int = 1
    sync_only: bool = False

    def __post_init__(self):
        if isinstance(self.preload, bool) or not isinstance(self.preload, int) \
                or self.preload < 1:
            raise ValueError(f"PipelineConfig preload must be an int >= 1, got {self.preload!r}")


def check_supported(config, kernel_kind: str, name: str) -> None:
    """Refuse a pipeline the simulator cannot run faithfully (stages on both sides)."""
    if config is None:
        return
    if not isinstance(config, PipelineConfig):
        raise TypeError(f"jit(pipeline=...) takes a pl.pipeline.PipelineConfig, got "
                        f"{type(config).__name__}")
    if kernel_kind == "MIX":
        raise UnsupportedFeatureError(
            f"kernel {name!r}: the automatic cross-core pipeline (pipeline=) over cube and "
            "vector stages is not simulated by ascsim; write the cross-core flags "
            "(pl.system.set_cross_core / wait_cross_core) in the kernel")
