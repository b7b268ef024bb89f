"""Every libdevice derivative rule (`__nv_*`, rules/libdevice.py) against finite differences.

Table-driven: for each function, y = f(x) (or f(x, z)) is differentiated in reverse mode with
the NVPTX spelling of the rules' own math calls (libdevice), then run on the CPU by the CUDA
harness, which maps libdevice to the C library; the reference is a central difference of the
same compiled primal. Needs llvmlite only (no numba-cuda, no GPU).
"""
import numpy as np
import pytest

from enzyme_py.cuda.harness import HostKernel
from ir_passes import parse_module, print_module, reverse_mode
from ir_passes.rules import libdevice

UNARY = {   # name: points where it is smooth
    "sin": (0.3, 2.1), "cos": (0.3, 2.1), "tan": (0.3, -1.1), "exp": (0.3, -1.2),
    "exp2": (0.3, 1.7), "exp10": (0.3, -0.4), "expm1": (0.3, -1.2), "log": (0.4, 2.5),
    "log2": (0.4, 2.5), "log10": (0.4, 2.5), "log1p": (0.4, -0.5), "sqrt": (0.4, 2.5),
    "rsqrt": (0.4, 2.5), "cbrt": (0.4, -2.5), "rcbrt": (0.4, 2.5), "sinh": (0.3, -1.2),
    "cosh": (0.3, -1.2), "tanh": (0.3, -1.2), "asin": (0.3, -0.7), "acos": (0.3, -0.7),
    "atan": (0.3, -2.0), "asinh": (0.3, -2.0), "acosh": (1.3, 2.5), "atanh": (0.3, -0.7),
    "erf": (0.3, -1.1), "erfc": (0.3, -1.1), "lgamma": (0.6, 3.3), "fabs": (0.3, -1.1),
    "sinpi": (0.3, -0.8), "cospi": (0.3, -0.8), "normcdf": (0.3, -1.1),
    "floor": (0.3, -1.6), "trunc": (0.3, -1.6),
}
BINARY = {
    "pow": ((1.3, 0.7), (2.1, -1.4)), "atan2": ((0.3, 0.7), (-1.1, 0.4)),
    "hypot": ((0.3, 0.7), (-1.1, 0.4)), "fmod": ((2.3, 0.7), (-5.1, 1.4)),
    "copysign": ((0.3, 0.7), (-1.1, -0.4)), "fmin": ((0.3, 0.7), (-1.1, -1.4)),
    "fmax": ((0.3, 0.7), (-1.1, -1.4)), "fdim": ((2.3, 0.7), (-1.1, 0.4)),
}


def gradient(name, t, arity):
    """JIT-compiled (primal, gradient) of y = __nv_<name>[f](x[, z]) for type t."""
    suffix = "f" if t == "float" else ""
    params = ", ".join(f"ptr %p{k}" for k in range(arity))
    loads = "\n".join(f"  %a{k} = load {t}, ptr %p{k}" for k in range(arity))
    args = ", ".join(f"{t} %a{k}" for k in range(arity))
    text = (f"define void @f({params}, ptr %out) {{\n{loads}\n"
            f"  %r = call {t} @__nv_{name}{suffix}({args})\n  store {t} %r, ptr %out\n"
            f"  ret void\n}}\ndeclare {t} @__nv_{name}{suffix}({', '.join([t] * arity)})\n")
    module = parse_module(text)
    module.math_names = libdevice.spelling
    reverse_mode(module, "f", ["dup"] * (arity + 1), "grad", counts=None)
    out = print_module(module)
    return HostKernel(out, "f"), HostKernel(out, "grad")


def run(name, t, point):
    dtype = np.float32 if t == "float" else np.float64
    primal, grad = gradient(name, t, len(point))
    xs = [np.array([v], dtype) for v in point]
    dxs = [np.zeros(1, dtype) for _ in point]
    y, dy = np.zeros(1, dtype), np.ones(1, dtype)
    grad.fn(*[x.ctypes.data for x in xs], y.ctypes.data, *[d.ctypes.data for d in dxs],
            dy.ctypes.data)

    def f(vals):
        a = [np.array([v], np.float64 if t == "double" else dtype) for v in vals]
        r = np.zeros(1, a[0].dtype)
        primal.fn(*[x.ctypes.data for x in a], r.ctypes.data)
        return float(r[0])

    eps = 1e-6 if t == "double" else 1e-2
    fd = []
    for k in range(len(point)):
        hi, lo = list(point), list(point)
        hi[k] += eps
        lo[k] -= eps
        fd.append((f(hi) - f(lo)) / (2 * eps))
    return [float(d[0]) for d in dxs], fd


CASES = [(n, p) for n, ps in UNARY.items() for p in ps] + \
        [(n, p) for n, ps in BINARY.items() for p in ps]


@pytest.mark.parametrize("name,point", CASES, ids=[f"{n}({p})" for n, p in CASES])
@pytest.mark.parametrize("t", ["double", "float"])
def test_libdevice_rule(name, point, t):
    point = point if isinstance(point, tuple) else (point,)
    ad, fd = run(name, t, point)
    tol = 1e-6 if t == "double" else 5e-3
    for a, f in zip(ad, fd):
        assert abs(a - f) <= tol * max(1.0, abs(f)), f"__nv_{name}: AD {ad}, FD {fd}"


def test_every_libdevice_spelling_has_a_rule():
    from ir_passes.rules.registry import lookup
    for name in list(UNARY) + list(BINARY):
        for s in ("", "f"):
            assert lookup(f"__nv_{name}{s}") is not None


def test_rule_math_calls_use_libdevice():
    """sin's derivative on the NVPTX target calls __nv_cos, not llvm.cos (which aborts its
    backend); sqrt stays llvm.sqrt, which the backend selects."""
    text = ("define void @f(ptr %p, ptr %q) {\n  %a = load double, ptr %p\n"
            "  %s = call double @__nv_sin(double %a)\n  %r = call double @__nv_sqrt(double %s)\n"
            "  store double %r, ptr %q\n  ret void\n}\ndeclare double @__nv_sin(double)\n"
            "declare double @__nv_sqrt(double)\n")
    module = parse_module(text)
    module.math_names = libdevice.spelling
    reverse_mode(module, "f", ["dup", "dup"], "grad", counts=None)
    out = print_module(module)
    assert "@__nv_cos(" in out and "llvm.cos" not in out and "llvm.sin" not in out

