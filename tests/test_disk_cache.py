"""The on-disk gradient cache (enzyme_py/disk_cache.py, docs/caching.md)."""
import ctypes
import ctypes.util
import hashlib
import importlib.util
import json
import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from enzyme_py import Active, Const, Duplicated, autodiff, disk_cache, explain, register_derivative

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

KERNELS = '''
import math
from numba import njit

@njit
def helper(v):
    return v * v * SCALE

SCALE = 1.0

@njit
def smooth(x, y):
    for i in range(x.shape[0]):
        y[i] = helper(x[i]) + math.sin(x[i])

@njit
def energy(k, x):
    e = 0.0
    for i in range(x.shape[0] - 1):
        e += 0.5 * k * (x[i + 1] - x[i]) ** 2
    return e
'''

DRIVER = '''
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import dc_kernels as m
from enzyme_py import Active, BatchDuplicated, Duplicated, autodiff, compile_count, disk_cache, Forward
x = np.linspace(-1.0, 1.0, 9)
dx, y, dy = np.zeros(9), np.zeros(9), np.ones(9)
autodiff(m.smooth, Duplicated(x, dx), Duplicated(y, dy))
dx2 = np.zeros(9)
dk, _ = autodiff(m.energy, Active(2.0), Duplicated(x, dx2))
tangent = autodiff(m.energy, Active(2.0, 1.0), Duplicated(x, np.ones(9)), mode=Forward)
lanes = (np.zeros(9), np.zeros(9))
autodiff(m.smooth, BatchDuplicated(x, lanes), BatchDuplicated(np.zeros(9), (np.ones(9), 2 * np.ones(9))))
print(json.dumps({"dx": dx.tolist(), "dk": dk, "dx2": dx2.tolist(), "tangent": tangent,
                  "lanes": [l.tolist() for l in lanes],
                  "builds": compile_count(), "stats": disk_cache.stats}))
'''


@pytest.fixture
def cache_dir(tmp_path):
    folder = tmp_path / "cache"
    disk_cache.set_cache_dir(folder)
    yield folder
    disk_cache.set_cache_dir(None)


def load_module(path, name="dc_kernels"):
    """A fresh module object from `path` (fresh dispatchers), under a fixed name."""
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def files(folder):
    return sorted(p.name for p in folder.glob("*.nbg")) if folder.exists() else []


