"""`python -m benchmarks.cuda_ratio` (needs a CUDA GPU): gradient / primal time of the CUDA
kernels of tests/cuda_kernels.py at sizes that fill a GPU.

For each kernel it prints, in milliseconds per call (mean of 10 after a warm-up, synchronised):
the primal launch, the whole `autodiff` call, and the gradient kernel alone (arguments packed
once, launched again and again), with the ratios to the primal. The difference between the
last two is the Python side of a call (argument checks, packing, the Active derivatives'
slots and their copy back).
"""
import os
import sys
import time

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "tests"))
sys.path.insert(0, _HERE)


def _timed(fn, repeat=10):
    from numba import cuda
    fn()
    cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeat):
        fn()
    cuda.synchronize()
    return (time.perf_counter() - t0) / repeat


def _case(name, rng):
    from numba import cuda

    from cuda_kernels import elementwise, gather, nbody
    if name == "nbody":
        n = 16384
        arrays = [rng.normal(size=(n, 3)), rng.uniform(1, 2, size=n), np.zeros((n, 3))]
        kernel = nbody
    elif name == "gather":
        n = 1 << 24
        arrays = [rng.normal(size=n), rng.integers(0, n, size=n), np.array([1.3, -0.4]),
                  np.zeros(n)]
        kernel = gather
    else:
        n = 1 << 24
        arrays = [rng.normal(size=n), 0.7, np.zeros(n)]
        kernel = elementwise
    dev = [cuda.to_device(a) if isinstance(a, np.ndarray) else a for a in arrays]
    config = kernel[(n + 255) // 256, 256]
    return config, dev, arrays


def main(argv):
    from numba import cuda

    from enzyme_py import Active, Duplicated, autodiff
    from enzyme_py.cuda.api import _compiled
    from enzyme_py.cuda.launch import derivative_slots, parameters
    from enzyme_py.annotations import Reverse
    rng = np.random.default_rng(4)
    print(f"{'kernel':<12} {'primal':>8} {'autodiff':>9} {'kernel':>8}   "
          f"{'autodiff/primal':>15} {'kernel/primal':>13}")
    for name in ("elementwise", "gather", "nbody"):
        config, dev, arrays = _case(name, rng)
        args = [Duplicated(d, cuda.device_array_like(d)) if isinstance(a, np.ndarray) and
                a.dtype.kind == "f" else (Active(d) if isinstance(a, float) else d)
                for a, d in zip(arrays, dev)]
        primal = _timed(lambda: config(*dev))
        whole = _timed(lambda: autodiff(config, *args))
        compiled, annotated = _compiled(config, args, Reverse, "auto", None)
        loaded = compiled.load()
        params = parameters(compiled.argtypes, annotated, compiled.kinds, config.stream, [])
        pointers, slots = derivative_slots(compiled.argtypes, compiled.kinds, {}, config.stream)
        params += pointers
        alone = _timed(lambda: loaded.launch(config.griddim, config.blockdim, config.stream,
                                             config.sharedmem, params))
        print(f"{name:<12} {primal * 1e3:8.3f} {whole * 1e3:9.3f} {alone * 1e3:8.3f}   "
              f"{whole / primal:15.2f} {alone / primal:13.2f}")
    from cuda_hand_adjoints import (elementwise_adjoint, elementwise_adjoint_loads_after_math,
                            elementwise_adjoint_loads_first)
    config, dev, arrays = _case("elementwise", rng)
    x, a, y = dev
    dx, dy = cuda.device_array_like(x), cuda.device_array_like(y)
    primal = _timed(lambda: config(*dev))
    for hand in (elementwise_adjoint, elementwise_adjoint_loads_after_math,
                 elementwise_adjoint_loads_first):
        launch = hand[config.griddim, config.blockdim]
        t = _timed(lambda: launch(x, a, y, dx, dy))
        print(f"hand adjoint {hand.__name__}: {t * 1e3:.3f} ms, {t / primal:.2f} x the primal")
    print(f"device: {cuda.get_current_device().name}")


if __name__ == "__main__":
    main(sys.argv[1:])
