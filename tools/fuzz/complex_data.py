"""The `complex` profile: kernels on complex arrays, checked in both modes.

A kernel `kern(z, w, out, c)` loops over complex arrays z and w (both Duplicated), and per element
builds a random expression tree of complex operations: + - * /, exp, sin, cos, tanh, cmath.exp,
conj, abs, .real, .imag, and on the inputs only (their values stay away from the branch cuts)
log, sqrt, angle, powers z ** 2.5 and z ** w (Numba's numba_cpow). The result is written to
`out[i]` (Duplicated), summed into the returned float through its real and imaginary parts, or
written back into z (an in-place update: its shadow is consumed), sometimes inside a time loop.
The scale c is a real constant, or (`active_c`) a complex Active scalar.

Checks: `check_gradient` (central differences along the real and the imaginary part of each
element) with random complex seeds; then forward mode along a random complex direction u
against reverse mode: <v, J u> = <J^T v, u> in the real inner product
(Re(conj(a) b) summed), v being the seeds of out and of the return value (an Active c adds
Re(conj(dc) uc), dc its derivative and uc its tangent).
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from enzyme_py import Active, Duplicated, Forward, UnsupportedError, autodiff
from enzyme_py.check import check_gradient
from .outcome import DISCARD, FAIL, INVALID, PASS, Outcome, run_source, short, tb, unsupported

UNARY = ["np.exp({})", "np.sin({})", "np.cos({})", "np.tanh({})", "cmath.exp({})", "np.conj({})",
         "(abs({}) + 0j)", "({}.real + 0j)", "({}.imag * 1j)", "({} * {})"]
ON_INPUTS = ["np.log({})", "np.sqrt({})", "(np.angle({}) + 0j)", "{} ** 2.5", "{} ** {}"]
BINARY = ["({} + {})", "({} - {})", "({} * {})", "({} / (1.5 + {}))"]
CONSTS = ["(0.5 - 0.25j)", "1.25", "(0.1 + 0.7j)", "-0.8j"]


@dataclass
class ComplexKernel:
    """A generated kernel of the `complex` profile: its source and sizes."""
    seed: int
    source: str
    n: int
    steps: int
    active_c: bool = False   # c is a complex Active scalar
    forms = None             # (the default profile's call forms: none here)


def _leaf(rng) -> str:
    return rng.choice(["z[i]", "w[i]", "z[i]", "w[i]", rng.choice(CONSTS)])


def _expr(rng, depth) -> str:
    if depth == 0 or rng.random() < 0.2:
        if rng.random() < 0.3:
            op = rng.choice(ON_INPUTS)
            return op.format(*(rng.choice(["z[i]", "w[i]"]) for _ in range(op.count("{}"))))
        return _leaf(rng)
    if rng.random() < 0.5:
        op = rng.choice(UNARY)
        inner = _expr(rng, depth - 1)
        return op.format(*([inner] * op.count("{}")))
    return rng.choice(BINARY).format(_expr(rng, depth - 1), _expr(rng, depth - 1))


def generate_complex(seed: int) -> ComplexKernel:
    rng = random.Random(seed)
    n = rng.choice([1, 2, 5, 9])
    steps = rng.choice([0, 0, 2, 3])           # 0: no time loop
    expr = _expr(rng, rng.choice([1, 2, 3]))
    sink = rng.choice(["out", "sum", "inplace"])
    active_c = rng.random() < 0.4
    ind = "        " if steps else "    "
    lines = [f"{ind}for i in range(z.shape[0]):", f"{ind}    v = {expr}"]
    if sink == "out":
        lines.append(f"{ind}    out[i] = v * c")
    elif sink == "sum":
        lines.append(f"{ind}    s += 0.7 * v.real - 1.3 * " + ("(v * c).imag" if active_c else "v.imag * c"))
    else:       # damped, so a time loop stays bounded
        lines.append(f"{ind}    z[i] = 0.5 * z[i] + 0.1 * np.tanh(v) * c")
    head = ["    s = 0.0"] + ([f"    for t in range({steps}):"] if steps else [])
    tail = ["    for i in range(out.shape[0]):", "        s += out[i].real * 0.3 + out[i].imag",
            "    return s", ""]
    src = "\n".join(["import cmath", "import numpy as np", "from numba import njit", "", "",
                     "@njit", "def kern(z, w, out, c):"] + head + lines + tail)
    return ComplexKernel(seed, src, n, steps, active_c)


def load(k: ComplexKernel) -> dict:
    return run_source(k.source, f"<tools.fuzz complex seed={k.seed}>", f"tools_fuzz_complex_{k.seed}")


def values(k: ComplexKernel):
    """z, w with real parts in [0.5, 1.5] and imaginary parts in [-0.5, 0.5] (away from the
    branch cuts of log, sqrt, angle and powers on the negative real axis), out zeros."""
    g = np.random.default_rng(k.seed)
    z = g.uniform(0.5, 1.5, k.n) + 1j * g.uniform(-0.5, 0.5, k.n)
    w = g.uniform(0.5, 1.5, k.n) + 1j * g.uniform(-0.5, 0.5, k.n)
    return z, w, np.zeros(k.n, np.complex128)


def _real_dot(a, b) -> float:
    return float(np.sum((np.conj(a) * b).real))


def check_complex(k: ComplexKernel, st) -> "Outcome":    # noqa: F821 - checker.Outcome

    try:
        kern = load(k)["kern"]
    except Exception as exc:       # noqa: BLE001 - the generator printed bad Python
        return Outcome(INVALID, f"source:{type(exc).__name__}", short(exc))
    z, w, out = values(k)
    c = 0.9 + 0.3j if k.active_c else 0.9
    try:
        plain = kern(z.copy(), w.copy(), out.copy(), c)
    except Exception as exc:       # noqa: BLE001
        return Outcome(INVALID, f"plain:{type(exc).__name__}", tb(exc))
    if not np.isfinite(plain) or abs(plain) > 1e8:
        return Outcome(DISCARD, "nonfinite")
    g = np.random.default_rng(k.seed + 1)

    def crandn():
        return g.normal(size=k.n) + 1j * g.normal(size=k.n)
    sz, sw, sout = crandn(), crandn(), crandn()
    try:
        rep = check_gradient(kern, Duplicated(z.copy(), sz.copy()), Duplicated(w.copy(), sw.copy()),
                             Duplicated(out.copy(), sout.copy()), Active(c) if k.active_c else c,
                             seed=1.0, rtol=st.rtol64, eps=st.eps64)
        if not rep.passed:
            return Outcome(FAIL, "primal_mismatch" if rep.primal_mismatches else "wrong_gradient",
                           str(rep))
        # reverse: the shadows of z, w after a call seeded with (sz, sw, sout) and 1.0
        gz, gw, gout = sz.copy(), sw.copy(), sout.copy()
        got = autodiff(kern, Duplicated(z.copy(), gz), Duplicated(w.copy(), gw),
                       Duplicated(out.copy(), gout), Active(c) if k.active_c else c, seed=1.0)
        uz, uw = crandn(), crandn()
        uc = complex(g.normal(), g.normal()) if k.active_c else 0.0
        tz, tw, tout = uz.copy(), uw.copy(), np.zeros(k.n, np.complex128)
        tret = autodiff(kern, Duplicated(z.copy(), tz), Duplicated(w.copy(), tw),
                        Duplicated(out.copy(), tout), Active(c, uc) if k.active_c else c,
                        mode=Forward)
    except UnsupportedError as exc:
        return unsupported(exc)
    except Exception as exc:       # noqa: BLE001
        return Outcome(FAIL, f"crash:{type(exc).__name__}", tb(exc))
    # <v, J u>: the final z, w and out weighted by their seeds, plus the return value's tangent
    lhs = _real_dot(sz, tz) + _real_dot(sw, tw) + _real_dot(sout, tout) + float(tret)
    rhs = _real_dot(gz, uz) + _real_dot(gw, uw) + (_real_dot(got[3], uc) if k.active_c else 0.0)
    if not np.isclose(lhs, rhs, rtol=1e-8, atol=1e-8 * max(1.0, abs(rhs))):
        return Outcome(FAIL, "forward_mismatch", f"<v, J u> = {lhs!r}, <J^T v, u> = {rhs!r}",
                       forward="checked")
    return Outcome(PASS, forward="checked")
