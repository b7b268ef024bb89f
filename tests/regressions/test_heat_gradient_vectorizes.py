"""A stencil time loop whose gradient stopped vectorizing: with every return split apart
(split-returns), the error return's copy of the tape snapshot called `enzpy.buffer` with
addresses inside the gradient's frame; that call was not inlined, the frame escaped, and LLVM
kept the loop counters in memory: no loop of the gradient vectorized and the gradient took 1.9x
its earlier time (100 -> 190 us at n = 200, 200 steps). Now errors leave through one shared
exit that snapshots nothing."""
import numpy as np
from numba import njit

import enzyme_py
from enzyme_py import Duplicated


@njit
def heat(u, kappa, steps):
    n = u.shape[0]
    tmp = np.empty_like(u)
    for _ in range(steps):
        for i in range(1, n - 1):
            tmp[i] = u[i] + kappa[i] * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        for i in range(1, n - 1):
            u[i] = tmp[i]


def test_gradient_loops_vectorize():
    n = 40
    u, kappa = np.sin(np.linspace(0, np.pi, n)), np.full(n, 0.2)
    g = enzyme_py.compile_gradient(heat, Duplicated(u, np.ones(n)), Duplicated(kappa, np.zeros(n)), 5)
    lines = g.library.get_llvm_str().splitlines()
    start = next(k for k, line in enumerate(lines)
                 if line.startswith("define") and f"@{g.name}(" in line)
    end = lines.index("}", start)
    assert any("x double>" in line for line in lines[start:end])
    report = enzyme_py.check_gradient(heat, Duplicated(u.copy(), np.ones(n)),
                                      Duplicated(kappa.copy(), np.zeros(n)), 5)
    assert report.passed, report
