"""Implicit differentiation of scalar solvers (enzyme_py.implicit, docs/custom-rules.md): the
solution's derivative by the implicit function theorem, none of the iterations taped."""
import numba
import numpy as np
import pytest

import enzyme_py
from enzyme_py import Active, Duplicated, Forward, autodiff, check_gradient, explain


@numba.njit
def kepler(E, M, e, iters):
    return E - e * np.sin(E) - M


@enzyme_py.implicit(kepler)
@numba.njit
def eccentric_anomaly(M, e, iters):          # Newton's method on Kepler's equation
    E = M if e < 0.8 else np.pi
    for _ in range(iters):
        E -= (E - e * np.sin(E) - M) / (1.0 - e * np.cos(E))
    return E


@numba.njit
def orbit(M, e, iters, E):
    for i in range(M.shape[0]):
        E[i] = eccentric_anomaly(M[i], e, iters)


@numba.njit
def orbit_plain(M, e, iters, E):              # the same Newton loop, differentiated as written
    for i in range(M.shape[0]):
        x = M[i] if e < 0.8 else np.pi
        for _ in range(iters):
            x -= (x - e * np.sin(x) - M[i]) / (1.0 - e * np.cos(x))
        E[i] = x


M = np.linspace(0.1, 3.0, 6)
ECC = 0.3


def analytic(M, e):
    E = np.array([eccentric_anomaly(m, e, 60) for m in M])
    return E, 1.0 / (1.0 - e * np.cos(E)), np.sin(E) / (1.0 - e * np.cos(E))


def test_kepler_reverse_is_the_analytic_derivative():
    E, dEdM, dEde = analytic(M, ECC)
    dM, dE = np.zeros(6), np.ones(6)
    out = np.zeros(6)
    r = autodiff(orbit, Duplicated(M.copy(), dM), Active(ECC), 60, Duplicated(out, dE))
    np.testing.assert_allclose(out, E, rtol=0, atol=0)
    np.testing.assert_allclose(dM, dEdM, rtol=1e-12)
    np.testing.assert_allclose(r[1], dEde.sum(), rtol=1e-12)
    assert check_gradient(orbit, Duplicated(M.copy(), np.zeros(6)), Active(ECC), 60,
                          Duplicated(np.zeros(6), np.ones(6))).passed


def test_kepler_forward_mode():
    E, dEdM, dEde = analytic(M, ECC)
    tE = np.zeros(6)
    autodiff(orbit, Duplicated(M.copy(), np.ones(6)), ECC, 60, Duplicated(np.zeros(6), tE),
             mode=Forward)
    np.testing.assert_allclose(tE, dEdM, rtol=1e-12)


def test_no_tape_of_the_iterations():
    def tape(kernel, iters):
        return explain(kernel, Duplicated(M.copy(), np.zeros(6)), Active(ECC), iters,
                       Duplicated(np.zeros(6), np.ones(6))).tape_bytes
    assert tape(orbit, 5) == tape(orbit, 500)
    assert tape(orbit_plain, 500) > tape(orbit_plain, 5)      # as written, every step is taped


@numba.njit
def cosine_fixed_point_residual(x, p):
    return x - np.cos(p * x)


@enzyme_py.implicit(cosine_fixed_point_residual)
@numba.njit
def cosine_fixed_point(p):                  # x = cos(p x) by fixed-point iteration
    x = 0.5
    for _ in range(200):
        x = np.cos(p * x)
    return x


@numba.njit(parallel=True)
def fixed_points(p, out):
    for i in numba.prange(p.shape[0]):
        out[i] = cosine_fixed_point(p[i])


def test_fixed_point_in_a_prange_loop():
    p = np.linspace(0.2, 0.9, 16)
    dp = np.zeros(16)
    out = np.zeros(16)
    autodiff(fixed_points, Duplicated(p.copy(), dp), Duplicated(out, np.ones(16)))
    x = out
    np.testing.assert_allclose(x, np.cos(p * x), rtol=1e-14)
    s = np.sin(p * x)
    np.testing.assert_allclose(dp, -x * s / (1.0 + p * s), rtol=1e-12)


@numba.njit
def bad_residual(x):
    return x


@enzyme_py.implicit(bad_residual)
@numba.njit
def solve_bad(p):
    return p


@numba.njit
def calls_bad(p, out):
    out[0] = solve_bad(p[0])


def test_residual_with_the_wrong_signature_is_refused():
    with pytest.raises(TypeError, match="custom rule of `solve_bad.*residual"):
        autodiff(calls_bad, Duplicated(np.ones(1), np.zeros(1)),
                 Duplicated(np.zeros(1), np.ones(1)))
