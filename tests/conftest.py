"""Shared pytest setup.

- tests/ is put on sys.path so test modules can share helpers (test_kernels_checker imports
  the corpus helpers from test_kernels) whatever the import mode, and the repository root so
  they can import tools/ and benchmarks/ however pytest is started.
- The header names the numba / llvmlite versions the run used.
- Files run whole on one worker (pytest-xdist's file scheduling,
  `pytest_xdist_make_scheduler` below): a file's tests share the
  kernels Numba and enzyme_py compile, which split across workers would be compiled twice.
  The files that take longest are collected first and handed out in that order (xdist would
  otherwise hand out the files with the most tests first), so that no long file starts last.
  The linear-algebra files (SAME_WORKER) go to one worker together: Numba compiles its
  implementations of np.linalg and `@` once per process, for all of them.
"""
import os
import sys

import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
for _path in (os.path.dirname(_HERE), _HERE):
    if _path not in sys.path:
        sys.path.insert(0, _path)


def pytest_report_header(config):
    import llvmlite
    import numba
    import numpy
    return f"numba {numba.__version__}, llvmlite {llvmlite.__version__}, numpy {numpy.__version__}"


# The files that take longest on 2 workers (seconds of wall time per file, subprocesses
# included), longest first; a file not listed comes after them, in pytest's order. An
# out-of-date list costs balance, never a test.
LONGEST_FIRST = (
    "test_linalg_svd_qr.py", "test_rule_cases.py", "test_linalg_blas.py", "test_linalg_batched.py",
    "test_linalg_lapack.py",
    "test_capture_same_symbol_in_two_modules.py", "test_fuzz.py", "test_numpy_lists.py",
    "test_numpy_coverage.py", "test_gradbench_tool.py", "test_disk_cache_kinds.py", "test_numpy_sets.py",
    "test_numpy_api.py", "test_strong_zero_matrix_products.py", "test_checkpointing_parallel.py",
    "test_typed_list.py", "test_checkpointing_segments.py", "test_copies.py",
    "test_disk_cache_stale_dependencies.py",
    "test_deferred_rank1.py", "test_checkpointing_hvp.py", "test_strong_zero_nan_masks.py",
    "test_parallel.py", "test_forward.py", "test_cuda_codegen.py", "test_scale_out.py",
)

# Files whose kernels call the same linear algebra, run in one worker one after the other (their
# place in LONGEST_FIRST: the first of them). test_linalg_lapack.py and test_linalg_batched.py
# in one process take 15% less CPU than apart.
SAME_WORKER = {"test_linalg_svd_qr.py", "test_rule_cases.py", "test_linalg_lapack.py", "test_linalg_blas.py",
               "test_linalg_batched.py", "test_capture_same_symbol_in_two_modules.py"}


def pytest_collection_modifyitems(session, config, items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(os.path.basename(str(item.path)), len(rank)))


@pytest.hookimpl(optionalhook=True)       # without pytest-xdist, not called
def pytest_xdist_make_scheduler(config, log):
    """pytest-xdist's hook: with `-n`, send each file to one worker (as `--dist loadfile`), and
    the SAME_WORKER files together."""
    if config.getoption("dist") != "load":
        return None                       # an explicit --dist other than load is kept
    from xdist.scheduler import LoadFileScheduling

    class FileScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid):
            scope = super()._split_scope(nodeid)
            return "linear algebra" if os.path.basename(scope) in SAME_WORKER else scope

    config.option.loadscopereorder = False    # keep LONGEST_FIRST's order
    return FileScheduling(config, log)
