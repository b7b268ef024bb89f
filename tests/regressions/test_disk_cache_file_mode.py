"""Disk-cache files follow the process umask. Before, they were written through
tempfile.mkstemp (mode 0600), so a cache folder shared by a group could not be read."""
import os

import numba
import numpy as np

from enzyme_py import Duplicated, autodiff, disk_cache


@numba.njit
def _square(x):
    return 2.0 * x[0] * x[0]


def test_cache_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    disk_cache.set_cache_dir(tmp_path)
    try:
        x, dx = np.array([1.5]), np.zeros(1)
        autodiff(_square, Duplicated(x, dx))
        assert dx[0] == 6.0
    finally:
        disk_cache.set_cache_dir(None)
        os.umask(old)
    files = list(tmp_path.iterdir())
    assert files and all(f.stat().st_mode & 0o777 == 0o644 for f in files)