def test_fresh_process_hit_matches_miss(tmp_path):
    (tmp_path / "dc_kernels.py").write_text(KERNELS)
    (tmp_path / "driver.py").write_text(DRIVER)
    env = dict(os.environ, ENZYME_PY_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, str(tmp_path / "driver.py"), str(tmp_path)],
                             capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    miss, hit = runs
    assert miss["stats"]["stores"] == 4 and miss["builds"] == 2
    assert hit["stats"]["hits"] == 4 and hit["stats"]["misses"] == 0 and hit["builds"] == 0
    for k in ("dx", "dk", "dx2", "tangent", "lanes"):
        assert hit[k] == miss[k]
    x = np.linspace(-1.0, 1.0, 9)
    np.testing.assert_allclose(hit["dx"], 2 * x + np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(hit["lanes"], [2 * x + np.cos(x), 4 * x + 2 * np.cos(x)], rtol=1e-12)


def test_changed_source_callee_types_activity_miss(tmp_path, cache_dir):
    src = tmp_path / "dc_kernels.py"
    src.write_text(KERNELS)
    x = np.linspace(-1.0, 1.0, 9)

    def grad(mod, xs, *extra):
        dx = np.zeros_like(xs)
        autodiff(mod.smooth, Duplicated(xs, dx), Duplicated(np.zeros_like(xs), np.ones_like(xs)))
        return dx

    g1 = grad(load_module(src), x)
    assert len(files(cache_dir)) == 1
    hits = disk_cache.stats["hits"]
    grad(load_module(src), x)                          # same source, new dispatchers: a hit
    assert disk_cache.stats["hits"] == hits + 1 and len(files(cache_dir)) == 1
    src.write_text(KERNELS.replace("SCALE = 1.0", "SCALE = 3.0"))   # a global the callee freezes
    g3 = grad(load_module(src), x)
    assert len(files(cache_dir)) == 2
    np.testing.assert_allclose(g3 - g1, 4 * x, rtol=1e-12)
    src.write_text(KERNELS.replace("return v * v * SCALE", "return v * v * v * SCALE"))
    g4 = grad(load_module(src), x)                     # the @njit callee's code
    assert len(files(cache_dir)) == 3
    np.testing.assert_allclose(g4 - g1, 3 * x * x - 2 * x, rtol=1e-12, atol=1e-15)
    src.write_text(KERNELS.replace("helper(x[i]) + math.sin", "helper(x[i]) - math.sin"))
    grad(load_module(src), x)                          # the kernel's own code
    assert len(files(cache_dir)) == 4
    mod = load_module(src)
    grad(mod, x.astype(np.float32))                    # the signature
    assert len(files(cache_dir)) == 5
    autodiff(mod.energy, Active(2.0), Duplicated(x, np.zeros(9)))
    autodiff(mod.energy, Const(2.0), Duplicated(x, np.zeros(9)))   # the activity
    assert len(files(cache_dir)) == 7
    autodiff(mod.energy, Const(2.0), Duplicated(x, np.zeros(9)), cache="always")   # an option
    assert len(files(cache_dir)) == 8
    xx, dxx = x.copy(), np.zeros(9)
    autodiff(mod.smooth, Duplicated(xx, dxx), Duplicated(xx, dxx))   # the aliasing variant
    assert len(files(cache_dir)) == 9


def test_corrupt_file_is_rebuilt(tmp_path, cache_dir):
    src = tmp_path / "dc_kernels.py"
    src.write_text(KERNELS.replace("0.5 * k", "0.25 * k"))
    x = np.linspace(-1.0, 1.0, 9)
    known = set(disk_cache._loaded)
    dk, _ = autodiff(load_module(src).energy, Active(2.0), Duplicated(x, np.zeros(9)))
    (path,) = cache_dir.glob("*.nbg")
    (key,) = set(disk_cache._loaded) - known
    for body in (b"garbage", None):
        blob = path.read_bytes()
        if body is None:          # right checksum, but not a pickle of ours
            body = b"\x80\x05not a pickle"
            blob = blob[:len(disk_cache._MAGIC)] + hashlib.sha256(body).digest() + body
        else:
            blob = blob[:len(blob) // 2] + body
        path.write_bytes(blob)
        del disk_cache._loaded[key]    # forget what this process loaded: read the file again
        bad = disk_cache.stats["bad_files"]
        dk2, _ = autodiff(load_module(src).energy, Active(2.0), Duplicated(x, np.zeros(9)))
        assert dk2 == dk and disk_cache.stats["bad_files"] == bad + 1
        assert path.read_bytes()[:len(disk_cache._MAGIC)] == disk_cache._MAGIC   # rewritten


libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
c_sinh = libm.sinh
c_sinh.restype, c_sinh.argtypes = ctypes.c_double, [ctypes.c_double]
c_cosh = libm.cosh
c_cosh.restype, c_cosh.argtypes = ctypes.c_double, [ctypes.c_double]


@numba.njit
def uses_c_sinh(x, y):
    for i in range(x.shape[0]):
        y[i] = c_sinh(x[i])


def test_custom_derivative_not_stored(cache_dir):
    register_derivative(c_sinh, [c_cosh])
    x = np.linspace(-1.0, 1.0, 5)
    dx = np.zeros(5)
    before = dict(disk_cache.stats)
    autodiff(uses_c_sinh, Duplicated(x, dx), Duplicated(np.zeros(5), np.ones(5)))
    np.testing.assert_allclose(dx, np.cosh(x), rtol=1e-12)
    assert disk_cache.stats["uncacheable"] == before["uncacheable"] + 1
    assert files(cache_dir) == []
    assert "ctypes/cffi" in disk_cache.refused[f"{__name__}.uses_c_sinh-reverse"]
    why = explain(uses_c_sinh, Duplicated(x, np.zeros(5)), Duplicated(np.zeros(5), np.ones(5)))
    assert "disk cache: not stored: it calls a ctypes/cffi function" in str(why)


def test_cacheable_text():
    assert disk_cache.cacheable('define i32 @f() {\n  ret i32 0\n}\n@_ZN08NumbaEnv1f = common global ptr null')
    assert not disk_cache.cacheable('  %p = load ptr, ptr @"numba.dynamic.globals.7f00aa"')
    assert not disk_cache.cacheable("  call void inttoptr (i64 139872345 to ptr)()")
    assert not disk_cache.cacheable("  %e = load ptr, ptr @_ZN08NumbaEnv1f")


def test_off_by_default():
    if os.environ.get(disk_cache.ENV_VAR):
        pytest.skip("ENZYME_PY_CACHE_DIR is set")
    assert disk_cache.cache_dir() is None
    disk_cache.disable()
    try:
        assert disk_cache.open_slot("reverse", uses_c_sinh, (), (), None) is None
    finally:
        disk_cache.set_cache_dir(None)
