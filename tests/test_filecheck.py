"""Run the IR-in -> IR-out golden tests in tests/filecheck with lit and filecheck."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def test_filecheck_suite():
    lit = [sys.executable, "-c", "import lit.main; lit.main.main()"]
    r = subprocess.run(lit + ["-q", os.path.join(HERE, "filecheck")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
