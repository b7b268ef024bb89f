"""The LAPACK adjoints solved even 4 x 4 systems with OpenBLAS's getrs and trsm, whose getrs
'N'/'T' with a matrix right-hand side starts OpenBLAS's threads: with two busy processes beside
it, the Kalman filter's gradient (benchmarks/kalman.py) took 1.5 s, 2,950x its primal, at n = 4.
Small solves now run in the gradient's own loops (ir_passes/runtime/triangular.py): in a fresh
process whose host getrs and trsm count their calls, a 4 x 4 gradient calls neither, a 24 x 24
one still calls the library (trsm, or trsv when OpenBLAS runs several threads), and both
gradients agree with central differences. The helpers themselves are
checked against NumPy for every letter combination, below and above the size threshold."""
import ctypes
import itertools
import json
import os
import subprocess
import sys

import llvmlite.binding as llvm
import numpy as np
import pytest
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target
from scipy.linalg import lapack

import enzyme_py  # noqa: F401  (defines the host routines' symbols)
from enzyme_py.bridge import host_routines
from ir_passes.runtime import triangular
from ir_passes.runtime.helpers import HELPERS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DRIVER = r'''
import ctypes, json
import numpy as np
import llvmlite.binding as llvm
import scipy.linalg.cython_blas as blas
import scipy.linalg.cython_lapack as lapack
import enzyme_py
from enzyme_py import Duplicated, autodiff
from enzyme_py.bridge.host_routines import _address
from numba import njit

calls = {"getrs": 0, "trsm": 0, "trsv": 0}
keep = []
for name, module, nargs in (("getrs", lapack, 9), ("trsm", blas, 11), ("trsv", blas, 8)):
    proto = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * nargs)
    real = proto(_address(module.__pyx_capi__["d" + name]))
    def counted(*args, real=real, name=name):
        calls[name] += 1
        real(*args)
    cb = proto(counted)
    keep.append(cb)
    llvm.add_symbol("enzpy.host.d" + name, ctypes.cast(cb, ctypes.c_void_p).value)

@njit
def f(A, B):
    S = A @ A.T + A.shape[0] * np.eye(A.shape[0])
    L = np.linalg.cholesky(S)
    X = np.linalg.solve(S, B)
    return np.sum(X * B) + np.sum(np.log(np.diag(L)))

out = {}
for n in (4, 24):
    rng = np.random.default_rng(n)
    A, B = rng.standard_normal((n, n)) / n, rng.standard_normal((n, n))
    dA = np.zeros_like(A)
    calls.update(getrs=0, trsm=0, trsv=0)
    autodiff(f, Duplicated(A, dA), Duplicated(B, np.zeros_like(B)))
    out[n] = {"calls": dict(calls), "dA": dA.tolist()}
print(json.dumps(out))
'''


def loss(A, B):
    n = A.shape[0]
    S = A @ A.T + n * np.eye(n)
    return np.sum(np.linalg.solve(S, B) * B) + np.sum(np.log(np.diag(np.linalg.cholesky(S))))


