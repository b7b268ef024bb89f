"""Fit the parameters of an ODE model to data with scipy's L-BFGS-B and enzyme_py gradients.

The model is the Lotka-Volterra predator-prey system

    dx/dt = a x - b x y,      dy/dt = d x y - c y,

integrated by a classic RK4 scheme written in Numba that updates its state array in place (the
stage vectors k1..k4 are temporaries). The loss is the mean squared error against noisy
observations of both populations. `enzyme_py.value_and_grad` differentiates the whole integrator
in reverse mode; scipy gets the loss and its gradient from one call (`jac=True`).

    python examples/fit_ode.py [--out DIR]

It prints the optimization as a table (iteration, loss, parameters), the fitted parameters beside
the true ones, and, when matplotlib is installed, saves DIR/fit_ode.png: the loss curve and the
fitted trajectories over the data.
"""
import argparse
import os
import sys
import time

import numpy as np
from numba import njit
from scipy.optimize import minimize

import enzyme_py

TRUE = np.array([1.0, 0.4, 0.4, 0.1])     # a, b, c, d
START = np.array([0.7, 0.3, 0.6, 0.15])
Y0 = np.array([10.0, 5.0])
DT, STEPS, EVERY = 0.01, 1500, 25          # t in [0, 15], an observation every 0.25


@njit
def rhs(u, p, out):
    x, y = u[0], u[1]
    out[0] = p[0] * x - p[1] * x * y
    out[1] = p[3] * x * y - p[2] * y


@njit
def rk4_step(u, p, dt, k1, k2, k3, k4, tmp):
    """u <- u + dt/6 (k1 + 2 k2 + 2 k3 + k4), in place."""
    n = u.shape[0]
    rhs(u, p, k1)
    for i in range(n):
        tmp[i] = u[i] + 0.5 * dt * k1[i]
    rhs(tmp, p, k2)
    for i in range(n):
        tmp[i] = u[i] + 0.5 * dt * k2[i]
    rhs(tmp, p, k3)
    for i in range(n):
        tmp[i] = u[i] + dt * k3[i]
    rhs(tmp, p, k4)
    for i in range(n):
        u[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i])


@njit
def simulate(p, y0, dt, steps, every, out):
    """Write the state after every `every` steps into out (steps // every rows)."""
    u = y0.copy()
    n = u.shape[0]
    k1, k2, k3, k4, tmp = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    row = 0
    for s in range(1, steps + 1):
        rk4_step(u, p, dt, k1, k2, k3, k4, tmp)
        if s % every == 0:
            for i in range(n):
                out[row, i] = u[i]
            row += 1


@njit
def loss(p, y0, dt, steps, every, data):
    """Mean squared error of the RK4 trajectory against the observations."""
    u = y0.copy()
    n = u.shape[0]
    k1, k2, k3, k4, tmp = np.empty(n), np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    err = 0.0
    row = 0
    for s in range(1, steps + 1):
        rk4_step(u, p, dt, k1, k2, k3, k4, tmp)
        if s % every == 0:
            for i in range(n):
                r = u[i] - data[row, i]
                err += r * r
            row += 1
    return err / (row * n)


def make_data(noise=0.05, seed=0):
    obs = np.zeros((STEPS // EVERY, 2))
    simulate(TRUE, Y0, DT, STEPS, EVERY, obs)
    rng = np.random.default_rng(seed)
    return obs + noise * rng.standard_normal(obs.shape)


def fit(data, p0=START, verbose=True):
    """L-BFGS-B from p0 with enzyme_py gradients. Returns (scipy result, history)."""
    value_and_grad = enzyme_py.value_and_grad(loss)
    history = []

    def fun(p):
        v, g = value_and_grad(np.array(p), Y0, DT, STEPS, EVERY, data)
        return v, g

    def record(p):
        history.append((len(history), float(loss(np.array(p), Y0, DT, STEPS, EVERY, data)),
                        np.array(p)))

    history.append((0, float(loss(np.array(p0), Y0, DT, STEPS, EVERY, data)), np.array(p0)))
    res = minimize(fun, p0, jac=True, method="L-BFGS-B", bounds=[(1e-3, 5.0)] * 4,
                   callback=record, options={"maxiter": 200, "gtol": 1e-10, "ftol": 1e-15})
    return res, history


def print_tables(res, history, elapsed, out=sys.stdout):
    print(f"{'iter':>4} {'loss':>14} {'a':>9} {'b':>9} {'c':>9} {'d':>9}", file=out)
    for k, v, p in history:
        print(f"{k:4d} {v:14.6e} {p[0]:9.5f} {p[1]:9.5f} {p[2]:9.5f} {p[3]:9.5f}", file=out)
    print(f"\nL-BFGS-B: {res.message} ({res.nit} iterations, {res.nfev} loss+gradient calls, "
          f"{elapsed:.2f} s)", file=out)
    print(f"\n{'param':>6} {'true':>9} {'start':>9} {'fitted':>9} {'rel. err':>9}", file=out)
    for name, t, s0, f in zip("abcd", TRUE, START, res.x):
        print(f"{name:>6} {t:9.5f} {s0:9.5f} {f:9.5f} {abs(f - t) / t:9.2e}", file=out)


def plot(res, history, data, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: no plot; pip install matplotlib)")
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    ax1.semilogy([h[0] for h in history], [h[1] for h in history], "o-")
    ax1.set_xlabel("L-BFGS-B iteration")
    ax1.set_ylabel("mean squared error")
    ax1.set_title("loss")
    t = np.arange(1, data.shape[0] + 1) * DT * EVERY
    fitted = np.zeros_like(data)
    simulate(res.x, Y0, DT, STEPS, EVERY, fitted)
    for i, (name, c) in enumerate((("prey", "C0"), ("predator", "C1"))):
        ax2.plot(t, data[:, i], ".", color=c, label=f"{name} data")
        ax2.plot(t, fitted[:, i], "-", color=c, label=f"{name} fit")
    ax2.set_xlabel("t")
    ax2.set_title("Lotka-Volterra fit (RK4)")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"saved {path}")
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=".", help="directory for fit_ode.png")
    args = ap.parse_args(argv)
    data = make_data()
    t0 = time.perf_counter()
    res, history = fit(data)
    elapsed = time.perf_counter() - t0
    print_tables(res, history, elapsed)
    os.makedirs(args.out, exist_ok=True)
    plot(res, history, data, os.path.join(args.out, "fit_ode.png"))
    return res


if __name__ == "__main__":
    main()
