"""The adjoint of `np.linalg.solve` with a matrix right-hand side called the host's getrs 'T'
once n^2 x nrhs passed the own loops' threshold; OpenBLAS threads getrs whenever nrhs > 1, and
with other work on the machine each call waited for a thread: gauss_loglik's gradient (n = 32,
256 right-hand sides) took 16 ms in that one call against 74 us on one thread. getrs_sized now
solves with the LU factors itself at every size (row interchanges, then two trsm_sized
solves): in a fresh process whose host getrs counts its calls, a gradient through an 8 x 8
solve with more right-hand sides than the own loops' threshold takes calls it never, and agrees
with central differences."""
import json
import os
import subprocess
import sys

import numpy as np

from ir_passes.runtime.triangular import SMALL_WORK

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DRIVER = r'''
import ctypes, json, sys
import numpy as np
import llvmlite.binding as llvm
import scipy.linalg.cython_lapack as lapack
import enzyme_py
from enzyme_py import Duplicated, autodiff
from enzyme_py.bridge.host_routines import _address
from numba import njit

calls = [0]
proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 9)
real = proto(_address(lapack.__pyx_capi__["dgetrs"]))
def counted(*args):
    calls[0] += 1
    real(*args)
cb = proto(counted)
llvm.add_symbol("enzpy.host.dgetrs", ctypes.cast(cb, ctypes.c_void_p).value)

@njit
def f(A, B):
    X = np.linalg.solve(A, B)
    return np.sum(X * X)

rng = np.random.default_rng(0)
A = rng.standard_normal((8, 8)) + 4 * np.eye(8)
B = rng.standard_normal((8, int(sys.argv[1])))
dA, dB = np.zeros_like(A), np.zeros_like(B)
autodiff(f, Duplicated(A, dA), Duplicated(B, dB))
print(json.dumps({"calls": calls[0], "dA": dA.tolist(), "dB": dB.tolist()}))
'''


def loss(A, B):
    X = np.linalg.solve(A, B)
    return np.sum(X * X)


def test_solve_adjoint_never_calls_host_getrs(tmp_path):
    (tmp_path / "driver.py").write_text(DRIVER)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("ENZYME_PY_CACHE_DIR", None)
    nrhs = SMALL_WORK // 64 + 1           # above the threshold: the library's size
    done = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(nrhs)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["calls"] == 0
    rng = np.random.default_rng(0)
    A = rng.standard_normal((8, 8)) + 4 * np.eye(8)
    B = rng.standard_normal((8, nrhs))
    dA, dB = np.array(out["dA"]), np.array(out["dB"])
    for (i, j) in [(0, 0), (2, 5), (7, 1), (6, 7)]:
        e = np.zeros_like(A)
        e[i, j] = 1e-6
        fd = (loss(A + e, B) - loss(A - e, B)) / 2e-6
        assert abs(dA[i, j] - fd) <= 1e-6 * max(1.0, abs(fd))
    for (i, j) in [(0, 0), (3, 50), (7, nrhs - 1)]:
        e = np.zeros_like(B)
        e[i, j] = 1e-6
        fd = (loss(A, B + e) - loss(A, B - e)) / 2e-6
        assert abs(dB[i, j] - fd) <= 1e-6 * max(1.0, abs(fd))
