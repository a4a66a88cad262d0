"""The cann-bench precision rule for floating-point outputs (reference §1.5).

1. Plain test: relative error per element ``|a − g| / (|g| + 1e-7)`` against
   ``golden_truncated`` (the fp64 truth rounded to the target dtype and back, as cann-bench's
   comparison does); pass if MERE (mean) < T and MARE (max) < the dtype's MARE threshold.
   NaNs and infinities first, as cann-bench treats them: NaN positions must match the golden's;
   infinities on both sides must agree in sign and are left out with the matched NaNs; an
   infinity on one side only is taken as the dtype's largest finite value of its sign.
2. Fallback, when the plain test fails. Positions are classified with ``golden_truncated``
   (the fp64 truth rounded to the target dtype and back):
   - small-value:   |golden_truncated| < small-value threshold;
   - cancellation:  not small, |out| < zero threshold and |golden_truncated| < boundary;
   - normal range:  the rest.
   Normal positions must meet the plain test on their own (MERE < T, MARE < MARE threshold).
   Small-value and cancellation positions use the ErrorCount ratio rule:
   ``ErrorCount_candidate / max(ErrorCount_same_precision_reference, 1) ≤ 2``.
   Deep-reduction fallback: if normal-range MARE violators are also violated by the
   same-precision reference (evidence that the reduction depth, not the candidate, causes them),
   the normal range is judged by the ErrorCount ratio of its MARE violators too.

What counts as an error (the source names the thresholds, not the comparison; our reading):
a small-value position errs when ``|x − golden_truncated|`` exceeds the small-value error; a
cancellation or normal position (deep-reduction fallback) when its relative error exceeds the
MARE threshold — the test it failed. (Counting relative errors above T instead would count
single-ulp rounding differences: an fp16 ulp is about T relative, so an fp32-accumulating
implementation rounded once fails on noise such as 5 vs 2 such positions.) The same criterion
is applied to the candidate and to the same-precision reference; only their ratio matters.

The MARE thresholds are the listed per-dtype values (2^-7, 2^-4, 2^-10 = 8·T); the "10·T" written
beside the fp16 row disagrees with its own "= 2^-7", and the listed value is the one used.
The source gives one number for "cancel boundary / zero thr"; it serves as both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

EPS = 1e-7
MAX_ERROR_COUNT_RATIO = 2.0
TASK_MARE_FACTOR = 10.0  # MARE threshold / T for a task's own T (cann-bench proto comments)


@dataclass(frozen=True)
class Thresholds:
    """Per-dtype thresholds of the precision rule."""

    dtype: str
    mere: float            # T
    mare: float
    small_value: float     # |golden_truncated| below this is a small value
    small_error: float     # a small-value position errs above this absolute error
    cancel: float          # cancellation boundary on |golden| and zero threshold on |out|

    def __post_init__(self) -> None:
        if not 0 < self.small_error < self.small_value < self.cancel:
            raise ValueError(f"{self.dtype}: thresholds out of order")
        if not 0 < self.mere < self.mare:
            raise ValueError(f"{self.dtype}: need 0 < T < MARE threshold")


THRESHOLDS = {t.dtype: t for t in (
    Thresholds("float16", 2.0**-10, 2.0**-7, 2.0**-11, 2.0**-16, 2.0**-5),
    Thresholds("bfloat16", 2.0**-7, 2.0**-4, 2.0**-8, 2.0**-16, 2.0**-3),
    Thresholds("float32", 2.0**-13, 2.0**-10, 2.0**-14, 2.0**-30, 2.0**-8),
)}
_ROUND = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


@dataclass(frozen=True)
class ClassCount:
    """ErrorCounts of one position class for the candidate and the same-precision reference."""

    positions: int
    candidate_errors: int
    reference_errors: int

    @property
    def ratio(self) -> float:
        return self.candidate_errors / max(self.reference_errors, 1)

    @property
    def ok(self) -> bool:
        return self.ratio <= MAX_ERROR_COUNT_RATIO

    def to_json(self) -> dict:
        return {"positions": self.positions, "candidate_errors": self.candidate_errors,
                "reference_errors": self.reference_errors, "ratio": self.ratio}


@dataclass(frozen=True)
class PrecisionResult:
    """Verdict of the precision rule for one output."""

    passed: bool
    dtype: str
    mere: float            # over all positions, against the golden
    mare: float
    branch: str            # "plain" (plain test decided) or "fallback"
    why: str
    normal_mere: float | None = None
    normal_mare: float | None = None
    small: ClassCount | None = None
    cancellation: ClassCount | None = None
    deep_reduction: ClassCount | None = None
    #: For a failed output a simulated launch wrote (with provenance on): which elements break
    #: the rule's per-element bound, grouped by writer, and their pattern (ascsim/wrong_output.py).
    provenance: str = ""

    def to_json(self) -> dict:
        out = {"passed": self.passed, "dtype": self.dtype, "mere": self.mere, "mare": self.mare,
               "branch": self.branch, "why": self.why, "normal_mere": self.normal_mere,
               "normal_mare": self.normal_mare}
        for name in ("small", "cancellation", "deep_reduction"):
            count = getattr(self, name)
            out[name] = None if count is None else count.to_json()
        return out


ArrayLike = torch.Tensor | np.ndarray


def _f64(x: ArrayLike) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64).cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def truncate(truth: ArrayLike, dtype: str) -> np.ndarray:
    """golden_truncated: the fp64 truth rounded to the target dtype and back."""
    t = torch.as_tensor(_f64(truth))
    return t.to(_ROUND[dtype]).to(torch.float64).numpy()


def relative_error(actual: np.ndarray, golden: np.ndarray) -> np.ndarray:
    return np.abs(actual - golden) / (np.abs(golden) + EPS)


def _fmt(x: float) -> str:
    return f"{x:.3g}"


def check_precision(actual: ArrayLike, golden: ArrayLike, dtype: str, *,
                    truth: ArrayLike | None = None,
                    reference: ArrayLike | Callable[[], ArrayLike] | None = None,
                    mere_threshold: float | None = None) -> PrecisionResult:
    """:func:`precision_verdict`, and for a failed output a simulated launch wrote, the
    wrong-output report of the elements whose relative error breaks the rule's per-element
    bound (MARE: ``|a - g| > MARE * (|g| + EPS)``) in ``provenance``."""
    result = precision_verdict(actual, golden, dtype, truth=truth, reference=reference,
                               mere_threshold=mere_threshold)
    if result.passed:
        return result
    from ascsim.assert_hooks import report_for

    th = THRESHOLDS[dtype]
    mare = TASK_MARE_FACTOR * mere_threshold if mere_threshold is not None else th.mare
    text = report_for(actual, golden, rtol=mare, atol=mare * EPS)
    return replace(result, provenance=text) if text else result


def precision_verdict(actual: ArrayLike, golden: ArrayLike, dtype: str, *,
                    truth: ArrayLike | None = None,
                    reference: ArrayLike | Callable[[], ArrayLike] | None = None,
                    mere_threshold: float | None = None) -> PrecisionResult:
    """Apply the rule to ``actual`` for target ``dtype``.

    ``truth`` (fp64; default: ``golden``) rounded to ``dtype`` and back is golden_truncated,
    which both the plain test and the fallback compare against (a golden already rounded to
    the dtype gives the same); ``reference`` is the same-precision reference
    output, or a zero-argument callable producing it — only called when the fallback runs.
    ``mere_threshold``: a task's own T for the dtype (a cann-bench proto's
    ``precision_thresholds``); its MARE threshold is then 10·T, as those files state beside
    each value.
    """
    th = THRESHOLDS.get(dtype)
    if th is None:
        raise ValueError(f"no precision thresholds for dtype {dtype!r} (have {sorted(THRESHOLDS)})")
    if mere_threshold is not None:
        th = replace(th, mere=mere_threshold, mare=TASK_MARE_FACTOR * mere_threshold)
    a = _f64(actual)
    g = truncate(golden if truth is None else truth, dtype)   # golden_truncated
    if a.shape != g.shape:
        raise ValueError(f"output shape {a.shape} differs from the golden's {g.shape}")
    if a.size == 0:
        return PrecisionResult(True, dtype, 0.0, 0.0, "plain", "empty output")
    special = _special_values(a, g, dtype)
    if isinstance(special, PrecisionResult):
        return special
    a, g, kept, note = special
    if a.size == 0:
        return PrecisionResult(True, dtype, 0.0, 0.0, "plain",
                               f"every position is a NaN or infinity the golden has ({note})")
    rel = relative_error(a, g)
    mere, mare = float(rel.mean()), float(rel.max())
    if mere < th.mere and mare < th.mare:
        return PrecisionResult(True, dtype, mere, mare, "plain",
                               f"MERE {_fmt(mere)} < {_fmt(th.mere)} and MARE {_fmt(mare)} < "
                               f"{_fmt(th.mare)}")
    plain_why = (f"plain test failed (MERE {_fmt(mere)} vs {_fmt(th.mere)}, MARE {_fmt(mare)} vs "
                 f"{_fmt(th.mare)})")
    if reference is None:
        return PrecisionResult(False, dtype, mere, mare, "plain",
                               plain_why + "; no same-precision reference for the fallback")
    ref = _f64(reference() if callable(reference) else reference)
    if kept is not None:
        ref = ref[kept]
    return _fallback(th, a, g, ref, rel, mere, mare, plain_why)


def _special_values(a: np.ndarray, g: np.ndarray, dtype: str
                    ) -> PrecisionResult | tuple[np.ndarray, np.ndarray, np.ndarray | None, str]:
    """NaNs and infinities as cann-bench's comparison treats them (kernel_eval/utils/
    compare.py): NaN positions must be the golden's; an infinity on both sides must have
    the same sign and is then left out, as are the matched NaNs; an infinity on one side
    only (an output saturating where the golden_truncated did not, or the reverse) becomes
    the dtype's largest finite value of its sign and is compared like any value.

    Returns a failed verdict, or (output, golden_truncated, kept positions or None when all
    are kept, a note) with every remaining position finite."""
    nan_a, nan_g = np.isnan(a), np.isnan(g)
    if nan_a.any() or nan_g.any():
        wrong = nan_a != nan_g
        if wrong.any():
            return PrecisionResult(False, dtype, float("inf"), float("inf"), "plain",
                                   f"NaN where the golden is not, or the reverse, at "
                                   f"{int(wrong.sum())} positions")
    inf_a, inf_g = np.isinf(a), np.isinf(g)
    if not (inf_a.any() or inf_g.any() or nan_a.any()):
        return a, g, None, ""
    both = inf_a & inf_g
    if (np.sign(a[both]) != np.sign(g[both])).any():
        wrong = int((np.sign(a[both]) != np.sign(g[both])).sum())
        return PrecisionResult(False, dtype, float("inf"), float("inf"), "plain",
                               f"an infinity of the golden's opposite sign at {wrong} positions")
    largest = float(torch.finfo(_ROUND[dtype]).max)
    a, g = a.copy(), g.copy()
    one_sided = (inf_a ^ inf_g)
    a[one_sided & inf_a] = np.sign(a[one_sided & inf_a]) * largest
    g[one_sided & inf_g] = np.sign(g[one_sided & inf_g]) * largest
    kept = ~(both | nan_a)
    note = (f"{int(nan_a.sum())} matched NaNs and {int(both.sum())} matched infinities left "
            f"out, {int(one_sided.sum())} one-sided infinities taken as ±{largest:.4g}")
    return a[kept], g[kept], kept, note


def _fallback(th: Thresholds, a: np.ndarray, gt: np.ndarray, ref: np.ndarray, rel: np.ndarray,
              mere: float, mare: float, plain_why: str) -> PrecisionResult:
    small = np.abs(gt) < th.small_value
    cancel = ~small & (np.abs(a) < th.cancel) & (np.abs(gt) < th.cancel)
    normal = ~small & ~cancel
    rel_gt = relative_error(a, gt)
    ref_rel_gt = relative_error(ref, gt)

    def count(mask: np.ndarray, cand_err: np.ndarray, ref_err: np.ndarray) -> ClassCount:
        return ClassCount(int(mask.sum()), int((mask & cand_err).sum()),
                          int((mask & ref_err).sum()))

    small_c = count(small, np.abs(a - gt) > th.small_error, np.abs(ref - gt) > th.small_error)
    cancel_c = count(cancel, rel_gt > th.mare, ref_rel_gt > th.mare)
    rel_n = rel[normal]
    normal_mere = float(rel_n.mean()) if rel_n.size else 0.0
    normal_mare = float(rel_n.max()) if rel_n.size else 0.0
    deep = None
    problems = []
    if normal_mere >= th.mere:
        problems.append(f"normal-range MERE {_fmt(normal_mere)} >= {_fmt(th.mere)} over "
                        f"{int(normal.sum())} positions")
    if normal_mare >= th.mare:
        violators = normal & (rel >= th.mare)
        ref_violators = normal & (relative_error(ref, gt) >= th.mare)
        if (violators & ref_violators).any():
            deep = ClassCount(int(normal.sum()), int(violators.sum()), int(ref_violators.sum()))
            if not deep.ok:
                problems.append(f"deep-reduction fallback: {deep.candidate_errors} normal-range "
                                f"MARE violators vs {deep.reference_errors} for the "
                                f"same-precision reference (ratio {deep.ratio:.2f} > 2)")
        else:
            problems.append(f"normal-range MARE {_fmt(normal_mare)} >= {_fmt(th.mare)} at "
                            f"{int(violators.sum())} positions the same-precision reference "
                            f"gets right")
    for label, c in (("small-value", small_c), ("cancellation", cancel_c)):
        if not c.ok:
            problems.append(f"{label}: {c.candidate_errors} errors vs {c.reference_errors} for "
                            f"the same-precision reference (ratio {c.ratio:.2f} > 2)")
    classes = (f"{int(normal.sum())} normal / {small_c.positions} small-value / "
               f"{cancel_c.positions} cancellation positions")
    why = f"{plain_why}; fallback over {classes}: " + (
        "; ".join(problems) if problems else "every class within the rule"
        + (" (deep-reduction fallback used)" if deep is not None else ""))
    return PrecisionResult(not problems, th.dtype, mere, mare, "fallback", why, normal_mere,
                           normal_mare, small_c, cancel_c, deep)
