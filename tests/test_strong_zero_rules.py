"""The strong zero, rule by rule: a zero seed (reverse) or zero tangent (forward) times an
infinite or NaN partial contributes exactly zero (rules/partials.py).

Table-driven at the ir_passes level: y = op(x, z) is differentiated in reverse mode with seed
dy = 0 and in forward mode with tangents (0, 0), at a point where a partial of op is inf or NaN;
every derivative must be 0. The same op with seed 1 keeps its genuine NaN or inf (the guard
only drops the products of a zero). The modules test a float for NaN (`fcmp uno`), as code with
NaN masks does: fmul and fma are guarded only there (rules/finite.tests_nan); the other rules
everywhere. Runs on the CPU through llvmlite (no Numba).
"""
import math

import numpy as np
import pytest

from enzyme_py.cuda.harness import HostKernel
from ir_passes import forward_mode, parse_module, print_module, reverse_mode

INF, NAN = math.inf, math.nan
CASES = {   # name: (instruction on %a0 %a1 giving %r, declarations, point)
    "fmul-inf": ("%r = fmul double %a0, %a1", "", (2.0, INF)),
    "fmul-nan": ("%r = fmul double %a0, %a1", "", (2.0, NAN)),
    "fma-inf": ("%r = call double @llvm.fma.f64(double %a0, double %a1, double %a0)",
                "declare double @llvm.fma.f64(double, double, double)", (INF, 3.0)),
    "fdiv-by-zero": ("%r = fdiv double %a0, %a1", "", (1.0, 0.0)),
    "frem-by-zero": ("%r = frem double %a0, %a1", "", (1.0, 0.0)),
    "sqrt-at-zero": ("%r = call double @llvm.sqrt.f64(double %a0)",
                     "declare double @llvm.sqrt.f64(double)", (0.0, 1.0)),
    "log-at-zero": ("%r = call double @llvm.log.f64(double %a0)",
                    "declare double @llvm.log.f64(double)", (0.0, 1.0)),
    "pow-at-zero": ("%r = call double @llvm.pow.f64(double %a0, double %a1)",
                    "declare double @llvm.pow.f64(double, double)", (0.0, 0.5)),
}


def module_text(inst, decls, nan_test=True):
    test = "  %isnan = fcmp uno double %a1, 0.0\n" if nan_test else ""
    return ("define void @f(ptr %p0, ptr %p1, ptr %out) {\n"
            "  %a0 = load double, ptr %p0\n  %a1 = load double, ptr %p1\n" + test +
            f"  {inst}\n  store double %r, ptr %out\n  ret void\n}}\n{decls}\n")


def reverse(name, seed, nan_test=True):
    inst, decls, point = CASES[name]
    module = parse_module(module_text(inst, decls, nan_test))
    reverse_mode(module, "f", ["dup"] * 3, "grad", counts=None)
    grad = HostKernel(print_module(module), "grad")
    xs = [np.array([v]) for v in point]
    dxs = [np.zeros(1), np.zeros(1)]
    y, dy = np.zeros(1), np.array([seed])
    grad.fn(*[x.ctypes.data for x in xs], y.ctypes.data, *[d.ctypes.data for d in dxs], dy.ctypes.data)
    return [float(d[0]) for d in dxs]


def forward(name, tangents):
    inst, decls, point = CASES[name]
    module = parse_module(module_text(inst, decls))
    forward_mode(module, "f", ["dup"] * 3, "fwd")
    fwd = HostKernel(print_module(module), "fwd")
    xs = [np.array([v]) for v in point]
    ts = [np.array([t]) for t in tangents]
    y, ty = np.zeros(1), np.zeros(1)
    fwd.fn(*[x.ctypes.data for x in xs], y.ctypes.data, *[t.ctypes.data for t in ts], ty.ctypes.data)
    return float(ty[0])


@pytest.mark.parametrize("name", sorted(CASES))
def test_zero_seed_gives_zero(name):
    assert reverse(name, 0.0) == [0.0, 0.0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_zero_tangent_gives_zero(name):
    assert forward(name, (0.0, 0.0)) == 0.0


def test_a_nonzero_seed_keeps_the_nan():
    """The guard drops 0 * NaN only: seed 1 times a NaN partial stays NaN."""
    dx = reverse("fmul-nan", 1.0)
    assert math.isnan(dx[0]) and dx[1] == 2.0


def test_zero_tangent_on_one_operand():
    """d(x * inf) with tangents (0, 1) at x = 2: 0 * inf from x's side is 0, 2 * 1 from z's."""
    assert forward("fmul-inf", (0.0, 1.0)) == 2.0


@pytest.mark.parametrize("factor,guarded", [("2.0", False), ("%n.f", False), ("%a1", True),
                                            ("0x7FF0000000000000", True)])
def test_guard_left_out_only_for_proven_finite_factors(factor, guarded):
    """x * factor: no guard for a finite constant or an i64 converted to double
    (rules/finite.py); one for a loaded value or inf."""
    text = ("define void @f(ptr %p0, ptr %p1, i64 %n, ptr %out) {\n"
            "  %a0 = load double, ptr %p0\n  %a1 = load double, ptr %p1\n"
            "  %n.f = sitofp i64 %n to double\n  %isnan = fcmp uno double %a1, 0.0\n"
            f"  %r = fmul double %a0, {factor}\n  store double %r, ptr %out\n  ret void\n}}\n")
    module = parse_module(text)
    reverse_mode(module, "f", ["dup", "const", "const", "dup"], "grad", counts=None)
    grad = print_module(module).split("define void @grad")[1]
    assert ("select" in grad) == guarded


def test_products_unguarded_where_nothing_tests_for_nan():
    """A module with no NaN or infinity test: fmul's zero seed times inf stays NaN (the guard on
    every product is left out there: rules/partials.py), fdiv's is still dropped."""
    dx = reverse("fmul-inf", 0.0, nan_test=False)
    assert math.isnan(dx[0]) and dx[1] == 0.0
    assert reverse("fdiv-by-zero", 0.0, nan_test=False) == [0.0, 0.0]
