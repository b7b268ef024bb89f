"""Issue 14's "Done when" kernels, written the way scientific packages write Numba code (our own
code, in their style), each checked with `check_gradient` unchanged: no wrapper loss, the
kernel called as its package would call it.

- a UMAP-style SGD epoch over float32 embeddings, the same array passed as head and tail;
- a GR4J-style rainfall-runoff model returning its simulated flow, with default states;
- a GARCH(p, o, q) variance recursion in the style of `arch`, returning its variance array;
- an orbital Newton (Kepler) solver with a tolerance and an iteration limit as defaults, and
  positions returned as a tuple of arrays.
"""
import math

import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, Duplicated, autodiff, check_gradient


# ---- UMAP-style layout optimisation ---------------------------------------------------------

@njit(fastmath=False)
def clip(val):
    if val > 4.0:
        return 4.0
    elif val < -4.0:
        return -4.0
    return val


@njit
def rdist(x, y):
    result = 0.0
    dim = x.shape[0]
    for i in range(dim):
        diff = x[i] - y[i]
        result += diff * diff
    return result


@njit
def tau_rand_int(state):
    state[0] = (((state[0] & 4294967294) << 12) & 0xFFFFFFFF) ^ (
        (((state[0] << 13) & 0xFFFFFFFF) ^ state[0]) >> 19)
    state[1] = (((state[1] & 4294967288) << 4) & 0xFFFFFFFF) ^ (
        (((state[1] << 2) & 0xFFFFFFFF) ^ state[1]) >> 25)
    state[2] = (((state[2] & 4294967280) << 17) & 0xFFFFFFFF) ^ (
        (((state[2] << 3) & 0xFFFFFFFF) ^ state[2]) >> 11)
    return state[0] ^ state[1] ^ state[2]


@njit
def optimize_layout_epoch(head_embedding, tail_embedding, head, tail, n_vertices,
                          epochs_per_sample, a, b, rng_state, gamma=1.0, alpha=0.05,
                          negative_sample_rate=2, move_other=True):
    dim = head_embedding.shape[1]
    for i in range(epochs_per_sample.shape[0]):
        j = head[i]
        k = tail[i]
        current = head_embedding[j]
        other = tail_embedding[k]
        dist_squared = rdist(current, other)
        if dist_squared > 0.0:
            grad_coeff = -2.0 * a * b * pow(dist_squared, b - 1.0)
            grad_coeff /= a * pow(dist_squared, b) + 1.0
        else:
            grad_coeff = 0.0
        for d in range(dim):
            grad_d = clip(grad_coeff * (current[d] - other[d]))
            current[d] += grad_d * alpha
            if move_other:
                other[d] += -grad_d * alpha
        for p in range(negative_sample_rate):
            k = tau_rand_int(rng_state) % n_vertices
            other = tail_embedding[k]
            dist_squared = rdist(current, other)
            if dist_squared > 0.0:
                grad_coeff = 2.0 * gamma * b
                grad_coeff /= (0.001 + dist_squared) * (a * pow(dist_squared, b) + 1)
            elif j == k:
                continue
            else:
                grad_coeff = 0.0
            for d in range(dim):
                if grad_coeff > 0.0:
                    grad_d = clip(grad_coeff * (current[d] - other[d]))
                else:
                    grad_d = 0.0
                current[d] += grad_d * alpha


def test_umap_epoch_same_array_as_head_and_tail():
    rng = np.random.default_rng(0)
    n, dim = 12, 2
    embedding = (3.0 * rng.standard_normal((n, dim))).astype(np.float32)
    head = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], dtype=np.int32)
    tail = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], dtype=np.int32)
    epochs_per_sample = np.ones(head.shape[0], dtype=np.float64)
    rng_state = np.array([11, 37, 101], dtype=np.int64)
    d_embedding = np.zeros_like(embedding)
    report = check_gradient(optimize_layout_epoch,
                            Duplicated(embedding, d_embedding), Duplicated(embedding, d_embedding),
                            head, tail, n, epochs_per_sample, 1.577, 0.895, rng_state, rng=1)
    assert report.passed, str(report)
    assert report[0].rtol == pytest.approx(1e-3)        # float32 precision
    np.testing.assert_array_equal(report[0].ad, report[1].ad)


