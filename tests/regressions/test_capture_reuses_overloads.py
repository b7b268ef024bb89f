"""Capture built every `@overload` implementation the kernel calls a second time.

Numba caches an overload's implementation by the compile flags of the function being typed.
The private copy that capture compiles has flags of its own (debug info, no machine code, no
wrappers), so every lookup missed: the implementations a plain call had compiled were built
and compiled again for each gradient (gauss_loglik's first build: capture 1.3 s, 0.35 s
after). Capture now looks implementations up under the kernel's plain flags (fixed).
"""
import numpy as np
from numba import njit
from numba.extending import overload

from enzyme_py import Duplicated, autodiff
from enzyme_py.bridge.capture import forget_recorded_ir, iter_libraries

BUILT = []


def scaled_square(x):
    raise NotImplementedError


@overload(scaled_square)
def _scaled_square(x):
    BUILT.append(x)            # runs once per implementation Numba builds

    def impl(x):
        return 3.0 * x * x
    return impl


@njit
def kernel(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += scaled_square(x[i]) + np.sin(x[i])
    return s


def test_plain_call_and_gradient_share_one_implementation():
    x = np.linspace(0.1, 1.0, 5)
    assert np.isclose(kernel(x), np.sum(3 * x * x + np.sin(x)))
    built = len(BUILT)
    dx = np.zeros_like(x)
    autodiff(kernel, Duplicated(x, dx))
    np.testing.assert_allclose(dx, 6 * x + np.cos(x), rtol=1e-12)
    assert len(BUILT) == built, "capture built the overload's implementation again"


@njit
def kernel_unrecorded(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += scaled_square(x[i]) * x[i]
    return s


def test_implementation_compiled_before_import_is_built_again_for_the_copy():
    # as if the plain call had compiled before enzyme_py was imported: no recorded texts,
    # so the copy builds (and records) its own implementation, as before the reuse
    x = np.linspace(0.1, 1.0, 4)
    kernel_unrecorded(x)
    (cres,) = kernel_unrecorded.overloads.values()
    for lib in iter_libraries(cres.library):
        forget_recorded_ir(lib)
    built = len(BUILT)
    dx = np.zeros_like(x)
    autodiff(kernel_unrecorded, Duplicated(x, dx))
    np.testing.assert_allclose(dx, 9 * x * x, rtol=1e-12)
    assert len(BUILT) == built + 1
