"""Register-level vector functions (``@pl.vector_function``, ``vf.*``); SIMT mode is
:mod:`ascsim.pto.simt`.

These are a separate execution domain of the 950's AIV (a register file, masks)
that ascsim does not simulate yet. Scripts that import the names still load; a kernel that uses
them stops with PyPTO Pro's ``UnsupportedFeatureError`` naming the line.
"""

from __future__ import annotations

from ascsim.pto.errors import UnsupportedFeatureError
from ascsim.sim.source import user_location

WHY = ("register-level vector functions (vf.*, @pl.vector_function) are not simulated "
       "by ascsim; write the computation with tile operations (pl.add, pl.exp, ...)")


def _refuse(*args, **kwargs):
    raise UnsupportedFeatureError(WHY, user_location())


class _Refusing:
    """A namespace whose every attribute refuses when called."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _refuse


Vf = _Refusing()
from ascsim.pto.simt import simt  # noqa: E402,F401 - pl.simt


def vector_function(fn=None, **options):
    """``@pl.vector_function``: the decorated function refuses when a kernel calls it."""
    def decorate(f):
        def refused(*args, **kwargs):
            _refuse()
        refused.__name__ = f.__name__
        refused.__module__ = "ascsim.pto.register_functions"
        return refused
    return decorate(fn) if fn is not None else decorate
