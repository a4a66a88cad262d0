"""Dispatch by the inputs' (ndim, dtype) signature in proto order, as cann-bench's generated
dispatchers do: each class is one implementation sub-package (c1 fp16, c2 fp32, c3 bf16)."""

from __future__ import annotations

from collections.abc import Sequence

#: op -> ((class name, ((ndim, dtype) per input, in proto order)), ...)
CLASSES: dict[str, tuple[tuple[str, tuple[tuple[int, str], ...]], ...]] = {
    "conv2d_act": (
        ("c1", ((4, "float16"), (4, "float16"), (1, "float16"))),
        ("c2", ((4, "float32"), (4, "float32"), (1, "float32"))),
        ("c3", ((4, "bfloat16"), (4, "bfloat16"), (1, "bfloat16"))),
    ),
}

INPUT_NAMES = {"conv2d_act": ("x", "filter", "bias")}


def dispatch(kind: str, signature: Sequence[tuple[int, str]]) -> str:
    """The class whose signature matches, or a ValueError saying what does not."""
    signature = tuple((int(n), str(d)) for n, d in signature)
    for name, sig in CLASSES[kind]:
        if sig == signature:
            return name
    names = INPUT_NAMES[kind]
    dtypes = {d for _, d in signature}
    supported = sorted({d for _, sig in CLASSES[kind] for _, d in sig})
    described = ", ".join(f"{n} {d} {k}-D" for n, (k, d) in zip(names, signature))
    if len(dtypes) > 1:
        why = "all inputs must share one dtype"
    elif not dtypes <= set(supported):
        why = f"dtype {next(iter(dtypes))} is not supported (supported: {', '.join(supported)})"
    else:
        wanted = ", ".join(f"{n} {k}-D" for n, (k, _) in zip(names, CLASSES[kind][0][1]))
        why = f"the inputs must be {wanted}"
    raise ValueError(f"no implementation for inputs ({described}): {why}")
