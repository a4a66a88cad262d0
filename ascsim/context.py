"""Process-wide simulation settings: which SoC is being simulated and on which backend.

pyasc keeps this state in its runtime library (``rt.set_soc_version``); ascsim keeps it here so
that the host tiling API, the runtime shim and the launcher all agree on one machine.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ascsim.hw import DEFAULT_SOC, SocSpec, get_soc


@dataclass
class _Settings:
    soc: SocSpec | None = None
    backend: str = "Model"
    # The SoC asked for on the command line (``ascsim run -v``); scripts that call
    # ``set_platform(backend)`` without a platform get this one.
    requested: str = DEFAULT_SOC


_settings = _Settings()
_lock = threading.Lock()


def current_soc() -> SocSpec:
    """The SoC being simulated (Ascend910B1 unless a script or the runner chose another)."""
    with _lock:
        if _settings.soc is None:
            _settings.soc = get_soc(DEFAULT_SOC)
        return _settings.soc


def set_soc(name_or_spec: str | SocSpec) -> SocSpec:
    """Select the simulated SoC by name (``"Ascend910B4"``) or by spec."""
    spec = name_or_spec if isinstance(name_or_spec, SocSpec) else get_soc(name_or_spec)
    with _lock:
        _settings.soc = spec
    return spec


def current_backend() -> str:
    return _settings.backend


def set_backend(name: str) -> None:
    _settings.backend = name


def requested_soc() -> str:
    return _settings.requested


def request_soc(name: str) -> SocSpec:
    """Make ``name`` the default SoC (and the current one) for scripts run by the runner."""
    spec = set_soc(name)
    _settings.requested = spec.name
    return spec
