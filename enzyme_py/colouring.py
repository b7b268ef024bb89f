"""Column colouring of a sparsity pattern for compressed Jacobians.

Two columns get the same colour only when no row has a nonzero in both (structurally
orthogonal), so one forward sweep seeded with the sum of a colour's unit vectors gives every
column of that colour: each row's entry of the product belongs to at most one of them.

Greedy: each column, in some order, takes the smallest colour that no column sharing a row with
it has (Curtis, Powell and Reid). The order decides how many colours it takes (Gebremedhin,
Manne and Pothen, "What color is your Jacobian?", SIAM Review 2005), on the column intersection
graph (columns adjacent when they share a row):

- "natural": 0, 1, 2, ...;
- "largest_first": by decreasing degree;
- "smallest_last": a column of smallest degree among those left goes last, repeatedly;
- "incidence_degree": next, the column with the most neighbours already ordered.

`colour_columns(pattern)` tries natural, smallest-last, incidence-degree and largest-first in
turn, keeps the fewest colours, and stops early once a colouring reaches the lower bound (the
most nonzeros of a row). On the 5-point stencil natural order takes 7 colours and
smallest-last 5, the optimum; bundle adjustment (14) and a tridiagonal Hessian (3) reach the
bound in natural order. SciPy has only the natural-order greedy, as a private function
(`scipy.optimize._group_columns`), so this is our own, compiled with Numba.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

ORDERS = ("natural", "largest_first", "smallest_last", "incidence_degree")
TRIES = ("natural", "smallest_last", "incidence_degree", "largest_first")


def colour_columns(pattern, order=None) -> np.ndarray:
    """The colour (0, 1, ...) of each column of `pattern` (a scipy.sparse matrix; its stored
    entries are the nonzeros). `order`: one of ORDERS, a permutation of the columns, or None
    (the best of ORDERS)."""
    csc = sp.csc_matrix(pattern)
    csr = sp.csr_matrix(pattern)
    n = csc.shape[1]
    if order is None:
        lower = int(np.diff(csr.indptr).max(initial=0))     # a row's nonzeros all differ
        best = None
        for name in TRIES:
            c = colour_columns(pattern, name)
            if best is None or c.max(initial=-1) < best.max(initial=-1):
                best = c
            if best.max(initial=-1) + 1 <= lower:
                break
        return best
    if isinstance(order, str):
        order = column_order(pattern, order)
    order = np.asarray(order, dtype=np.int64)
    if order.shape != (n,) or not np.array_equal(np.sort(order), np.arange(n)):
        raise ValueError("order must be a permutation of the columns")
    return _greedy(csc.indptr.astype(np.int64), csc.indices.astype(np.int64),
                   csr.indptr.astype(np.int64), csr.indices.astype(np.int64), order, n)


def column_graph(pattern):
    """The column intersection graph as CSR arrays (indptr, indices), no self loops."""
    p = sp.csr_matrix(pattern, dtype=np.float64, copy=True)
    p.data[:] = 1.0
    g = sp.csr_matrix(p.T @ p)
    g.setdiag(0)
    g.eliminate_zeros()
    return g.indptr.astype(np.int64), g.indices.astype(np.int64)


def column_order(pattern, name: str) -> np.ndarray:
    n = sp.csr_matrix(pattern).shape[1]
    if name == "natural":
        return np.arange(n, dtype=np.int64)
    if name not in ORDERS:
        raise ValueError(f"order {name!r} is not one of {ORDERS}")
    return vertex_order(*column_graph(pattern), name)


def vertex_order(ptr, adj, name: str) -> np.ndarray:
    """The vertices of the graph (CSR arrays, no self loops) in the order `name` (ORDERS)."""
    n = len(ptr) - 1
    degree = np.diff(ptr)
    if name == "natural":
        return np.arange(n, dtype=np.int64)
    if name == "largest_first":
        return np.argsort(-degree, kind="stable").astype(np.int64)
    if name == "smallest_last":
        return _smallest_last(ptr, adj, degree.astype(np.int64), n)
    return _incidence_degree(ptr, adj, n)


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


@njit(cache=True)
def _buckets(key, n, size):
    """Doubly linked buckets of vertices by key: (head, next, prev)."""
    head = -np.ones(size, dtype=np.int64)
    nxt = -np.ones(n, dtype=np.int64)
    prv = -np.ones(n, dtype=np.int64)
    for v in range(n):
        k = key[v]
        nxt[v] = head[k]
        if head[k] >= 0:
            prv[head[k]] = v
        head[k] = v
    return head, nxt, prv


@njit(cache=True)
def _move(v, old, new, head, nxt, prv):
    if prv[v] >= 0:
        nxt[prv[v]] = nxt[v]
    else:
        head[old] = nxt[v]
    if nxt[v] >= 0:
        prv[nxt[v]] = prv[v]
    if new >= 0:
        prv[v] = -1
        nxt[v] = head[new]
        if head[new] >= 0:
            prv[head[new]] = v
        head[new] = v


@njit(cache=True)
def _smallest_last(ptr, adj, degree, n):
    size = degree.max() + 1 if n else 1
    head, nxt, prv = _buckets(degree, n, size)
    gone = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    low = 0
    for k in range(n - 1, -1, -1):
        while head[low] < 0:
            low += 1
        v = head[low]
        _move(v, degree[v], -1, head, nxt, prv)
        gone[v] = True
        order[k] = v
        for p in range(ptr[v], ptr[v + 1]):
            u = adj[p]
            if not gone[u]:
                _move(u, degree[u], degree[u] - 1, head, nxt, prv)
                degree[u] -= 1
        if low > 0:
            low -= 1
    return order


@njit(cache=True)
def _incidence_degree(ptr, adj, n):
    incidence = np.zeros(n, dtype=np.int64)
    size = (np.diff(ptr).max() + 1) if n else 1
    head, nxt, prv = _buckets(incidence, n, size)
    done = np.zeros(n, dtype=np.bool_)
    order = np.empty(n, dtype=np.int64)
    high = 0
    for k in range(n):
        while high > 0 and head[high] < 0:
            high -= 1
        v = head[high]
        _move(v, incidence[v], -1, head, nxt, prv)
        done[v] = True
        order[k] = v
        for p in range(ptr[v], ptr[v + 1]):
            u = adj[p]
            if not done[u]:
                _move(u, incidence[u], incidence[u] + 1, head, nxt, prv)
                incidence[u] += 1
                if incidence[u] > high:
                    high = incidence[u]
    return order


def check_colouring(pattern, colour) -> bool:
    """Do no two columns of one colour share a row?"""
    csr = sp.csr_matrix(pattern)
    for i in range(csr.shape[0]):
        cs = colour[csr.indices[csr.indptr[i]:csr.indptr[i + 1]]]
        if len(np.unique(cs)) != len(cs):
            return False
    return True
