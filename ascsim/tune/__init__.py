"""Autotuning by simulated time: search a kernel's or an operator's knobs for the least
simulated device time, on local processes or a Ray cluster (see docs/tune.md).

The search (and optuna) and the Matmul tiling search load on first use: the worker
processes import this package too and need neither.
"""

from ascsim.tune.measure import INFEASIBLE_FINDINGS, Outcome
from ascsim.tune.results import TrialRecord, TuneResult
from ascsim.tune.space import Space, SpaceError, load_space

_LAZY = {"search": "ascsim.tune.sweep", "SearchError": "ascsim.tune.sweep",
         "matmul_tiling": "ascsim.tune.matmul", "tune_matmul_tiling": "ascsim.tune.matmul",
         "MatmulTuning": "ascsim.tune.matmul", "MatmulProblem": "ascsim.tune.matmul"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ascsim.tune' has no attribute {name!r}")


__all__ = ["INFEASIBLE_FINDINGS", "MatmulProblem", "MatmulTuning", "Outcome", "SearchError",
           "Space", "SpaceError", "TrialRecord", "TuneResult", "load_space", "matmul_tiling",
           "search", "tune_matmul_tiling"]
