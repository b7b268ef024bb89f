"""Known leak (strict xfail): forward mode does not release the shadows of fresh arrays kept in a
Numba list (`[x * 2.0, ...]`, `parts.append(x[i:j] * k)`); views of the arguments are fine.

A shadow list is allocated without the list's element destructor (transforms/forward/
allocations.handle, rules/effects.Allocator.element_dtor): its items are shadows, and an item
without a shadow (an argument's meminfo) is stored as itself, which the destructor would release
once more than the kernel took. The reference the primal list takes on a fresh item is mirrored
on the item's shadow handle, and nothing drops it. Tangents stay right; memory is lost.
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff
from nrt_stats import unfreed


@njit
def windows(x):
    parts = []
    for i in range(x.size - 2):
        parts.append(x[i:i + 3] * (i + 1.0))
    s = 0.0
    for p in parts:
        s += np.sum(p * p)
    return s


@pytest.mark.xfail(strict=True, reason="forward mode leaks the shadows of fresh list items")
def test_fresh_item_shadows_released():
    x = np.linspace(0.2, 1.0, 7)
    call = lambda: autodiff(windows, Duplicated(x, np.ones(7)), mode=Forward)   # noqa: E731
    assert unfreed(call, 10)[1] == 0
