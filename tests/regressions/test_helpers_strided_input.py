"""Fixed: gradient, value_and_grad, hessian and hessian_vector_product on a strided input (x[::2],
a transposed view) raised "the shadow's strides ... differs" though the user passed no shadow:
the helpers allocated shadows with np.zeros_like (contiguous). They now allocate shadows and
copies with the input's strides (arguments.zeros_like_layout, copy_same_layout).
"""
import numpy as np
from numba import njit

import enzyme_py


@njit
def weighted_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += (i + 1.0) * x[i] * x[i]
    return s


@njit
def weighted_squares_2d(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            s += (i + 2.0 * j + 1.0) * x[i, j] * x[i, j]
    return s


def test_strided_vector():
    x = np.arange(1.0, 7.0)[::2]                       # [1, 3, 5], stride 16
    w = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(enzyme_py.gradient(weighted_squares, x), 2 * w * x)
    value, g = enzyme_py.value_and_grad(weighted_squares)(x)
    assert value == np.sum(w * x * x)
    np.testing.assert_array_equal(g, 2 * w * x)
    np.testing.assert_array_equal(enzyme_py.hessian(weighted_squares, x), np.diag(2 * w))
    np.testing.assert_array_equal(
        enzyme_py.hessian_vector_product(weighted_squares, x, np.ones(3)), 2 * w)


def test_transposed_strided_view():
    x = np.arange(1.0, 13.0).reshape(3, 4)[:, ::2].T    # shape (2, 3), neither C nor F
    i, j = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
    w = i + 2.0 * j + 1.0
    g = enzyme_py.gradient(weighted_squares_2d, x)
    np.testing.assert_array_equal(g, 2 * w * x)
    H = enzyme_py.hessian(weighted_squares_2d, x)
    np.testing.assert_array_equal(H.reshape(6, 6), np.diag((2 * w).ravel()))


@njit
def squares_into(x, out):
    for i in range(x.shape[0]):
        out[i] = x[i] * x[i]


def test_jacobian_with_strided_input_and_output():
    x = np.arange(1.0, 7.0)[::2]
    out = np.zeros(6)[::2]
    for mode in ("forward", "reverse"):
        np.testing.assert_array_equal(enzyme_py.jacobian(squares_into, x, out=out, mode=mode),
                                      np.diag(2 * x))
