"""The disk-cache key covers what the compiled code froze, at any depth, in fresh processes.

Before, (a) a gradient built after a global changed and the kernel recompiled was filed under
the key of the module's original value (the fingerprint was memoized per dispatcher), so a fresh
process loaded it; (b) `pkg.cfg.K` and `pkg.sub.helper` (two modules deep) were not in the key,
so an edit of either file still loaded the old gradient. Each case builds in one process and
checks, in a fresh one, both modes against the derivative of the code a plain call runs."""
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
    import enzyme_py
    from enzyme_py import Duplicated, Forward, autodiff
    from enzyme_py.modes.reverse import clear_cache
    import kmod

    def grads(k):
        x = np.array([1.5])
        k(x)
        dx = np.zeros(1)
        autodiff(k, Duplicated(x, dx))
        t = autodiff(k, Duplicated(x, np.ones(1)), mode=Forward)
        h = 1e-6
        fd = (k(x + h) - k(x - h)) / (2 * h)
        return [float(dx[0]), float(t[0] if isinstance(t, tuple) else t), float(fd)]

    out = {"first": grads(kmod.k)}
    change = os.environ.get("CHANGE")
    if change:
        exec(change, {"kmod": kmod, "np": np})
        kmod.k.recompile()
        clear_cache()
        out["changed"] = grads(kmod.k)
    print(json.dumps(out))
""")


def _run(tmp_path, change="", env=None):
    e = dict(os.environ, CASE_DIR=str(tmp_path / "case"),
             ENZYME_PY_CACHE_DIR=str(tmp_path / "cache"), CHANGE=change,
             PYTHONPATH=ROOT, PYTHONDONTWRITEBYTECODE="1", **(env or {}))
    e.pop("NUMBA_CACHE_DIR", None)
    res = subprocess.run([sys.executable, "-c", DRIVER], env=e, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def _write(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / "case" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _check(got, expected):
    dx, tangent, fd = got
    assert dx == pytest.approx(expected) and tangent == pytest.approx(expected)
    assert fd == pytest.approx(expected, rel=1e-5)


KERNEL = """
    import numba
    import numpy as np
    SCALE = 2.0
    W = np.array([2.0])
    @numba.njit
    def k(x):
        return {expr} * x[0] * x[0]
"""


@pytest.mark.parametrize("expr,change", [
    ("SCALE", "kmod.SCALE = 3.0"),                 # a plain global
    ("W[0]", "kmod.W[0] = 3.0"),                   # a global array, mutated in place
])
def test_changed_in_a_process_not_served_to_the_next(tmp_path, expr, change):
    _write(tmp_path, {"kmod.py": KERNEL.format(expr=expr)})
    out = _run(tmp_path, change)
    _check(out["first"], 6.0)
    _check(out["changed"], 9.0)
    _check(_run(tmp_path)["first"], 6.0)          # the file says 2.0: not the 3.0 gradient


def test_closure_value(tmp_path):
    _write(tmp_path, {"kmod.py": """
        import os
        import numba
        def make(c):
            @numba.njit
            def k(x):
                return c * x[0] * x[0]
            return k
        k = make(float(os.environ["C"]))
    """})
    _check(_run(tmp_path, env={"C": "2.0"})["first"], 6.0)
    _check(_run(tmp_path, env={"C": "3.0"})["first"], 9.0)


@pytest.mark.parametrize("files,edit", [
    ({"pkg/__init__.py": "from . import cfg\n", "pkg/cfg.py": "K = 2.0\n"},
     ("pkg/cfg.py", "K = 3.0\n")),                                        # pkg.cfg.K
    ({"pkg/__init__.py": "from . import sub\n",
      "pkg/sub.py": "import numba\n@numba.njit\ndef helper(v):\n    return 2.0 * v * v\n"},
     ("pkg/sub.py", "import numba\n@numba.njit\ndef helper(v):\n    return 3.0 * v * v\n")),
])
def test_two_modules_deep(tmp_path, files, edit):
    call = "pkg.cfg.K * x[0] * x[0]" if "pkg/cfg.py" in files else "pkg.sub.helper(x[0])"
    _write(tmp_path, dict(files, **{"kmod.py": f"""
        import numba
        import pkg
        @numba.njit
        def k(x):
            return {call}
    """}))
    _check(_run(tmp_path)["first"], 6.0)
    _write(tmp_path, {edit[0]: edit[1]})
    _check(_run(tmp_path)["first"], 9.0)

