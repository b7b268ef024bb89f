"""Matrix products and norms inside kernels (rules/blas.py: gemm, gemv, dot, nrm2), each against
finite differences in reverse and forward mode (fd_modes.py): `C[:] = A @ B`,
`np.dot(A, B, out=C)` with C overwritten, `C += A @ B`, `M @ M.T`, `A @ x`, `x @ A`,
`np.linalg.norm`; C- and Fortran-ordered and strided operands (Numba copies those), float32 and
float64; an input overwritten after the product (copied into the arena), and no allocation on a
repeat gradient call (NRT statistics)."""
import math

import numpy as np
import pytest
from numba import njit
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import Const, Duplicated, compile_gradient
from enzyme_py.workspace import release_tape
from fd_modes import check_modes, check_reverse
from linalg_kernels import rnn


@njit
def matmul_into(A, B, C):
    C[:] = A @ B


@njit
def dot_out(A, B, C):
    np.dot(A, B, out=C)


@njit
def matmul_accumulate(A, B, C):
    C += A @ B


@njit
def gram(M):
    G = M @ M.T
    return np.sum(G * G)


@njit
def matvec(A, x):
    return np.sum(np.sin(A @ x))


@njit
def vecmat(x, A):
    y = x @ A
    return np.sum(y * y)


@njit
def norm_of(x):
    return np.linalg.norm(x) + np.linalg.norm(x[::2]) * x[0]


@njit
def product_then_overwrite(A, B, C):
    np.dot(A, B, out=C)
    s = np.sum(C * C)
    A[:] = 2.0 * A          # A's old value is needed by the reverse sweep of the product
    B *= B
    return s + np.sum(A) + np.sum(B)


@njit
def strided_operands(A, B):
    return np.sum(np.cos(A[::2, :] @ B[:, 1::2]))


def mat(r, shape, dtype, order="C"):
    a = np.asarray(r.uniform(-1, 1, shape), dtype=dtype)
    return np.asfortranarray(a) if order == "F" else a


DTYPES = [np.float64, np.float32]
# each order with one dtype: both orders and both dtypes are covered at half the compiles
LAYOUTS = [("C", np.float64), ("F", np.float32)]


@pytest.mark.parametrize("orders,dtype", [("CC", np.float64), ("FC", np.float32),
                                          ("CF", np.float64), ("FF", np.float32)])
@pytest.mark.parametrize("kernel", [matmul_into, dot_out, matmul_accumulate])
def test_matrix_products(kernel, orders, dtype):
    r = np.random.default_rng(1)
    A, B = mat(r, (3, 4), dtype, orders[0]), mat(r, (4, 5), dtype, orders[1])
    check_modes(kernel, A, B, mat(r, (3, 5), dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [((3, 4), (4, 1)), ((1, 4), (4, 3)), ((2, 2), (2, 2))])
def test_degenerate_shapes(shapes, dtype):
    """Numba calls gemv or dot when a dimension is 1."""
    r = np.random.default_rng(2)
    (m, k), (_, n) = shapes
    check_modes(matmul_into, mat(r, (m, k), dtype), mat(r, (k, n), dtype), mat(r, (m, n), dtype))


@pytest.mark.parametrize("order,dtype", LAYOUTS)
def test_gram(order, dtype):
    check_modes(gram, mat(np.random.default_rng(3), (3, 5), dtype, order))


@pytest.mark.parametrize("order,dtype", LAYOUTS)
def test_matvec_and_vecmat(order, dtype):
    r = np.random.default_rng(4)
    check_modes(matvec, mat(r, (4, 3), dtype, order), mat(r, 3, dtype))
    check_modes(vecmat, mat(r, 4, dtype), mat(r, (4, 3), dtype, order))


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm(dtype):
    check_modes(norm_of, mat(np.random.default_rng(5), 7, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_operands(dtype):
    r = np.random.default_rng(6)
    check_modes(strided_operands, mat(r, (6, 3), dtype), mat(r, (3, 4), dtype))


def test_inputs_overwritten_after_the_product():
    r = np.random.default_rng(7)
    check_modes(product_then_overwrite, mat(r, (3, 4), np.float64), mat(r, (4, 2), np.float64),
                mat(r, (3, 2), np.float64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_rnn_state_overwritten_each_step(dtype):
    r = np.random.default_rng(8)
    W, U = mat(r, (4, 4), dtype) * 0.5, mat(r, (4, 3), dtype)
    check_modes(rnn, W, U, mat(r, (5, 3), dtype), mat(r, 4, dtype))


@njit
def product_loop(A, B, C, steps):
    # each step overwrites B after the product: the reverse sweep needs every B (the arena)
    for s in range(steps):
        np.dot(A, B, out=C)
        for i in range(B.shape[0]):
            for j in range(B.shape[1]):
                B[i, j] = math.tanh(C[i, j])


def test_product_in_a_loop_against_finite_differences():
    r = np.random.default_rng(9)
    A = mat(r, (4, 4), np.float64) * 0.7
    check_reverse(product_loop, A, mat(r, (4, 3), np.float64), mat(r, (4, 3), np.float64), 3)


def test_product_in_a_loop_allocates_nothing_on_repeat_calls():
    r = np.random.default_rng(10)
    A, B, C = mat(r, (4, 4), np.float64) * 0.7, mat(r, (4, 3), np.float64), np.zeros((4, 3))
    dA, dB, dC = np.zeros_like(A), np.zeros_like(B), np.ones_like(C)
    g = compile_gradient(product_loop, Duplicated(A, dA), Duplicated(B, dB), Duplicated(C, dC), Const(3))
    release_tape(g)
    entry = g.entry.unchecked       # the gradient's own allocations (no strong-zero copies)

    @njit
    def run(A, B, C, steps, dA, dB, dC, reps):
        for _ in range(reps):
            entry(A, B, C, steps, dA, dB, dC, 1.0)

    def calls(reps):
        """NRT (allocations, frees) of `reps` gradient calls beyond unboxing the arguments."""
        out = []
        for k in (0, reps):
            s = rtsys.get_allocation_stats()
            run(A, B, C, 3, dA, dB, dC, k)
            t = rtsys.get_allocation_stats()
            out.append((t.alloc - s.alloc, t.free - s.free))
        return out[1][0] - out[0][0], out[1][1] - out[0][1]

    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        run(A, B, C, 3, dA, dB, dC, 0)
        s0 = rtsys.get_allocation_stats()
        first = calls(1)
        assert first[0] > first[1]                 # the tape and the arena are kept
        assert calls(1) == (0, 0)                  # a repeat call allocates nothing
        assert calls(5) == (0, 0)
        assert release_tape(g)
        s1 = rtsys.get_allocation_stats()
        assert s1.alloc - s1.free == s0.alloc - s0.free   # nothing leaked
    finally:
        if not was:
            _nrt_python.memsys_disable_stats()


@njit
def vdot_of(x, y):
    return np.vdot(x, y) * np.dot(x, x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_vdot(dtype):
    r = np.random.default_rng(11)
    check_modes(vdot_of, mat(r, 5, dtype), mat(r, 5, dtype))
