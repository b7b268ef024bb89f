"""Newton's method with conjugate gradients, Hessian-vector products from enzyme_py.

Minimizes the extended Rosenbrock function in n = 200 dimensions with a truncated Newton method:
each step solves H p = -g approximately by conjugate gradients, where every product H v comes
from `enzyme_py.hessian_vector_product` (forward mode over the reverse-mode gradient; the
Hessian is never formed), followed by a backtracking line search. The gradient comes from
`enzyme_py.value_and_grad`.

    python examples/newton_cg.py [--n 200]

Prints one line per Newton step (f, |g|, CG iterations, step length), then the same problem
solved by scipy's Newton-CG given the same gradient and `hessp`.
"""
import argparse
import time

import numpy as np
from numba import njit

import enzyme_py


@njit
def rosenbrock(x):
    """The extended Rosenbrock function: n/2 independent 2-D Rosenbrock valleys."""
    s = 0.0
    for i in range(0, x.shape[0] - 1, 2):
        a = x[i + 1] - x[i] * x[i]
        b = 1.0 - x[i]
        s += 100.0 * a * a + b * b
    return s


def conjugate_gradient(hvp, g, tol, maxiter):
    """Approximately solve H p = -g (Steihaug: stop on negative curvature). Returns (p, iterations)."""
    p = np.zeros_like(g)
    r = -g.copy()
    d = r.copy()
    rr = r @ r
    for k in range(1, maxiter + 1):
        hd = hvp(d)
        curv = d @ hd
        if curv <= 0.0:
            return (p if k > 1 else -g), k
        alpha = rr / curv
        p += alpha * d
        r -= alpha * hd
        rr_new = r @ r
        if np.sqrt(rr_new) <= tol:
            return p, k
        d = r + (rr_new / rr) * d
        rr = rr_new
    return p, maxiter


def newton_cg(f, x0, gtol=1e-10, maxiter=100, verbose=True):
    value_and_grad = enzyme_py.value_and_grad(f)
    x = x0.copy()
    history = []
    if verbose:
        print(f"{'step':>4} {'f':>14} {'|g|':>11} {'CG its':>6} {'step len':>9}")
    for it in range(maxiter + 1):
        fx, g = value_and_grad(x)
        gnorm = float(np.linalg.norm(g))
        history.append((it, fx, gnorm))
        if gnorm <= gtol:
            if verbose:
                print(f"{it:4d} {fx:14.6e} {gnorm:11.3e} {'':>6} {'':>9}")
            break
        tol = min(0.5, np.sqrt(gnorm)) * gnorm              # forcing term: superlinear convergence
        p, cg_its = conjugate_gradient(lambda v: enzyme_py.hessian_vector_product(f, x, v), g, tol,
                                       10 * x.size)
        t = 1.0
        while f(x + t * p) > fx + 1e-4 * t * (g @ p) and t > 1e-12:
            t *= 0.5
        if verbose:
            print(f"{it:4d} {fx:14.6e} {gnorm:11.3e} {cg_its:6d} {t:9.2e}")
        x = x + t * p
    return x, history


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    args = ap.parse_args(argv)
    x0 = np.full(args.n, -1.2)
    x0[1::2] = 1.0
    t0 = time.perf_counter()
    x, history = newton_cg(rosenbrock, x0)
    elapsed = time.perf_counter() - t0
    print(f"\nNewton-CG: {len(history) - 1} steps, f = {rosenbrock(x):.3e}, "
          f"max |x - 1| = {np.max(np.abs(x - 1.0)):.2e} ({elapsed:.2f} s, compiles included)")

    from scipy.optimize import minimize
    value_and_grad = enzyme_py.value_and_grad(rosenbrock)
    t0 = time.perf_counter()
    res = minimize(value_and_grad, x0, jac=True, method="Newton-CG",
                   hessp=lambda x, v: enzyme_py.hessian_vector_product(rosenbrock, x, v),
                   options={"xtol": 1e-12})
    print(f"scipy Newton-CG with enzyme_py hessp: {res.message} {res.nit} iterations, "
          f"f = {res.fun:.3e}, max |x - 1| = {np.max(np.abs(res.x - 1.0)):.2e} "
          f"({time.perf_counter() - t0:.2f} s)")
    return x, history, res


if __name__ == "__main__":
    main()
