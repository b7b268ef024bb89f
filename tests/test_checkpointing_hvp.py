"""Hessian-vector products over a checkpointed gradient: forward mode differentiates the reverse
gradient with its snapshots and recomputed steps (docs/checkpointing.md). Checked against the
full-tape product and against central differences of the gradient."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated
from enzyme_py.api import inspect
from enzyme_py.helpers import hessian, hessian_vector_product
from enzyme_py.modes.hvp import compile_hvp
from enzyme_py.modes.reverse import autodiff


@njit
def cubic_heat(u, alpha, steps):
    """Diffusion with a cubic sink, in place; returns the final state's energy."""
    n = u.shape[0]
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            ui = u[i]
            u[i] = ui + alpha * (left - 2.0 * ui + u[i + 1]) - 0.05 * ui * ui * ui
            left = ui
    e = 0.0
    for i in range(n):
        e += u[i] * u[i]
    return e


@njit
def damped_until(u, rate, tol):
    """A while loop: damp the state nonlinearly until its largest entry is below tol."""
    n = u.shape[0]
    it = 0
    while True:
        big = 0.0
        for i in range(n):
            u[i] = u[i] - rate * np.tanh(u[i])
            big = max(big, abs(u[i]))
        it += 1
        if big < tol or it >= 40:
            break
    e = 0.0
    for i in range(n):
        e += u[i] * u[i] * (1.0 + 0.1 * i)
    return e


CASES = {"cubic_heat": (cubic_heat, (0.3, 20)), "damped_until": (damped_until, (0.1, 0.05))}


def point(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return 0.5 * rng.standard_normal(n), rng.standard_normal(n)


def gradient(kernel, x, consts):
    d = np.zeros_like(x)
    autodiff(kernel, Duplicated(x.copy(), d), *consts)
    return d


# the fewest snapshots ("1B"), some more ("2KB", on the counted loop) and `auto`; a budget
# changes only how many snapshots the loop keeps
@pytest.mark.parametrize("name,memory", [("cubic_heat", "1B"), ("cubic_heat", "2KB"),
                                         ("cubic_heat", "auto"), ("damped_until", "1B"),
                                         ("damped_until", "auto")])
def test_hvp_equals_full_tape(name, memory):
    kernel, consts = CASES[name]
    x, v = point()
    g = inspect(kernel, Duplicated(x.copy(), np.zeros_like(x)), *consts, memory=memory)
    assert g.error is None and ".ckpt." in g.generated
    full = hessian_vector_product(kernel, x, v, *consts)
    ckpt = hessian_vector_product(kernel, x, v, *consts, memory=memory)
    assert np.array_equal(ckpt, full)
    assert np.abs(ckpt).max() > 1e-6     # not a vanishing product


@pytest.mark.parametrize("name", sorted(CASES))
def test_hvp_finite_differences_of_the_gradient(name):
    kernel, consts = CASES[name]
    x, v = point(seed=1)
    hv = hessian_vector_product(kernel, x, v, *consts, memory="1B")
    h = 1e-5
    fd = (gradient(kernel, x + h * v, consts) - gradient(kernel, x - h * v, consts)) / (2 * h)
    assert np.allclose(hv, fd, rtol=1e-6, atol=1e-7 * np.abs(fd).max())


def test_hessian_under_a_budget():
    """The full Hessian (batched products) under a budget: symmetric, equal to the tape's."""
    x, _ = point(n=6, seed=2)
    H = hessian(cubic_heat, x, 0.3, 9, memory="1B")
    assert np.array_equal(H, hessian(cubic_heat, x, 0.3, 9))
    assert np.allclose(H, H.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("memory", ["tape", "1B"])
def test_hvp_gradient_keeps_the_kernels_locations(memory):
    """The gradient forward mode differentiates carries the kernel's lines through LLVM's verifier
    and O2 (which would strip invalid debug info whole), checkpointed or not."""
    x, _ = point()
    text = compile_hvp(cubic_heat, x, 0.3, 20, memory=memory).gradient
    lines = text.splitlines()
    start = next(k for k, t in enumerate(lines) if t.startswith("define") and "hgrad" in t)
    assert "!dbg" in lines[start]
    body = lines[start:lines.index("}", start)]
    assert sum(", !dbg !" in t for t in body) > 10
    assert 'filename: "test_checkpointing_hvp.py"' in text
