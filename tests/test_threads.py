"""The simulator's host-thread policy: one thread per launch, the host's pool for big products."""

from __future__ import annotations

import pytest
import torch

from ascsim.sim import threads


def test_launch_uses_one_thread_and_restores_the_callers_count():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with threads.launch_threads():
            assert torch.get_num_threads() == 1
            with threads.wide(threads.WIDE_PRODUCT_MACS):
                assert torch.get_num_threads() == 2
            assert torch.get_num_threads() == 1
            with threads.wide(threads.WIDE_PRODUCT_MACS - 1):
                assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_wide_outside_a_launch_changes_nothing():
    before = torch.get_num_threads()
    with threads.wide(10 * threads.WIDE_PRODUCT_MACS):
        assert torch.get_num_threads() == before


def test_a_failing_launch_still_restores_the_count():
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="kernel failed"), threads.launch_threads():
        raise RuntimeError("kernel failed")
    assert torch.get_num_threads() == before
    with threads.wide(10 * threads.WIDE_PRODUCT_MACS):
        assert torch.get_num_threads() == before
