"""The machine: memories, cores, per-pipe timelines, scheduling, observers.

Nothing here knows a kernel language's names or syntax: front-ends (``ascsim.asc`` for pyasc) map
their calls onto the instruction records of :mod:`ascsim.isa`, which ``Core.execute`` runs.
"""
