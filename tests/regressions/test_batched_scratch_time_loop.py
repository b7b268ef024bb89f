"""Fixed: batched reverse (BatchDuplicated) of an in-place time loop with a scratch array raised
"active data is stored into constant memory (a Const argument)" though no argument was Const;
reverse mode took the kernel.

Cause: batched reverse is forward mode (k lanes) over the reverse gradient, with the gradient's
primal arguments Const. The gradient built for disjoint memory restores the scratch array's
overwritten values from its tape in the reverse sweep, and forward mode takes those tape loads
for active data stored into a Const argument. modes/batched.py now builds the variant for
aliased memory (correct for disjoint memory too) when the disjoint one is refused so.
"""
import numpy as np
from numba import njit

from enzyme_py import BatchDuplicated, Duplicated, autodiff


@njit
def diffuse(u, scratch, steps):
    n = u.shape[0]
    for _ in range(steps):
        scratch[:] = u
        for i in range(1, n - 1):
            u[i] = scratch[i] + 0.1 * (scratch[i - 1] - 2.0 * scratch[i] + scratch[i + 1]) * scratch[i]
    return np.sum(u * u)


def test_batched_matches_reverse_per_seed():
    u0 = np.linspace(0.0, 1.0, 6)
    seeds = (1.0, -2.5)
    expect = []
    for s in seeds:
        du = np.zeros(6)
        autodiff(diffuse, Duplicated(u0.copy(), du), Duplicated(np.zeros(6), np.zeros(6)), 3,
                 seed=s)
        expect.append(du)
    dus = (np.zeros(6), np.zeros(6))
    u = u0.copy()
    autodiff(diffuse, BatchDuplicated(u, dus), BatchDuplicated(np.zeros(6), (np.zeros(6),
             np.zeros(6))), 3, seed=seeds)
    for got, want in zip(dus, expect):
        np.testing.assert_allclose(got, want, rtol=1e-14)
    # against central differences of the first lane
    h = 1e-6
    fd = np.zeros(6)
    for i in range(6):
        up, um = u0.copy(), u0.copy()
        up[i] += h
        um[i] -= h
        fd[i] = (diffuse(up, np.zeros(6), 3) - diffuse(um, np.zeros(6), 3)) / (2 * h)
    np.testing.assert_allclose(dus[0], fd, rtol=1e-6, atol=1e-9)
