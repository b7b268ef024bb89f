"""numba.typed.Dict arguments holding float arrays (named parameter arrays): Duplicated(d,
shadow_d), the shadow a typed Dict of the values' shadows under the same keys
(docs/semantics.md, "Annotations"). Both modes against finite differences and the analytic
derivative; the refusals."""
import numpy as np
import pytest
from numba import njit, typed, types

from enzyme_py import Duplicated, Forward, autodiff, check_gradient


@njit
def model(params, x, out):
    w = params["w"]
    b = params["b"]
    for i in range(x.size):
        out[i] = np.tanh(w[0] * x[i] + w[1]) + b[i % b.size] ** 2


@njit
def scaled(params, out):
    out[0] = params["s"] * 2.0


def arrays(**named):
    d = typed.Dict.empty(types.unicode_type, types.float64[::1])
    for k, v in named.items():
        d[k] = v
    return d


def params(seed=0):
    rng = np.random.default_rng(seed)
    return arrays(w=rng.standard_normal(2), b=rng.standard_normal(3))


def zeros_like(d):
    return arrays(**{k: np.zeros_like(v) for k, v in d.items()})


X = np.linspace(-1.0, 1.0, 5)


def analytic(p, seed_out):
    w, b = p["w"], p["b"]
    t = np.tanh(w[0] * X + w[1])
    dpre = seed_out * (1 - t * t)
    db = np.zeros_like(b)
    np.add.at(db, np.arange(X.size) % b.size, seed_out * 2 * b[np.arange(X.size) % b.size])
    return np.array([dpre @ X, dpre.sum()]), db


def test_reverse_against_finite_differences_and_analytic():
    p = params()
    report = check_gradient(model, Duplicated(p, zeros_like(p)), X,
                            Duplicated(np.zeros(5), np.zeros(5)), rng=1)
    assert report.passed, report
    shadow, seed = zeros_like(p), np.linspace(0.5, 1.5, 5)
    autodiff(model, Duplicated(p, shadow), X, Duplicated(np.zeros(5), seed.copy()))
    dw, db = analytic(p, seed)
    np.testing.assert_allclose(shadow["w"], dw, rtol=1e-13)
    np.testing.assert_allclose(shadow["b"], db, rtol=1e-13)


def test_forward_mode_tangents():
    p, tangents = params(2), params(3)
    dout = np.zeros(5)
    autodiff(model, Duplicated(p, tangents), X, Duplicated(np.zeros(5), dout), mode=Forward)
    for k in range(5):     # forward mode's J t against reverse mode's rows of J
        seed = np.zeros(5)
        seed[k] = 1.0
        dw, db = analytic(p, seed)
        assert dout[k] == pytest.approx(dw @ tangents["w"] + db @ tangents["b"], rel=1e-12)


@pytest.mark.parametrize("make, error, words", [
    (lambda p: arrays(w=np.zeros(2)), ValueError, "keys differ"),
    (lambda p: {"w": np.zeros(2), "b": np.zeros(3)}, TypeError, "must be a typed Dict"),
    (lambda p: arrays(w=np.zeros(2), b=np.zeros(4)), ValueError, "shape"),
    (lambda p: arrays(w=p["w"], b=np.zeros(3)), ValueError, "shares memory"),
])
def test_bad_shadow_dicts_are_refused(make, error, words):
    p = params()
    with pytest.raises(error, match=words):
        autodiff(model, Duplicated(p, make(p)), X, Duplicated(np.zeros(5), np.ones(5)))


def test_a_dict_of_floats_is_refused():
    d = typed.Dict.empty(types.unicode_type, types.float64)
    d["s"] = 1.5
    shadow = typed.Dict.empty(types.unicode_type, types.float64)
    shadow["s"] = 0.0
    with pytest.raises(TypeError, match="typed Dicts of float arrays"):
        autodiff(scaled, Duplicated(d, shadow), Duplicated(np.zeros(1), np.ones(1)))
