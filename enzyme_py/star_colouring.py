"""Star colouring of a symmetric pattern for compressed Hessians.

A star colouring gives adjacent vertices (i ~ j when H[i, j] is stored, i != j) different
colours and every path on four vertices at least three colours: the vertices of any two colours
span stars (Coleman and More, "Estimation of sparse Hessian matrices and graph coloring
problems", Math. Programming 1984). Then one Hessian-vector product per colour, B = H S with S's
column c the sum of colour c's unit vectors, gives every entry directly: H[i, j] = B[i, c(j)]
when j is row i's only stored column of colour c(j), else B[j, c(i)] (the star's centre is one
of i, j, so one of the two holds). An arrowhead Hessian takes 2 colours against n for a column
colouring; banded ones take what a column colouring takes.

Greedy (Gebremedhin, Manne and Pothen, SIAM Review 2005, section 4): each vertex v, in some
order, takes the smallest colour that no coloured neighbour w has, and no coloured x at distance
two through a coloured w whose colour would close a two-coloured path v-w-x-y (y ~ x, y != w,
c(y) = c(w)) or z-v-w-x (z ~ v, z != w, c(z) = c(w)). Every path on four vertices is checked
when its last vertex is coloured, so the result is a star colouring; `check_star` checks it.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from .colouring import vertex_order

STAR_TRIES = ("largest_first", "smallest_last", "natural")
MAX_WORK = 200_000_000     # distance-3 scans beyond this: a column colouring instead


def symmetric(pattern) -> sp.csr_matrix:
    """The pattern's union with its transpose, as ones."""
    p = sp.csr_matrix(pattern, dtype=np.float64, copy=True)
    p.data[:] = 1.0
    s = sp.csr_matrix(p + p.T)
    s.data[:] = 1.0
    s.sort_indices()
    return s


def adjacency(pattern):
    """(indptr, indices) of the graph of a symmetric pattern, no self loops."""
    g = sp.csr_matrix(pattern, dtype=np.float64, copy=True)
    g.setdiag(0)
    g.eliminate_zeros()
    return g.indptr.astype(np.int64), g.indices.astype(np.int64)


def colour_star(pattern) -> np.ndarray | None:
    """A star colouring of the symmetric `pattern` (the best of STAR_TRIES), or None where
    the greedy's scans would exceed MAX_WORK."""
    ptr, adj = adjacency(pattern)
    degree = np.diff(ptr)
    if int((degree.astype(np.float64) ** 3).sum()) > MAX_WORK:
        return None
    best = None
    for name in STAR_TRIES:
        order = vertex_order(ptr, adj, name)
        c = _star_greedy(ptr, adj, order, len(degree))
        if best is None or c.max(initial=-1) < best.max(initial=-1):
            best = c
    return best


@njit(cache=True)
def _star_greedy(ptr, adj, order, n):
    colour = -np.ones(n, dtype=np.int64)
    forbidden = -np.ones(n + 1, dtype=np.int64)     # forbidden[c] == v: v may not take c
    around = np.zeros(n + 1, dtype=np.int64)        # coloured neighbours of v per colour
    for v in order:
        for p in range(ptr[v], ptr[v + 1]):
            w = adj[p]
            if colour[w] >= 0:
                forbidden[colour[w]] = v
                around[colour[w]] += 1
        for p in range(ptr[v], ptr[v + 1]):
            w = adj[p]
            cw = colour[w]
            if cw < 0:
                continue
            twice = around[cw] > 1          # z ~ v, z != w, c(z) = c(w)
            for q in range(ptr[w], ptr[w + 1]):
                x = adj[q]
                cx = colour[x]
                if x == v or cx < 0 or forbidden[cx] == v:
                    continue
                if twice:
                    forbidden[cx] = v
                    continue
                for r in range(ptr[x], ptr[x + 1]):
                    y = adj[r]
                    if y != w and colour[y] == cw:
                        forbidden[cx] = v
                        break
        c = 0
        while forbidden[c] == v:
            c += 1
        colour[v] = c
        for p in range(ptr[v], ptr[v + 1]):
            w = adj[p]
            if colour[w] >= 0:
                around[colour[w]] -= 1
    return colour


def star_gather(pattern, colour, m) -> np.ndarray:
    """Per stored entry of the symmetric csr `pattern` (C order), its place in the compressed
    products (colour-major, rows of length m): B[i, c(j)] or B[j, c(i)]."""
    p = sp.csr_matrix(pattern)
    rows = np.repeat(np.arange(p.shape[0]), np.diff(p.indptr))
    cols = p.indices.astype(np.int64)
    alone = _alone(p.indptr.astype(np.int64), cols, colour)
    return np.where(alone, colour[cols] * m + rows, colour[rows] * m + cols)


def _alone(ptr, cols, colour):
    """Per stored entry (i, j): is j the only stored column of row i with colour c(j)?"""
    rows = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    key = rows * (int(colour.max(initial=0)) + 1) + colour[cols]
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    return counts[inverse] == 1


def check_star(pattern, colour) -> bool:
    """Is `colour` a star colouring of the symmetric pattern: proper, and for every stored
    (i, j) j alone in its colour in row i or i alone in its colour in row j?"""
    p = sp.csr_matrix(pattern)
    ptr, cols = p.indptr.astype(np.int64), p.indices.astype(np.int64)
    rows = np.repeat(np.arange(p.shape[0]), np.diff(ptr))
    off = rows != cols
    if np.any(colour[rows[off]] == colour[cols[off]]):
        return False
    alone = _alone(ptr, cols, colour)
    where = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(rows, cols))}
    return all(alone[k] or alone[where[(int(j), int(i))]] for k, (i, j) in
               enumerate(zip(rows, cols)))


__all__ = ["adjacency", "check_star", "colour_star", "star_gather", "symmetric"]
