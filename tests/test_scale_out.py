"""Scale-out: worker processes load gradients from the shared disk cache instead of building them.

With `spawn`, a worker is a fresh interpreter: its first gradient call must be a disk-cache hit
(no build). With `fork`, the worker inherits the parent's compiled gradient. The timings are
printed (`pytest -s`), not asserted: the hit and build counts are what the test checks.
The Dask example (examples/dask_ensemble.py) runs when dask.distributed is installed.
"""
import multiprocessing as mp
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import enzyme_py
from scale_out_kernels import damped_energy, first_gradient, first_wrapped_gradient
from enzyme_py import Const, Duplicated, autodiff

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _expected(x, k=2.0):
    d = np.diff(x)
    g = np.zeros_like(x)
    g[:-1] -= k * d
    g[1:] += k * d
    g[:-1] += -2 * x[:-1] * np.exp(-x[:-1] ** 2)
    return g


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_worker_first_gradient_comes_from_the_disk_cache(tmp_path, method):
    if method not in mp.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    x = np.linspace(-1.0, 1.0, 7)
    enzyme_py.set_cache_dir(tmp_path)
    try:
        enzyme_py.clear_cache()
        enzyme_py.disk_cache._loaded.clear()    # this process's memo of loaded gradients
        t0 = time.perf_counter()
        autodiff(damped_energy, Duplicated(x, np.zeros_like(x)), Const(2.0))
        build_s = time.perf_counter() - t0
        assert list(tmp_path.glob("*.nbg"))     # built here and stored
        with mp.get_context(method).Pool(2) as pool:
            results = pool.starmap(first_gradient, [(str(tmp_path), x)] * 2)
    finally:
        enzyme_py.set_cache_dir(None)
    for r in results:
        np.testing.assert_allclose(r["dx"], _expected(x), rtol=1e-12)
        assert r["builds"] == 0
        if method == "spawn":           # a fresh process: the gradient came from disk
            assert r["hits"] == 1
    print(f"\n{method}: build {build_s * 1e3:.0f} ms in the parent; workers' first call "
          + ", ".join(f"{r['seconds'] * 1e3:.1f} ms" for r in results))


def test_dask_ensemble_example():
    pytest.importorskip("dask.distributed")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "dask_ensemble.py"),
                          "--members", "16", "--workers", "2"],
                         capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "every worker loaded the gradient from the disk cache" in out.stdout
    assert "all gradients agree with finite differences" in out.stdout


@pytest.mark.parametrize("make", ["value_and_grad", "differentiable"])
def test_wrapped_gradients_pickle_to_spawn_workers(tmp_path, make):
    """value_and_grad(k) and differentiable(k) go to spawn workers by pickle, and each worker's
    first gradient is a disk-cache load."""
    x = np.linspace(-1.0, 1.0, 7)
    wrapped = getattr(enzyme_py, make)(damped_energy)
    enzyme_py.set_cache_dir(tmp_path)
    try:
        enzyme_py.clear_cache()
        enzyme_py.disk_cache._loaded.clear()
        if make == "differentiable":
            value, grad = wrapped.value_and_grad(x, 2.0)
        else:
            value, grad = wrapped(x, 2.0)
        np.testing.assert_allclose(grad, _expected(x), rtol=1e-12)
        assert list(tmp_path.glob("*.nbg"))
        with mp.get_context("spawn").Pool(2) as pool:
            results = pool.starmap(first_wrapped_gradient, [(str(tmp_path), x, wrapped)] * 2)
    finally:
        enzyme_py.set_cache_dir(None)
    for r in results:
        np.testing.assert_allclose(r["dx"], _expected(x), rtol=1e-12)
        assert r["value"] == pytest.approx(value, rel=1e-14)
        assert r["builds"] == 0 and r["hits"] == 1
