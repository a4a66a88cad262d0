"""Triton for Ascend (triton-ascend) kernels on the simulated chip.

``import triton`` / ``import triton.language as tl`` are served from here under ``ascsim run``
(:mod:`ascsim.triton.aliases`). A kernel's index arithmetic stays known to the front-end, as to
the compiler (:mod:`ascsim.triton.tensor`); its loads, stores and tile operations become
instruction records (:mod:`ascsim.triton.memory`, :mod:`ascsim.triton.vector`) placed in UB by
:mod:`ascsim.triton.ub` and ordered by :mod:`ascsim.triton.ordering`.
"""
