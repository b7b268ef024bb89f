"""Shared machinery of the gradient corpus (test_kernels*.py): the case table, argument
helpers, LLVM intrinsics Numba does not emit by itself, and the checks run on each case.
No tests here. See test_kernels.py for what the corpus checks.
"""
import re
import zlib

import numpy as np

import enzyme_py.api
from enzyme_py import Active, Duplicated, check_gradient
from enzyme_py.arguments import clone
from enzyme_py.check import finite_difference
# LLVM intrinsics Numba does not emit on its own from Python code, and libm functions called
# directly (Numba itself lowers np.cbrt and math.exp differently): the fuzzer's
from tools.fuzz.prims import fma as llvm_fma, fmuladd as llvm_fmuladd, libm_cbrt, libm_exp  # noqa: F401
from tools.fuzz.prims import maxnum as llvm_maxnum, minnum as llvm_minnum  # noqa: F401

# ---------------------------------------------------------------------------------------------
# The case table
# ---------------------------------------------------------------------------------------------

class Case:
    """One kernel + argument builder (+ optional hand-written derivative).

    `make(r)` returns the argument list (annotated) from generator `r`; `analytic(v, s, seed)`
    gets the initial primal values `v` and shadows `s` (None where there is none) and returns
    {arg index: expected derivative}. `covers`: instructions / called functions (suffix .f32/.f64
    dropped) that the kernel's optimised IR must contain: the derivative rules it exercises.
    """

    def __init__(self, name, kernel, make, analytic=None, seed=1.0, eps=None, fd_dtype=None,
                 rtol=1e-6, covers=()):
        self.name, self.kernel, self.make, self.analytic = name, kernel, make, analytic
        self.seed, self.eps, self.fd_dtype, self.rtol = seed, eps, fd_dtype, rtol
        self.covers = set(covers)

    def args(self):
        return self.make(np.random.default_rng(zlib.crc32(self.name.encode())))

    def __repr__(self):
        return self.name


class Corpus:
    """The cases of one corpus file."""

    def __init__(self):
        self.cases = []

    def case(self, name, kernel, make, analytic=None, **kw):
        assert name not in {c.name for c in self.cases}, name
        self.cases.append(Case(name, kernel, make, analytic, **kw))

    def ids(self):
        return [c.name for c in self.cases]


# argument helpers ------------------------------------------------------------------------------

def U(r, shape, lo, hi, dtype=np.float64, order="C"):
    """Uniform values in [lo, hi)."""
    return np.asarray(r.uniform(lo, hi, shape), dtype=dtype, order=order)


def A(r, shape, lo, hi, dtype=np.float64):
    """Magnitudes in [lo, hi) with random signs (keeps away from 0)."""
    return (r.uniform(lo, hi, shape) * r.choice([-1.0, 1.0], shape)).astype(dtype)


def D(a, r, lo=-1.0, hi=1.0):
    """Duplicated(a, shadow) with the shadow laid out exactly like a, holding random seeds."""
    s = clone(a, writeable=True)
    s[...] = r.uniform(lo, hi, a.shape)
    return Duplicated(a, s)


def garbage(r, shape, dtype=np.float64, order="C"):
    """Initial content of a fully overwritten output (irrelevant to the result)."""
    return U(r, shape, -9.0, 9.0, dtype, order)


def separated(r, n):
    """x, y with |x - y| >= 0.1 (min/max pick a side)."""
    x = U(r, n, -2, 2)
    return x, x + A(r, n, 0.1, 1.0)


def vals(args):
    return [getattr(a, "value", a) for a in args]


# ---------------------------------------------------------------------------------------------
# Checking one case
# ---------------------------------------------------------------------------------------------

def assert_close(actual, expected, rtol, what):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    atol = rtol * max(1.0, float(np.max(np.abs(expected))) if expected.size else 0.0)
    err = np.abs(actual - expected)
    ok = np.all(err <= atol + rtol * np.abs(expected))
    assert ok, (f"{what}: max abs err {np.max(err):.3e} (rtol {rtol:g})\n"
                f"  got      {actual.ravel()}\n  expected {expected.ravel()}")


def initial(args):
    """Copies of the initial primal values and shadows (None where there is no shadow)."""
    v = [np.array(x, copy=True) if isinstance(x, np.ndarray) else x for x in vals(args)]
    s = [np.array(a.shadow, copy=True) if hasattr(a, "shadow") else None for a in args]
    return v, s


def fake_autodiff(analytic, perturb=None, skip_primal=False):
    """An `autodiff` stand-in that writes `analytic`'s gradient (arg `perturb` made wrong) and
    runs the primal in place. Used to test the checker without the AD."""
    calls = []

    def fake(kernel, *args, seed=1.0, **kw):
        calls.append(args)
        expected = analytic(*initial(args), seed)
        if not skip_primal:
            kernel(*vals(args))
        out = [None] * len(args)
        for i, e in expected.items():
            e = np.array(e, dtype=np.float64, copy=True)
            if i == perturb:
                e.flat[0] += 0.05 * max(1.0, float(np.max(np.abs(e))))
            if isinstance(args[i], Active):
                out[i] = float(e)
            else:
                args[i].shadow[...] = e
        return tuple(out)
    fake.calls = calls
    return fake


