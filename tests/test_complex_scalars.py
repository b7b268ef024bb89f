"""Active complex scalars and complex return values (docs/semantics.md, "Complex numbers"): the
derivative of an Active complex z is dL/dRe z + i dL/dIm z; a complex return v seeded by s adds
Re(conj(s) v) = s.re v.re + s.im v.im to L."""
import cmath

import numba
import numpy as np
import pytest

from enzyme_py import (Active, BatchDuplicated, Duplicated, Forward, ForwardWithPrimal,
                       ReverseWithPrimal, autodiff, check_gradient)


@numba.njit
def scaled_exp(z, x):        # holomorphic in z: v = x exp(z)
    return cmath.exp(z) * x


@numba.njit
def real_loss(z, a):         # a real return of a complex Active scalar and a complex array
    s = 0.0
    for i in range(a.size):
        w = z * a[i] + np.conj(z) * 0.5
        s += w.real * w.imag + abs(w)
    return s


def fd(f, z, h=1e-6):
    """dF/dRe z + i dF/dIm z by central differences."""
    return ((f(z + h) - f(z - h)) + 1j * (f(z + 1j * h) - f(z - 1j * h))) / (2 * h)


def test_reverse_real_return_against_finite_differences():
    z, a = 0.3 - 0.8j, np.array([1 + 2j, -0.5 + 1j, 2 - 1j])
    dz, da = autodiff(real_loss, Active(z), Duplicated(a.copy(), np.zeros(3, complex)))
    assert da is None and isinstance(dz, complex)
    assert abs(dz - fd(lambda t: real_loss(t, a), z)) < 1e-7
    assert check_gradient(real_loss, Active(z), Duplicated(a, np.zeros(3, complex))).passed


def test_complex_return_seed_weights_real_and_imaginary_parts():
    z, x, s = 0.3 + 0.4j, 1.5, 0.7 - 1.3j
    dz, dx = autodiff(scaled_exp, Active(z), Active(x), seed=s)
    # holomorphic: dL/dRe + i dL/dIm = s conj(f'(z)), f' = x exp(z); dL/dx = Re(conj(s) exp(z))
    np.testing.assert_allclose(dz, s * np.conj(x * cmath.exp(z)), rtol=1e-14)
    np.testing.assert_allclose(dx, (np.conj(s) * cmath.exp(z)).real, rtol=1e-14)
    # the real seed weights Re(out), the imaginary seed Im(out)
    assert abs(autodiff(scaled_exp, Active(z), Active(x), seed=1.0)[1]
               - cmath.exp(z).real) < 1e-14
    assert abs(autodiff(scaled_exp, Active(z), Active(x), seed=1j)[1]
               - cmath.exp(z).imag) < 1e-14
    report = check_gradient(scaled_exp, Active(z), Active(x), seed=s)
    assert report.passed, str(report)
    assert "z.imag" in str(report)
    (dz2, dx2), value = autodiff(scaled_exp, Active(z), Active(x), seed=s, mode=ReverseWithPrimal)
    assert value == scaled_exp(z, x) and (dz2, dx2) == (dz, dx)


def test_complex_return_needs_a_seed():
    with pytest.raises(TypeError, match="complex number s"):
        autodiff(scaled_exp, Active(0.1j), Active(1.0))
    with pytest.raises(TypeError, match="complex number"):
        autodiff(scaled_exp, Active(0.1j), Active(1.0), seed="1")
    assert autodiff(scaled_exp, Active(0.1j), Active(1.0), seed=None) == (0j, 0.0)


def test_forward_tangent_of_complex_active_and_return():
    z, x = 0.3 + 0.4j, 1.5
    for dz in (1.0, 1j, 0.6 - 0.2j):
        t, v = autodiff(scaled_exp, Active(z, dz), Active(x, 0.0), mode=ForwardWithPrimal)
        np.testing.assert_allclose(t, x * cmath.exp(z) * dz, rtol=1e-14)
        assert v == scaled_exp(z, x)
    t = autodiff(real_loss, Active(z, 1j), np.array([1 + 2j, 3j]), mode=Forward)
    assert abs(t - (real_loss(z + 1e-6j, np.array([1 + 2j, 3j]))
                    - real_loss(z - 1e-6j, np.array([1 + 2j, 3j]))) / 2e-6) < 1e-7
    ts = autodiff(scaled_exp, Active(z, (1.0, 1j)), Active(x, (0.0, 0.0)), mode=Forward)
    np.testing.assert_allclose(ts, [x * cmath.exp(z), 1j * x * cmath.exp(z)], rtol=1e-14)


@numba.njit
def pair(a, z):              # a tuple return holding a complex array and a complex scalar
    return a * z, (a * a).sum()


def test_complex_array_and_tuple_returns():
    a, z = np.array([1 + 1j, 2 - 1j]), 0.5 + 2j
    s0, s1 = np.array([1.0 + 0.5j, -1j]), 2.0 - 1j
    da = np.zeros(2, complex)
    _, dz = autodiff(pair, Duplicated(a.copy(), da), Active(z), seed=(s0, s1))
    np.testing.assert_allclose(da, s0 * np.conj(z) + s1 * np.conj(2 * a), rtol=1e-14)
    np.testing.assert_allclose(dz, np.sum(s0 * np.conj(a)), rtol=1e-14)
    assert check_gradient(pair, Duplicated(a, np.zeros(2, complex)), Active(z),
                          seed=(s0, s1)).passed
    assert check_gradient(pair, Duplicated(a, np.zeros(2, complex)), Active(z), rng=3).passed
    ta = np.array([1j, 0.0])
    (t0, t1) = autodiff(pair, Duplicated(a.copy(), ta), Active(z, 0.0), mode=Forward)
    np.testing.assert_allclose(t0, ta * z, rtol=1e-14)
    np.testing.assert_allclose(t1, np.sum(2 * a * ta), rtol=1e-14)


def test_batched_reverse_gives_one_complex_derivative_per_lane():
    a = np.array([1 + 2j, -0.5 + 1j])
    seeds = (np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    out = np.zeros(2)

    @numba.njit
    def parts(z, a, out):
        for i in range(a.size):
            out[i] = (z * z * a[i]).real

    dz, _, _ = autodiff(parts, Active(0.3 - 0.8j), a,
                        BatchDuplicated(out, tuple(s.copy() for s in seeds)))
    for j, lane in enumerate(dz):
        expect = fd(lambda t: (t * t * a[j]).real, 0.3 - 0.8j)
        assert abs(lane - expect) < 1e-7


def test_complex64_active():
    z = np.complex64(0.3 + 0.4j)
    dz, dx = autodiff(scaled_exp, Active(z), Active(np.float32(1.5)), seed=1.0)
    np.testing.assert_allclose(dz, np.conj(1.5 * cmath.exp(complex(z))), rtol=1e-6)


def test_complex_inside_an_active_tuple():
    @numba.njit
    def f(p):
        z, x = p
        return (cmath.exp(z) * x).imag

    (dz, dx), = autodiff(f, Active((0.3 + 0.4j, 1.5)))
    np.testing.assert_allclose(dz, 1j * np.conj(1.5 * cmath.exp(0.3 + 0.4j)), rtol=1e-14)
    np.testing.assert_allclose(dx, cmath.exp(0.3 + 0.4j).imag, rtol=1e-14)


def test_compile_gradient_refuses_a_complex_active_scalar():
    from enzyme_py import compile_gradient
    with pytest.raises(TypeError, match="two Active floats"):
        compile_gradient(real_loss, Active(0.1j), np.ones(2, complex))