# ---- GR4J-style rainfall-runoff model -------------------------------------------------------

@njit
def s_curve1(t, x4):
    if t <= 0.0:
        return 0.0
    elif t < x4:
        return (t / x4) ** 2.5
    return 1.0


@njit
def s_curve2(t, x4):
    if t <= 0.0:
        return 0.0
    elif t < x4:
        return 0.5 * (t / x4) ** 2.5
    elif t < 2.0 * x4:
        return 1.0 - 0.5 * (2.0 - t / x4) ** 2.5
    return 1.0


@njit
def gr4j(precip, potential_evap, x1, x2, x3, x4, s_init=0.6, r_init=0.7):
    n = precip.shape[0]
    nuh1 = int(math.ceil(x4))
    nuh2 = int(math.ceil(2.0 * x4))
    uh1 = np.zeros(nuh1)
    uh2 = np.zeros(nuh2)
    for t in range(nuh1):
        uh1[t] = s_curve1(t + 1.0, x4) - s_curve1(t * 1.0, x4)
    for t in range(nuh2):
        uh2[t] = s_curve2(t + 1.0, x4) - s_curve2(t * 1.0, x4)
    q9_store = np.zeros(nuh1)   # 90 % of the effective rainfall is routed by UH1
    q1_store = np.zeros(nuh2)   # 10 % by UH2
    s = s_init * x1
    r = r_init * x3
    flow = np.empty(n)
    for t in range(n):
        p, e = precip[t], potential_evap[t]
        if p >= e:
            pn = p - e
            ws = math.tanh(pn / x1)
            ps = x1 * (1.0 - (s / x1) ** 2) * ws / (1.0 + s / x1 * ws)
            s += ps
            pr = pn - ps
        else:
            en = e - p
            ws = math.tanh(en / x1)
            es = s * (2.0 - s / x1) * ws / (1.0 + (1.0 - s / x1) * ws)
            s -= es
            pr = 0.0
        perc = s * (1.0 - (1.0 + (4.0 / 9.0 * s / x1) ** 4) ** -0.25)
        s -= perc
        pr += perc
        for i in range(nuh1 - 1):
            q9_store[i] = q9_store[i + 1] + uh1[i] * pr
        q9_store[nuh1 - 1] = uh1[nuh1 - 1] * pr
        for i in range(nuh2 - 1):
            q1_store[i] = q1_store[i + 1] + uh2[i] * pr
        q1_store[nuh2 - 1] = uh2[nuh2 - 1] * pr
        q9 = 0.9 * q9_store[0]
        q1 = 0.1 * q1_store[0]
        exchange = x2 * (r / x3) ** 3.5
        r = max(0.0, r + q9 + exchange)
        qr = r * (1.0 - (1.0 + (r / x3) ** 4) ** -0.25)
        r -= qr
        qd = max(0.0, q1 + exchange)
        flow[t] = qr + qd
    return flow


def test_gr4j_flow_with_default_states():
    rng = np.random.default_rng(4)
    days = 60
    precip = rng.gamma(0.6, 6.0, days) * (rng.random(days) < 0.5)
    evap = 2.0 + np.sin(np.arange(days) * 2 * np.pi / 365.0)
    report = check_gradient(gr4j, precip, evap, Active(320.0), Active(0.8), Active(90.0),
                            Active(1.7), rng=2)
    assert report.passed, str(report)
    # the states' defaults can be differentiated too, by keyword
    report = check_gradient(gr4j, precip, evap, Active(320.0), Active(0.8), Active(90.0),
                            Active(1.7), r_init=Active(0.55), rng=2)
    assert report.passed, str(report)


# ---- GARCH variance recursion (the style of arch's recursions) ------------------------------

