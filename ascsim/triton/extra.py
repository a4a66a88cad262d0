"""``triton.language.extra``: ``libdevice`` (``from triton.language.extra import libdevice``)
and ``cann.libdevice``, triton-ascend's spelling."""

from __future__ import annotations

import types

from ascsim.triton import libdevice

__path__: list = []  # a package: triton.language.extra.cann.libdevice imports under it
cann = types.SimpleNamespace(libdevice=libdevice)

__all__ = ["cann", "libdevice"]
