"""A @njit driver that closes over a gradient entry (ba's Jacobian loop) was compiled again in
every process, even with Numba's cache=True: Numba keys a closure by the pickle of its closure
variables, and an entry pickled with a random UUID (or not at all: ctypes pointers in its
globals). Entries now pickle as their disk-cache key, so a fresh process that loads the
gradient also loads the driver from Numba's cache, and it computes the same derivatives. A
gradient's symbol is named after its key, so a cached driver that calls it by name still finds
it when a process builds the gradient again (the disk cache's folder cleared)."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KERNEL = '''
import numpy as np
from numba import njit

@njit
def residual(p, err):
    err[0] = p[0] * p[1]
    err[1] = np.sin(p[0]) + p[1] ** 2

def make_driver(entry):
    @njit(cache=True)
    def jacobian(P, J):
        z, e = np.zeros(2), np.zeros(2)
        d0, d1, s0, s1 = np.zeros(2), np.zeros(2), np.zeros(2), np.zeros(2)
        for i in range(P.shape[0]):
            d0[:] = 0.0
            d1[:] = 0.0
            s0[0], s0[1], s1[0], s1[1] = 1.0, 0.0, 0.0, 1.0
            entry(P[i].copy(), e, z, np.zeros(2), d0, d1, s0, s1, 1.0, 1.0)
            J[i, 0] = d0
            J[i, 1] = d1
    return jacobian

@njit
def energy(p):
    return np.sin(p[0]) * p[1]

def make_sum(entry):
    @njit(cache=True)
    def total(P):
        g, s = np.zeros(2), 0.0
        for i in range(P.shape[0]):
            g[:] = 0.0
            entry(P[i].copy(), g, 1.0)
            s += g[0] + 10.0 * g[1]
        return s
    return total
'''

DRIVER = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import drv_kernel as m
from enzyme_py import BatchDuplicated, compile_gradient, disk_cache
p = np.zeros(2)
entry = compile_gradient(m.residual, BatchDuplicated(p, (np.zeros(2), np.zeros(2))),
                         BatchDuplicated(np.zeros(2), (np.zeros(2), np.zeros(2)))).entry
jac = m.make_driver(entry)
P = np.array([[0.5, 2.0], [1.5, -1.0]])
J = np.zeros((2, 2, 2))
jac(P, J)
from enzyme_py import Duplicated
rev = compile_gradient(m.energy, Duplicated(p, np.zeros(2))).entry
total = m.make_sum(rev)
print(json.dumps({"J": J.tolist(), "total": total(P),
                  "hits": sum(jac.stats.cache_hits.values()) + sum(total.stats.cache_hits.values()),
                  "builds": disk_cache.stats["builds"]}))
'''


def test_driver_closing_over_an_entry_is_cached(tmp_path):
    (tmp_path / "drv_kernel.py").write_text(KERNEL)
    (tmp_path / "driver.py").write_text(DRIVER)
    env = dict(os.environ, ENZYME_PY_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = []
    for k in range(3):
        if k == 2:     # the gradients are rebuilt, the drivers still come from Numba's cache
            shutil.rmtree(tmp_path / "cache")
        out = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path)],
                             capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    built, loaded, rebuilt = runs
    # builds: the batched residual, energy's gradient and the guarded variant of each
    # (compile_gradient builds both: its entry redoes a call with an inf or NaN guarded,
    # modes/strong_zero_entry.py)
    assert rebuilt["hits"] == 2 and rebuilt["builds"] == 4
    assert rebuilt["J"] == built["J"] and rebuilt["total"] == built["total"]
    assert built["hits"] == 0 and loaded["hits"] == 2 and loaded["builds"] == 0
    assert loaded["J"] == built["J"] and loaded["total"] == built["total"]
    assert abs(loaded["total"] - sum(np.cos(p) * q + 10 * np.sin(p) for p, q in
                                      [[0.5, 2.0], [1.5, -1.0]])) < 1e-12
    P = np.array([[0.5, 2.0], [1.5, -1.0]])
    expect = [[[q, p], [np.cos(p), 2 * q]] for p, q in P]
    np.testing.assert_allclose(loaded["J"], expect, rtol=1e-12)
