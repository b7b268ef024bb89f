"""The derivative rules' own math calls use libmvec's vector variants; primal calls stay libm's.

ir_passes/transforms/common/vector_math.py, enzyme_py/bridge/vector_math.py. The golden test is
tests/filecheck/reverse-mode/instructions/vector-math.ll.
"""
import math
import re

import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, Forward, autodiff, compile_gradient
from enzyme_py.bridge import vector_math as host
from ir_passes import libmvec, parse_module, print_module
from ir_passes.ir import types as T
from ir_passes.transforms.common.vector_math import LIBMVEC_FUNCTIONS, keep_declared

needs_libmvec = pytest.mark.skipif(host.host_library() is None,
                                   reason="no libmvec for Numba's target here")


@njit
def sin_poly(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i] + math.sin(x[i])


def inputs(n=1003, dtype=np.float64):
    rng = np.random.default_rng(3)
    x = rng.uniform(-3.0, 3.0, n).astype(dtype)
    x[:4] = [1e6, -12345.678, 1e22, 0.0]    # libmvec's range reduction, not only small angles
    return x, rng.standard_normal(n).astype(dtype)


def vector_calls(library, name):
    return re.findall(rf"call [^\n]*@_ZGV\w+_{name}\(", library.get_llvm_str())


@needs_libmvec
def test_reverse_uses_vector_cos_and_writes_y_exactly():
    x, w = inputs()
    y, dx, dy = np.zeros_like(x), np.zeros_like(x), w.copy()
    grad = compile_gradient(sin_poly, Duplicated(x, dx), Duplicated(y, dy))
    assert vector_calls(grad.library, "cos")
    assert not vector_calls(grad.library, "sin")       # y's sin is libm's, lane by lane
    autodiff(sin_poly, Duplicated(x, dx), Duplicated(y, dy))
    plain = np.zeros_like(x)
    sin_poly(x, plain)
    assert np.array_equal(y, plain)
    np.testing.assert_allclose(dx, w * (2.0 * x + np.cos(x)), rtol=1e-13, atol=1e-13)
    assert not dy.any()


@needs_libmvec
def test_forward_uses_vector_cos():
    x, t = inputs()
    y, ty = np.zeros_like(x), np.zeros_like(x)
    fwd = compile_gradient(sin_poly, Duplicated(x, t.copy()), Duplicated(y, ty), mode=Forward)
    assert vector_calls(fwd.library, "cos")
    tx = t.copy()
    autodiff(sin_poly, Duplicated(x, tx), Duplicated(y, ty), mode=Forward)
    plain = np.zeros_like(x)
    sin_poly(x, plain)
    assert np.array_equal(y, plain)
    np.testing.assert_allclose(ty, t * (2.0 * x + np.cos(x)), rtol=1e-13, atol=1e-13)


@needs_libmvec
def test_float32_uses_the_float_variant():
    x, w = inputs(dtype=np.float32)
    x[:4] = [100.0, -7.5, 3.0, 0.0]
    y, dx, dy = np.zeros_like(x), np.zeros_like(x), w.copy()
    grad = compile_gradient(sin_poly, Duplicated(x, dx), Duplicated(y, dy))
    assert vector_calls(grad.library, "cosf")
    autodiff(sin_poly, Duplicated(x, dx), Duplicated(y, dy))
    expect = w.astype(np.float64) * (2.0 * x.astype(np.float64) + np.cos(x.astype(np.float64)))
    np.testing.assert_allclose(dx, expect, rtol=1e-5, atol=1e-5)


