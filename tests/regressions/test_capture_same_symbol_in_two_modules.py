"""User reproducer: `X[:] = np.linalg.solve(A, B)` with a 2-D B failed in capture with
"Linking globals named '__excinfo_unwrap_args<sha1>': symbol multiply defined".

Numba names the function that boxes a dynamic exception's arguments by a hash of their types,
not by the library that emits it. The broadcast of `X[:] = ...` and the solve's shape checks
each compile a library raising the same shape error, so two recorded modules define that
function, and capture linked them as they were recorded (external). Numba's own linker makes
every library's definitions linkonce_odr; capture.link_texts now does the same for a symbol a
module linked earlier already defines (fixed).
"""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, autodiff
from enzyme_py.bridge.capture import link_texts
from fd_modes import check_modes


@njit
def solve_into(A, B, X):
    X[:] = np.linalg.solve(A, B)


@njit
def solve_into_then_use(A, B, X):
    X[:] = np.linalg.solve(A, B)
    return np.sum(np.sin(X))


def _operands(dtype, n=3, k=2):
    r = np.random.default_rng(16)
    A = (r.uniform(-1, 1, (n, n)) + n * np.eye(n)).astype(dtype)
    return A, r.uniform(-1, 1, (n, k)).astype(dtype), np.zeros((n, k), dtype)


def test_solve_into_an_output_against_finite_differences():
    # the seed on X's final value goes back to A and B; X's old value has no influence. The
    # clash is between symbol names, the same for every dtype: float64 only (float32 solves
    # with a matrix right-hand side: tests/rule_cases/lapack.py)
    check_modes(solve_into, *_operands(np.float64))


def test_solve_into_then_used():
    check_modes(solve_into_then_use, *_operands(np.float64, 4, 3))


def test_broadcast_error_still_raised():
    A, B, _ = _operands(np.float64)
    X = np.zeros((3, 3))            # (3, 2) cannot be written into (3, 3)
    with pytest.raises(ValueError):
        autodiff(solve_into, Duplicated(A, np.zeros_like(A)), Duplicated(B, np.zeros_like(B)),
                 Duplicated(X, np.ones_like(X)))


def test_link_keeps_the_first_of_two_definitions():
    one = "define i32 @f() {\n  ret i32 1\n}\ndefine i32 @g() {\n  %r = call i32 @f()\n  ret i32 %r\n}"
    two = "define i32 @f() {\n  ret i32 1\n}\ndefine i32 @h() {\n  %r = call i32 @f()\n  ret i32 %r\n}"
    module = link_texts([one, two])
    assert {fn.name for fn in module.functions} == {"f", "g", "h"}
