"""``pypto``: the names PyPTO Pro's tests import from it (the ``options`` decorator)."""

from __future__ import annotations


def options(**settings):
    """``@pypto.options(pass_options=...)``: compiler pass settings, nothing to simulate."""
    def decorate(fn):
        return fn
    return decorate


__all__ = ["options"]
