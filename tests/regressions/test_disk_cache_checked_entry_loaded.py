"""A gradient loaded from the disk cache in a fresh process gets its checked entry (the copies
and the strong-zero test around the gradient: modes/strong_zero_entry.py) from the disk cache
too.

Before, every process compiled the checked entry with Numba after loading both gradients:
0.7-0.8 CPU s of a 0.05 s load for rnn_matmul and BA (issue 28's slow loads)."""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DRIVER = '''
import json
import numpy as np
from numba import njit
from numba.core.registry import CPUDispatcher
from enzyme_py import Duplicated, compile_gradient, disk_cache

compiled = []
keep = CPUDispatcher.compile
def counting(self, sig):
    compiled.append(self.py_func.__qualname__)
    return keep(self, sig)
CPUDispatcher.compile = counting

@njit
def loss(x):
    return np.sum(np.sin(x) * x)

x = np.linspace(0.1, 1.0, 5)
dx = np.zeros(5)
entry = compile_gradient(loss, Duplicated(x, dx)).entry
entry(x, dx, 1.0)
print(json.dumps({"dx": dx.tolist(), "builds": disk_cache.stats["builds"],
                  "checked": [q for q in compiled if q.startswith("checked")]}))
'''


def test_fresh_process_loads_the_checked_entry(tmp_path):
    env = dict(os.environ, ENZYME_PY_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run():
        done = subprocess.run([sys.executable, "-c", DRIVER], capture_output=True, text=True,
                              env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])
    built, loaded = run(), run()
    assert built["builds"] >= 1 and built["checked"]
    assert loaded["builds"] == 0 and loaded["checked"] == []
    x = np.linspace(0.1, 1.0, 5)
    np.testing.assert_allclose(loaded["dx"], np.sin(x) + x * np.cos(x), rtol=1e-12)
    assert loaded["dx"] == built["dx"]