@njit
def garch_recursion(parameters, fresids, sresids, sigma2, p, o, q, nobs, backcast, var_bounds):
    for t in range(nobs):
        loc = 0
        sigma2[t] = parameters[loc]
        loc += 1
        for j in range(p):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * backcast
            else:
                sigma2[t] += parameters[loc] * fresids[t - 1 - j]
            loc += 1
        for j in range(o):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * 0.5 * backcast
            else:
                sigma2[t] += parameters[loc] * fresids[t - 1 - j] * (sresids[t - 1 - j] < 0)
            loc += 1
        for j in range(q):
            if (t - 1 - j) < 0:
                sigma2[t] += parameters[loc] * backcast
            else:
                sigma2[t] += parameters[loc] * sigma2[t - 1 - j]
            loc += 1
        if sigma2[t] < var_bounds[t, 0]:
            sigma2[t] = var_bounds[t, 0]
        elif sigma2[t] > var_bounds[t, 1]:
            sigma2[t] = var_bounds[t, 1]
    return sigma2


def test_garch_returns_its_variance_array():
    rng = np.random.default_rng(5)
    nobs = 80
    resids = rng.standard_normal(nobs)
    fresids, sresids = resids ** 2, np.sign(resids)
    parameters = np.array([0.05, 0.08, 0.05, 0.85])
    bounds = np.column_stack([np.full(nobs, 1e-6), np.full(nobs, 1e6)])
    sigma2 = np.zeros(nobs)
    report = check_gradient(garch_recursion, Duplicated(parameters, np.zeros(4)), fresids, sresids,
                            Duplicated(sigma2, np.zeros(nobs)), 1, 1, 1, nobs, Active(1.1), bounds,
                            rng=3)
    assert report.passed, str(report)
    # the log-likelihood's seed on the returned variance: -0.5 * (1/s - r^2/s^2)
    s = garch_recursion(parameters, fresids, sresids, np.zeros(nobs), 1, 1, 1, nobs, 1.1, bounds)
    seed = -0.5 * (1.0 / s - fresids / s ** 2)
    d_params = np.zeros(4)
    autodiff(garch_recursion, Duplicated(parameters, d_params), fresids, sresids,
             Duplicated(np.zeros(nobs), np.zeros(nobs)), 1, 1, 1, nobs, 1.1, bounds, seed=seed)

    def loglik(prm):
        v = garch_recursion(prm, fresids, sresids, np.zeros(nobs), 1, 1, 1, nobs, 1.1, bounds)
        return -0.5 * np.sum(np.log(v) + fresids / v)
    for k in range(4):
        e = np.zeros(4)
        e[k] = 1e-6
        assert d_params[k] == pytest.approx((loglik(parameters + e) - loglik(parameters - e))
                                            / 2e-6, rel=1e-6)


# ---- Kepler's equation by Newton's method ---------------------------------------------------

@njit
def eccentric_anomaly(mean_anomaly, ecc, tol=1e-12, max_iter=64):
    E = mean_anomaly if ecc < 0.8 else math.pi
    for _ in range(max_iter):
        f = E - ecc * math.sin(E) - mean_anomaly
        fp = 1.0 - ecc * math.cos(E)
        delta = f / fp
        E -= delta
        if abs(delta) < tol:
            break
    return E


@njit
def orbit_positions(times, semi_major, ecc, period, t_peri=0.0, tol=1e-12, max_iter=64):
    n = times.shape[0]
    x = np.empty(n)
    y = np.empty(n)
    mean_motion = 2.0 * math.pi / period
    for i in range(n):
        M = mean_motion * (times[i] - t_peri)
        E = eccentric_anomaly(M, ecc, tol, max_iter)
        x[i] = semi_major * (math.cos(E) - ecc)
        y[i] = semi_major * math.sqrt(1.0 - ecc * ecc) * math.sin(E)
    return x, y


def test_kepler_solver_with_defaults():
    report = check_gradient(eccentric_anomaly, Active(1.3), Active(0.45))
    assert report.passed, str(report)
    E = eccentric_anomaly(1.3, 0.45)
    assert report[1].ad == pytest.approx(math.sin(E) / (1 - 0.45 * math.cos(E)), rel=1e-10)


def test_orbit_positions_tuple_return():
    times = np.linspace(0.0, 3.0, 25)
    report = check_gradient(orbit_positions, times, Active(1.5), Active(0.3), Active(2.2), rng=9)
    assert report.passed, str(report)
    report = check_gradient(orbit_positions, Duplicated(times, np.zeros(25)), 1.5, 0.3, 2.2,
                            t_peri=Active(0.4), seed=(np.ones(25), None))
    assert report.passed, str(report)
