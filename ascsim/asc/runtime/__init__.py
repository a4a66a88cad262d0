"""``asc.runtime``: the launch configuration (``asc.runtime.config``)."""