def test_small_solves_never_reach_the_library(tmp_path):
    (tmp_path / "driver.py").write_text(DRIVER)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("ENZYME_PY_CACHE_DIR", None)
    done = subprocess.run([sys.executable, str(tmp_path / "driver.py")], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["4"]["calls"] == {"getrs": 0, "trsm": 0, "trsv": 0}
    # getrs never (tests/regressions/test_solve_adjoint_skips_getrs.py); trsm, or trsv per
    # right-hand side when OpenBLAS runs several threads
    big = out["24"]["calls"]
    assert big["getrs"] == 0 and big["trsm"] + big["trsv"] > 0
    for n in (4, 24):
        rng = np.random.default_rng(n)
        A, B = rng.standard_normal((n, n)) / n, rng.standard_normal((n, n))
        fd = np.zeros_like(A)
        for i, j in [(0, 0), (1, 2), (n - 1, 0), (n - 2, n - 1)]:
            e = np.zeros_like(A)
            e[i, j] = 1e-6
            fd[i, j] = (loss(A + e, B) - loss(A - e, B)) / 2e-6
            assert abs(out[str(n)]["dA"][i][j] - fd[i, j]) <= 1e-6 * max(1.0, abs(fd[i, j]))


def _compile(text, name, argtypes):
    module = llvm.parse_assembly(text)
    module.verify()
    with global_compiler_lock:
        lib = cpu_target.target_context.codegen().create_library(f"test_{name}")
        lib.add_llvm_module(module)
        lib.finalize()
    fn = ctypes.CFUNCTYPE(None, *argtypes)(lib.get_pointer_to_function(name))
    return lib, fn


@pytest.fixture(scope="module")
def trsm():
    loads = "\n".join(f"  %p{i} = getelementptr i64, ptr %args, i64 {i}\n  %v{i} = load i64, ptr %p{i}"
                      for i in range(8))
    chars = "\n".join(f"  %c{i} = trunc i64 %v{i} to i8" for i in range(4))
    text = HELPERS["enzpy.trsm_sized.f64"] + f"""
define void @call_trsm(ptr %args, ptr %a, ptr %b) {{
entry:
{loads}
{chars}
  call void @enzpy.trsm_sized.f64(i8 %c0, i8 %c1, i8 %c2, i8 %c3, i64 %v4, i64 %v5, double 2.0, ptr %a, i64 %v6, ptr %b, i64 %v7)
  ret void
}}
"""
    return _compile(text, "call_trsm", [ctypes.c_void_p] * 3)


@pytest.fixture(params=[1, 2], ids=["one-thread", "threads"])
def blas_threads(request):
    """The host BLAS's thread count as trsm_sized reads it: 1 (above the threshold the host's
    trsm) or 2 (one host trsv per right-hand side)."""
    reader = ctypes.CFUNCTYPE(ctypes.c_int)(lambda: request.param)
    saved = host_routines._THREADS.value
    host_routines._THREADS.value = ctypes.cast(reader, ctypes.c_void_p).value
    yield request.param
    host_routines._THREADS.value = saved


@pytest.mark.parametrize("side,uplo,trans,diag", list(itertools.product("LR", "LU", "NT", "NU")))
def test_trsm_sized(trsm, blas_threads, side, uplo, trans, diag):
    rng = np.random.default_rng(0)
    for m, n in [(1, 1), (4, 3), (3, 5), (16, 16), (20, 30)]:
        k = m if side == "L" else n
        lda, ldb = k + 2, m + 1
        A = np.asfortranarray(rng.standard_normal((lda, k)) / k)
        A[:k, :k] += 2 * np.eye(k)
        B = np.asfortranarray(rng.standard_normal((ldb, n)))
        T = np.tril(A[:k, :k]) if uplo == "L" else np.triu(A[:k, :k])
        if diag == "U":
            np.fill_diagonal(T, 1.0)
        op = T.T if trans == "T" else T
        X = np.linalg.solve(op, 2 * B[:m, :n]) if side == "L" else \
            np.linalg.solve(op.T, 2 * B[:m, :n].T).T
        args = np.array([ord(side), ord(uplo), ord(trans), ord(diag), m, n, lda, ldb], np.int64)
        out = B.copy(order="F")
        trsm[1](args.ctypes.data, A.ctypes.data, out.ctypes.data)
        np.testing.assert_allclose(out[:m, :n], X, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(out[m:], B[m:])
    assert 16 ** 3 <= triangular.SMALL_WORK < 20 * 20 * 30


def test_getrs_sized():
    text = HELPERS["enzpy.getrs_sized.f64"] + """
define void @call_getrs(i64 %t64, i64 %n, i64 %nrhs, ptr %a, i64 %lda, ptr %ipiv, ptr %b, i64 %ldb) {
entry:
  %t = trunc i64 %t64 to i8
  call void @enzpy.getrs_sized.f64(i8 %t, i64 %n, i64 %nrhs, ptr %a, i64 %lda, ptr %ipiv, ptr %b, i64 %ldb)
  ret void
}
"""
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    _, getrs = _compile(text, "call_getrs", [i64, i64, i64, ptr, i64, ptr, ptr, i64])
    rng = np.random.default_rng(1)
    for n, nrhs in [(1, 1), (4, 4), (8, 1), (3, 7), (16, 16), (20, 20)]:
        for trans in "NT":
            A = rng.standard_normal((n, n))
            lu, piv, _ = lapack.dgetrf(A)
            lda, ldb = n + 1, n + 2
            LU = np.zeros((lda, n), order="F")
            LU[:n] = lu
            ipiv = (piv + 1).astype(np.int32)
            B = np.asfortranarray(rng.standard_normal((ldb, nrhs)))
            X = np.linalg.solve(A if trans == "N" else A.T, B[:n])
            out = B.copy(order="F")
            getrs(ord(trans), n, nrhs, LU.ctypes.data, lda, ipiv.ctypes.data, out.ctypes.data, ldb)
            np.testing.assert_allclose(out[:n], X, rtol=1e-9, atol=1e-12)
            np.testing.assert_array_equal(out[n:], B[n:])
