"""The cann-bench harness: tasks, inputs and references, the precision rule, HAP/score, the
runner and its reports (see docs/bench.md)."""

from ascsim.bench.precision import PrecisionResult, check_precision
from ascsim.bench.results import BenchResult
from ascsim.bench.runner import run_bench
from ascsim.bench.score import hap, score, t_hw
from ascsim.bench.tasks import Case, Task, available_tasks, load_task
