"""Fixed: capture failed with "Linking globals named '__excinfo_unwrap_args<hash>': symbol
multiply defined!" on np.trapezoid, np.corrcoef and `X[:] = np.linalg.solve(A, B)` with a 2-D B
(found by the NumPy coverage table, python -m tools.numpy_coverage).

Root cause: Numba defines a helper per exception signature, with external linkage, in every
module that raises that exception with run-time arguments; the kernel and a callee both did, and
linking their recorded texts found two definitions. Functions defined externally in more than one
text are now linkonce_odr (bridge/capture.merge_duplicates): the same hash is the same body.
The solve case (`X[:] = np.linalg.solve(A, B)`, X then used) is checked against finite
differences in test_capture_same_symbol_in_two_modules.py (test_solve_into_then_used).
"""
import numpy as np
from numba import njit

from fd_modes import check_modes


@njit
def area(y, x):
    return np.trapezoid(y * y, x)


def test_trapezoid():
    check_modes(area, np.linspace(0.2, 1.0, 6), np.linspace(0.0, 1.5, 6) ** 1.2)