@njit
def many(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        y[i] = math.sinh(v) + math.cosh(v) + v ** (v + 0.5) + math.erf(v) + math.cos(v)


def test_each_variant_gives_the_analytic_derivative():
    """sinh, cosh, pow (both partials: pow and log), erf (exp) and cos (sin), whichever of them
    LLVM vectorizes: a wrong variant or signature would show here."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.1, 2.0, 517)
    w = rng.standard_normal(x.size)
    dx, dy = np.zeros_like(x), w.copy()
    autodiff(many, Duplicated(x, dx), Duplicated(np.zeros_like(x), dy))
    p = x + 0.5
    expect = (np.cosh(x) + np.sinh(x) + x ** p * (p / x + np.log(x))
              + 2.0 / np.sqrt(np.pi) * np.exp(-x * x) - np.sin(x))
    np.testing.assert_allclose(dx, w * expect, rtol=1e-12, atol=1e-12)


def test_libmvec_table():
    lib = libmvec(("b", "d"))
    assert lib.lookup("llvm.cos.f64", T.f64) == ((2, "_ZGVbN2v_cos"), (4, "_ZGVdN4v_cos"))
    assert lib.lookup("cosf", T.f32) == ((4, "_ZGVbN4v_cosf"), (8, "_ZGVdN8v_cosf"))
    assert lib.lookup("llvm.pow.f64", T.f64)[1] == (4, "_ZGVdN4vv_pow")
    assert lib.lookup("erf", T.f64)[0] == (2, "_ZGVbN2v_erf")
    assert lib.lookup("llvm.sqrt.f64", T.f64) == ()     # a vector instruction
    assert libmvec(("d",), exported=lambda s: "cos" in s).lookup("sin", T.f64) == ()


def test_keep_declared_extends_an_existing_list():
    module = parse_module('@g = global i32 0\n'
                          '@llvm.compiler.used = appending global [1 x ptr] [ptr @g], '
                          'section "llvm.metadata"\n')
    keep_declared(module, ["_ZGVdN4v_cos", "_ZGVdN4v_cos"])
    text = print_module(module)
    assert ('@llvm.compiler.used = appending global [2 x ptr] [ptr @g, ptr @_ZGVdN4v_cos], '
            'section "llvm.metadata"') in text
    assert text.count("@llvm.compiler.used") == 1


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("ENZYME_PY_VECTOR_MATH", "0")
    assert host._find() is None


# ---- every variant of the host's table, through LLVM's vectorizer and the JIT ----------------

REFERENCE = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "exp": np.exp, "exp2": np.exp2,
    "exp10": lambda v: 10.0 ** v, "expm1": np.expm1, "log": np.log, "log2": np.log2,
    "log10": np.log10, "log1p": np.log1p, "cbrt": np.cbrt, "erf": np.vectorize(math.erf),
    "erfc": np.vectorize(math.erfc), "pow": np.power, "atan2": np.arctan2, "hypot": np.hypot,
}

LOOP = """
define void @f(ptr noalias %a, ptr noalias %b, ptr noalias %y, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pa = getelementptr {T}, ptr %a, i64 %i
  %pb = getelementptr {T}, ptr %b, i64 %i
  %va = load {T}, ptr %pa
  %vb = load {T}, ptr %pb
  %r = call {T} @{name}({args})
  %py = getelementptr {T}, ptr %y, i64 %i
  store {T} %r, ptr %py
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
declare {T} @{name}({params})
"""


def compiled_loop(fn, arity, bits):
    import ctypes

    import llvmlite.binding as llvm
    from numba.core.compiler_lock import global_compiler_lock
    from numba.core.registry import cpu_target

    from ir_passes.transforms.common.vector_math import use_vector_variants
    t = "double" if bits == 64 else "float"
    name = fn + ("f" if bits == 32 else "")
    module = parse_module(LOOP.format(T=t, name=name, args=", ".join(
        f"{t} %v{'ab'[k]}" for k in range(arity)), params=", ".join([t] * arity)))
    call = next(i for i in module.functions["f"].instructions() if i.opcode == "call")
    call.adjoint_only = True
    assert use_vector_variants(module, host.host_library()) == 1
    with global_compiler_lock:
        library = cpu_target.target_context.codegen().create_library(f"vm_{name}")
        library.add_llvm_module(llvm.parse_assembly(print_module(module)))
        library.finalize()
    proto = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
    return library, proto(library.get_pointer_to_function("f"))


@needs_libmvec
@pytest.mark.parametrize("bits", [64, 32])
def test_every_variant_computes_its_function(bits):
    lib = host.host_library()
    dtype = np.float64 if bits == 64 else np.float32
    rng = np.random.default_rng(11)
    checked = []
    for (fn, b), variants in sorted(lib.variants.items()):
        if b != bits or fn not in REFERENCE:
            continue
        arity = LIBMVEC_FUNCTIONS[fn]
        lo = 1.1 if fn == "acosh" else 0.05
        a = rng.uniform(lo, lo + 0.9, 203).astype(dtype)
        b2 = rng.uniform(0.05, 0.95, 203).astype(dtype)
        y = np.zeros_like(a)
        library, f = compiled_loop(fn, arity, bits)
        assert re.search(rf"call [^\n]*@_ZGV\w+_{fn}{'f' if bits == 32 else ''}\(",
                         library.get_llvm_str()), f"{fn}: LLVM did not call a vector variant"
        f(a.ctypes.data, b2.ctypes.data, y.ctypes.data, a.size)
        expect = REFERENCE[fn](*([a.astype(np.float64), b2.astype(np.float64)][:arity]))
        np.testing.assert_allclose(y, expect, rtol=1e-13 if bits == 64 else 1e-5, err_msg=fn)
        checked.append(fn)
    assert {"sin", "cos", "exp", "log", "pow"} <= set(checked)


@njit
def sin_cos(x, y):
    for i in range(x.shape[0]):
        y[i] = math.sin(x[i]) * math.cos(x[i]) + math.pow(x[i], 1.5)


@needs_libmvec
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_primal_calls_stay_libm_beside_the_same_rule_calls(mode):
    """sin's tangent needs cos(x), which the primal computes too: LLVM must not merge the
    rule's call (vector variant allowed) with the primal's (libm exactly)."""
    x, w = inputs()
    x = np.abs(x)
    y, plain = np.zeros_like(x), np.zeros_like(x)
    sin_cos(x, plain)
    dx, dy = (w.copy(), np.zeros_like(x)) if mode == "forward" else (np.zeros_like(x), w.copy())
    autodiff(sin_cos, Duplicated(x, dx), Duplicated(y, dy),
             **({"mode": Forward} if mode == "forward" else {}))
    assert np.array_equal(y, plain)
    d = np.cos(2.0 * x) + 1.5 * np.sqrt(x)
    np.testing.assert_allclose(dy if mode == "forward" else dx, w * d, rtol=1e-12, atol=1e-12)


SIN_COS = """
define void @f(ptr %x, ptr %y) {
entry:
  %v = load double, ptr %x
  %s = call double @llvm.sin.f64(double %v)
  %c = call double @llvm.cos.f64(double %v)
  %p = fmul double %s, %c
  store double %p, ptr %y
  ret void
}
declare double @llvm.sin.f64(double)
declare double @llvm.cos.f64(double)
"""


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_sibling_the_primal_computes_is_reused_not_marked(mode):
    """sin's rule needs cos(x), and the primal computes it (after sin, or before for cos's
    rule): the rules use the primal's value, so no marked call is left to merge with nothing."""
    from ir_passes import forward_mode, reverse_mode
    module = parse_module(SIN_COS)
    run = reverse_mode if mode == "reverse" else forward_mode
    run(module, "f", ["dup", "dup"], "d", vector_library=libmvec(("d",)))
    text = print_module(module)
    assert "vector-function-abi-variant" not in text
    body = text[text.index("define void @d("):]
    assert body.count("@llvm.cos.f64(") <= 2 and body.count("@llvm.sin.f64(") <= 2
    only_sin = parse_module(SIN_COS.replace("%c = call double @llvm.cos.f64(double %v)",
                                            "%c = fadd double %v, 1.0"))
    run(only_sin, "f", ["dup", "dup"], "d", vector_library=libmvec(("d",)))
    assert "_ZGV_LLVM_N4v_llvm.cos.f64(_ZGVdN4v_cos)" in print_module(only_sin)
