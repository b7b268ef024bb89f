"""`import enzyme_py` must not import numba-cuda (the `cuda` extra is optional)."""
import subprocess
import sys


def test_import_does_not_import_numba_cuda():
    code = ("import sys, enzyme_py\n"
            "bad = [m for m in sys.modules if m.startswith(('numba.cuda', 'numba_cuda', "
            "'enzyme_py.cuda'))]\n"
            "print(bad)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", f"import enzyme_py imported {r.stdout.strip()}"
