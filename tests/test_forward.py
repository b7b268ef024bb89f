"""Forward mode on the gradient corpus (test_kernels*.py) and batched shadows.

For every corpus case, one test:
1. the tangents forward mode leaves in the shadows (the final arrays) and returns (the float
   return value) agree with a central finite difference of the plain kernel along the same random
   direction u (the finite difference is the test's reference, never part of enzyme_py);
2. forward and reverse agree on <v, J u>: forward gives J u, reverse with the corpus' random seeds
   v gives J^T v, and sum <v, J u> = sum <J^T v, u> to 1e-10 (float64 kernels).

Batched shadows: width 1, 4 and 16 give bit-for-bit what k separate width-1 calls give.
"""
import math

import numpy as np
import pytest
from numba import njit

from enzyme_py import (Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed, Forward,
                       autodiff)
from enzyme_py.arguments import clone
from enzyme_py.check import default_rtol, default_step
from test_kernels import CASES
from test_real_kernels import CASES as REAL_CASES
from test_kernels_base import assert_close

DUP = (Duplicated, DuplicatedNoNeed)


def _float_array(a):
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def direction(rng, shape):
    """Random components k/64 in [-1, 1]: x +- h u stays exact where the corpus needs it to be
    (inputs k/64 and steps 2**-12 in the float32 cast cases)."""
    return rng.integers(-64, 65, shape) / 64.0


def forward_args(args, rng):
    """Fresh copies of the case's arguments, each Duplicated with a random direction u as its
    shadow, each Active with a random tangent; the same array passed twice stays the same."""
    copies, out, dirs = {}, [], []
    for a in args:
        if isinstance(a, DUP):
            if id(a.value) not in copies:
                x = clone(a.value, writeable=a.value.flags.writeable)
                u = clone(a.value, writeable=True)
                u[...] = direction(rng, a.value.shape)
                copies[id(a.value)] = (x, u)
            x, u = copies[id(a.value)]
            out.append(Duplicated(x, u))
            dirs.append(u.copy())
        elif isinstance(a, Active):
            t = float(direction(rng, ()))
            out.append(Active(a.value, t))
            dirs.append(t)
        else:
            v = a.value if isinstance(a, Const) else a
            out.append(Const(clone(v) if isinstance(v, np.ndarray) else v))
            dirs.append(None)
    return out, dirs


def run_plain(kernel, args, dirs, h, fd_dtype):
    """The kernel on copies of the arguments moved by h along the directions (in fd_dtype)."""
    copies, vals = {}, []
    for a, d in zip(args, dirs):
        v = a.value if hasattr(a, "value") else a
        if isinstance(v, np.ndarray):
            if id(v) not in copies:
                c = clone(v, dtype=fd_dtype if _float_array(v) else None, writeable=True)
                if d is not None:
                    c[...] = c + h * d.astype(c.dtype)
                c.flags.writeable = v.flags.writeable
                copies[id(v)] = c
            vals.append(copies[id(v)])
        elif d is not None:
            t = type(v) if fd_dtype is None else np.dtype(fd_dtype).type
            vals.append(t(t(v) + h * d))
        else:
            vals.append(v)
    ret = kernel(*vals)
    return ret, vals


def fd_tangents(kernel, args, dirs, eps, fd_dtype):
    """Central difference of the return value and of each Duplicated array's final value."""
    dtypes = [a.value.dtype for a in args if isinstance(a, DUP)] + \
             [np.asarray(a.value).dtype for a in args if isinstance(a, Active)]
    step = eps or default_step(fd_dtype or (dtypes[0] if dtypes else np.float64))
    scale = max([1.0] + [float(np.max(np.abs(a.value))) for a in args if isinstance(a, DUP)] +
                [abs(float(a.value)) for a in args if isinstance(a, Active)])
    h = step * 2.0 ** math.ceil(math.log2(scale))   # a power of two: x +- h u stays exact
    rp, vp = run_plain(kernel, args, dirs, h, fd_dtype)
    rm, vm = run_plain(kernel, args, dirs, -h, fd_dtype)
    ret = (float(rp) - float(rm)) / (2 * h) if isinstance(rp, (float, np.floating)) else None
    arrays = {k: (np.asarray(vp[k], np.float64) - np.asarray(vm[k], np.float64)) / (2 * h)
              for k, a in enumerate(args) if isinstance(a, DUP)}
    return ret, arrays


