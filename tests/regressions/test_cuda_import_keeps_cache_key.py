"""Importing the CUDA bridge registers a refusal (grid-wide synchronisation) with ir_passes. The
refusal was part of rules_fingerprint, the disk cache's key of the rule tables, so a process
that had imported enzyme_py.cuda keyed every gradient differently from one that had not:
spawned workers missed the gradients their parent stored (test_scale_out failed when its
pytest worker had run a CUDA test first). Refusals change no generated code and are left out."""
import importlib.util
import subprocess
import sys

import pytest

SCRIPT = """
import enzyme_py
from ir_passes import rules_fingerprint
before = rules_fingerprint()
import enzyme_py.cuda.kernel
print(before == rules_fingerprint())
"""


@pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None, reason="needs numba-cuda")
def test_cuda_import_leaves_the_rules_fingerprint():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True"
