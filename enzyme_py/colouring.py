"""Column colouring of a sparsity pattern for compressed Jacobians.

Two columns get the same colour only when no row has a nonzero in both (structurally
orthogonal), so one forward sweep seeded with the sum of a colour's unit vectors gives every
column of that colour: each row's entry of the product belongs to at most one of them.

Greedy, in the order given (natural by default): each column takes the smallest colour that no
column sharing a row with it has. SciPy has the same algorithm only as a private function
(`scipy.optimize._group_columns`), so this is our own, compiled with Numba.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit


def colour_columns(pattern, order=None) -> np.ndarray:
    """The colour (0, 1, ...) of each column of `pattern` (a scipy.sparse matrix; its stored
    entries are the nonzeros)."""
    csc = sp.csc_matrix(pattern)
    csr = sp.csr_matrix(pattern)
    n = csc.shape[1]
    order = np.arange(n, dtype=np.int64) if order is None else np.asarray(order, dtype=np.int64)
    if sorted(order.tolist()) != list(range(n)):
        raise ValueError("order must be a permutation of the columns")
    return _greedy(csc.indptr.astype(np.int64), csc.indices.astype(np.int64),
                   csr.indptr.astype(np.int64), csr.indices.astype(np.int64), order, n)


@njit(cache=True)
def _greedy(col_ptr, col_rows, row_ptr, row_cols, order, n):
    colour = -np.ones(n, dtype=np.int64)
    forbidden = -np.ones(n + 1, dtype=np.int64)    # forbidden[c] == j: colour c is taken near j
    for j in order:
        for p in range(col_ptr[j], col_ptr[j + 1]):
            i = col_rows[p]
            for q in range(row_ptr[i], row_ptr[i + 1]):
                k = row_cols[q]
                if colour[k] >= 0:
                    forbidden[colour[k]] = j
        c = 0
        while forbidden[c] == j:
            c += 1
        colour[j] = c
    return colour


def check_colouring(pattern, colour) -> bool:
    """Do no two columns of one colour share a row?"""
    csr = sp.csr_matrix(pattern)
    for i in range(csr.shape[0]):
        cs = colour[csr.indices[csr.indptr[i]:csr.indptr[i + 1]]]
        if len(np.unique(cs)) != len(cs):
            return False
    return True