def dtype_of(args):
    for a in args:
        if isinstance(a, DUP):
            return a.value.dtype
        if isinstance(a, Active):
            return np.asarray(a.value).dtype
    return np.dtype(np.float64)


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_forward_case(c):
    check_forward(c.kernel, c.args, c.name, seed=c.seed, rtol=c.rtol, eps=c.eps, fd_dtype=c.fd_dtype,
                  f32_inside="fptrunc" in c.covers)


@pytest.mark.parametrize("name", sorted(REAL_CASES))
def test_forward_real_kernel(name):
    """Helpers, recursion, temporaries, NumPy functions, np.dot (tests/test_real_kernels.py)."""
    kernel, _ = REAL_CASES[name]()
    made = {}

    def args():   # the same random arguments each time they are asked for
        if "args" not in made:
            made["args"] = REAL_CASES[name]()[1]
        return [Duplicated(clone(a.value, writeable=True), clone(a.shadow, writeable=True))
                if isinstance(a, DUP) else a for a in made["args"]]
    check_forward(kernel, args, name)


def check_forward(kernel, make_args, name, seed=1.0, rtol=1e-6, eps=None, fd_dtype=None,
                  f32_inside=False):
    args = make_args()
    rng = np.random.default_rng(12345)
    fargs, dirs = forward_args(args, rng)
    tret = autodiff(kernel, *fargs, mode=Forward)
    dt = dtype_of(args)
    rtol = default_rtol(dt, rtol, fd_dtype)

    # 1. against finite differences of the plain kernel
    fret, farrays = fd_tangents(kernel, args, dirs, eps, fd_dtype)
    if fret is not None:
        assert_close(tret, fret, rtol, f"{name}: tangent of the return value")
    else:
        assert tret is None
    for k, expected in farrays.items():
        assert_close(fargs[k].shadow, expected, rtol, f"{name}: tangent of argument {k}")

    # 2. <v, J u> forward = <J^T v, u> reverse
    rargs = make_args()   # the random seeds v in the shadows
    v = [np.array(a.shadow, np.float64) if isinstance(a, DUP) else None for a in rargs]
    seen, fwd_terms = set(), []
    for k, a in enumerate(fargs):
        if isinstance(a, DUP) and id(a.value) not in seen:
            seen.add(id(a.value))
            fwd_terms.append(np.sum(v[k] * np.asarray(a.shadow, np.float64)))
    if tret is not None:
        fwd_terms.append(seed * tret)
    rev = autodiff(kernel, *rargs, seed=seed)
    seen, rev_terms = set(), []
    for k, a in enumerate(rargs):
        if isinstance(a, DUP) and id(a.value) not in seen:
            seen.add(id(a.value))
            rev_terms.append(np.sum(np.asarray(a.shadow, np.float64) * dirs[k]))
        elif isinstance(a, Active):
            rev_terms.append(rev[k] * dirs[k])
    lhs, rhs = math.fsum(fwd_terms), math.fsum(rev_terms)
    size = max(1.0, math.fsum(abs(t) for t in fwd_terms), math.fsum(abs(t) for t in rev_terms))
    # float32 arithmetic rounds tangents and adjoints differently
    tol = 1e-10 if dt == np.float64 and not f32_inside else 1e-4
    assert abs(lhs - rhs) <= tol * size, f"{name}: <v, J u> forward {lhs!r} vs reverse {rhs!r}"


# ---------------------------------------------------------------------------------------------
# Batched shadows
# ---------------------------------------------------------------------------------------------

@njit
def mixed(x, y, a):
    """Loops, a branch, intrinsics, 2-D reads, an in-place update and a float return."""
    n, m = x.shape
    s = 0.0
    for i in range(n):
        for j in range(m):
            v = x[i, j]
            if v > 0.0:
                y[i] += math.exp(-v) * a
            else:
                y[i] += math.sin(v) * v
        s += math.sqrt(y[i] * y[i] + 1.0)
        x[i, 0] = x[i, 0] * y[i]
    return s


