"""The runtime helpers that loop (ir_passes/runtime/shared.py) are compiled once per process
(enzyme_py/bridge/runtime.py): generated modules declare them, two gradients call the same
library, and a gradient loaded from the disk cache in a fresh process finds them
(docs/caching.md)."""
import json
import os
import subprocess
import sys

import llvmlite.binding as llvm
import numpy as np
import pytest
from numba import njit

from enzyme_py import Const, Duplicated, autodiff, compile_gradient
from enzyme_py.bridge import runtime
from ir_passes import declared_runtime, parse_module, print_module, reverse_mode, runtime_library_text
from ir_passes.runtime import shared
from ir_passes.runtime.helpers import HELPERS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEMM = "enzpy.gemm_guarded_b.f64"


@njit
def tanh_loss(A, b):
    return np.sum(np.tanh(A @ A.T) @ b)


@njit
def square_loss(A):
    return np.sum((A.T @ A) ** 2)


def central(f, A, h=1e-6):
    fd = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        e = np.zeros_like(A)
        e[idx] = h
        fd[idx] = (f(A + e) - f(A - e)) / (2 * h)
    return fd


def test_every_shareable_helper_verifies_as_one_library():
    names = [n for n in sorted(HELPERS) if shared.shareable(n)]
    assert GEMM in names and "enzpy.arena_push" not in names     # loops; allocates
    assert not shared.shareable("enzpy.getrs.f64")                # no loop of its own
    module = llvm.parse_assembly(runtime_library_text(names))
    module.verify()
    defined = {f.name for f in module.functions if not f.is_declaration}
    assert set(names) <= defined
    assert all(module.get_function(n).linkage == llvm.Linkage.external for n in names)


def test_declare_leaves_declarations_that_link_with_the_library():
    text = """define void @f(ptr %a, ptr %b, i64 %n) {
entry:
  %bytes = shl i64 %n, 3
  call void @llvm.memcpy.p0.p0.i64(ptr %b, ptr %a, i64 %bytes, i1 false)
  %v = load double, ptr %b
  %w = fmul double %v, %v
  store double %w, ptr %b
  ret void
}
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
"""
    module = parse_module(text)
    reverse_mode(module, "f", ["dup", "dup", "const"], "df", counts=None, runtime="declare")
    out = print_module(module)
    names = declared_runtime(out)
    assert names == ["enzpy.copy_adjoint.f64"] and module.functions[names[0]].is_declaration
    kept = parse_module(text)
    reverse_mode(kept, "f", ["dup", "dup", "const"], "df", counts=None)
    assert not kept.functions[names[0]].is_declaration      # "define", the default
    gradient = llvm.parse_assembly(out)
    gradient.verify()
    gradient.link_in(llvm.parse_assembly(runtime_library_text(names)))
    gradient.verify()
    with pytest.raises(ValueError, match="runtime"):
        reverse_mode(parse_module(text), "f", ["dup", "dup", "const"], "df2", runtime="shared")


def test_two_gradients_share_one_library(monkeypatch):
    compiled = []
    keep = runtime.compile_helpers
    monkeypatch.setattr(runtime, "compile_helpers", lambda names: compiled.append(list(names)) or keep(names))
    rng = np.random.default_rng(4)
    A, b = 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4)
    first = compile_gradient(tanh_loss, Duplicated(A, np.zeros((4, 4))), Const(b))
    before = len(compiled)
    second = compile_gradient(square_loss, Duplicated(A, np.zeros((4, 4))))
    common = set(declared_runtime(first.verified)) & set(declared_runtime(second.verified))
    assert "enzpy.scale_matrix.f64" in common
    for text in (first.verified, second.verified):
        assert not [line for line in text.splitlines()
                    if line.startswith("define") and "@enzpy.scale_matrix.f64(" in line]
    assert all(name in runtime._libraries for name in common)
    assert not common & {n for names in compiled[before:] for n in names}     # not compiled again
    dA = np.zeros((4, 4))
    autodiff(tanh_loss, Duplicated(A, dA), Const(b))
    np.testing.assert_allclose(dA, central(lambda M: tanh_loss(M, b), A), rtol=1e-6, atol=1e-8)
    dA = np.zeros((4, 4))
    autodiff(square_loss, Duplicated(A, dA))
    np.testing.assert_allclose(dA, central(square_loss, A), rtol=1e-6, atol=1e-8)


DRIVER = '''
import json, sys
import numpy as np
from numba import njit
from enzyme_py import Const, Duplicated, autodiff, disk_cache
from enzyme_py.bridge import runtime

@njit
def loss(A, b):
    return np.sum(np.tanh(A @ A.T) @ b)

compiled = []
keep = runtime.compile_helpers
runtime.compile_helpers = lambda names: compiled.append(list(names)) or keep(names)
rng = np.random.default_rng(2)
A, b = 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4)
dA = np.zeros((4, 4))
autodiff(loss, Duplicated(A, dA), Const(b))
print(json.dumps({"dA": dA.tolist(), "stats": disk_cache.stats, "refused": disk_cache.refused,
                  "compiled": compiled}))
'''


def test_fresh_process_loads_gradient_and_runtime(tmp_path):
    (tmp_path / "driver.py").write_text(DRIVER)
    cache = tmp_path / "cache"
    env = dict(os.environ, ENZYME_PY_CACHE_DIR=str(cache),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def run():
        done = subprocess.run([sys.executable, str(tmp_path / "driver.py")], capture_output=True,
                              text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])
    built = run()        # builds and stores the gradient and its helpers' library
    assert built["refused"] == {} and built["stats"]["builds"] >= 1 and built["compiled"]
    stored = list(cache.glob("runtime-*.nbr"))
    assert len(stored) == 1
    loaded = run()       # loads both
    assert loaded["stats"]["builds"] == 0 and loaded["stats"]["misses"] == 0
    assert loaded["compiled"] == []
    stored[0].unlink()
    again = run()        # loads the gradient, compiles its helpers and stores them again
    assert again["stats"]["builds"] == 0 and again["compiled"] and stored[0].exists()
    assert built["dA"] == loaded["dA"] == again["dA"]
    rng = np.random.default_rng(2)
    A, b = 0.3 * rng.standard_normal((4, 4)), rng.standard_normal(4)

    def f(M):
        return np.sum(np.tanh(M @ M.T) @ b)
    np.testing.assert_allclose(again["dA"], central(f, A), rtol=1e-6, atol=1e-8)
