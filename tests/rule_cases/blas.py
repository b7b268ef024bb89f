"""Cases of rules/blas.py: gemm, gemv, dot and nrm2 through `C[:] = A @ B`, `np.dot(A, B, out=C)`
with C overwritten, `C += A @ B`, `M @ M.T`, `A @ x`, `x @ A`, `np.linalg.norm`, `np.vdot`;
C- and Fortran-ordered and strided operands (Numba copies those), degenerate shapes (Numba calls
gemv or dot when a dimension is 1), float32 and float64; inputs overwritten after the product
(copied into the arena), an RNN's state overwritten each step, a product in a loop."""
import math

import numpy as np
from numba import njit

from linalg_kernels import rnn

from . import DTYPES, LAYOUTS, Case


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


@njit
def product_loop(A, B, C, steps):
    # each step overwrites B after the product: the reverse sweep needs every B (the arena)
    for s in range(steps):
        np.dot(A, B, out=C)
        for i in range(B.shape[0]):
            for j in range(B.shape[1]):
                B[i, j] = math.tanh(C[i, j])


@njit
def vdot_of(x, y):
    return np.vdot(x, y) * np.dot(x, x)


def mat(r, shape, dtype, order="C"):
    a = np.asarray(r.uniform(-1, 1, shape), dtype=dtype)
    return np.asfortranarray(a) if order == "F" else a


def _products(orders, dtype):
    r = np.random.default_rng(1)
    A, B = mat(r, (3, 4), dtype, orders[0]), mat(r, (4, 5), dtype, orders[1])
    return A, B, mat(r, (3, 5), dtype)


def _degenerate(shapes, dtype):
    r = np.random.default_rng(2)
    (m, k), (_, n) = shapes
    return mat(r, (m, k), dtype), mat(r, (k, n), dtype), mat(r, (m, n), dtype)


def _matvec(order, dtype, vector_first=False):
    r = np.random.default_rng(4)
    A, x = mat(r, (4, 3), dtype, order), mat(r, 3, dtype)
    return (mat(r, 4, dtype), mat(r, (4, 3), dtype, order)) if vector_first else (A, x)


def _strided(dtype):
    r = np.random.default_rng(6)
    return mat(r, (6, 3), dtype), mat(r, (3, 4), dtype)


def _overwritten():
    r = np.random.default_rng(7)
    return mat(r, (3, 4), np.float64), mat(r, (4, 2), np.float64), mat(r, (3, 2), np.float64)


def _rnn(dtype):
    r = np.random.default_rng(8)
    W, U = mat(r, (4, 4), dtype) * 0.5, mat(r, (4, 3), dtype)
    return W, U, mat(r, (5, 3), dtype), mat(r, 4, dtype)


def _loop():
    r = np.random.default_rng(9)
    A = mat(r, (4, 4), np.float64) * 0.7
    return A, mat(r, (4, 3), np.float64), mat(r, (4, 3), np.float64), 3


def _vdot(dtype):
    r = np.random.default_rng(11)
    return mat(r, 5, dtype), mat(r, 5, dtype)


def _dt(dtype) -> str:
    return np.dtype(dtype).name


PRODUCT_LAYOUTS = [("CC", np.float64), ("FC", np.float32), ("CF", np.float64), ("FF", np.float32)]
DEGENERATE = [((3, 4), (4, 1)), ((1, 4), (4, 3)), ((2, 2), (2, 2))]

CASES = [Case(f"{k.__name__}-{o}-{_dt(d)}", k, lambda o=o, d=d: _products(o, d))
         for k in (matmul_into, dot_out, matmul_accumulate) for o, d in PRODUCT_LAYOUTS] + \
        [Case(f"degenerate-{s[0][0]}x{s[0][1]}x{s[1][1]}-{_dt(d)}", matmul_into, lambda s=s, d=d: _degenerate(s, d))
         for s in DEGENERATE for d in DTYPES] + \
        [Case(f"gram-{o}-{_dt(d)}", gram, lambda o=o, d=d: (mat(np.random.default_rng(3), (3, 5), d, o),))
         for o, d in LAYOUTS] + \
        [Case(f"matvec-{o}-{_dt(d)}", matvec, lambda o=o, d=d: _matvec(o, d)) for o, d in LAYOUTS] + \
        [Case(f"vecmat-{o}-{_dt(d)}", vecmat, lambda o=o, d=d: _matvec(o, d, True)) for o, d in LAYOUTS] + \
        [Case(f"norm-{_dt(d)}", norm_of, lambda d=d: (mat(np.random.default_rng(5), 7, d),)) for d in DTYPES] + \
        [Case(f"strided_operands-{_dt(d)}", strided_operands, lambda d=d: _strided(d)) for d in DTYPES] + \
        [Case("inputs_overwritten_after_the_product", product_then_overwrite, _overwritten)] + \
        [Case(f"rnn_state_overwritten_each_step-{_dt(d)}", rnn, lambda d=d: _rnn(d)) for d in DTYPES] + \
        [Case("product_in_a_loop", product_loop, _loop, modes=("reverse",))] + \
        [Case(f"vdot-{_dt(d)}", vdot_of, lambda d=d: _vdot(d)) for d in DTYPES]
