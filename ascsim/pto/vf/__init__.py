"""PyPTO Pro's register-level vector functions: ``@pl.vector_function`` and ``vf.*``.

The front-end of the 950's RegBase VF mode: :mod:`~ascsim.pto.vf.function` rewrites and runs
the bodies, :mod:`~ascsim.pto.vf.ops` maps each ``vf.*`` call to one register-op record, which
the machine executes on the core's VF register file (:mod:`ascsim.sim.exec_vf`).
"""

from ascsim.pto.vf.enums import ENUMS
from ascsim.pto.vf.function import VectorFunction, vector_function
from ascsim.pto.vf.ops import VF, Vf

__all__ = ["ENUMS", "VF", "VectorFunction", "Vf", "vector_function"]
