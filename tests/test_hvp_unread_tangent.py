"""The Hessian-vector product entry returns f(x) and H v, not the directional derivative of
f: forward mode over the gradient leaves out the tangent stores into the return slot
(forward_mode's unread_tangents), so the tangent arithmetic of the primal part that only fed
them is deleted."""
import re

import numpy as np
from numba import njit

from enzyme_py.modes.hvp import compile_hvp


@njit
def energy(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        s += a * x[i] ** 3 + np.sin(x[i])
    return s


def test_entry_returns_the_value_and_the_product():
    x = np.linspace(0.1, 1.0, 7)
    v = np.random.default_rng(0).random(7)
    c = compile_hvp(energy, x, 2.0)
    g, hv = np.zeros_like(x), np.zeros_like(x)
    value = c.entry(x.copy(), 2.0, 1.0, g, v, hv)
    assert value == energy(x, 2.0)
    np.testing.assert_allclose(g, 6.0 * x ** 2 + np.cos(x), rtol=1e-13)
    np.testing.assert_allclose(hv, (12.0 * x - np.sin(x)) * v, rtol=1e-13)


def test_no_tangent_is_stored_into_the_return_slot():
    x = np.linspace(0.1, 1.0, 7)
    text = compile_hvp(energy, x, 2.0).generated
    body = text[text.index("define i32 @__enzyme_py_hvp"):]
    assert "%retptr.shadow.1" in body.splitlines()[0]        # the return slot's tangent
    assert not re.search(r"store double [^,]+, ptr %retptr\.shadow\.1\b", body)
