"""CUDA gradients on a GPU: skipped when none is present (docs/cuda.md).

The kernels of tests/cuda_kernels.py are differentiated on the device, with device arrays and
with host arrays, in reverse and forward mode, and compared with enzyme_py's gradients of the
same computation written as a sequential @njit loop on the CPU (the reference the parallel work
uses: a `prange` body differentiates as this serial loop). `test_time_ratio` prints the
gradient / primal time at sizes that fill a GPU (`pytest -s`).
"""
import importlib.util
import math
import time

import numpy as np
import pytest

HAVE_EXTRA = importlib.util.find_spec("numba_cuda") is not None


def _gpu() -> bool:
    if not HAVE_EXTRA:
        return False
    from numba import cuda
    try:
        return cuda.is_available()
    except Exception:          # noqa: BLE001 - no driver
        return False


pytestmark = pytest.mark.skipif(not _gpu(), reason="needs a CUDA GPU")

if _gpu():
    from numba import njit

    from cuda_kernels import block_sum, dynamic_sum, elementwise, gather, nbody, weighted

    @njit
    def elementwise_cpu(x, a, y):
        for i in range(x.size):
            y[i] = math.sin(x[i]) * x[i] + a * math.exp(-x[i] * x[i])

    @njit
    def gather_cpu(x, idx, w, y):
        for i in range(y.size):
            y[i] = w[0] * x[idx[i]] + w[1] * math.cos(x[i])

    @njit
    def nbody_cpu(pos, mass, force):
        n = pos.shape[0]
        for i in range(n):
            fx = 0.0
            fy = 0.0
            fz = 0.0
            for j in range(n):
                dx = pos[j, 0] - pos[i, 0]
                dy = pos[j, 1] - pos[i, 1]
                dz = pos[j, 2] - pos[i, 2]
                r2 = dx * dx + dy * dy + dz * dz + 0.01
                s = mass[j] / (r2 * math.sqrt(r2))
                fx += dx * s
                fy += dy * s
                fz += dz * s
            force[i, 0] = fx
            force[i, 1] = fy
            force[i, 2] = fz


def _launch(n, threads=128):
    return (n + threads - 1) // threads, threads


def test_elementwise_device_and_host_arrays():
    from numba import cuda
    from enzyme_py import Active, Duplicated, autodiff
    rng = np.random.default_rng(0)
    n = 10_000
    x, seed = rng.normal(size=n), rng.normal(size=n)
    dx_ref, dy_ref = np.zeros(n), seed.copy()
    (_, da_ref, _) = autodiff(elementwise_cpu, Duplicated(x, dx_ref), Active(0.7),
                              Duplicated(np.zeros(n), dy_ref))
    b, t = _launch(n)
    # host arrays: copied to the device and back
    dx, dy = np.zeros(n), seed.copy()
    (_, da, _) = autodiff(elementwise[b, t], Duplicated(x, dx), Active(0.7),
                          Duplicated(np.zeros(n), dy))
    np.testing.assert_allclose(dx, dx_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dy, dy_ref, atol=0)
    assert da == pytest.approx(da_ref, rel=1e-10)
    # device arrays: no copies
    d_x, d_dx = cuda.to_device(x), cuda.to_device(np.zeros(n))
    d_y, d_dy = cuda.to_device(np.zeros(n)), cuda.to_device(seed)
    autodiff(elementwise[b, t], Duplicated(d_x, d_dx), Active(0.7), Duplicated(d_y, d_dy))
    np.testing.assert_allclose(d_dx.copy_to_host(), dx_ref, rtol=1e-12, atol=1e-12)


