"""The PyPTO Pro front-end: ``pypto_pro.language`` kernels on the simulated Ascend 950.

PyPTO Pro (``import pypto_pro.language as pl``) compiles tile-level kernels for the 950 only.
Here a kernel's source is rewritten per core role (:mod:`.parse`) and run eagerly, and every
``pl.*`` tile operation is one or a few records of the instruction set (:mod:`ascsim.isa`)
executed by the same machine the pyasc front-end drives. The names are served under ``ascsim
run`` by :mod:`.aliases`.
"""
