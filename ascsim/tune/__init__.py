"""Autotuning by simulated time: search a kernel's or an operator's knobs for the least
simulated device time, on local processes or a Ray cluster (see docs/tune.md)."""

from ascsim.tune.measure import INFEASIBLE_FINDINGS, Outcome
from ascsim.tune.results import TrialRecord, TuneResult
from ascsim.tune.search import SearchError, search
from ascsim.tune.space import Space, SpaceError, load_space


def __getattr__(name: str):
    # The matmul tiling search pulls in the simulator's host API: load it on first use.
    if name in ("matmul_tiling", "tune_matmul_tiling", "MatmulTuning", "MatmulProblem"):
        from ascsim.tune import matmul

        return getattr(matmul, name)
    raise AttributeError(f"module 'ascsim.tune' has no attribute {name!r}")


__all__ = ["INFEASIBLE_FINDINGS", "MatmulProblem", "MatmulTuning", "Outcome", "SearchError",
           "Space", "SpaceError", "TrialRecord", "TuneResult", "load_space", "matmul_tiling",
           "search", "tune_matmul_tiling"]
