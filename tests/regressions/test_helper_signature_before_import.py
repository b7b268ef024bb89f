"""User reproducer (wrong_gradient, silent): a helper compiled before enzyme_py was imported.

`@njit("f4(f4)")` compiles at decoration. Capture found no recorded text for it and compiled a
private copy from `py_func` without the declared signature: the copy returned float64 where the
kernel expects float32, and the gradient came back [0, 0] with no error (expected [2, 2]).

Root cause (fixed): private copies are now compiled with the overload's return type, the
dispatcher's `locals=` and options, and refused when their flags differ (enzyme_py/capture.py).
"""
import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import json, numba, numpy as np
    @numba.njit("f4(f4)")
    def twice(x):
        return x * 2.0
    @numba.njit
    def kernel(a):
        return twice(a[0]) + twice(a[1])
    import enzyme_py
    from enzyme_py import autodiff, Duplicated
    a = np.array([1.0, 2.0], np.float32); da = np.zeros_like(a)
    autodiff(kernel, Duplicated(a, da))
    print(json.dumps(da.tolist()))
    """)


def test_helper_with_signature_compiled_before_import(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [2.0, 2.0]