def _batched_vs_separate(width, rng):
    x0, y0, a0 = rng.uniform(-1, 1, (5, 4)), rng.uniform(-1, 1, 5), 0.7
    dxs = [rng.uniform(-1, 1, x0.shape) for _ in range(width)]
    dys = [rng.uniform(-1, 1, y0.shape) for _ in range(width)]
    das = tuple(float(t) for t in rng.uniform(-1, 1, width))
    singles = []
    for j in range(width):
        x, y, dx, dy = x0.copy(), y0.copy(), dxs[j].copy(), dys[j].copy()
        t = autodiff(mixed, Duplicated(x, dx), Duplicated(y, dy), Active(a0, das[j]), mode=Forward)
        singles.append((t, dx, dy))
    x, y = x0.copy(), y0.copy()
    bdx, bdy = tuple(d.copy() for d in dxs), tuple(d.copy() for d in dys)
    ts = autodiff(mixed, BatchDuplicated(x, bdx), BatchDuplicated(y, bdy), Active(a0, das), mode=Forward)
    return singles, ts, bdx, bdy


@pytest.mark.parametrize("width", [1, 4, 16])
def test_batched_equals_separate_calls(width):
    singles, ts, bdx, bdy = _batched_vs_separate(width, np.random.default_rng(width))
    assert isinstance(ts, tuple) and len(ts) == width
    for j, (t, dx, dy) in enumerate(singles):
        assert ts[j] == t, f"lane {j}"
        np.testing.assert_array_equal(bdx[j], dx)
        np.testing.assert_array_equal(bdy[j], dy)


def test_batch_width_must_agree():
    x = np.ones(3)
    with pytest.raises(ValueError, match="directions"):
        autodiff(mixed, BatchDuplicated(x.reshape(3, 1), (np.zeros((3, 1)),) * 1),
                 BatchDuplicated(np.ones(3), (np.zeros(3), np.zeros(3))), Active(1.0, (0.0, 0.0)),
                 mode=Forward)


def test_active_needs_a_tangent_in_forward_mode():
    with pytest.raises(TypeError, match="tangent"):
        autodiff(mixed, Duplicated(np.ones((2, 2)), np.zeros((2, 2))),
                 Duplicated(np.ones(2), np.zeros(2)), Active(1.0), mode=Forward)


def test_void_kernel_returns_none_and_fills_shadows():
    @njit
    def square_into(x, y):
        for i in range(x.shape[0]):
            y[i] = x[i] * x[i]

    x, dx, y, dy = np.arange(1.0, 4.0), np.ones(3), np.zeros(3), np.full(3, 7.0)
    assert autodiff(square_into, Duplicated(x, dx), Duplicated(y, dy), mode=Forward) is None
    np.testing.assert_array_equal(dy, 2 * x)
    np.testing.assert_array_equal(dx, np.ones(3))


def test_kernel_error_propagates():
    @njit(boundscheck=True)
    def oob(x):
        return x[5] * 2.0

    with pytest.raises(IndexError):
        autodiff(oob, Duplicated(np.ones(3), np.ones(3)), mode=Forward)


def test_shadow_temporaries_are_released_with_the_primal():
    """A temporary's shadow is a second NRT allocation whose refcount moves with the primal's:
    10,000 forward calls leave no live allocation behind."""
    from test_real_kernels import live_allocations, temporaries
    x, y = np.linspace(0.2, 0.9, 8), np.zeros(1)
    autodiff(temporaries, Duplicated(x, np.ones(8)), Duplicated(y, np.zeros(1)), mode=Forward)
    before = live_allocations()
    dx, dy = np.ones(8), np.zeros(1)
    for _ in range(10_000):
        autodiff(temporaries, Duplicated(x, dx), Duplicated(y, dy), mode=Forward)
    assert live_allocations() == before


def test_varying_data_into_a_const_array_is_refused():
    @njit
    def write(x, y):
        for i in range(x.shape[0]):
            y[i] = x[i] * 2.0

    with pytest.raises(Exception, match="Duplicated"):
        autodiff(write, Duplicated(np.ones(3), np.ones(3)), Const(np.zeros(3)), mode=Forward)


def test_float_bit_tricks_are_refused_not_zeroed():
    import enzyme_py

    @njit
    def bits(x):
        i = np.empty(1, np.float64)
        i[0] = x[0]
        v = i.view(np.int64)[0] & 0x7FFFFFFFFFFFFFFF    # |x| through the sign bit
        return np.array([v]).view(np.float64)[0]

    with pytest.raises(enzyme_py.UnsupportedError):
        autodiff(bits, Duplicated(np.array([-2.0]), np.ones(1)), mode=Forward)
