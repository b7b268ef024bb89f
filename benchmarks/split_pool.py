"""Split mode's tape pool (enzyme_py/modes/frame_pool.py): augmented_forward + reverse + free
with the freed tape's memory reused (the default) and with the pool off (every forward sweep
fills a new tape, as before the pool), against one `autodiff` call.

    python -m benchmarks.split_pool [--quick]

Kernels: the heat equation in place (n = 1e5, 100 steps: a tape of about 100 MB) and N-body
forces (n = 1000), from tests/torch_kernels.py. Best of `reps` calls, milliseconds; the three
variants are timed in turns.
"""
import sys
import time

import numpy as np

from enzyme_py import Active, Const, Duplicated, augmented_forward, autodiff
from tests import torch_kernels as K


def heat_calls(n, steps):
    rng = np.random.default_rng(0)
    u0, w = rng.random(n), rng.random(n)

    def args():
        return [Duplicated(u0.copy(), w.copy()), Active(0.2), Const(steps)]
    return K.heat_inplace, args


def nbody_calls(n):
    rng = np.random.default_rng(1)
    px, py, m, wx, wy = (rng.random(n) for _ in range(5))

    def args():
        return [Duplicated(px.copy(), np.zeros(n)), Duplicated(py.copy(), np.zeros(n)),
                Duplicated(m.copy(), np.zeros(n)), Duplicated(np.zeros(n), wx.copy()),
                Duplicated(np.zeros(n), wy.copy())]
    return K.nbody, args


def split_call(kernel, args):
    def run():
        _, tape = augmented_forward(kernel, *args())
        tape.reverse()
        tape.free()
    return run


def measure(name, kernel, args, reps):
    autodiff(kernel, *args())
    _, tape = augmented_forward(kernel, *args())
    pool = tape._split.pool
    tape.free()
    limit = pool.max_frames
    runs = {"autodiff": lambda: autodiff(kernel, *args()), "split, pool": split_call(kernel, args),
            "split, no pool": split_call(kernel, args)}
    times = {k: [] for k in runs}
    for _ in range(reps):
        for k, fn in runs.items():
            off = k == "split, no pool"
            parked = list(pool._frames) if off else None    # set aside, not freed
            if off:
                pool._frames.clear()
                pool.max_frames = 0
            t = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t)
            if off:
                pool._frames[:] = parked
                pool.max_frames = limit
    best = {k: min(v) * 1e3 for k, v in times.items()}
    ad = best["autodiff"]
    print(f"{name}: autodiff {ad:.2f} ms; augmented_forward + reverse: pool {best['split, pool']:.2f} ms "
          f"({best['split, pool'] / ad:.2f}x), no pool {best['split, no pool']:.2f} ms "
          f"({best['split, no pool'] / ad:.2f}x)")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    reps = 3 if quick else 10
    n = 10_000 if quick else 100_000
    measure(f"heat n={n} steps=100", *heat_calls(n, 100), reps)
    measure(f"nbody n={300 if quick else 1000}", *nbody_calls(300 if quick else 1000), reps)
