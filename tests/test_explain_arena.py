"""explain() lists what each BLAS/LAPACK call saved in the gradient's arena, why, and its bytes
in the call explained (rules/blas.py, rules/lapack.py), and the arena's total: asserted against
the sizes of the operands, not only printed."""
import math

import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, explain


@njit
def product_loop(A, B, C, steps):
    # each step overwrites B after the product: the reverse sweep needs every B
    for s in range(steps):
        np.dot(A, B, out=C)
        for i in range(B.shape[0]):
            for j in range(B.shape[1]):
                B[i, j] = math.tanh(C[i, j])


@njit
def product_once(A, B):
    return np.sum(np.sin(A @ B))          # nothing overwrites A or B: nothing saved


@njit
def solve_sum(A, b):
    return np.sum(np.linalg.solve(A, b) ** 2)


def _dup(a):
    return Duplicated(a, np.zeros_like(a))


def _arena(ex):
    return [c for c in ex.cached if c.arena_bytes is not None]


def test_copies_in_a_loop_count_every_iteration():
    A, B, C = np.eye(4) * 0.5, np.ones((4, 3)), np.zeros((4, 3))
    ex = explain(product_loop, _dup(A), _dup(B), Duplicated(C, np.ones_like(C)), Const(5))
    # np.dot picks gemm, gemv or dot by the shapes at run time: each branch's copy is listed,
    # the gemm's took the bytes
    saved = _arena(ex)
    assert saved and all(c.variable == "B" and "later write may change" in c.reason for c in saved)
    assert [c.arena_bytes for c in saved if c.arena_bytes] == [5 * B.nbytes]   # B, 5 steps
    assert "numba_xxgemm" in next(c for c in saved if c.arena_bytes).instruction
    assert ex.arena_bytes == 5 * 96                         # 96 B: 12 doubles, a multiple of 16
    text = str(ex)
    assert f"{5 * B.nbytes} B copied into the arena in this call" in text
    assert f"arena: {5 * 96} bytes" in text
    ex2 = explain(product_loop, _dup(A), _dup(B), Duplicated(C, np.ones_like(C)), Const(2))
    assert sum(c.arena_bytes for c in _arena(ex2)) == 2 * B.nbytes   # counted per call


def test_nothing_saved_when_no_write_follows():
    ex = explain(product_once, _dup(np.ones((3, 4))), _dup(np.ones((4, 2))))
    assert _arena(ex) == [] and ex.arena_bytes == 0 and "arena:" not in str(ex)


def test_lapack_saves_what_it_overwrites():
    n = 5
    A = np.eye(n) * 3 + np.ones((n, n)) * 0.1
    ex = explain(solve_sum, _dup(A), _dup(np.ones(n)))
    saved = _arena(ex)
    # gesv overwrites its copy of A with the LU factors, its pivots and its copy of b with x:
    # the reverse sweep solves with the factors and pivots (getrs) and needs x, all as left
    assert sorted(c.arena_bytes for c in saved) == [n * 4, n * 8, n * n * 8]
    assert all("LAPACK call overwrites" in c.reason for c in saved)
    assert ex.arena_bytes == 208 + 32 + 48                  # each rounded up to 16 B
