"""Batched reverse mode: BatchDuplicated with k seeds in one reverse-mode call
(enzyme_py/modes/batched.py: forward mode over the gradient's seeds, width k).

Each lane equals a separate reverse-mode call with that seed (to rounding: the adjoint sums are
the same operations), for widths 1, 4 and 16, over kernels with loops, branches, np.cbrt's
strong-zero guard, in-place updates, temporaries, recursion and np.dot.
"""
import math

import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, BatchDuplicated, Duplicated, autodiff
from test_real_kernels import dot_products, mutual, recursive_power, temporary_in_loop


@njit
def mixed(x, y, a):
    """Loops, a branch, np.cbrt (pow of a negative number, then a select), an in-place update
    and a float return."""
    n, m = x.shape
    s = 0.0
    for i in range(n):
        for j in range(m):
            v = x[i, j]
            if v > 0.0:
                y[i] += math.exp(-v) * a
            else:
                y[i] += np.cbrt(v) * v
        s += math.sqrt(y[i] * y[i] + 1.0)
        x[i, 0] = x[i, 0] * y[i]
    return s


def separate_and_batched(kernel, values, width, rng, active=None):
    """(per lane: (shadows, Active derivative)) from k separate calls, and from one batched call."""
    seeds = [[rng.uniform(-1, 1, v.shape) for v in values] for _ in range(width)]
    rets = tuple(float(t) for t in rng.uniform(-1, 1, width))
    separate = []
    for j in range(width):
        shadows = [s.copy() for s in seeds[j]]
        args = [Duplicated(v.copy(), s) for v, s in zip(values, shadows)]
        res = autodiff(kernel, *args, *([Active(active)] if active is not None else []), seed=rets[j])
        separate.append((shadows, res[-1] if active is not None else None))
    lanes = [tuple(seeds[j][k].copy() for j in range(width)) for k in range(len(values))]
    args = [BatchDuplicated(v.copy(), ls) for v, ls in zip(values, lanes)]
    res = autodiff(kernel, *args, *([Active(active)] if active is not None else []), seed=rets)
    return separate, lanes, (res[-1] if active is not None else None)


def assert_lanes_equal(separate, lanes, derivs):
    for j, (shadows, d) in enumerate(separate):
        for k, s in enumerate(shadows):
            np.testing.assert_allclose(lanes[k][j], s, rtol=1e-14, atol=1e-14, err_msg=f"lane {j}")
        if d is not None:
            assert derivs[j] == pytest.approx(d, rel=1e-14, abs=1e-14)


@pytest.mark.parametrize("width", [1, 4, 16])
def test_batched_reverse_equals_separate_calls(width):
    rng = np.random.default_rng(width)
    x, y = rng.uniform(-1, 1, (5, 4)), rng.uniform(-1, 1, 5)
    separate, lanes, derivs = separate_and_batched(mixed, [x, y], width, rng, active=0.7)
    assert isinstance(derivs, tuple) and len(derivs) == width
    assert_lanes_equal(separate, lanes, derivs)


@pytest.mark.parametrize("kernel, sizes", [(temporary_in_loop, (4, 4)), (recursive_power, (2,)),
                                           (mutual, (1,)), (dot_products, (5, 5))],
                         ids=["temporaries", "recursion", "mutual_recursion", "np_dot"])
def test_batched_reverse_real_kernels(kernel, sizes):
    rng = np.random.default_rng(1)
    values = [rng.uniform(0.2, 0.9, n) for n in sizes]
    separate, lanes, _ = separate_and_batched(kernel, values, 3, rng)
    assert_lanes_equal(separate, lanes, None)


def test_batched_reverse_checks_its_seeds():
    x = np.ones((2, 2))
    with pytest.raises(ValueError, match="BatchDuplicated"):
        autodiff(mixed, BatchDuplicated(x, (np.zeros((2, 2)),)), Duplicated(np.ones(2), np.zeros(2)),
                 Active(1.0))
    with pytest.raises(ValueError, match="seed"):
        autodiff(mixed, BatchDuplicated(x, (np.zeros((2, 2)),) * 2),
                 BatchDuplicated(np.ones(2), (np.zeros(2), np.zeros(2))), Active(1.0), seed=(1.0,) * 3)


def test_batched_entry_from_njit():
    # compile_gradient with BatchDuplicated gives the batched entry, callable from @njit code
    from enzyme_py import compile_gradient
    rng = np.random.default_rng(3)
    x, y, a = rng.uniform(0.1, 1, (3, 2)), rng.uniform(0.1, 1, 3), 0.7
    lanes = [(rng.uniform(-1, 1, x.shape), rng.uniform(-1, 1, y.shape)) for _ in range(2)]
    c = compile_gradient(mixed, BatchDuplicated(x.copy(), tuple(l[0].copy() for l in lanes)),
                         BatchDuplicated(y.copy(), tuple(l[1].copy() for l in lanes)), Active(a))
    entry = c.entry

    @njit
    def run(x, y, a, zx, zy, dx0, dx1, dy0, dy1):
        return entry(x, y, a, zx, zy, dx0, dx1, dy0, dy1, 0.5, -2.0)[0]

    sx = [l[0].copy() for l in lanes]
    sy = [l[1].copy() for l in lanes]
    da = run(x.copy(), y.copy(), a, np.zeros_like(x), np.zeros_like(y), sx[0], sx[1], sy[0], sy[1])
    for k, seed in enumerate((0.5, -2.0)):
        dx, dy = lanes[k][0].copy(), lanes[k][1].copy()
        (_, _, want) = autodiff(mixed, Duplicated(x.copy(), dx), Duplicated(y.copy(), dy), Active(a),
                                seed=seed)
        np.testing.assert_allclose(sx[k], dx, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(sy[k], dy, rtol=1e-12, atol=1e-14)
        assert abs(da[k] - want) <= 1e-12 * max(1.0, abs(want))