def test_deterministic_sums_give_the_same_bits():
    """deterministic=True: 20 launches give the same bits (w's shadow and the Active scalar's
    derivative, summed over 4,096 blocks), equal to the atomic gradient within rounding."""
    from numba import cuda
    from enzyme_py import Active, Duplicated, autodiff
    rng = np.random.default_rng(5)
    n = 1 << 20
    x, seed = cuda.to_device(rng.normal(size=n)), cuda.to_device(rng.normal(size=n))
    w = np.array([0.8, -0.3])
    b, t = _launch(n, 256)

    def run(deterministic):
        dw, y, dy = np.zeros(2), cuda.device_array(n), cuda.device_array(n)
        dy.copy_to_device(seed)
        (_, _, da, _) = autodiff(weighted[b, t], Duplicated(x, cuda.device_array(n)),
                                 Duplicated(w, dw), Active(0.6), Duplicated(y, dy),
                                 deterministic=deterministic)
        return np.append(dw, da)
    runs = [run(True) for _ in range(20)]
    assert all(np.array_equal(r, runs[0]) for r in runs), runs
    np.testing.assert_allclose(runs[0], run(False), rtol=1e-10)


def test_dynamic_shared_memory_and_batched_forward():
    """dynamic_sum (its buffer in dynamic shared memory) against block_sum's pattern on the CPU:
    the reverse gradient is 2 x cos-chain products, checked against two forward directions."""
    from enzyme_py import BatchDuplicated, Duplicated, Forward, autodiff
    rng = np.random.default_rng(6)
    blocks, threads = 64, 128
    n = blocks * threads - 5
    x, seed = rng.normal(size=n) * 0.3, rng.normal(size=blocks)
    config = dynamic_sum[blocks, threads, 0, threads * 8]
    dx = np.zeros(n)
    autodiff(config, Duplicated(x, dx), Duplicated(np.zeros(blocks), seed.copy()))
    t1, t2 = rng.normal(size=n), rng.normal(size=n)
    o1, o2 = np.zeros(blocks), np.zeros(blocks)
    autodiff(config, BatchDuplicated(x, (t1.copy(), t2.copy())),
             BatchDuplicated(np.zeros(blocks), (o1, o2)), mode=Forward)
    assert np.dot(seed, o1) == pytest.approx(np.dot(dx, t1), rel=1e-10)
    assert np.dot(seed, o2) == pytest.approx(np.dot(dx, t2), rel=1e-10)


def test_gather_shared_inputs_match_cpu():
    from enzyme_py import Duplicated, autodiff
    rng = np.random.default_rng(1)
    n = 50_000
    x, idx = rng.normal(size=n), rng.integers(0, n, size=n)
    w, seed = np.array([1.3, -0.4]), rng.normal(size=n)
    ref = [np.zeros(n), np.zeros(2)]
    autodiff(gather_cpu, Duplicated(x, ref[0]), idx, Duplicated(w, ref[1]),
             Duplicated(np.zeros(n), seed.copy()))
    got = [np.zeros(n), np.zeros(2)]
    autodiff(gather[_launch(n)], Duplicated(x, got[0]), idx, Duplicated(w, got[1]),
             Duplicated(np.zeros(n), seed.copy()))
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-9)


def test_nbody_matches_cpu():
    from enzyme_py import Duplicated, autodiff
    rng = np.random.default_rng(2)
    n = 2048
    pos, mass, seed = rng.normal(size=(n, 3)), rng.uniform(1, 2, size=n), rng.normal(size=(n, 3))
    ref = [np.zeros((n, 3)), np.zeros(n)]
    autodiff(nbody_cpu, Duplicated(pos, ref[0]), Duplicated(mass, ref[1]),
             Duplicated(np.zeros((n, 3)), seed.copy()))
    got = [np.zeros((n, 3)), np.zeros(n)]
    autodiff(nbody[_launch(n)], Duplicated(pos, got[0]), Duplicated(mass, got[1]),
             Duplicated(np.zeros((n, 3)), seed.copy()))
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-9, atol=1e-9)


