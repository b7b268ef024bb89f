"""Fixed: capture failed with "Linking globals named '__excinfo_unwrap_args<hash>': symbol
multiply defined!" on np.trapezoid, np.corrcoef and `X[:] = np.linalg.solve(A, B)` with a 2-D B
(found by the NumPy coverage table, python -m tools.numpy_coverage).

Root cause: Numba defines a helper per exception signature, with external linkage, in every
module that raises that exception with run-time arguments; the kernel and a callee both did, and
linking their recorded texts found two definitions. Functions defined externally in more than one
text are now linkonce_odr (bridge/capture.merge_duplicates): the same hash is the same body.
"""
import numpy as np
from numba import njit

from fd_modes import check_modes


@njit
def area(y, x):
    return np.trapezoid(y * y, x)


@njit
def solve_into(A, B, X):
    X[:] = np.linalg.solve(A, B)
    return np.sum(X * X)


def test_trapezoid():
    check_modes(area, np.linspace(0.2, 1.0, 6), np.linspace(0.0, 1.5, 6) ** 1.2)


def test_solve_with_a_matrix_right_hand_side_into_an_output():
    r = np.random.default_rng(0)
    A = r.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)
    check_modes(solve_into, A, r.uniform(-1, 1, (3, 2)), np.zeros((3, 2)))
