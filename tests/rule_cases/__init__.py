"""Finite-difference cases of the rule families, one module per family of ir_passes/rules/ by the
same name (blas.py: gemm, gemv, dot, nrm2; lapack.py: gesv; lapack_lu.py: potrf, getrf, getri;
lapack_spectral.py: syevd): `CASES`, each a Case (a kernel that calls the family's routines and a
maker of its inputs). tests/test_rule_cases.py runs every case in its modes (fd_modes.py). The kernels are @njit
NumPy code, the host's: ir_passes knows no host, so they live here, not in ir_passes/rules/.
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    """`kernel(*inputs())` checked against finite differences in `modes` (reverse, forward)."""
    name: str
    kernel: Callable
    inputs: Callable[[], tuple]
    rtol: float = 1e-6
    modes: tuple = ("reverse", "forward")


def spd(r, n, dtype, order="C"):
    """A symmetric positive definite n x n matrix (n I added: well conditioned)."""
    m = r.uniform(-1, 1, (n, n))
    a = (m @ m.T + n * np.eye(n)).astype(dtype)
    return np.asfortranarray(a) if order == "F" else a


def vec(r, shape, dtype):
    return r.uniform(-1, 1, shape).astype(dtype)


DTYPES = [np.float64, np.float32]
# each order with one dtype: both orders and both dtypes are covered at half the compiles
LAYOUTS = [("C", np.float64), ("F", np.float32)]
