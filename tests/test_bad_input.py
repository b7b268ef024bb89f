"""Bad input to `autodiff` raises TypeError / ValueError with a message saying what to do, before
anything is written; a construct with no derivative rule raises `enzyme_py.UnsupportedError`."""
import numpy as np
import pytest
from numba import njit, types

import enzyme_py
from enzyme_py import Active, Const, Duplicated, DuplicatedNoNeed, autodiff


@njit
def square_into(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]


@njit
def scale(a, x):
    s = 0.0
    for i in range(x.shape[0]):
        s += a * x[i]
    return s


def _ok():
    return np.array([1.0, 2.0, 3.0]), np.zeros(3), np.zeros(3), np.ones(3)


def _assert_untouched(*pairs):
    for got, want in pairs:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shadow,what", [
    (np.zeros(4), "shape"),
    (np.zeros((3, 1)), "shape"),
    (np.zeros(3, dtype=np.float32), "dtype"),
    (np.zeros(6)[::2], "strides"),
], ids=["length", "ndim", "dtype", "strides"])
def test_shadow_unlike_its_primal(shadow, what):
    x, _, y, dy = _ok()
    with pytest.raises(ValueError, match=what) as info:
        autodiff(square_into, Duplicated(x, shadow), Duplicated(y, dy))
    assert "argument 0" in str(info.value)
    _assert_untouched((y, np.zeros(3)), (dy, np.ones(3)))


def test_strided_primal_with_contiguous_shadow():
    base = np.arange(6.0)
    x = base[::2]
    _, _, y, dy = _ok()
    with pytest.raises(ValueError, match="strides"):
        autodiff(square_into, Duplicated(x, np.zeros(3)), Duplicated(y, dy))


def test_fortran_primal_with_c_shadow():
    @njit
    def total(a):
        s = 0.0
        for i in range(a.shape[0]):
            for j in range(a.shape[1]):
                s += a[i, j]
        return s
    a = np.asfortranarray(np.ones((2, 3)))
    with pytest.raises(ValueError, match="strides"):
        autodiff(total, Duplicated(a, np.zeros((2, 3))))


def test_non_float_shadow():
    x = np.arange(3)
    with pytest.raises(TypeError, match="(?i)float") as info:
        autodiff(square_into, Duplicated(x, np.zeros(3, dtype=np.int64)), Duplicated(np.zeros(3), np.ones(3)))
    assert "argument 0" in str(info.value)


def test_int_shadow_for_float_array():
    x, _, y, dy = _ok()
    with pytest.raises((TypeError, ValueError), match="(?i)float|dtype"):
        autodiff(square_into, Duplicated(x, np.zeros(3, dtype=np.int64)), Duplicated(y, dy))


def test_shadow_not_an_array():
    x, _, y, dy = _ok()
    with pytest.raises(TypeError, match="shadow"):
        autodiff(square_into, Duplicated(x, [0.0, 0.0, 0.0]), Duplicated(y, dy))


def test_active_on_an_array():
    x, dx, _, _ = _ok()
    with pytest.raises(TypeError, match="Duplicated") as info:
        autodiff(scale, Active(np.array([1.5])), Duplicated(x, dx))
    assert "argument 0" in str(info.value)
    _assert_untouched((dx, np.zeros(3)))


def test_active_on_an_int():
    x, dx, _, _ = _ok()
    with pytest.raises(TypeError, match="(?i)float"):
        autodiff(scale, Active(2), Duplicated(x, dx))


@pytest.mark.parametrize("ann", [Duplicated, DuplicatedNoNeed])
def test_duplicated_on_a_scalar(ann):
    x, dx, _, _ = _ok()
    with pytest.raises(TypeError, match="Active") as info:
        autodiff(scale, ann(1.5, 0.0), Duplicated(x, dx))
    assert "argument 0" in str(info.value)


