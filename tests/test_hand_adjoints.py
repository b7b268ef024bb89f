"""The hand-written Numba adjoints of the benchmarks (workloads 1, 2, 3, 7, 8) are right, so
that the benchmark's enzyme_py / hand column compares equal work.

At small sizes each hand adjoint is checked against central finite differences of the
objective L = seed * return + <shadow seed, final arrays> (every input element), against the
enzyme_py gradient of the same kernel, and (for kernels returning their loss) for
returning the same value.
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/

from benchmarks.harness import verify  # noqa: E402
from benchmarks.workloads import elementwise, elementwise_noneed, heat, nbody, rnn, softdtw  # noqa: E402

SMALL = {
    "elementwise": lambda: elementwise.setup(n=37),
    "elementwise_noneed": lambda: elementwise_noneed.setup(n=37),
    "rnn": lambda: rnn.setup(H=6, nin=4, T=5),
    "heat_even": lambda: heat.setup(n=23, steps=6),
    "heat_odd": lambda: heat.setup(n=23, steps=7),
    "nbody": lambda: nbody.setup(n=13),
    "softdtw": lambda: softdtw.setup(m=7, n=5),
}


@pytest.fixture(scope="module", params=sorted(SMALL))
def case(request):
    inst = SMALL[request.param]()
    inst.reset()
    inst.hand.call()
    g_hand = inst.hand.result().ravel().copy()
    return request.param, inst, g_hand


def full_fd(inst, h=1e-6):
    """Central finite differences of L w.r.t. every `wrt` input element."""
    out = []
    for k, a in enumerate(inst.spec):
        if not a.wrt or a.kind == "const":
            continue
        base = [s.init for s in inst.spec]
        if a.kind == "active":
            step = h * max(1.0, abs(a.init))
            lo, hi = list(base), list(base)
            hi[k] = a.init + step
            lo[k] = a.init - step
            out.append([(inst.objective(hi) - inst.objective(lo)) / (2 * step)])
            continue
        g = np.zeros(a.init.size)
        for i in range(a.init.size):
            step = h * max(1.0, abs(a.init.flat[i]))
            hi, lo = a.init.copy(), a.init.copy()
            hi.flat[i] += step
            lo.flat[i] -= step
            bh, bl = list(base), list(base)
            bh[k], bl[k] = hi, lo
            g[i] = (inst.objective(bh) - inst.objective(bl)) / (2 * step)
        out.append(g)
    return np.concatenate([np.ravel(x) for x in out])


def test_hand_matches_finite_differences(case):
    name, inst, g_hand = case
    fd = full_fd(inst)
    assert g_hand.shape == fd.shape
    np.testing.assert_allclose(g_hand, fd, rtol=1e-5, atol=1e-6 * max(1.0, np.abs(fd).max()))
    ok, msg = verify(inst, np.random.default_rng(0), g=g_hand)
    assert ok, msg


def test_hand_returns_the_primal_value(case):
    """Where the kernel returns its loss, the hand adjoint (which also runs the primal)
    returns the same value."""
    name, inst, _ = case
    inst.reset()
    ret = inst.primal()
    if not isinstance(ret, float):
        pytest.skip("the kernel returns nothing")
    inst.reset()
    assert inst.hand.call() == pytest.approx(ret, rel=1e-12)
    inst.reset()


def test_hand_matches_enzyme_py(case):
    name, inst, g_hand = case
    inst.reset()
    inst.grad()
    g = inst.grad_vector()
    np.testing.assert_allclose(g, g_hand, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(g).max()))
