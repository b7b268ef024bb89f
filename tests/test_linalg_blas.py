"""Matrix products inside kernels (rules/blas.py) beyond their finite-difference cases (those:
tests/rule_cases/blas.py, run by test_rule_cases.py): no allocation on a repeat gradient call of
a product in a loop (NRT statistics)."""
import numpy as np
from numba import njit
from numba.core.runtime import _nrt_python, rtsys

from enzyme_py import Const, Duplicated, compile_gradient
from enzyme_py.workspace import release_tape
from rule_cases.blas import mat, product_loop


def test_product_in_a_loop_allocates_nothing_on_repeat_calls():
    r = np.random.default_rng(10)
    A, B, C = mat(r, (4, 4), np.float64) * 0.7, mat(r, (4, 3), np.float64), np.zeros((4, 3))
    dA, dB, dC = np.zeros_like(A), np.zeros_like(B), np.ones_like(C)
    g = compile_gradient(product_loop, Duplicated(A, dA), Duplicated(B, dB), Duplicated(C, dC), Const(3))
    release_tape(g)
    entry = g.entry.unchecked       # the gradient's own allocations (no strong-zero copies)

    @njit
    def run(A, B, C, steps, dA, dB, dC, reps):
        for _ in range(reps):
            entry(A, B, C, steps, dA, dB, dC, 1.0)

    def calls(reps):
        """NRT (allocations, frees) of `reps` gradient calls beyond unboxing the arguments."""
        out = []
        for k in (0, reps):
            s = rtsys.get_allocation_stats()
            run(A, B, C, 3, dA, dB, dC, k)
            t = rtsys.get_allocation_stats()
            out.append((t.alloc - s.alloc, t.free - s.free))
        return out[1][0] - out[0][0], out[1][1] - out[0][1]

    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        run(A, B, C, 3, dA, dB, dC, 0)
        s0 = rtsys.get_allocation_stats()
        first = calls(1)
        assert first[0] > first[1]                 # the tape and the arena are kept
        assert calls(1) == (0, 0)                  # a repeat call allocates nothing
        assert calls(5) == (0, 0)
        assert release_tape(g)
        s1 = rtsys.get_allocation_stats()
        assert s1.alloc - s1.free == s0.alloc - s0.free   # nothing leaked
    finally:
        if not was:
            _nrt_python.memsys_disable_stats()
