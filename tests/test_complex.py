"""Complex arrays in both modes (docs/semantics.md, "Complex numbers"): the shadow of a complex
value holds dL/dRe + i dL/dIm for a real L, and a tangent is a complex direction."""
import cmath

import numba
import numpy as np

from enzyme_py import Duplicated, Forward, autodiff, check_gradient, gradient

RNG = np.random.default_rng(7)


def crandn(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


@numba.njit
def elementary(z, w):        # arithmetic, conj, abs, angle, real/imag parts
    s = 0.0
    for i in range(z.size):
        a, b = z[i], w[i]
        v = a * b + a / b + np.conj(a) * b * 0.5 + abs(a) * b + np.angle(b) * a
        s += 0.7 * v.real + 1.3 * v.imag + a.real * b.imag
    return s


@numba.njit
def transcendental(z, w):    # exp, log, sqrt, trig, tanh, arctan, powers (numba_cpow)
    s = 0.0
    for i in range(z.size):
        a, b = z[i], w[i]
        v = (np.exp(a) * b + np.log(a) + np.sqrt(a) * b + np.sin(a) + cmath.cos(b)
             + np.tanh(a) + np.arctan(b) + a ** 2.5 + a ** b + cmath.exp(a * b))
        s += 0.7 * v.real + 1.3 * v.imag
    return s


def fd_direction(f, z, w, i, unit, h=1e-6):
    zp, zm = z.copy(), z.copy()
    zp[i] += h * unit
    zm[i] -= h * unit
    return (f(zp, w) - f(zm, w)) / (2 * h)


def test_reverse_against_finite_differences():
    z, w = crandn(3), crandn(3)
    for kernel in (elementary, transcendental):
        report = check_gradient(kernel, Duplicated(z, np.zeros(3, complex)),
                                Duplicated(w, np.zeros(3, complex)))
        assert report.passed, str(report)


def test_shadow_is_d_real_plus_i_d_imag():
    z, w = crandn(3), crandn(3)
    dz = np.zeros(3, complex)
    autodiff(transcendental, Duplicated(z.copy(), dz), Duplicated(w.copy(), np.zeros(3, complex)))
    for i in range(3):
        expected = (fd_direction(transcendental, z, w, i, 1.0)
                    + 1j * fd_direction(transcendental, z, w, i, 1j))
        assert abs(dz[i] - expected) < 1e-6 * max(1.0, abs(expected))


def test_forward_tangent_along_real_and_imaginary_axes():
    z, w = crandn(3), crandn(3)
    for kernel in (elementary, transcendental):
        for unit in (1.0, 1j):
            tz = np.zeros(3, complex)
            tz[1] = unit
            t = autodiff(kernel, Duplicated(z.copy(), tz), Duplicated(w.copy(), np.zeros(3, complex)),
                         mode=Forward)
            expected = fd_direction(kernel, z, w, 1, unit)
            assert abs(t - expected) < 1e-6 * max(1.0, abs(expected))


@numba.njit
def fir(x, h, y):            # a complex FIR filter: y[n] = sum_k h[k] x[n - k]
    for n in range(y.size):
        acc = 0j
        for k in range(h.size):
            if n >= k:
                acc += h[k] * x[n - k]
        y[n] = acc


def test_fir_filter_analytic_and_finite_differences():
    x, h, s = crandn(16), crandn(4), crandn(16)
    dx, dh, ds = np.zeros(16, complex), np.zeros(4, complex), s.copy()
    y = np.zeros(16, complex)
    autodiff(fir, Duplicated(x.copy(), dx), Duplicated(h.copy(), dh), Duplicated(y, ds))
    # L = sum Re(conj(s) y): the shadow of x[m] is sum_k s[m + k] conj(h[k])
    expect_x = np.array([sum(s[m + k] * np.conj(h[k]) for k in range(4) if m + k < 16)
                         for m in range(16)])
    expect_h = np.array([sum(s[n] * np.conj(x[n - k]) for n in range(k, 16)) for k in range(4)])
    np.testing.assert_allclose(dx, expect_x, rtol=1e-12)
    np.testing.assert_allclose(dh, expect_h, rtol=1e-12)
    np.testing.assert_array_equal(ds, 0)          # y was overwritten: its shadow is consumed
    np.testing.assert_allclose(y, np.convolve(x, h)[:16], rtol=1e-12)
    ty = np.zeros(16, complex)
    tx = crandn(16)
    autodiff(fir, Duplicated(x.copy(), tx), Duplicated(h.copy(), np.zeros(4, complex)),
             Duplicated(np.zeros(16, complex), ty), mode=Forward)
    np.testing.assert_allclose(ty, np.convolve(tx, h)[:16], rtol=1e-12)
    assert check_gradient(fir, Duplicated(x, np.zeros(16, complex)),
                          Duplicated(h, np.zeros(4, complex)),
                          Duplicated(np.zeros(16, complex), np.zeros(16, complex)), rng=1).passed


@numba.njit
def crank_nicolson(psi, v, dt, dx, steps, weight):
    """Schrodinger's equation i psi_t = -psi_xx / 2 + v psi, Crank-Nicolson steps (a complex
    tridiagonal solve by the Thomas algorithm); returns sum weight * |psi|^2."""
    n = psi.size
    r = 1j * dt / (4.0 * dx * dx)
    diag = np.empty(n, np.complex128)
    rhs = np.empty(n, np.complex128)
    cp = np.empty(n, np.complex128)
    for _ in range(steps):
        for i in range(n):
            d = 1j * dt * v[i] / 2.0
            left = psi[i - 1] if i > 0 else 0j
            right = psi[i + 1] if i < n - 1 else 0j
            rhs[i] = (1.0 - 2.0 * r - d) * psi[i] + r * (left + right)
            diag[i] = 1.0 + 2.0 * r + d
        cp[0] = -r / diag[0]
        rhs[0] = rhs[0] / diag[0]
        for i in range(1, n):
            m = diag[i] + r * cp[i - 1]
            cp[i] = -r / m
            rhs[i] = (rhs[i] + r * rhs[i - 1]) / m
        psi[n - 1] = rhs[n - 1]
        for i in range(n - 2, -1, -1):
            psi[i] = rhs[i] - cp[i] * psi[i + 1]
    s = 0.0
    for i in range(n):
        s += weight[i] * (psi[i].real ** 2 + psi[i].imag ** 2)
    return s


def wave_packet(n=32):
    x = np.linspace(-5, 5, n)
    return np.exp(-x ** 2 + 2j * x).astype(np.complex128), 0.5 * x ** 2


def test_crank_nicolson_conserves_norm_so_its_gradient_is_two_psi():
    psi, v = wave_packet()
    dpsi, dv = np.zeros_like(psi), np.zeros_like(v)
    autodiff(crank_nicolson, Duplicated(psi.copy(), dpsi), Duplicated(v, dv), 0.01, 10 / 31, 20,
             np.ones(psi.size))
    # the step is unitary: sum |psi_final|^2 = sum |psi_0|^2, so dL/dpsi_0 = 2 psi_0, dL/dv = 0
    np.testing.assert_allclose(dpsi, 2 * psi, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dv, 0, atol=1e-10)


def test_crank_nicolson_weighted_region_against_finite_differences():
    psi, v = wave_packet(12)
    weight = (np.arange(12) > 6).astype(np.float64)
    report = check_gradient(crank_nicolson, Duplicated(psi, np.zeros_like(psi)),
                            Duplicated(v, np.zeros_like(v)), 0.01, 10 / 11, 5, weight)
    assert report.passed, str(report)


def test_gradient_helper_takes_complex_arrays():
    @numba.njit
    def power(z):
        s = 0.0
        for i in range(z.size):
            s += abs(z[i]) ** 2
        return s
    z = crandn(4)
    np.testing.assert_allclose(gradient(power, z), 2 * z, rtol=1e-13)


def test_complex_bad_input_and_empty():
    """Byte-swapped complex arrays and a real shadow for a complex array are clear errors that
    leave the caller's data as it was; an empty complex array differentiates to nothing."""
    import pytest

    @numba.njit
    def power(z):
        s = 0.0
        for i in range(z.size):
            s += abs(z[i]) ** 2
        return s
    z = crandn(3)
    swapped = z.astype(">c16")
    with pytest.raises(TypeError, match=">c16"):
        autodiff(power, Duplicated(swapped, np.zeros(3, ">c16")))
    dz = np.zeros(3)
    with pytest.raises(ValueError, match="dtype"):
        autodiff(power, Duplicated(z, dz))
    np.testing.assert_array_equal(dz, 0)
    e = np.zeros(0, complex)
    de = np.zeros(0, complex)
    autodiff(power, Duplicated(e, de))
    assert de.size == 0
