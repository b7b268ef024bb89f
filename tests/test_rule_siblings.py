"""sin's adjoint needs cos(x) and cos's needs sin(x): when the primal computes both in one
block, the reverse sweep uses the primal's values (availability.Operands.sibling) instead of a
second sin and cos, which LLVM cannot merge with the forward ones across a branch."""
import math

import numpy as np
from numba import njit

from enzyme_py import Active, Duplicated, check_gradient, inspect


@njit
def rotate(r, out):
    t = r[0] * r[0] + r[1] * r[1]
    if t != 0.0:
        th = math.sqrt(t)
        c, s = math.cos(th), math.sin(th)
        out[0] = c * r[0] - s * r[1]
        out[1] = s * r[0] + c * r[1]
    else:
        out[0] = r[0]
        out[1] = r[1]


@njit
def in_a_loop(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        s += math.sin(a * x[i]) * math.cos(a * x[i])
    return s


def _calls(text, name):
    """Calls of llvm.<name>.f64 in the gradient function of a generated module."""
    body = text[text.index("define i32 @__enzyme_py_grad"):]
    body = body[:body.index("\n}\n")]
    return body.count(f"call double @llvm.{name}.f64(")


def test_one_sin_and_one_cos():
    args = (Duplicated(np.array([0.3, -0.7]), np.zeros(2)),
            Duplicated(np.zeros(2), np.array([1.0, -2.0])))
    assert check_gradient(rotate, *args).passed
    g = inspect(rotate, *args)
    assert g.error is None
    assert _calls(g.generated, "sin") == 1 and _calls(g.generated, "cos") == 1


def test_in_a_loop():
    x = np.linspace(-1.0, 1.0, 9)
    assert check_gradient(in_a_loop, Duplicated(x, np.zeros(9)), Active(0.8)).passed
