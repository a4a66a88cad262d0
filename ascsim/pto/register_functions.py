"""SIMT mode (``pl.simt``), which ascsim does not simulate yet.

Scripts that import the name still load; a kernel that uses it stops with PyPTO Pro's
``UnsupportedFeatureError`` naming the line. (Register-level vector functions,
``@pl.vector_function`` and ``vf.*``, are :mod:`ascsim.pto.vf`.)
"""

from __future__ import annotations

from ascsim.pto.errors import UnsupportedFeatureError
from ascsim.sim.source import user_location

WHY = ("SIMT functions (pl.simt) are not simulated by ascsim; write the computation with tile "
       "operations (pl.add, pl.exp, ...) or a vector function")


def _refuse(*args, **kwargs):
    raise UnsupportedFeatureError(WHY, user_location())


class _Refusing:
    """A namespace whose every attribute refuses when called."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _refuse


simt = _Refusing()
