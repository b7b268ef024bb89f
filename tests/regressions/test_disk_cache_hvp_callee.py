"""A Hessian-vector product stored on disk is not served after a global its kernel's callee
froze changed.

Before, the HVP's disk-cache key looked up the kernel's overload for the entry's whole
signature (the kernel's types and then gx, v, hv, ...), which the kernel has none of: the key
left out what the callees froze, and a fresh process loaded the product of the old value. Each
run is a fresh process; H v of k(x) = sum(C * x**2) is 2 C v."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DRIVER = textwrap.dedent("""
    import json, os, sys
    import numpy as np
    sys.path.insert(0, os.environ["CASE_DIR"])
    from enzyme_py import disk_cache
    from enzyme_py.modes.hvp import products
    import kmod

    x = np.array([1.0, -2.0])
    v = np.array([1.0, 0.5])
    (hv,) = products(kmod.k, x, (v,), (), {})
    print(json.dumps({"hv": hv.tolist(), "hits": disk_cache.stats["hits"]}))
""")

KMOD = """
    import numba
    from helper import square
    @numba.njit
    def k(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += square(x[i])
        return s
"""

HELPER = "import numba\nC = {c}\n@numba.njit\ndef square(v):\n    return C * v * v\n"


def _run(tmp_path):
    e = dict(os.environ, CASE_DIR=str(tmp_path / "case"),
             ENZYME_PY_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=ROOT,
             PYTHONDONTWRITEBYTECODE="1")
    e.pop("NUMBA_CACHE_DIR", None)
    res = subprocess.run([sys.executable, "-c", DRIVER], env=e, capture_output=True, text=True,
                         timeout=180)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_changed_callee_global_is_not_served_from_disk(tmp_path):
    case = tmp_path / "case"
    case.mkdir()
    (case / "kmod.py").write_text(textwrap.dedent(KMOD))
    (case / "helper.py").write_text(HELPER.format(c="2.0"))
    first = _run(tmp_path)
    assert first["hv"] == pytest.approx([4.0, 2.0])
    assert _run(tmp_path)["hits"] == 1                 # stored, and found again
    (case / "helper.py").write_text(HELPER.format(c="3.0"))
    assert _run(tmp_path)["hv"] == pytest.approx([6.0, 3.0])
