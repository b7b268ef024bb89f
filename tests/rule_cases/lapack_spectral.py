"""Cases of rules/lapack_spectral.py: syevd (`np.linalg.eigh`, `eigvalsh`) on matrices with
distinct eigenvalues, C and Fortran order, float32 and float64 (gesdd: test_linalg_svd_qr.py)."""
import numpy as np
from numba import njit

from . import LAYOUTS, Case, spd, vec


@njit
def eigh_use(A, c, W):
    # sign-invariant in the eigenvectors (LAPACK picks each one's sign)
    w, V = np.linalg.eigh(A)
    return np.sum(w * c) + np.sum(W * V * V)


@njit
def eigvalsh_use(A, c):
    return np.sum(np.linalg.eigvalsh(A) * c)


def _eigh(order, dtype, values_only=False):
    r = np.random.default_rng(9)
    A = spd(r, 4, dtype, order) + np.diag(np.arange(4.0)).astype(dtype)   # distinct eigenvalues
    A = np.asfortranarray(A) if order == "F" else A
    c, W = vec(r, 4, dtype), vec(r, (4, 4), dtype)
    return (A, vec(r, 4, dtype)) if values_only else (A, c, W)


CASES = [Case(f"eigh-{o}-{np.dtype(d).name}", eigh_use, lambda o=o, d=d: _eigh(o, d)) for o, d in LAYOUTS] + \
        [Case(f"eigvalsh-{o}-{np.dtype(d).name}", eigvalsh_use, lambda o=o, d=d: _eigh(o, d, True))
         for o, d in LAYOUTS]
