"""Fixed: a prange body that raised in the forward sweep of a checkpointed time loop gave the
caller the checkpoint's RuntimeError ("took another exit when it ran again in the reverse
sweep") instead of the body's exception, after running the reverse sweep on the failed state.

Root cause: the loop's forward runs the plain steps, whose launches leave the body's exception
set and go on; nothing stopped the gradient before its reverse. The host's pending error now
sets the gradient's failure flag after the loop's forward (checkpoint/schedule.py's
forward_failure), as a failing taped launch does."""
import numpy as np
import pytest
from numba import njit, prange

from enzyme_py import Duplicated
from enzyme_py.api import inspect
from enzyme_py.modes.reverse import autodiff


@njit(parallel=True, boundscheck=True)
def lookup_growth(u, rate, steps):
    m = rate.shape[0]
    for s in range(steps):
        for i in prange(u.shape[0]):
            u[i] = u[i] * (1.0 + 0.1 * rate[int(u[i] * m)])


def test_body_exception_reaches_the_caller():
    g = inspect(lookup_growth, Duplicated(np.ones(3), np.ones(3)), np.ones(4), 3, memory="1B")
    assert g.error is None and ".ckpt." in g.generated
    u = np.array([0.2, 0.9, 0.4])          # 0.9 leaves the table at the second step
    shadow = np.ones(3)
    with pytest.raises(IndexError, match="index is out of bounds"):
        autodiff(lookup_growth, Duplicated(u, shadow), np.linspace(0.5, 1.0, 4), 3, memory="1B")
    assert np.array_equal(shadow, np.ones(3))
    u, du = np.array([0.2, 0.3]), np.ones(2)
    autodiff(lookup_growth, Duplicated(u, du), np.linspace(0.5, 1.0, 4), 2, memory="1B")
    rates = np.linspace(0.5, 1.0, 4)
    want = np.ones(2)                       # d u_T / d u_0, rates constant near the point
    y = np.array([0.2, 0.3])
    for _ in range(2):
        r = 1.0 + 0.1 * rates[(y * 4).astype(int)]
        want, y = want * r, y * r
    assert np.allclose(du, want, rtol=1e-14)
