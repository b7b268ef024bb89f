"""User reproducer: a kernel raising an exception with run-time arguments
(`raise ValueError("too big at", i, y[i])`).

- Reverse mode raised `RuntimeError: Error creating Python tuple from runtime exception
  arguments` instead of the kernel's ValueError: the code that boxes the arguments checks its
  Numba environment, a global the gradient's library never set (fixed: link.compile_library
  points the environment globals at capture's environments).
- Forward mode refused the kernel ("a pointer into differentiable memory is stored into memory
  that has no shadow"): the exception's arguments (a differentiable y[i]) go into fresh memory
  whose pointer is stored into the caller's exception slot. After that was allowed, each raising
  call leaked two shadow allocations of that memory (fixed: analysis/forward_activity.py gives
  no shadows or tangents to blocks from which only failing returns are reached).
"""
import numpy as np
import pytest
from numba import njit
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import BatchDuplicated, Duplicated, Forward, autodiff


@njit
def bounded_double(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * 2.0
        if y[i] > 3.0:
            raise ValueError("too big at", i, y[i])


def _calls(mode, x):
    y = np.zeros(3)
    if mode == "reverse":
        return autodiff(bounded_double, Duplicated(x, np.zeros(3)), Duplicated(y, np.ones(3)))
    if mode == "forward":
        return autodiff(bounded_double, Duplicated(x, np.ones(3)), Duplicated(y, np.zeros(3)),
                        mode=Forward)
    return autodiff(bounded_double, BatchDuplicated(x, (np.ones(3), np.zeros(3))),
                    BatchDuplicated(y, (np.zeros(3), np.zeros(3))), mode=Forward)


@pytest.mark.parametrize("mode", ["reverse", "forward", "batched forward"])
def test_same_exception_with_its_arguments_and_no_leak(mode):
    with pytest.raises(ValueError) as info:
        _calls(mode, np.array([1.0, 1.2, 2.0]))
    assert info.value.args == ("too big at", 2, 4.0)
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(200):
            with pytest.raises(ValueError):
                _calls(mode, np.array([1.0, 1.2, 2.0]))
        after = rtsys.get_allocation_stats()
    finally:
        if not was:
            _nrt_python.memsys_disable_stats()
    assert after.alloc - after.free == before.alloc - before.free


def test_gradients_when_nothing_raises():
    x = np.array([1.0, 1.2, 1.4])
    dx, y, dy = np.zeros(3), np.zeros(3), np.ones(3)
    autodiff(bounded_double, Duplicated(x, dx), Duplicated(y, dy))
    np.testing.assert_array_equal(dx, [2.0, 2.0, 2.0])
    ty = np.zeros(3)
    autodiff(bounded_double, Duplicated(x, np.array([1.0, 0.5, 0.0])), Duplicated(np.zeros(3), ty),
             mode=Forward)
    np.testing.assert_array_equal(ty, [2.0, 1.0, 0.0])
