"""Host-side libraries of the pyasc API (``asc.lib.host``: tiling; ``asc.lib.runtime``)."""