def test_read_only_shadow():
    x, dx, y, dy = _ok()
    dy.flags.writeable = False
    with pytest.raises(ValueError, match="(?i)read-only|writeable") as info:
        autodiff(square_into, Duplicated(x, dx), Duplicated(y, dy))
    assert "argument 1" in str(info.value)
    _assert_untouched((dx, np.zeros(3)), (y, np.zeros(3)))


def test_shadow_aliasing_its_primal():
    x, _, y, dy = _ok()
    with pytest.raises(ValueError, match="(?i)memory"):
        autodiff(square_into, Duplicated(x, x), Duplicated(y, dy))


@njit
def needs_an_array(x):
    return x.sum() + x.shape[0]


def test_kernel_numba_cannot_compile_for_these_types():
    with pytest.raises(TypeError) as info:
        autodiff(needs_an_array, Active(1.5))
    msg = str(info.value)
    assert "needs_an_array" in msg or "float64" in msg, msg


@njit
def bad_kernel(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] + "text"


def test_kernel_that_does_not_type():
    x, dx, y, dy = _ok()
    with pytest.raises(TypeError):
        autodiff(bad_kernel, Duplicated(x, dx), Duplicated(y, dy))
    _assert_untouched((dx, np.zeros(3)), (dy, np.ones(3)))


def test_not_a_function():
    with pytest.raises(TypeError, match="(?i)njit|function"):
        autodiff(42, Active(1.0))


# a libm function with no derivative rule (Bessel j0), called directly
libm_j0 = types.ExternalFunction("j0", types.float64(types.float64))


@njit
def bessel(x, y):
    for i in range(x.shape[0]):
        y[i] = libm_j0(x[i]) * 2.0


def test_no_derivative_rule_raises_unsupported():
    x, dx, y, dy = _ok()
    bessel(x, np.zeros(3))  # the plain kernel works
    with pytest.raises(enzyme_py.UnsupportedError, match="j0") as info:
        autodiff(bessel, Duplicated(x, dx), Duplicated(y, dy))
    loc = info.value.location
    assert loc is not None and "test_bad_input.py" in str(loc[0])
    _assert_untouched((dx, np.zeros(3)), (dy, np.ones(3)))


def test_inactive_call_without_rule_is_fine():
    """The same call on Const data needs no rule."""
    @njit
    def k(c, x, y):
        for i in range(x.shape[0]):
            y[i] = x[i] * libm_j0(c[i])
    c = np.array([0.5, 1.0, 1.5])
    x, dx, y, dy = _ok()
    autodiff(k, Const(c), Duplicated(x, dx), Duplicated(y, dy))
    j0 = np.array([0.938469807240813, 0.7651976865579666, 0.5118276717359181])
    np.testing.assert_allclose(dx, j0, rtol=1e-12)


def test_unsupported_error_is_exported():
    import ir_passes
    assert enzyme_py.UnsupportedError is ir_passes.UnsupportedError


@pytest.mark.parametrize("dtype", [np.float16, np.longdouble], ids=["float16", "longdouble"])
@pytest.mark.parametrize("mode", [enzyme_py.Reverse, enzyme_py.Forward], ids=["reverse", "forward"])
def test_float_dtypes_numba_cannot_compile(dtype, mode):
    x = np.ones(3, dtype)
    y, dy = np.zeros(3), np.ones(3)
    with pytest.raises(TypeError, match=f"{np.dtype(dtype)} array cannot be differentiated: "
                                        "Numba compiles float32, float64, complex64 and "
                                        "complex128 only"):
        autodiff(square_into, Duplicated(x, np.zeros_like(x)), Duplicated(y, dy), mode=mode)
    _assert_untouched((y, np.zeros(3)), (dy, np.ones(3)))
    with pytest.raises(TypeError, match=f"{np.dtype(dtype)} scalar cannot be differentiated"):
        autodiff(scale, Active(dtype(2.0)), Const(np.ones(3)))
