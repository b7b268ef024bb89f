"""Shared pytest setup.

- tests/ is put on sys.path so test modules can share helpers (test_kernels_checker imports
  the corpus helpers from test_kernels) whatever the import mode, and the repository root so
  they can import tools/ and benchmarks/ however pytest is started.
- The header names the numba / llvmlite versions the run used.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
for _path in (os.path.dirname(_HERE), _HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def pytest_report_header(config):
    import llvmlite
    import numba
    import numpy
    return f"numba {numba.__version__}, llvmlite {llvmlite.__version__}, numpy {numpy.__version__}"
