"""Gradients for an ensemble of parameter sets, on a dask.distributed cluster.

A logistic population model with seasonal harvesting is integrated by explicit Euler steps in a
Numba kernel that writes its trajectory into a buffer; the loss is the squared misfit against
observations. An ensemble of parameter sets (growth rate, capacity, harvest amplitude, phase) is
spread over the workers of a `LocalCluster`; each task returns the loss and its gradient for a
chunk of parameter sets.

The gradient is compiled once, in this process, into enzyme_py's disk cache (a folder that all
workers share). Each worker process then loads it from disk on its first call instead of building
it: the table shows each worker's first-call time beside this process's build time, and the
workers' cache hits and builds.

    pip install -e '.[dask]'
    python examples/dask_ensemble.py [--members 64] [--workers 2]
"""
import argparse
import os
import tempfile
import time

import numpy as np
from numba import njit

import enzyme_py
from enzyme_py import Const, Duplicated, autodiff

STEPS, DT = 400, 0.05


@njit
def simulate(theta, obs, traj):
    """Euler steps of dP/dt = r P (1 - P/K) - h (1 + sin(w t)) P; returns sum (P - obs)^2."""
    r, capacity, h, w = theta[0], theta[1], theta[2], theta[3]
    p = 0.2
    loss = 0.0
    for k in range(obs.shape[0]):
        t = k * DT
        p = p + DT * (r * p * (1.0 - p / capacity) - h * (1.0 + np.sin(w * t)) * p)
        traj[k] = p
        loss += (p - obs[k]) ** 2
    return loss


def gradients(thetas, obs, cache_dir):
    """Loss and gradient for each row of `thetas` (runs on a worker). The trajectory buffer
    holds differentiable values, so it is Duplicated (with a zero seed: the loss is the only
    output)."""
    enzyme_py.set_cache_dir(cache_dir)
    builds = enzyme_py.compile_count()
    hits = enzyme_py.disk_cache.stats["hits"]
    # The plain kernel first: it compiles `simulate` here and warms up Numba itself, so the
    # first gradient call below times the gradient's load from the disk cache alone.
    losses = [simulate(theta, obs, np.zeros(obs.shape[0])) for theta in thetas]
    grads, first = [], None
    for theta in thetas:
        dtheta = np.zeros_like(theta)
        t0 = time.perf_counter()
        autodiff(simulate, Duplicated(theta, dtheta), Const(obs),
                 Duplicated(np.zeros(obs.shape[0]), np.zeros(obs.shape[0])))
        first = time.perf_counter() - t0 if first is None else first
        grads.append(dtheta)
    return {"pid": os.getpid(), "first_call_s": first, "losses": losses, "grads": grads,
            "builds": enzyme_py.compile_count() - builds,
            "cache_hits": enzyme_py.disk_cache.stats["hits"] - hits}


def finite_difference(theta, obs, h=1e-6):
    g = np.zeros_like(theta)
    for i in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[i] += h
        down[i] -= h
        buf = np.zeros(obs.shape[0])
        g[i] = (simulate(up, obs, buf) - simulate(down, obs, buf)) / (2 * h)
    return g


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    from dask.distributed import Client, LocalCluster

    rng = np.random.default_rng(0)
    truth = np.array([0.9, 2.0, 0.15, 0.8])
    obs = np.zeros(STEPS)
    simulate(truth, np.zeros(STEPS), obs)
    obs += 0.01 * rng.standard_normal(STEPS)
    thetas = truth * (1.0 + 0.2 * rng.standard_normal((args.members, 4)))

    with tempfile.TemporaryDirectory() as cache_dir:
        enzyme_py.set_cache_dir(cache_dir)
        t0 = time.perf_counter()
        autodiff(simulate, Duplicated(thetas[0].copy(), np.zeros(4)), Const(obs),
                 Duplicated(np.zeros(STEPS), np.zeros(STEPS)))
        build_s = time.perf_counter() - t0
        print(f"built the gradient in this process: {build_s * 1e3:.0f} ms (stored in the disk cache)")

        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            chunks = np.array_split(thetas, 4 * args.workers)
            futures = client.map(gradients, chunks, obs=obs, cache_dir=cache_dir, pure=False)
            results = client.gather(futures)

    print(f"{'worker pid':>10}  {'first call ms':>13}  {'builds':>6}  {'disk hits':>9}")
    seen = {}
    for res in results:
        w = seen.setdefault(res["pid"], {"first": res["first_call_s"], "builds": 0, "hits": 0})
        w["builds"] += res["builds"]
        w["hits"] += res["cache_hits"]
    for pid, w in seen.items():
        print(f"{pid:>10}  {w['first'] * 1e3:>13.1f}  {w['builds']:>6}  {w['hits']:>9}")

    grads = np.concatenate([np.array(r["grads"]) for r in results])
    worst = 0.0
    for theta, g in zip(thetas[:8], grads[:8]):
        fd = finite_difference(theta, obs)
        worst = max(worst, float(np.max(np.abs(g - fd) / np.maximum(1.0, np.abs(fd)))))
    builds = sum(w["builds"] for w in seen.values())
    print(f"{len(grads)} gradients; worst relative error vs finite differences (8 members): {worst:.1e}")
    print(f"workers built {builds} gradients; "
          + ("every worker loaded the gradient from the disk cache" if builds == 0
             else "some workers had to build it"))
    if worst > 1e-5:
        raise SystemExit("gradients disagree with finite differences")
    print("all gradients agree with finite differences")


if __name__ == "__main__":
    main()
