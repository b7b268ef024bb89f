"""Checks shared by test_copies.py and test_linalg*.py: a kernel's gradient against finite
differences in reverse mode (check_gradient) and its tangents in forward mode against a central
difference along a random direction. No tests here.

`check_modes(kernel, *arrays)`: every float array is Duplicated; a float return is weighed by 1.
Forward mode: the returned tangent and the tangents left in the shadows of the final arrays are
compared with (f(x + h u) - f(x - h u)) / 2h of the plain kernel, computed in float64 on float64
copies (the same kernel compiled for float64).
`check_batched_forward(kernel, *arrays, width=k)`: the same in batched forward mode, k random
directions in one call (BatchDuplicated), each lane against its own central difference.
`with_single(cases, single)`: pytest parameters (kernel, make, dtype) for a table of cases, float64
for every kernel and float32 for the kernels in `single`.
"""
import numpy as np
import pytest

from enzyme_py import BatchDuplicated, Duplicated, Forward, autodiff, check_gradient


def _float(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _annotated(args, shadows):
    return [Duplicated(a, s) if s is not None else a for a, s in zip(args, shadows)]


def _like(a, values, dtype=None):
    """A new array with a's layout (C or Fortran order) holding `values`."""
    out = np.empty_like(a, dtype=dtype or a.dtype)
    out[...] = values
    return out


def _copies(args, dtype=None):
    return [_like(a, a, dtype) if _float(a) else a for a in args]


def check_reverse(kernel, *args, rtol=1e-6, rng=0):
    ret = kernel(*_copies(args))
    seed = 1.0 if isinstance(ret, (float, np.floating)) else None
    annotated = _annotated(list(args), [np.zeros_like(a) if _float(a) else None for a in args])
    kw = {} if seed is None else {"seed": seed}
    report = check_gradient(kernel, *annotated, rng=rng, fd_dtype=np.float64, rtol=rtol, **kw)
    assert report.passed, str(report)


def check_forward(kernel, *args, rtol=1e-6, seed=1):
    rng = np.random.default_rng(seed)
    dirs = [rng.standard_normal(a.shape) if _float(a) else None for a in args]
    xs = _copies(args)
    us = [_like(a, d) if d is not None else None for a, d in zip(args, dirs)]
    t = autodiff(kernel, *_annotated(xs, us), mode=Forward)
    h = 1e-6

    def run(sign):
        moved = [_like(a, a + sign * h * d, np.float64) if d is not None else a
                 for a, d in zip(args, dirs)]
        ret = kernel(*moved)
        return ret, moved
    (rp, ap), (rm, am) = run(1.0), run(-1.0)
    tol = max(rtol, 1e-3 if any(_float(a) and a.dtype == np.float32 for a in args) else rtol)
    if isinstance(rp, (float, np.floating)):
        fd = (rp - rm) / (2 * h)
        assert abs(t - fd) <= tol * max(1.0, abs(fd)), (t, fd)
    for k, a in enumerate(args):
        if not _float(a):
            continue
        fd = (ap[k] - am[k]) / (2 * h)
        scale = max(1.0, float(np.max(np.abs(fd))) if fd.size else 1.0)
        np.testing.assert_allclose(us[k], fd, rtol=tol, atol=tol * scale, err_msg=f"argument {k}")


def check_batched_forward(kernel, *args, width=2, rtol=1e-6, seed=1):
    rng = np.random.default_rng(seed)
    dirs = [[rng.standard_normal(a.shape) for _ in range(width)] if _float(a) else None
            for a in args]
    xs = _copies(args)
    lanes = [tuple(_like(a, d) for d in ds) if ds is not None else None
             for a, ds in zip(args, dirs)]
    annotated = [BatchDuplicated(x, ls) if ls is not None else x for x, ls in zip(xs, lanes)]
    ts = autodiff(kernel, *annotated, mode=Forward)
    tol = max(rtol, 1e-3 if any(_float(a) and a.dtype == np.float32 for a in args) else rtol)
    for j in range(width):
        lane = [ds[j] if ds is not None else None for ds in dirs]
        rp, ap = _moved(kernel, args, lane, 1e-6)
        rm, am = _moved(kernel, args, lane, -1e-6)
        if isinstance(rp, (float, np.floating)):
            fd = (rp - rm) / 2e-6
            assert isinstance(ts, tuple) and len(ts) == width, ts
            assert abs(ts[j] - fd) <= tol * max(1.0, abs(fd)), (j, ts[j], fd)
        for k, a in enumerate(args):
            if _float(a):
                fd = (ap[k] - am[k]) / 2e-6
                scale = max(1.0, float(np.max(np.abs(fd))) if fd.size else 1.0)
                np.testing.assert_allclose(lanes[k][j], fd, rtol=tol, atol=tol * scale,
                                           err_msg=f"argument {k}, lane {j}")


def _moved(kernel, args, dirs, step):
    """kernel run on float64 copies of args moved by step * dirs: (return, arrays after)."""
    moved = [_like(a, a + step * d, np.float64) if d is not None else a
             for a, d in zip(args, dirs)]
    return kernel(*moved), moved


def check_modes(kernel, *args, rtol=1e-6):
    check_reverse(kernel, *args, rtol=rtol)
    check_forward(kernel, *args, rtol=rtol)


def with_single(cases, single):
    """(kernel, make, dtype) parameters, ids "name-float64": float64 for every case, float32 for
    the kernels in `single` (those whose float32 derivative takes another route)."""
    assert single <= {k for k, _ in cases}
    return [pytest.param(k, make, dt, id=f"{k.__name__}-{dt.__name__}")
            for k, make in cases for dt in (np.float64, np.float32)
            if dt is np.float64 or k in single]
