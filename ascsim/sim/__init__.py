"""The machine: memories, cores, per-pipe timelines, scheduling, observers.

Nothing here knows pyasc names or Python syntax; the front-end in ``ascsim.asc`` maps API calls to
the calls of this package.
"""
