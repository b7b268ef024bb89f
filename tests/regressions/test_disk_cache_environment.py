"""A gradient whose code uses a Numba environment (the shape error of `h[:] = W @ h`, raised
with run-time arguments by an overload's helper) was never stored: rnn_matmul was rebuilt in
every fresh process. Its environments are now stored by module name and constants and bound at
load, so the second process loads it (builds == 0), gets the same gradient, and the error path
still raises the shape error."""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNEL = '''
import numpy as np
from numba import njit

@njit
def rnn(W, b, h, T):
    for t in range(T):
        h[:] = np.tanh(W @ h + b)
    return np.sum(h)
'''

DRIVER = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import env_kernel as m
from enzyme_py import Const, Duplicated, autodiff, compile_count, disk_cache
rng = np.random.default_rng(0)
W, b, h0 = 0.3 * rng.standard_normal((6, 6)), rng.standard_normal(6), rng.standard_normal(6)
dW, db = np.zeros((6, 6)), np.zeros(6)
autodiff(m.rnn, Duplicated(W, dW), Duplicated(b, db), Duplicated(h0.copy(), np.zeros(6)), Const(5))
try:
    autodiff(m.rnn, Duplicated(W[:4].copy(), np.zeros((4, 6))), Duplicated(b[:4].copy(), np.zeros(4)),
             Duplicated(h0.copy(), np.zeros(6)), Const(5))
    error = ""
except ValueError as exc:
    error = str(exc)
print(json.dumps({"dW": dW.tolist(), "db": db.tolist(), "error": error,
                  "builds": compile_count(), "stats": disk_cache.stats}))
'''


def loss(W, b, h0, T=5):
    h = h0.copy()
    for _ in range(T):
        h[:] = np.tanh(W @ h + b)
    return h.sum()


def test_gradient_using_an_environment_is_loaded(tmp_path):
    (tmp_path / "env_kernel.py").write_text(KERNEL)
    (tmp_path / "driver.py").write_text(DRIVER)
    env = dict(os.environ, ENZYME_PY_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path)],
                             capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    built, loaded = runs
    assert built["stats"]["stores"] == 1 and built["stats"]["uncacheable"] == 0
    assert loaded["builds"] == 0 and loaded["stats"]["hits"] == 1
    assert loaded["dW"] == built["dW"] and loaded["db"] == built["db"]
    assert loaded["error"] == built["error"] == \
        "cannot assign slice of shape (6,) from input of shape (4,)"
    rng = np.random.default_rng(0)
    W, b, h0 = 0.3 * rng.standard_normal((6, 6)), rng.standard_normal(6), rng.standard_normal(6)
    eps, fd = 1e-6, np.zeros(6)
    for i in range(6):
        e = np.zeros(6)
        e[i] = eps
        fd[i] = (loss(W, b + e, h0) - loss(W, b - e, h0)) / (2 * eps)
    np.testing.assert_allclose(loaded["db"], fd, rtol=1e-6, atol=1e-9)
