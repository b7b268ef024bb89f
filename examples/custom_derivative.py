"""Differentiate a kernel that calls an external C function through ctypes.

enzyme_py cannot see inside a C function, so it refuses such a call (UnsupportedError) until you
register the function's partial derivatives, given as C functions of the same arguments.
Here the external function is libm's `sinh`, called through ctypes; its derivative is libm's
`cosh`. The same works for your own compiled library (ctypes.CDLL("./libmine.so")) or cffi.
"""
import ctypes
import ctypes.util

import numba
import numpy as np

from enzyme_py import Duplicated, UnsupportedError, autodiff, check_gradient, register_derivative

libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def c_function(name):
    f = getattr(libm, name)
    f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double]
    return f


c_sinh, c_cosh = c_function("sinh"), c_function("cosh")


@numba.njit
def kernel(x, y):
    for i in range(x.shape[0]):
        y[i] = c_sinh(x[i]) * x[i]


def main():
    x = np.linspace(0.1, 1.0, 5)
    try:
        autodiff(kernel, Duplicated(x, np.zeros(5)), Duplicated(np.zeros(5), np.ones(5)))
    except UnsupportedError as e:
        print("before registering:", str(e).splitlines()[0])
    register_derivative(c_sinh, [c_cosh])       # d sinh(x) / dx = cosh(x)
    dx = np.zeros(5)
    autodiff(kernel, Duplicated(x, dx), Duplicated(np.zeros(5), np.ones(5)))
    exact = np.cosh(x) * x + np.sinh(x)
    print(f"{'x':>6} {'enzyme_py':>12} {'exact':>12}")
    for xi, a, b in zip(x, dx, exact):
        print(f"{xi:6.2f} {a:12.8f} {b:12.8f}")
    rep = check_gradient(kernel, Duplicated(x, np.zeros(5)), Duplicated(np.zeros(5), np.ones(5)))
    print("finite differences agree:", rep.passed)
    return np.allclose(dx, exact, rtol=1e-12) and rep.passed


if __name__ == "__main__":
    raise SystemExit(0 if main() else 1)