def kernel_ir_features(kernel):
    """Float instructions and called functions (.f32/.f64 dropped) in the kernel's optimised IR
    (every compiled signature; Python wrappers left out)."""
    ops, calls = set(), set()
    for sig in kernel.signatures:
        text = kernel.inspect_llvm(sig)
        for fn in re.findall(r"^define [^\n]*\n(?:.*\n)*?^}", text, flags=re.M):
            header = fn.split("\n", 1)[0]
            if "cpython." in header or "cfunc." in header:
                continue
            ops.update(re.findall(r"= (fadd|fsub|fmul|fdiv|frem|fneg|fcmp|select|fpext|fptrunc"
                                  r"|sitofp|uitofp|fptosi)\b", fn))
            for name in re.findall(r"call [^@\n]*@\"?([\w.$]+)", fn):
                calls.add(re.sub(r"\.(f32|f64)$", "", name))
    return ops | calls


def check_reference(c, monkeypatch):
    """Without the AD: the kernel's IR contains what the case claims to cover; the
    finite-difference reference of the plain kernel agrees with the hand derivative;
    check_gradient accepts that derivative and rejects it perturbed (autodiff faked)."""
    args = c.args()
    c.kernel(*vals(c.args()))  # compile for the case's own types (fd_dtype may differ)
    missing = c.covers - kernel_ir_features(c.kernel)
    assert not missing, f"corpus: {c.name}: the kernel's IR has no {sorted(missing)}"
    if c.analytic is None:
        return
    fd = finite_difference(c.kernel, *args, seed=c.seed, eps=c.eps, fd_dtype=c.fd_dtype)
    expected = c.analytic(*initial(args), c.seed)
    assert set(expected) == {i for i, f in enumerate(fd) if f is not None}, \
        "corpus: the analytic derivative covers every differentiated argument"
    for i, e in expected.items():
        assert_close(fd[i], e, c.rtol, f"corpus: {c.name} arg {i} (finite differences vs analytic)")

    kw = dict(seed=c.seed, rtol=c.rtol, eps=c.eps, fd_dtype=c.fd_dtype)
    with monkeypatch.context() as m:
        m.setattr(enzyme_py.api, "autodiff", fake_autodiff(c.analytic))
        rep = check_gradient(c.kernel, *c.args(), **kw)
        assert rep.passed, f"checker: rejects the analytic derivative\n{rep}"
        for i in expected:
            m.setattr(enzyme_py.api, "autodiff", fake_autodiff(c.analytic, perturb=i))
            bad = check_gradient(c.kernel, *c.args(), **kw)
            assert not bad[i].passed and not bad.passed, f"checker: perturbed arg {i} accepted\n{bad}"


def check_autodiff(c):
    """autodiff agrees with finite differences (and with the hand derivative, where given)."""
    args = c.args()
    before = initial(args)
    rep = check_gradient(c.kernel, *args, seed=c.seed, rtol=c.rtol, eps=c.eps, fd_dtype=c.fd_dtype)
    assert rep.passed, f"autodiff: {c.name}\n{rep}"
    # check_gradient works on copies: the caller's arrays are untouched
    after = initial(args)
    for x0, x1 in zip(before[0] + before[1], after[0] + after[1]):
        np.testing.assert_array_equal(np.asarray(x1), np.asarray(x0))
    if c.analytic is not None:
        expected = c.analytic(*before, c.seed)
        for i, e in expected.items():
            assert_close(rep[i].ad, e, rep[i].rtol, f"autodiff: {c.name} arg {i} (vs analytic)")


def check_round_trip_and_verifier(c):
    """The cleaned IR of the kernel survives parse -> print -> llvmlite parse -> verify, and the
    generated gradient module passes the LLVM verifier (reuses the compiled gradient)."""
    import llvmlite.binding as llvm

    from ir_passes import parse_module, print_module
    info = enzyme_py.inspect(c.kernel, *c.args())
    assert info.error is None, f"autodiff: {c.name}: {info.error}"
    llvm.parse_assembly(print_module(parse_module(info.cleaned))).verify()
    llvm.parse_assembly(info.verified).verify()


def run_case(c, monkeypatch):
    """First the corpus and the checker are validated without the AD (failures say "corpus:" /
    "checker:"), then the AD is checked (failures say "autodiff:"). One test per case, so each
    kernel compiles in one xdist worker only."""
    check_reference(c, monkeypatch)
    check_autodiff(c)
    check_round_trip_and_verifier(c)
