"""Every gradient kind is stored in and loaded from the disk cache (docs/caching.md): a first
process builds each one, a second, fresh process loads them all (no build) and gets the same
derivatives, which also agree with central differences."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KERNELS = '''
import numpy as np
from numba import njit, prange

@njit
def linalg(A, b, x):
    S = A @ A.T + 4.0 * np.eye(A.shape[0])
    L = np.linalg.cholesky(S)
    X = np.linalg.solve(S, A)
    x[:] = np.tanh(A @ x + b)
    return np.sum(X * X) + np.sum(np.log(np.diag(L))) + np.sum(x)

@njit(parallel=True)
def parallel(x, y):
    for i in prange(x.shape[0]):
        y[i] = np.sin(x[i]) * x[i]

@njit
def timeloop(u, k, steps):
    n = u.shape[0]
    for t in range(steps):
        for i in range(1, n - 1):
            u[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
    return np.sum(u * u)

@njit
def quartic(x):
    return np.sum(x ** 4) + x[0] * x[1]
'''

DRIVER = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import kinds_kernels as m
import enzyme_py as ez
from enzyme_py import Active, BatchDuplicated, Const, Duplicated, Forward, autodiff, disk_cache
rng = np.random.default_rng(1)
A, b, x = 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal(4)
out = {}
dA = np.zeros((4, 4))
autodiff(m.linalg, Duplicated(A, dA), Const(b), Duplicated(x.copy(), np.zeros(4)))
out["linalg"] = dA.tolist()
xs = np.linspace(0.1, 1.0, 64)
dxs = np.zeros(64)
autodiff(m.parallel, Duplicated(xs, dxs), Duplicated(np.zeros(64), np.ones(64)))
out["parallel"] = dxs.tolist()
u = np.sin(np.linspace(0.0, 3.0, 32))
du = np.zeros(32)
dk = autodiff(m.timeloop, Duplicated(u.copy(), du), Active(0.1), Const(50), memory="1KB")[1]
out["checkpointed"] = [dk] + du.tolist()
tx = np.zeros(32)
t = autodiff(m.timeloop, Duplicated(u.copy(), tx), Active(0.1, 1.0), Const(50), mode=Forward)
out["forward"] = t
lanes = (np.zeros(64), np.zeros(64))
autodiff(m.quartic, BatchDuplicated(xs, lanes), seed=(1.0, 2.0))
out["batched"] = [l.tolist() for l in lanes]
out["hvp"] = ez.hessian_vector_product(m.quartic, xs, np.ones(64)).tolist()
out["builds"] = disk_cache.stats["builds"]
out["stats"] = disk_cache.stats
out["refused"] = disk_cache.refused
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kinds")
    (folder / "kinds_kernels.py").write_text(KERNELS)
    (folder / "driver.py").write_text(DRIVER)
    env = dict(os.environ, ENZYME_PY_CACHE_DIR=str(folder / "cache"), NUMBA_NUM_THREADS="2",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(folder / "driver.py"), str(folder)],
                              capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return out


KINDS = ["linalg", "parallel", "checkpointed", "forward", "batched", "hvp"]


def test_second_process_builds_nothing(runs):
    built, loaded = runs
    assert built["refused"] == {} and built["stats"]["stores"] == built["builds"] >= len(KINDS)
    assert loaded["builds"] == 0 and loaded["stats"]["misses"] == 0, loaded["stats"]


@pytest.mark.parametrize("kind", KINDS)
def test_loaded_gradient_equals_built(runs, kind):
    built, loaded = runs
    assert loaded[kind] == built[kind]


def test_loaded_gradients_are_right(runs):
    _, g = runs
    xs = np.linspace(0.1, 1.0, 64)
    np.testing.assert_allclose(g["parallel"], np.cos(xs) * xs + np.sin(xs), rtol=1e-12)
    grad = 4 * xs ** 3 + np.r_[xs[1], xs[0], np.zeros(62)]
    np.testing.assert_allclose(g["batched"], [grad, 2 * grad], rtol=1e-12)
    hv = 12 * xs ** 2 + np.r_[1.0, 1.0, np.zeros(62)]
    np.testing.assert_allclose(g["hvp"], hv, rtol=1e-12)
    assert abs(g["checkpointed"][0] - g["forward"]) <= 1e-9 * abs(g["forward"])
    rng = np.random.default_rng(1)
    A, b, x = 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal(4)

    def f(A):
        S = A @ A.T + 4.0 * np.eye(4)
        X = np.linalg.solve(S, A)
        return np.sum(X * X) + np.sum(np.log(np.diag(np.linalg.cholesky(S)))) + \
            np.sum(np.tanh(A @ x + b))
    fd = np.zeros((4, 4))
    for i in range(4):
        for j in range(4):
            e = np.zeros((4, 4))
            e[i, j] = 1e-6
            fd[i, j] = (f(A + e) - f(A - e)) / 2e-6
    np.testing.assert_allclose(g["linalg"], fd, rtol=1e-6, atol=1e-8)


CUDA_DRIVER = '''
import json, math
import numpy as np
from numba import cuda
from enzyme_py import Active, Duplicated, Forward, compile_gradient, disk_cache

@cuda.jit
def scale(x, a, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * math.sin(x[i])

x = np.linspace(0.0, 1.0, 40)
r = compile_gradient(scale[2, 32], Duplicated(x, np.zeros(40)), Active(0.5),
                     Duplicated(np.zeros(40), np.ones(40)))
f = compile_gradient(scale[2, 32], Duplicated(x, np.ones(40)), Active(0.5, 1.0),
                     Duplicated(np.zeros(40), np.zeros(40)), mode=Forward)
print(json.dumps({"texts": [r.generated, f.generated], "forward": f.mode is Forward,
                  "updates": sorted({u.how for u in r.updates}), "stats": disk_cache.stats}))
'''


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="needs numba-cuda")
def test_cuda_kernels_are_loaded(tmp_path):
    """CUDA gradients (built without a GPU, as tests/test_cuda_api.py does) are stored as their
    texts and launch data; a fresh process loads them with no build."""
    (tmp_path / "cuda_driver.py").write_text(CUDA_DRIVER)
    env = dict(os.environ, ENZYME_PY_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(tmp_path / "cuda_driver.py")],
                              capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        out.append(json.loads(done.stdout.strip().splitlines()[-1]))
    built, loaded = out
    assert built["stats"]["stores"] == 2 and loaded["stats"]["builds"] == 0
    assert loaded["stats"]["hits"] == 2 and loaded["texts"] == built["texts"]
    assert loaded["forward"] and loaded["updates"] == ["private", "privatised per block"]
