"""Fixed: a Hessian-vector product over a checkpointed gradient (memory= a budget) failed with
"differentiable memory is copied into memory that has no shadow".

Root cause: the loop's forward copies the state into a snapshot whose pointer it loads from the
checkpoint frame's slot table (local memory); forward activity gave a shadow only to memcpy
destinations whose root is local memory, not to memory reached through a pointer loaded from it.
A memcpy from shadowed memory now requires a shadow for its destination however it is reached
(analysis/forward_activity.py, soft_require)."""
import numpy as np
from numba import njit

from enzyme_py.helpers import hessian_vector_product


@njit
def square_steps(u, steps):
    """u <- u - 0.1 u^2, in place, `steps` times; returns sum(u^2)."""
    for s in range(steps):
        for i in range(u.shape[0]):
            u[i] = u[i] - 0.1 * u[i] * u[i]
    e = 0.0
    for i in range(u.shape[0]):
        e += u[i] * u[i]
    return e


def gradient(x, steps):
    """Analytic: per entry, d/dx of f(f(...f(x))) squared, f(y) = y - 0.1 y^2."""
    y, d = x.copy(), np.ones_like(x)
    for _ in range(steps):
        d = d * (1.0 - 0.2 * y)
        y = y - 0.1 * y * y
    return 2.0 * y * d


def test_hvp_under_a_budget():
    x = np.array([0.3, -0.5, 0.8])
    v = np.array([1.0, 0.5, -2.0])
    hv = hessian_vector_product(square_steps, x, v, 3, memory="1B")
    h = 1e-5
    fd = (gradient(x + h * v, 3) - gradient(x - h * v, 3)) / (2 * h)
    assert np.allclose(hv, fd, rtol=1e-7, atol=1e-9)
    assert np.array_equal(hv, hessian_vector_product(square_steps, x, v, 3))
