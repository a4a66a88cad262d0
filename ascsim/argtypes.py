"""``type=`` converters for the command line: a bad value stops argparse itself, which prints
the usage and ``argument --NAME: <why>`` and exits with status 2, before any work starts."""

from __future__ import annotations

import argparse


def positive_int(text: str) -> int:
    """An integer >= 1 (worker counts, table sizes)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def case_ids(text: str) -> tuple[int, ...] | None:
    """Comma-separated case ids, e.g. ``1,2,5`` (empty: every case)."""
    try:
        ids = tuple(int(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"wants comma-separated integers, got {text!r}") from None
    return ids or None
