"""A plain call that compiles the kernel after its gradient was built (the gradient came first)
keeps the gradient when Numba compiled the same values the gradient's copy did; it is rebuilt
only when a value changed in between. Before, every such first compile dropped the gradient and
its capture: the next `autodiff` built everything again, and a `compile_gradient` after the
plain call returned a new, never-run gradient (explain's checkpoint figures read zeros)."""
import numba
import numpy as np

from enzyme_py import Active, Duplicated, autodiff
from enzyme_py.api import compile_gradient
from enzyme_py.explain import checkpointed_loops
from enzyme_py.modes.reverse import compile_count

SCALE = 2.0


def _make():
    @numba.njit
    def k(x):
        return SCALE * x[0] * x[0]
    return k


@numba.njit
def heat(u, alpha, steps):
    n = u.shape[0]
    r = alpha * 0.5
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            ui = u[i]
            u[i] = ui + r * (left - 2.0 * ui + u[i + 1])
            left = ui


def _grad(k, x):
    dx = np.zeros_like(x)
    autodiff(k, Duplicated(x, dx))
    return dx


def test_same_values_no_rebuild():
    k, x = _make(), np.array([1.5])
    np.testing.assert_allclose(_grad(k, x), [6.0])
    builds = compile_count()
    assert k(x) == 4.5                       # the first plain compile, same SCALE
    np.testing.assert_allclose(_grad(k, x), [6.0])
    assert compile_count() == builds


def test_changed_value_rebuilds():
    global SCALE
    k, x = _make(), np.array([1.5])
    np.testing.assert_allclose(_grad(k, x), [6.0])
    try:
        SCALE = 3.0
        assert k(x) == 6.75                  # Numba compiles SCALE 3 now
        np.testing.assert_allclose(_grad(k, x), [9.0])
    finally:
        SCALE = 2.0


def test_checkpoint_figures_after_a_plain_call():
    n, steps = 200, 400
    u0 = np.sin(np.linspace(0.0, np.pi, n))
    du = np.ones(n)
    args = (Duplicated(u0.copy(), du), Active(0.4), steps)
    autodiff(heat, *args, memory="64KB")
    heat(u0.copy(), 0.4, steps)
    (c,) = checkpointed_loops(compile_gradient(heat, *args, memory="64KB"))
    assert c.steps == steps and c.snapshot_bytes == n * 8 + 32 and c.recomputed > 0