def test_block_sum_and_forward_mode():
    from enzyme_py import Duplicated, Forward, autodiff
    rng = np.random.default_rng(3)
    n, threads = 4000, 64
    blocks = (n + threads - 1) // threads
    x = rng.normal(size=n)
    seed = rng.normal(size=blocks)
    dx = np.zeros(n)
    autodiff(block_sum[blocks, threads], Duplicated(x, dx), Duplicated(np.zeros(blocks), seed.copy()))
    expected = (np.cos(x) * x + np.sin(x)) * np.repeat(seed, threads)[:n]
    np.testing.assert_allclose(dx, expected, rtol=1e-10, atol=1e-12)
    tx = rng.normal(size=n)
    tout = np.zeros(blocks)
    autodiff(block_sum[blocks, threads], Duplicated(x, tx.copy()), Duplicated(np.zeros(blocks), tout),
             mode=Forward)
    per = (np.cos(x) * x + np.sin(x)) * tx
    np.testing.assert_allclose(tout, np.add.reduceat(per, np.arange(0, n, threads)), rtol=1e-9)


def test_float32_adjoints_summed_in_float64():
    """accumulate="float64" on host and device float32 arrays, against the float64 gradient at
    the same points (pair_sum: +-1e6 terms cancel in each x[i]'s adjoint)."""
    from numba import cuda
    from enzyme_py import Duplicated
    from enzyme_py.cuda.api import autodiff
    from cuda_kernels import pair_sum
    rng = np.random.default_rng(5)
    n = 2048
    x = (np.arange(n) * 0.1 + rng.uniform(0.0, 0.02, size=n)).astype(np.float32)
    seed = rng.normal(size=n).astype(np.float32)
    config = pair_sum[_launch(n)]
    ref = np.zeros(n)
    autodiff(config, Duplicated(x.astype(np.float64), ref),
             Duplicated(np.zeros(n), seed.astype(np.float64)))
    dx = np.zeros(n, np.float32)
    autodiff(config, Duplicated(x, dx), Duplicated(np.zeros(n, np.float32), seed.copy()),
             accumulate="float64")
    assert np.max(np.abs(dx - ref)) / np.max(np.abs(ref)) < 1e-6
    d_dx = cuda.to_device(np.zeros(n, np.float32))
    autodiff(config, Duplicated(cuda.to_device(x), d_dx),
             Duplicated(cuda.device_array(n, np.float32), cuda.to_device(seed)),
             accumulate="float64")
    assert np.max(np.abs(d_dx.copy_to_host() - ref)) / np.max(np.abs(ref)) < 1e-6


@pytest.mark.parametrize("name", ["elementwise", "nbody", "gather"])
def test_time_ratio(name):
    """Gradient / primal time at a size that fills the GPU (printed; the target is <= 3)."""
    from numba import cuda
    from enzyme_py import Active, Duplicated, autodiff
    rng = np.random.default_rng(4)
    if name == "nbody":
        n = 16384
        arrays = [rng.normal(size=(n, 3)), rng.uniform(1, 2, size=n), np.zeros((n, 3))]
        kernel, extra = nbody, []
    elif name == "gather":
        n = 1 << 24
        arrays = [rng.normal(size=n), rng.integers(0, n, size=n), np.array([1.3, -0.4]), np.zeros(n)]
        kernel, extra = gather, []
    else:
        n = 1 << 24
        arrays = [rng.normal(size=n), 0.7, np.zeros(n)]
        kernel, extra = elementwise, []
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in arrays]
    config = kernel[_launch(n, 256)]
    args = [Duplicated(d, cuda.device_array_like(d)) if isinstance(a, np.ndarray) and
            a.dtype.kind == "f" else (Active(d) if isinstance(a, float) else d)
            for a, d in zip(arrays, dev)]

    def timed(fn, repeat=10):
        fn()
        cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn()
        cuda.synchronize()
        return (time.perf_counter() - t0) / repeat

    primal = timed(lambda: config(*dev, *extra))
    gradient = timed(lambda: autodiff(config, *args))
    print(f"\n{name}: primal {primal * 1e3:.3f} ms, gradient {gradient * 1e3:.3f} ms, "
          f"ratio {gradient / primal:.2f}")
