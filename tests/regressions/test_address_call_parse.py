"""A call of a C function at a fixed address (`call double inttoptr (i64 N to ptr)(...)`, how a
registered partial derivative is called) kept its result when parsed again: the parser took it
for an opaque instruction, so batched reverse mode (which parses the gradient again) printed
`%""` for the partial and LLVM refused the module."""
import ctypes
import ctypes.util

import numba
import numpy as np

from enzyme_py import BatchDuplicated, autodiff, register_derivative
from ir_passes import parse_module, print_module

libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")


def c_function(name):
    f = getattr(libm, name)
    f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double]
    return f


c_sinh, c_cosh = c_function("sinh"), c_function("cosh")


@numba.njit
def uses_sinh(x, y):
    for i in range(x.shape[0]):
        y[i] = c_sinh(x[i]) * x[i]


def test_address_call_keeps_its_result():
    text = ("define double @f(double %x) {\nentry:\n"
            "  %p = call double inttoptr (i64 1234 to ptr)(double %x)\n"
            "  %q = fmul double %p, %x\n  ret double %q\n}\n")
    out = print_module(parse_module(text))
    assert "%p = call double inttoptr (i64 1234 to ptr)(double %x)" in out
    assert "fmul double %p, %x" in out


def test_registered_partial_in_batched_reverse():
    register_derivative(c_sinh, [c_cosh])
    x = np.linspace(0.1, 1.0, 3)
    bdx = [np.zeros(3), np.zeros(3)]
    autodiff(uses_sinh, BatchDuplicated(x, bdx),
             BatchDuplicated(np.zeros(3), [np.ones(3), 2 * np.ones(3)]))
    exact = np.cosh(x) * x + np.sinh(x)
    assert np.allclose(bdx[0], exact, rtol=1e-13) and np.allclose(bdx[1], 2 * exact, rtol=1e-13)
