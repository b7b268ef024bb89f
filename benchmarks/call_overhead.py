"""`python -m benchmarks.call_overhead [--quick]`: the cost of one cached `autodiff` call.

Small kernels (8 elements) with 2 and 6 Duplicated arrays, and with 2 arrays plus an Active
scalar, are timed beside the plain Numba call of the same kernel and beside the compiled
gradient's own entry (`compile_gradient(...).entry`, the floor of a call from Python). Prints
microseconds per call (best of 7 repeats): `autodiff` through the fast path's checks in Python
(the first calls, enzyme_py/modes/fast.py), then through the compiled runner (after
RUNNER_CALLS calls), then the same with the annotations built in the timed call, as a loop
`autodiff(f, Duplicated(x, dx), ...)` does.
"""
import sys
import timeit

import numpy as np
from numba import njit

from enzyme_py import Active, Duplicated, autodiff, compile_gradient
from enzyme_py.modes.fast import RUNNER_CALLS


@njit
def dot2(x, y):
    s = 0.0
    for i in range(x.size):
        s += x[i] * y[i]
    return s


@njit
def scaled2(x, y, a):
    s = 0.0
    for i in range(x.size):
        s += a * x[i] * y[i]
    return s


@njit
def sum6(a, b, c, d, e, f):
    s = 0.0
    for i in range(a.size):
        s += a[i] * b[i] + c[i] * d[i] + e[i] * f[i]
    return s


def best_us(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=7)) / number * 1e6


def case(name, kernel, arrays, scalars, number):
    shadows = [np.zeros_like(a) for a in arrays]
    annotated = [Duplicated(a, s) for a, s in zip(arrays, shadows)] + \
        [Active(v) for v in scalars]
    autodiff(kernel, *annotated)                    # compile once
    entry = compile_gradient(kernel, *annotated).entry
    plain_args = list(arrays) + list(scalars)
    entry_args = list(arrays) + list(scalars) + shadows + [1.0]
    plain = best_us(lambda: kernel(*plain_args), number)
    floor = best_us(lambda: entry(*entry_args), number)
    python = best_us(lambda: autodiff(kernel, *annotated), RUNNER_CALLS // 10)
    for _ in range(RUNNER_CALLS):
        autodiff(kernel, *annotated)
    runner = best_us(lambda: autodiff(kernel, *annotated), number)
    rebuilt = best_us(lambda: autodiff(kernel, *[Duplicated(a, s) for a, s in
                                                 zip(arrays, shadows)],
                                       *[Active(v) for v in scalars]), number)
    print(f"{name:<26} {plain:8.2f} {floor:8.2f} {python:10.2f} {runner:10.2f} {rebuilt:11.2f}")


def main(argv):
    number = 2000 if "--quick" in argv else 20000
    rng = np.random.default_rng(0)
    arr = [rng.standard_normal(8) for _ in range(6)]
    print("microseconds per call")
    print(f"{'kernel':<26} {'plain':>8} {'entry':>8} {'autodiff':>10} {'autodiff':>10} "
          f"{'+annotate':>11}")
    print(f"{'':<26} {'':>8} {'':>8} {'(Python)':>10} {'(runner)':>10} {'(runner)':>11}")
    case("2 arrays", dot2, arr[:2], [], number)
    case("2 arrays + Active scalar", scaled2, arr[:2], [1.5], number)
    case("6 arrays", sum6, arr, [], number)
    print("plain: the kernel's own Numba call; entry: the compiled gradient called directly;\n"
          "autodiff: annotations made once, through the checks in Python (the first "
          f"{RUNNER_CALLS} calls)\nor the compiled runner; +annotate: annotations made in the "
          "timed call")


if __name__ == "__main__":
    main(sys.argv[1:])
