"""The CUDA API without a GPU: building, caching, explain, bad input (docs/cuda.md).

Building a gradient needs no GPU; launching one does. PTX generation is checked in a process of
its own (test_cuda_codegen.py); these tests stop before it. Skipped without the `cuda` extra.
"""
import importlib.util
import math

import numpy as np
import pytest

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("numba_cuda") is None,
                                 reason="needs the cuda extra: pip install -e '.[cuda]'"),
              pytest.mark.filterwarnings("ignore:Grid size")]

if importlib.util.find_spec("numba_cuda") is not None:
    from numba import cuda, float64

    @cuda.jit
    def scale(x, a, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = a * math.sin(x[i])

    @cuda.jit
    def grid2(x, y):
        i, j = cuda.grid(2)
        if i < x.shape[0] and j < x.shape[1]:
            y[i, j] = x[i, j] * x[i, j]

    @cuda.jit
    def two_dynamic(x, y):
        a = cuda.shared.array(0, float64)
        b = cuda.shared.array(0, float64)
        i = cuda.threadIdx.x
        a[i] = x[i]
        b[i] = 2.0 * x[i]
        cuda.syncthreads()
        y[i] = a[i] + b[i]

    @cuda.jit
    def into_const(x, y):
        i = cuda.grid(1)
        if i < x.size:
            y[i] = x[i] * 2.0


def args(n=40):
    from enzyme_py import Active, Duplicated
    x = np.linspace(0.0, 1.0, n)
    return [Duplicated(x, np.zeros(n)), Active(0.5), Duplicated(np.zeros(n), np.ones(n))]


def test_compile_gradient_builds_without_gpu_and_caches():
    from enzyme_py import compile_gradient
    a = compile_gradient(scale[2, 32], *args())
    b = compile_gradient(scale[2, 32], *args())
    assert a is b
    assert a.kinds == ("dup", "active", "dup")
    assert "define ptx_kernel void" in a.generated and a.name in a.generated
    assert sorted({u.how for u in a.updates}) == ["private", "privatised per block"]


def test_forward_mode_builds():
    from enzyme_py import Active, Duplicated, Forward, compile_gradient
    x = np.linspace(0.0, 1.0, 40)
    ck = compile_gradient(scale[2, 32], Duplicated(x, np.ones(40)), Active(0.5, 1.0),
                          Duplicated(np.zeros(40), np.zeros(40)), mode=Forward)
    assert "define ptx_kernel void" in ck.generated and ck.mode is Forward


def test_explain_reports_how_each_update_is_made():
    from enzyme_py import explain
    text = str(explain(scale[2, 32], *args()))
    assert "on the GPU" in text and "private" in text and "privatised per block" in text
    assert "Active parameter" in text


def test_explain_names_the_float32_rounding_risk():
    """n-body's pos[j] shadow sums many threads' adjoints; in float32, terms that cancel (j == i)
    can lose the gradient: explain says so, for float32 arrays only."""
    from enzyme_py import Duplicated, explain
    from cuda_kernels import nbody
    notes = {}
    for dt in (np.float32, np.float64):
        pos, mass = np.ones((20, 3), dt), np.ones(20, dt)
        text = str(explain(nbody[2, 16], Duplicated(pos, np.zeros_like(pos)),
                           Duplicated(mass, np.zeros_like(mass)),
                           Duplicated(np.zeros_like(pos), np.ones_like(pos))))
        notes[dt] = [line for line in text.splitlines() if "note:" in line]
    assert len(notes[np.float32]) == 1 and "float32" in notes[np.float32][0]
    assert "cuda_kernels.py:" in notes[np.float32][0] and notes[np.float64] == []
    assert "accumulate='float64'" in notes[np.float32][0]


def test_float64_sums_of_float32_adjoints():
    """accumulate="float64": explain says the sums are float64; the kernel reads and writes its
    float32 arrays' shadows as doubles (float32 data stays float); forward mode and a strided
    float32 shadow are refused."""
    from enzyme_py import Duplicated, Forward
    from enzyme_py.cuda.api import compile_kernel, explain
    from cuda_kernels import nbody
    pos, mass = np.ones((20, 3), np.float32), np.ones(20, np.float32)

    def annotated(p=pos):
        return (Duplicated(p, np.zeros_like(p)), Duplicated(mass, np.zeros_like(mass)),
                Duplicated(np.zeros_like(pos), np.ones_like(pos)))
    text = str(explain(nbody[2, 16], *annotated(), accumulate="float64"))
    assert "in float64 (accumulate='float64')" in text
    ck = compile_kernel(nbody[2, 16], *annotated(), accumulate="float64")
    body = ck.generated[ck.generated.index(".body("):]
    assert "warp_add.nvptx.f64" in body and "warp_add.nvptx.f32" not in body   # pos[j]
    with pytest.raises(ValueError, match="reverse mode"):
        compile_kernel(nbody[2, 16], *annotated(), mode=Forward, accumulate="float64")
    strided = np.ones((20, 6), np.float32)[:, ::2]
    with pytest.raises(ValueError, match="contiguous"):
        compile_kernel(nbody[2, 16], Duplicated(strided, np.zeros((20, 6), np.float32)[:, ::2]),
                       *annotated()[1:], accumulate="float64")
    with pytest.raises(ValueError, match="accumulate"):
        compile_kernel(nbody[2, 16], *annotated(), accumulate="float128")


def test_two_dimensional_launch_makes_updates_atomic():
    """cuda.grid(1)'s injectivity is what makes updates private; a 2-D launch has none of it."""
    from enzyme_py import Duplicated, compile_gradient
    x = np.ones((8, 8))
    ck = compile_gradient(grid2[(2, 2), (4, 4)], Duplicated(x, np.zeros_like(x)),
                          Duplicated(np.zeros_like(x), np.ones_like(x)))
    assert {u.how for u in ck.updates} == {"atomic"}


def test_bad_input():
    from enzyme_py import Active, BatchDuplicated, Duplicated, autodiff, compile_gradient
    x = np.ones(8)
    with pytest.raises(TypeError, match="Active needs a real float"):
        compile_gradient(scale[1, 8], Duplicated(x, np.zeros(8)), Active(x), x)
    with pytest.raises(ValueError, match="shape"):
        compile_gradient(scale[1, 8], Duplicated(x, np.zeros(7)), 0.5, x)
    with pytest.raises(ValueError, match="share"):
        compile_gradient(scale[1, 8], Duplicated(x, x), 0.5, np.zeros(8))
    with pytest.raises(NotImplementedError, match="BatchDuplicated .* reverse mode"):
        compile_gradient(scale[1, 8], BatchDuplicated(x, (np.zeros(8),)), 0.5, np.zeros(8))
    with pytest.raises(TypeError, match=r"kernel\[blocks, threads\]"):
        autodiff(scale, Duplicated(x, np.zeros(8)), 0.5, np.zeros(8))


def test_active_data_into_a_const_array_names_the_argument():
    from enzyme_py import Duplicated, UnsupportedError, compile_gradient
    x = np.ones(8)
    with pytest.raises(UnsupportedError, match="argument 1 .`y`."):
        compile_gradient(into_const[1, 8], Duplicated(x, np.zeros(8)), np.zeros(8))


def test_reduction_tape_stays_in_the_frame():
    """`while stride > 0: stride //= 2` runs at most 66 times: its tape is an array in the
    thread's frame, not on the device heap (malloc in a kernel is slow, its heap small)."""
    from cuda_kernels import block_sum
    from enzyme_py import Duplicated, compile_gradient
    ck = compile_gradient(block_sum[2, 16], Duplicated(np.ones(28), np.zeros(28)),
                          Duplicated(np.zeros(2), np.ones(2)))
    assert "@malloc" not in ck.generated and "@free" not in ck.generated
    assert any(c.loop is not None for c in ck.layout.cached)



def test_deterministic_sums_make_no_float_atomics():
    """deterministic=True: the Active scalar's sum goes through the fixed-order block sums (no
    `atomicrmw fadd` anywhere in the generated module), the kernel takes its scratch memory
    last, explain says so; a gather's x[idx[i]] (an atomic add) and forward mode are refused."""
    from enzyme_py import Active, Const, Duplicated, Forward, UnsupportedError
    from enzyme_py.cuda.api import compile_kernel, explain
    from cuda_kernels import gather
    ck = compile_kernel(scale[2, 32], *args(), deterministic=True)
    assert "atomicrmw fadd" not in ck.generated and ck.scratch_sites == 1
    assert "atomicrmw fadd" in compile_kernel(scale[2, 32], *args()).generated
    assert ", ptr %scratch)" in ck.generated
    text = str(explain(scale[2, 32], *args(), deterministic=True))
    assert "added in block order" in text and "deterministic=True: no float atomics" in text
    x, w = np.ones(40), np.array([1.0, 2.0])
    gathered = (Duplicated(x, np.zeros(40)), Const(np.arange(40) % 7), Duplicated(w, np.zeros(2)),
                Duplicated(np.zeros(40), np.ones(40)))
    with pytest.raises(UnsupportedError, match="deterministic=True: threads add into a shadow"):
        compile_kernel(gather[2, 32], *gathered, deterministic=True)
    with pytest.raises(ValueError, match="reverse mode"):
        compile_kernel(scale[2, 32], Duplicated(x, np.ones(40)), Active(0.5, 1.0),
                         Duplicated(np.zeros(40), np.zeros(40)), mode=Forward, deterministic=True)


def test_batched_forward_mode_builds_and_checks_its_lanes():
    """BatchDuplicated in forward mode: the kernel takes k shadows per array and k tangents per
    Active argument; lanes that share memory, and directions that disagree, are refused."""
    from enzyme_py import Active, BatchDuplicated, Forward, compile_gradient
    x, y = np.linspace(0.0, 1.0, 40), np.zeros(40)
    lanes = (np.ones(40), np.zeros(40), np.zeros(40))
    ck = compile_gradient(scale[2, 32], BatchDuplicated(x, lanes), Active(0.5, (1.0, 0.0, 2.0)),
                          BatchDuplicated(y, tuple(np.zeros(40) for _ in range(3))), mode=Forward)
    head = next(line for line in ck.generated.splitlines()
                if line.startswith(f"define ptx_kernel void @{ck.name}("))
    assert head.count("%shadow.") == 6 and head.count("%tangent.") == 3
    shared = np.zeros(40)
    with pytest.raises(ValueError, match="shadow 0 and argument 0's shadow 1 share memory"):
        compile_gradient(scale[2, 32], BatchDuplicated(x, (shared, shared)), Active(0.5, (1.0, 0.0)),
                         BatchDuplicated(y, (np.zeros(40), np.zeros(40))), mode=Forward)
    with pytest.raises(ValueError, match="directions"):
        compile_gradient(scale[2, 32], BatchDuplicated(x, lanes), Active(0.5, (1.0, 0.0)),
                         BatchDuplicated(y, tuple(np.zeros(40) for _ in range(3))), mode=Forward)


def test_dynamic_shared_memory_shadow_follows_the_launch_size():
    """A dynamic shared array's shadow lives in the launch's dynamic region after the kernel's
    own bytes (the kernel takes the size last); two dynamic arrays, which numba-cuda puts at
    the same address, are refused."""
    from cuda_kernels import dynamic_sum
    from enzyme_py import Duplicated, UnsupportedError, compile_gradient
    from ir_passes import dynamic_shared_bytes
    ck = compile_gradient(dynamic_sum[2, 16, 0, 128], Duplicated(np.ones(28), np.zeros(28)),
                          Duplicated(np.zeros(2), np.ones(2)))
    assert ck.dynamic == (8, 8, 1) and "i64 %dyn.bytes)" in ck.generated
    assert "%dynamic_smem_size" not in ck.generated[ck.generated.index(".body("):]
    assert dynamic_shared_bytes(120, ck.dynamic) == 128 + 128 and dynamic_shared_bytes(120, None) == 120
    x = np.ones(16)
    with pytest.raises(UnsupportedError, match="two dynamic shared arrays"):
        compile_gradient(two_dynamic[1, 16, 0, 128], Duplicated(x, np.zeros(16)),
                         Duplicated(np.zeros(16), np.ones(16)))
