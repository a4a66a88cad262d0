"""``asc.runtime``: the launch configuration (``asc.runtime.config``), the JIT entry points
(``asc.runtime.jit``) and the launcher hook (``asc.runtime.launcher``)."""
