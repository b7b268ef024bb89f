"""Tests of the Numba bridge (capture, cleanup, convention, link) and the API.

ir_passes is replaced by `_fake_reverse`: hand-written LLVM IR gradients that
call the kernel for the forward sweep, so capture -> link -> call is tested on
its own.
"""
import re

import llvmlite.binding as llvm
import numba
import numpy as np
import pytest
from numba.core import types

from numba.core.runtime import rtsys

import enzyme_py
from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed
from enzyme_py.bridge.capture import (_RECORD_ATTR, _copy_options, _final_module_text,
                                      capture, strip_noinline)
from enzyme_py.bridge.cleanup import cleanup
from enzyme_py.bridge.convention import arg_layouts, build_activity, param_count
from enzyme_py.bridge.link import compile_library, prepare_module
from enzyme_py.modes import reverse
from enzyme_py.modes.reverse import GradientSpec, gradient_name
from enzyme_py.modes.reverse import make_gradient_entry as make_entry


# ---- kernels -----------------------------------------------------------------

@numba.njit
def square_helper(v):
    return v * v


@numba.njit
def square(x, y):
    for i in range(x.shape[0]):
        y[i] = square_helper(x[i])


@numba.njit
def scaled_sum(a, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return a * s


@numba.njit
def raises_user(x, y):
    if x[0] < 0.0:
        raise ValueError("negative input")
    y[0] = x[0]


@numba.njit(boundscheck=True)
def raises_index(x, y):
    for i in range(x.shape[0]):
        y[i + 1] = x[i]


@numba.njit
def raises_zero_division(x, y):
    y[0] = 1.0 / x[0]


# ---- the fake ir_passes ------------------------------------------------------

def _fake_reverse(text, fn_name, activity, out_name, body):
    """Append `i32 @out_name(...)` that runs the kernel, then `body` if it succeeded.

    In `body`, `%pN` is primal parameter N, `%sK` the K-th shadow, `%oK` the K-th
    active out; it starts in block `%rev` and must end with `br label %done`.
    """
    fn = llvm.parse_assembly(text).get_function(fn_name)
    primal = [f"{a.type} %p{i}" for i, a in enumerate(fn.arguments)]
    assert len(primal) == len(activity)
    extra = [f"ptr %s{k}" for k in range(activity.count("dup"))]
    extra += [f"ptr %o{k}" for k in range(activity.count("active"))]
    return text + f"""
define i32 @{out_name}({", ".join(primal + extra)}) {{
entry:
  %st = call i32 @{fn_name}({", ".join(primal)})
  %ok0 = icmp eq i32 %st, 0
  %ok1 = icmp eq i32 %st, -2
  %ok = or i1 %ok0, %ok1
  br i1 %ok, label %rev, label %done
rev:
{body}
done:
  ret i32 %st
}}
"""


def _square_body(activity):
    """dx[i] += 2 x[i] dy[i]; dy[i] = 0  (shadows: s0 = dx, s1 = dy)."""
    xd = activity.index("dup")       # x's data pointer; its length follows it
    n = xd + 1
    return f"""
  %empty = icmp sle i64 %p{n}, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %rev ], [ %inext, %loop ]
  %xp = getelementptr double, ptr %p{xd}, i64 %i
  %xv = load double, ptr %xp
  %dyp = getelementptr double, ptr %s1, i64 %i
  %g = load double, ptr %dyp
  store double 0.0, ptr %dyp
  %dxp = getelementptr double, ptr %s0, i64 %i
  %dxv = load double, ptr %dxp
  %t = fmul double %xv, %g
  %t2 = fmul double %t, 2.0
  %new = fadd double %dxv, %t2
  store double %new, ptr %dxp
  %inext = add i64 %i, 1
  %more = icmp slt i64 %inext, %p{n}
  br i1 %more, label %loop, label %done"""


def _scaled_sum_body(activity):
    """a*sum(x): da += seed sum(x); dx[i] += seed a  (s0 seed, s1 dx, o0 da)."""
    if activity.count("dup") != 2 or "active" not in activity:
        return "  br label %done"        # other activity patterns: no adjoint
    a = activity.index("active")
    xd = len(activity) - 1 - activity[::-1].index("dup")
    n = xd + 1
    return f"""
  %seed = load double, ptr %s0
  store double 0.0, ptr %s0
  %empty = icmp sle i64 %p{n}, 0
  br i1 %empty, label %fin, label %loop
loop:
  %i = phi i64 [ 0, %rev ], [ %inext, %loop ]
  %acc = phi double [ 0.0, %rev ], [ %acc2, %loop ]
  %xp = getelementptr double, ptr %p{xd}, i64 %i
  %xv = load double, ptr %xp
  %acc2 = fadd double %acc, %xv
  %dxp = getelementptr double, ptr %s1, i64 %i
  %dxv = load double, ptr %dxp
  %t = fmul double %seed, %p{a}
  %new = fadd double %dxv, %t
  store double %new, ptr %dxp
  %inext = add i64 %i, 1
  %more = icmp slt i64 %inext, %p{n}
  br i1 %more, label %loop, label %fin
fin:
  %sum = phi double [ 0.0, %rev ], [ %acc2, %loop ]
  %da = fmul double %seed, %sum
  %o = load double, ptr %o0
  %o2 = fadd double %o, %da
  store double %o2, ptr %o0
  br label %done"""


_BODIES = {"square": _square_body, "scaled_sum": _scaled_sum_body}


def fake_differentiate(text, fn_name, activity, out_name, cache="minimal", noalias=False, *rest,
                       layouts=None, **options):
    """Stands in for enzyme_py.modes.reverse.differentiate (ir_passes) in these tests."""
    for name, body in _BODIES.items():
        if f"{len(name)}{name}B" in fn_name:
            return _fake_reverse(text, fn_name, activity, out_name, body(activity))
    # Kernels without a hand-written adjoint: forward sweep only.
    return _fake_reverse(text, fn_name, activity, out_name, "  br label %done")


@pytest.fixture
def fake_ir_passes(monkeypatch):
    monkeypatch.setattr(reverse, "differentiate", fake_differentiate)


def _types(*values):
    return tuple(numba.typeof(v) for v in values)


def _defined(text):
    return re.findall(r"^define [^@]*@\"?([\w.$]+)", text, re.M)


# ---- capture -----------------------------------------------------------------

def test_capture_links_kernel_and_njit_callees():
    x = np.zeros(4)
    cap = capture(square, _types(x, x))
    names = _defined(cap.text)
    assert cap.fn_name in names
    assert any("13square_helperB" in n for n in names)
    assert not any(n.startswith(("_ZN7cpython", "cfunc.")) for n in names)
    assert not re.search(r"^define .*\bnoinline\b", cap.text, re.M)
    assert "!dbg" in cap.text
    assert cap.argtypes == _types(x, x) and cap.restype == types.none
    llvm.parse_assembly(cap.text).verify()


@pytest.mark.parametrize("from_disk_cache", [False, True])
def test_capture_recompiles_unrecorded_callee(from_disk_cache):
    @numba.njit
    def helper(v, i):
        return v[i] + 1.0

    @numba.njit
    def kernel(x):
        x[0] = helper(x, 1)

    x = np.zeros(2)
    kernel(x)                                   # compiles helper
    (helper_cres,) = helper.overloads.values()
    lib = helper_cres.library
    delattr(lib, _RECORD_ATTR)                  # as if compiled before import
    lib._disable_inspection = from_disk_cache   # ... or loaded from the cache
    try:
        cap = capture(kernel, _types(x))
    finally:
        lib._disable_inspection = False
    assert helper_cres.fndesc.mangled_name in _defined(cap.text)
    cleaned = cleanup(cap.text, cap.fn_name)
    assert _defined(cleaned) == [cap.fn_name]
    assert not re.search(r"\bcall [^@]*@", cleaned)


def test_final_module_text_declares_nrt_functions():
    @numba.njit
    def first(v):
        return v[0]

    first(np.zeros(2))
    (cres,) = first.overloads.values()
    nrt = {fn.name for fn in rtsys.library.get_defined_functions()}
    assert "NRT_decref" in cres.library.get_llvm_str()
    text = _final_module_text(cres.library, nrt)
    module = llvm.parse_assembly(text)
    assert all(module.get_function(n).is_declaration for n in nrt
               if n in {f.name for f in module.functions})
    assert module.get_function(cres.fndesc.mangled_name).linkage == llvm.Linkage.linkonce_odr


def test_capture_of_recursive_kernel_not_yet_compiled():
    @numba.njit
    def power(n, x):
        if n <= 0:
            return 1.0
        return x * power(n - 1, x)

    cap = capture(power, _types(3, 2.0))        # the copy calls the user's `power`
    assert len(_defined(cleanup(cap.text, cap.fn_name))) == 2


def test_capture_rejects_types_numba_cannot_compile():
    with pytest.raises(TypeError, match="Numba cannot compile square"):
        capture(square, (types.int64, types.int64))


def test_copy_options_keep_boundscheck_and_drop_cache():
    assert _copy_options(square)["boundscheck"] is False
    assert _copy_options(raises_index)["boundscheck"] is True
    opts = _copy_options(numba.njit(cache=True, fastmath=True)(square.py_func))
    assert opts["debug"] is True and "cache" not in opts and opts["fastmath"]


def test_strip_noinline_leaves_quoted_names_alone():
    text = ('define i32 @"noinline.f"() noinline optnone {\n'
            'attributes #0 = { noinline nounwind }\n  call void @"g"() ; noinline\n'
            'attributes #1 = { noinline }')
    out = strip_noinline(text).splitlines()
    assert out[0] == 'define i32 @"noinline.f"() {'
    assert out[1] == "attributes #0 = { nounwind }"
    assert out[2].endswith("; noinline")
    assert out[3] == 'attributes #1 = { "enzyme-py-inlinable" }'


# ---- cleanup -----------------------------------------------------------------

def test_cleanup_inlines_callees_into_compact_ssa():
    x = np.zeros(4)
    cap = capture(square, _types(x, x))
    cleaned = cleanup(cap.text, cap.fn_name)
    assert _defined(cleaned) == [cap.fn_name]
    assert " alloca " not in cleaned and "#dbg_" not in cleaned
    assert "<2 x double>" not in cleaned and "!dbg" in cleaned
    llvm.parse_assembly(cleaned).verify()


# ---- calling convention ------------------------------------------------------

def test_convention_array_layouts():
    a1 = np.zeros(5)
    a2 = np.zeros((3, 4))
    layouts = arg_layouts(_types(a1, a2, np.asfortranarray(a2), a1[::2]))
    assert layouts[0].params == tuple(range(2, 9)) and layouts[0].data == 6
    assert layouts[1].params == tuple(range(9, 18)) and layouts[1].data == 13
    assert layouts[2].params == tuple(range(18, 27)) and layouts[2].data == 22
    assert layouts[3].params == tuple(range(27, 34)) and layouts[3].data == 31


def test_convention_scalars_and_tuples():
    argtypes = _types(1.0, 3, True, 1j, (1.0, 2.0), (np.zeros(2), 1))
    layouts = arg_layouts(argtypes)
    assert [l.params for l in layouts] == [
        (2,), (3,), (4,), (5, 6), (7, 8), tuple(range(9, 17))]
    assert all(l.data is None for l in layouts)
    assert param_count(argtypes, types.none) == 17


def test_activity_list():
    argtypes = _types(np.zeros(3), 2.0, np.zeros((2, 2)))
    act = build_activity(argtypes, types.float64, ["dup", "active", "const"])
    assert len(act) == 2 + 7 + 1 + 9
    assert act[0] == "dup" and act[1] == "const"
    assert act[6] == "dup" and act[9] == "active"
    assert act.count("dup") == 2 and act.count("active") == 1
    assert build_activity(argtypes, types.none, ["const"] * 3)[0] == "const"
    with pytest.raises(TypeError):
        build_activity(argtypes, types.none, ["active", "const", "const"])
    with pytest.raises(TypeError):
        build_activity(argtypes, types.none, ["const", "dup", "const"])


# ---- link: a hand-written gradient, called from Python and from @njit --------

def _build_by_hand(kernel, args, kinds):
    cap = capture(kernel, _types(*args))
    cleaned = cleanup(cap.text, cap.fn_name)
    activity = build_activity(cap.argtypes, cap.restype, kinds)
    name = gradient_name(cap.fn_name, cap.argtypes, activity)
    verified = prepare_module(
        fake_differentiate(cleaned, cap.fn_name, activity, name), name)
    spec = GradientSpec(cap.argtypes, cap.restype, tuple(kinds), name)
    return make_entry(spec, compile_library(verified, name)), verified, name


def test_prepare_module_internalizes_helpers():
    x = np.arange(3.0)
    _, verified, name = _build_by_hand(square, (x, x.copy()), ["dup", "dup"])
    for line in re.findall(r"^define .*", verified, re.M):
        assert (f"@{name}(" in line) != ("internal" in line)
    with pytest.raises(ValueError, match="does not define"):
        prepare_module("declare i32 @f()\n", "g")


def test_hand_written_gradient_from_python_and_njit():
    x = np.arange(1.0, 6.0)
    y, dx, dy = np.zeros(5), np.zeros(5), np.ones(5)
    entry, _, _ = _build_by_hand(square, (x, y), ["dup", "dup"])
    assert entry(x, y, dx, dy, 1.0) == ()
    np.testing.assert_allclose(y, x * x)
    np.testing.assert_allclose(dx, 2 * x)
    assert not dy.any()                          # consumed

    @numba.njit
    def twice(x, y, dx, dy):
        for _ in range(2):
            dy[:] = 1.0
            entry(x, y, dx, dy, 1.0)

    dx[:] = 0.0
    twice(x, y, dx, dy)
    np.testing.assert_allclose(dx, 4 * x)

    @numba.njit
    def strided(x, y, dx, dy):
        entry(x[::2], y, dx, dy, 1.0)

    with pytest.raises(numba.core.errors.TypingError, match="was built for"):
        strided(x, y, dx, dy)


# ---- autodiff with the fake ir_passes -----------------------------------------

def test_autodiff_duplicated_arrays(fake_ir_passes):
    x = np.arange(1.0, 4.0)
    y, dx, dy = np.zeros(3), np.zeros(3), np.array([1.0, 2.0, 3.0])
    assert enzyme_py.autodiff(square, Duplicated(x, dx), Duplicated(y, dy)) == (None, None)
    np.testing.assert_allclose(dx, 2 * x * [1.0, 2.0, 3.0])
    assert not dy.any()
    dy[:] = 1.0
    enzyme_py.autodiff(square, Duplicated(x, dx), DuplicatedNoNeed(y, dy))
    np.testing.assert_allclose(dx, 2 * x * [2.0, 3.0, 4.0])   # accumulated


def test_autodiff_active_scalar_and_seed(fake_ir_passes):
    x, dx = np.arange(1.0, 5.0), np.zeros(4)
    da, none = enzyme_py.autodiff(scaled_sum, Active(2.0), Duplicated(x, dx), seed=3.0)
    assert none is None and isinstance(da, float)
    assert da == pytest.approx(3.0 * x.sum())
    np.testing.assert_allclose(dx, 6.0)
    da, _ = enzyme_py.autodiff(scaled_sum, Active(2.0), Duplicated(x, dx))
    assert da == pytest.approx(x.sum())


def test_cache_is_hit(fake_ir_passes):
    x, dx = np.arange(1.0, 5.0), np.zeros(4)
    enzyme_py.autodiff(scaled_sum, Active(2.0), Duplicated(x, dx))
    before = enzyme_py.compile_count()
    for a in (1.0, 2.0, 3.0):
        enzyme_py.autodiff(scaled_sum, Active(a), Duplicated(x, np.zeros(4)))
    assert enzyme_py.compile_count() == before
    enzyme_py.autodiff(scaled_sum, 1.0, Duplicated(x, dx))       # new activity
    assert enzyme_py.compile_count() == before + 1
    enzyme_py.autodiff(scaled_sum, Const(1.0), Duplicated(x, dx))  # bare = Const
    assert enzyme_py.compile_count() == before + 1
    enzyme_py.autodiff(scaled_sum, Active(2.0), Duplicated(x[::2], dx[::2]))  # new layout
    assert enzyme_py.compile_count() == before + 2


def test_plain_function_is_jitted(fake_ir_passes):
    def plain_square(x, y):
        for i in range(x.shape[0]):
            y[i] = x[i] * x[i]

    x = np.arange(3.0)
    enzyme_py.autodiff(plain_square, Duplicated(x, np.zeros(3)), Duplicated(np.zeros(3), np.ones(3)))
    before = enzyme_py.compile_count()
    enzyme_py.autodiff(plain_square, Duplicated(x, np.zeros(3)), Duplicated(np.zeros(3), np.ones(3)))
    assert enzyme_py.compile_count() == before


def test_inspect_exposes_ir_texts(fake_ir_passes):
    x = np.arange(3.0)
    info = enzyme_py.inspect(square, Duplicated(x, np.zeros(3)), Duplicated(x.copy(), np.ones(3)))
    assert info.kernel_name in info.captured and info.kernel_name in info.cleaned
    assert f"@{info.name}(" in info.generated and f"@{info.name}(" in info.verified
    assert info.activity.count("dup") == 2


def test_inspect_returns_failed_build_with_texts(monkeypatch):
    def failing(text, fn_name, activity, out_name, *args, **options):
        raise enzyme_py.UnsupportedError("some construct", "  %x = frem double %a, %b")

    monkeypatch.setattr(reverse, "differentiate", failing)
    enzyme_py.clear_cache()
    x = np.arange(3.0)
    args = (Duplicated(x, np.zeros(3)), Duplicated(x.copy(), np.ones(3)))
    info = enzyme_py.inspect(square, *args)
    assert isinstance(info.error, enzyme_py.UnsupportedError)
    assert info.entry is None and info.cleaned and not info.generated
    with pytest.raises(enzyme_py.UnsupportedError, match="some construct"):
        enzyme_py.autodiff(square, *args)


def test_returned_array_is_released(fake_ir_passes):
    from numba.core.runtime import _nrt_python, rtsys

    @numba.njit
    def doubled(x):
        return x * 2.0

    _nrt_python.memsys_enable_stats()
    try:
        x = np.arange(3.0)
        for seed in (None, np.ones(3)):     # left out of L; seeded through the wrapper
            enzyme_py.autodiff(doubled, Duplicated(x, np.zeros(3)), seed=seed)
            before = rtsys.get_allocation_stats()
            for _ in range(10):
                enzyme_py.autodiff(doubled, Duplicated(x, np.zeros(3)), seed=seed)
            after = rtsys.get_allocation_stats()
            assert after.alloc - before.alloc == after.free - before.free >= 10
    finally:
        _nrt_python.memsys_disable_stats()


@pytest.mark.parametrize("kernel, x, error, message", [
    (raises_user, [-1.0, 0.0], ValueError, "negative input"),
    (raises_index, [1.0, 2.0], IndexError, "index is out of bounds"),
    (raises_zero_division, [0.0, 1.0], ZeroDivisionError, "division by zero"),
])
def test_kernel_exceptions_propagate(fake_ir_passes, kernel, x, error, message):
    x = np.array(x)
    args = (Duplicated(x, np.zeros(2)), Duplicated(np.zeros(2), np.zeros(2)))
    with pytest.raises(error, match=message):
        enzyme_py.autodiff(kernel, *args)
    entry = enzyme_py.compile_gradient(kernel, *args).entry

    @numba.njit
    def nested(x, y, dx, dy):
        return entry(x, y, dx, dy, 1.0)

    with pytest.raises(error, match=message):
        nested(x, np.zeros(2), np.zeros(2), np.zeros(2))


# ---- validation --------------------------------------------------------------

X = np.zeros(4)


@pytest.mark.parametrize("args, error, message", [
    ((Duplicated(X, np.zeros(5)), Duplicated(X, X)), ValueError, "shape"),
    ((Duplicated(X, np.zeros(4, np.float32)), 1), ValueError, "dtype"),
    ((Duplicated(X, np.zeros(8)[::2]), 1), ValueError, "strides"),
    ((Duplicated(X, np.zeros(4, np.int64)), 1), TypeError, "float"),
    ((Duplicated(np.zeros(4, np.int64), np.zeros(4, np.int64)), 1), TypeError, "float"),
    ((Duplicated(X, [0.0] * 4), 1), TypeError, "NumPy array"),
    ((Active(X), 1), TypeError, "Duplicated"),
    ((Active(3), 1), TypeError, "float"),
    ((Duplicated(2.0, 0.0), 1), TypeError, "Active"),
    ((Duplicated(X, np.zeros(4)), Duplicated(X, np.zeros(4))), ValueError, "same"),
    ((Duplicated(X, X), 1), ValueError, "shares memory"),
    ((object(), X), TypeError, "Numba cannot type"),
])
def test_validation_errors(args, error, message):
    with pytest.raises(error, match=message):
        enzyme_py.autodiff(square, *args)


def test_readonly_shadow_is_rejected():
    shadow = np.zeros(4)
    shadow.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        enzyme_py.autodiff(square, Duplicated(X, shadow), 1)


def test_same_array_twice_with_same_shadow_is_fine(fake_ir_passes):
    x, dx = np.arange(3.0), np.zeros(3)
    enzyme_py.compile_gradient(square, Duplicated(x, dx), Duplicated(x, dx))


def test_forward_mode_checks_its_annotations():
    """mode=Forward goes to enzyme_py.modes.forward (tests/test_forward.py), which validates first."""
    with pytest.raises(ValueError, match="directions"):
        enzyme_py.autodiff(square, enzyme_py.BatchDuplicated(X, (np.zeros(4),)),
                           enzyme_py.BatchDuplicated(np.ones(4), (np.zeros(4), np.zeros(4))),
                           mode=enzyme_py.Forward)


def test_non_kernel_is_rejected():
    with pytest.raises(TypeError, match="njit"):
        enzyme_py.autodiff(42, X)
