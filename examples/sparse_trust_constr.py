"""A discretised optimal-control problem by scipy.optimize.minimize(method="trust-constr"),
with the objective's Hessian and the constraints' Jacobian as sparse matrices from enzyme_py.

A pendulum (angle q, velocity w) is driven by a control u over N steps of length dt from rest
at q = 0 to rest at q = pi (swing-up). The unknowns z = (q_0..q_N, w_0..w_N, u_0..u_{N-1});
the constraints are the explicit Euler steps and the end conditions; the objective is
dt * sum u^2 plus a small smoothing term dt * sum (1 - cos(q)) * u^2 that makes its Hessian
couple q and u (non-diagonal, not constant).

- the objective's gradient: enzyme_py.gradient;
- its Hessian: enzyme_py.SparseHessian (pattern found once: 2 x 2 blocks of q_k and u_k,
  2 colours);
- the constraints' Jacobian: enzyme_py.SparseJacobian (pattern found once, kept across
  iterations);
- the constraints' Hessian (of sum_k v_k c_k(z), v the multipliers): enzyme_py.SparseHessian
  with v as a Const argument; v's values reach no decision of the kernel, so the pattern is
  found once although v changes every iteration.

    python examples/sparse_trust_constr.py [--steps 60]

IPOPT (cyipopt) takes the same callables (objective, gradient, constraints, sparse Jacobian
with its pattern, Hessian of the Lagrangian); cyipopt is not installed here (no wheel in the
package index this was written against), so no IPOPT example is run.
"""
import argparse
import time

import numpy as np
from numba import njit
from scipy.optimize import NonlinearConstraint, minimize

import enzyme_py


@njit
def effort(z, n, dt):
    q, u = z[:n + 1], z[2 * n + 2:]
    s = 0.0
    for k in range(n):
        s += dt * u[k] * u[k] + 0.1 * dt * (1.0 - np.cos(q[k])) * u[k] * u[k]
    return s


@njit
def dynamics(z, out, n, dt):
    q, w, u = z[:n + 1], z[n + 1:2 * n + 2], z[2 * n + 2:]
    for k in range(n):
        out[k] = q[k + 1] - q[k] - dt * w[k]
        out[n + k] = w[k + 1] - w[k] - dt * (u[k] - np.sin(q[k]))
    out[2 * n] = q[0]
    out[2 * n + 1] = w[0]
    out[2 * n + 2] = q[n] - np.pi
    out[2 * n + 3] = w[n]


@njit
def weighted(z, v, n, dt):
    """sum_k v_k c_k(z): the constraints' part of the Lagrangian."""
    out = np.empty(2 * n + 4)
    dynamics(z, out, n, dt)
    s = 0.0
    for k in range(out.size):
        s += v[k] * out[k]
    return s


def solve(steps=60, horizon=4.0, verbose=0):
    n, dt = steps, horizon / steps
    size = 3 * n + 2
    H = enzyme_py.SparseHessian(effort)
    J = enzyme_py.SparseJacobian(dynamics)
    Hc = enzyme_py.SparseHessian(weighted)
    out = np.zeros(2 * n + 4)

    def grad(z):
        return enzyme_py.gradient(effort, z.copy(), n, dt)

    def cons(z):
        dynamics(z, out, n, dt)
        return out.copy()

    constraint = NonlinearConstraint(cons, 0.0, 0.0, jac=lambda z: J(z, n, dt, out=out),
                                     hess=lambda z, v: Hc(z, v, n, dt))
    z0 = np.zeros(size)
    z0[:n + 1] = np.linspace(0.0, np.pi, n + 1)
    t = time.perf_counter()
    res = minimize(lambda z: effort(z, n, dt), z0, jac=grad, hess=lambda z: H(z, n, dt),
                   constraints=[constraint], method="trust-constr",
                   options=dict(maxiter=500, verbose=verbose, gtol=1e-8, xtol=1e-10))
    return res, H, J, Hc, time.perf_counter() - t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=60)
    a = ap.parse_args(argv)
    res, H, J, Hc, seconds = solve(a.steps)
    n = a.steps
    print(f"{res.message} after {res.nit} iterations, {seconds:.1f} s")
    print(f"effort {res.fun:.6f}, largest constraint violation {res.constr_violation:.1e}")
    print(f"objective Hessian: {H.pattern.nnz} nonzeros, {H.ncolours} colours, found "
          f"{H.detections} time(s); constraint Jacobian {J.pattern.shape}: {J.pattern.nnz} "
          f"nonzeros, {J.ncolours} colours, found {J.detections} time(s); constraint Hessian: "
          f"{Hc.pattern.nnz} nonzeros, {Hc.ncolours} colours, found {Hc.detections} time(s)")
    print(f"final angle {res.x[n]:.6f} (pi = {np.pi:.6f})")


if __name__ == "__main__":
    main()
