"""Finding a Jacobian's sparsity pattern from runs whose tangent lanes carry NaN.

`find_pattern(run, size, m, width)` asks `run(sets)`: for each lane, the set of input elements
seeded with NaN; it returns, per lane, which of the m outputs came out NaN. An output is NaN in
a lane exactly when it depends on some element of the lane's set (NaN survives sums and
products; sparse.py says when that holds).

- Up to a few thousand inputs, one element per lane: size / width runs, exact.
- Beyond, a residue design: element j is seeded in four lanes, j mod p_r in the block of prime
  p_r (r = 1..4), so 4 * p lanes with p ~ (size * 1e4)^(1/4), far fewer than size. Output i's
  candidates are the elements whose four lanes all came out NaN: every true dependence is one
  (a superset). A false candidate must match, prime by prime, the residues of true
  dependencies; by the Chinese remainder theorem few do. The candidates are then checked
  exactly with one more round: colour them (colouring.py), seed each colour's elements; in
  row i a colour holds at most one candidate, so NaN there in that colour's lane means that
  candidate is a true dependence, and no NaN means it is not.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from .colouring import colour_columns

EXACT_BELOW = 4096       # inputs up to which one element per lane is used
BLOCKS = 4


def find_pattern(run, size: int, m: int, width: int):
    """The pattern (csr_matrix of ones, m x size) from `run(sets) -> bool array (lanes, m)`."""
    primes = residue_primes(size)
    if size <= EXACT_BELOW or 2 * sum(primes) >= size:
        return _exact(run, size, m, width)
    tests = [np.arange(a, size, p) for p in primes for a in range(p)]
    positives = _positives(run, tests, m, width)          # (row, test) pairs
    rows, tests_hit = positives
    order = np.lexsort((tests_hit, rows))
    ptr = np.searchsorted(rows[order], np.arange(m + 1))
    cand = _decode(ptr.astype(np.int64), tests_hit[order].astype(np.int64),
                   np.array(primes, dtype=np.int64), size, len(tests))
    candidates = sp.csr_matrix((np.ones(cand[1].size), (cand[0], cand[1])), shape=(m, size))
    return prune(run, candidates, width)


def prune(run, candidates, width: int):
    """The candidates that are true dependencies, checked one colour per lane (see above)."""
    c = sp.csr_matrix(candidates)
    c.sort_indices()
    colours = colour_columns(c)
    k = int(colours.max(initial=-1)) + 1
    rows = np.repeat(np.arange(c.shape[0]), np.diff(c.indptr))
    lanes = colours[c.indices]
    keep = np.zeros(c.nnz, dtype=bool)
    members = [np.flatnonzero(colours == q) for q in range(k)]
    for start in range(0, k, width):
        stop = min(start + width, k)
        hit = run(members[start:stop])
        mask = (lanes >= start) & (lanes < stop)
        keep[mask] = hit[lanes[mask] - start, rows[mask]]
    return ones(sp.csr_matrix((np.ones(keep.sum()), (rows[keep], c.indices[keep])), shape=c.shape))


def _exact(run, size, m, width):
    rows, cols = [], []
    for start in range(0, size, width):
        js = np.arange(start, min(start + width, size))
        hit = run([[j] for j in js])
        k, i = np.nonzero(hit)
        rows.append(i)
        cols.append(js[k])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    return ones(sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, size)))


def _positives(run, tests, m, width):
    rows, hits = [], []
    for start in range(0, len(tests), width):
        sets = tests[start:start + width]
        hit = run(sets)
        k, i = np.nonzero(hit)
        rows.append(i)
        hits.append(k + start)
    return np.concatenate(rows), np.concatenate(hits)


@njit(cache=True)
def _decode(ptr, tests, primes, size, ntests):
    """Per row, the elements whose lanes (one per prime block) all came out NaN: each pair of
    NaN lanes of the first two blocks fixes j modulo p0 p1 (Chinese remainder theorem); the
    other blocks are checked for each j < size of that class."""
    offsets = np.zeros(primes.size, dtype=np.int64)
    for r in range(1, primes.size):
        offsets[r] = offsets[r - 1] + primes[r - 1]
    p0, p1 = primes[0], primes[1]
    inv = 1                                     # p0's inverse modulo p1
    while (p0 * inv) % p1 != 1:
        inv += 1
    seen = -np.ones(ntests, dtype=np.int64)
    out_rows, out_cols = [], []
    for i in range(ptr.size - 1):
        for q in range(ptr[i], ptr[i + 1]):
            seen[tests[q]] = i
        for q in range(ptr[i], ptr[i + 1]):
            a = tests[q]
            if a >= p0:
                break                           # sorted: block 0's lanes come first
            for q1 in range(ptr[i], ptr[i + 1]):
                b = tests[q1] - offsets[1]
                if b < 0 or b >= p1:
                    continue
                j = a + p0 * ((((b - a) % p1) * inv) % p1)
                while j < size:
                    ok = True
                    for r in range(2, primes.size):
                        if seen[offsets[r] + j % primes[r]] != i:
                            ok = False
                            break
                    if ok:
                        out_rows.append(i)
                        out_cols.append(j)
                    j += p0 * p1
    return np.array(out_rows, dtype=np.int64), np.array(out_cols, dtype=np.int64)


def residue_primes(size: int) -> list:
    """BLOCKS distinct primes from about (size * 1e4)^(1/4) up."""
    p = max(17, int(np.ceil((size * 1e4) ** (1.0 / BLOCKS))))
    out = []
    while len(out) < BLOCKS:
        if all(p % d for d in range(2, int(p ** 0.5) + 1)):
            out.append(p)
        p += 1
    return out


def ones(matrix):
    """The structure of `matrix`'s nonzeros with every value 1 (duplicates summed first)."""
    m = sp.csr_matrix(matrix, dtype=np.float64)
    m.sum_duplicates()
    m.eliminate_zeros()
    m.data[:] = 1.0
    m.sort_indices()
    return m
