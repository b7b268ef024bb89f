"""Property test: the fast path of repeated calls (modes/fast.py: the Python checks and the
compiled runner), `compile_gradient`'s entry and the full path agree on every drawn call: the
same gradient and primal arrays bit for bit, or the same error type.

Draws (seeded): layouts (C, F, strided, reversed, transposed, 0-size), dtypes (f8, f4, >f8, i8),
Const containers (an array, a tuple of arrays, a memoryview, an ndarray subclass), aliasing
between arguments (Const memory that is the Duplicated array, part of it, its shadow, or a
disjoint view of the same buffer) and integer ranges
(int64, beyond int64). Each path gets fresh arguments built the same way. The fast path and the
runner are first filled by calls with native, contiguous, disjoint arguments of the same
structure, so the drawn call meets tables made for other memory.

ENZYME_PY_AGREEMENT_DRAWS sets the number of draws (default 24).
"""
import os

import numpy as np
import pytest
from numba import njit

from enzyme_py import Const, Duplicated, autodiff, compile_gradient
from enzyme_py.modes import fast

DRAWS = int(os.environ.get("ENZYME_PY_AGREEMENT_DRAWS", "24"))


@njit
def vec_array(x, c, n):
    s = 0.0
    m = c.shape[0]
    for i in range(x.shape[0]):
        if m > 0:
            s += x[i] * x[i] * c[i % m]
            c[i % m] = c[i % m] * 0.5
    return s + (n % 3)


@njit
def vec_tuple(x, t, n):
    c = t[0]
    s = 0.0
    m = c.shape[0]
    for i in range(x.shape[0]):
        if m > 0:
            s += x[i] * x[i] * c[i % m]
            c[i % m] = c[i % m] * 0.5
    return s + (n % 3)


@njit
def mat_array(x, c, n):
    s = 0.0
    m = c.shape[0]
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if m > 0:
                s += (i + 2.0 * j + 1.0) * x[i, j] * x[i, j] * c[(i + j) % m]
    return s + (n % 3)


LAYOUTS_1D = ["C", "strided", "reversed", "empty"]
LAYOUTS_2D = ["C", "F", "transposed", "strided"]
DTYPES = ["f8", "f4", ">f8", "i8"]
CONTAINERS = ["array", "tuple", "memoryview", "subclass"]
ALIASING = ["none", "none", "none", "x", "overlap", "neighbour", "shadow"]
INTS = [3, -7, 2**62, 2**63 + 5]


def _draw(rng):
    two_d = rng.random() < 0.3
    return {
        "two_d": two_d,
        "layout": rng.choice(LAYOUTS_2D if two_d else LAYOUTS_1D),
        "dtype": rng.choice(DTYPES, p=[0.65, 0.2, 0.1, 0.05]),
        "cdtype": rng.choice(["f8", "f4", ">f8"], p=[0.8, 0.1, 0.1]),
        "container": "array" if two_d else rng.choice(CONTAINERS),
        "alias": rng.choice(ALIASING),
        "n": INTS[rng.integers(len(INTS))],
        "seed": int(rng.integers(1 << 30)),
    }


def _layout(base, layout):
    if layout == "strided":
        return base[::2] if base.ndim == 1 else base[:, ::2]
    if layout == "reversed":
        return base[::-1]
    if layout == "empty":
        return base[:0]
    if layout == "F":
        return np.asfortranarray(base)
    if layout == "transposed":
        return base.T
    return base


def _build(d, native=False):
    """Fresh (kernel, args, arrays to compare afterwards) for draw `d`; `native`: the same
    structure with native, contiguous, disjoint float64 arrays (the calls that fill the tables)."""
    rng = np.random.default_rng(d["seed"])
    dtype = "f8" if native else d["dtype"]
    layout = "C" if native else d["layout"]
    shape = (4, 6) if d["two_d"] else (8,)
    base = rng.standard_normal(shape).astype(dtype)
    x = _layout(base, layout)
    dx = np.zeros_like(x) if layout in ("C", "F", "empty") else _layout(np.zeros_like(base), layout)
    c = rng.standard_normal(5).astype("f8" if native else d["cdtype"])
    alias = "none" if native else d["alias"]
    if alias == "x" and x.ndim == 1:
        c = x
    elif alias == "overlap" and x.ndim == 1:
        c = x[1:]                                   # part of x's memory
    elif alias == "neighbour" and x.ndim == 1 and x.size:
        both = np.concatenate([x, c.astype(x.dtype)])   # views of one buffer, disjoint
        x, c = both[:x.size], both[x.size:]
        dx = np.zeros_like(x)
    elif alias == "shadow" and dx.ndim == 1:
        c = dx
    container = d["container"]
    if container == "tuple":
        kernel, cval = vec_tuple, (c,)
    elif container == "memoryview":
        kernel, cval = vec_array, memoryview(c)
    elif container == "subclass":
        kernel, cval = vec_array, c.view(np.memmap)
    else:
        kernel, cval = (mat_array if d["two_d"] else vec_array), c
    n = 3 if native else d["n"]
    return kernel, (Duplicated(x, dx), Const(cval), Const(n)), (x, dx, c)


def _outcome(run):
    try:
        result, arrays = run()
    except Exception as exc:            # noqa: BLE001 - the error type is the outcome
        return ("error", type(exc).__name__)
    return ("ok", repr(result), tuple((a.dtype.str, a.shape, a.tobytes()) for a in arrays))


def _full(d):
    fast.forget_all()
    kernel, args, arrays = _build(d)
    return _outcome(lambda: (autodiff(kernel, *args), arrays))


def _warmed(d, calls):
    fast.forget_all()
    for _ in range(calls):
        kernel, args, _ = _build(d, native=True)
        autodiff(kernel, *args)
    kernel, args, arrays = _build(d)
    return _outcome(lambda: (autodiff(kernel, *args), arrays))


def _compiled(d):
    kernel, args, arrays = _build(d)

    def run():
        grad = compile_gradient(kernel, *args)
        x, dx, _ = arrays
        grad.entry(x, args[1].value, args[2].value, dx, 1.0)
        return (None, None, None), arrays
    return _outcome(run)


@pytest.mark.parametrize("k", range(DRAWS))
def test_paths_agree(k, monkeypatch):
    d = _draw(np.random.default_rng(20261128 + k))
    monkeypatch.setattr(fast, "RUNNER_CALLS", 2)
    full = _full(d)
    assert _warmed(d, 1) == full, d                   # the fast path's Python checks
    assert _warmed(d, 3) == full, d                   # the compiled runner
    if full[0] == "ok":
        assert _compiled(d)[2] == full[2], d
    else:
        assert _compiled(d) == full, d
