"""Kernels of the operator library, written in the same kernel API as user kernels."""
