"""Sparse Jacobians of a 2-D PDE residual (5-point Laplacian, reaction term exp(u) - u^2) on
n x n grids: the pattern's detection, the compressed evaluation, and what they are worth.

    python -m benchmarks.sparse [--grids 32,64,256] [--dense-max 4096] [--rounds 3]
                                [--hessian-n 100000]

Per grid: the Jacobian's size and nonzeros, the number of colours, the time to find the pattern
(NaN-seeded forward sweeps, x.size / 16 of them, once per SparseJacobian), the time of one
sparse Jacobian with the pattern kept (ceil(colours / 16) forward sweeps and decompression),
one forward-mode call (one direction) and one reverse-mode call of the residual times the number
of colours, and the dense forward Jacobian (`jacobian`, x.size / 16 sweeps) where its
(x.size)^2 doubles fit under --dense-max unknowns, with the largest difference from the sparse
one. Times are the best of --rounds.

Then the ADBench bundle adjustment ba1 (benchmarks/workloads/ba.py; ADBENCH_DATA, skipped when
the file is missing) as one residual vector of a flat parameter vector: SparseJacobian against
the workload's hand-written driver (one batched reverse call per observation), values compared.

Then the Hessian of a chain-structured objective (a discretised control problem, tridiagonal
Hessian) of --hessian-n variables: SparseHessian's first call and a call with the pattern kept,
against one Hessian-vector product.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit

import os

import scipy.sparse as sp

from benchmarks.workloads import DATA_DIR
from benchmarks.workloads import ba as ba_workload
from enzyme_py import (Duplicated, Forward, SparseHessian, SparseJacobian, autodiff,
                       hessian_vector_product, jacobian)


@njit
def residual(u, out, h):
    n, m = u.shape
    for i in range(n):
        for j in range(m):
            c = u[i, j]
            s = -4.0 * c
            if i > 0:
                s += u[i - 1, j]
            if i < n - 1:
                s += u[i + 1, j]
            if j > 0:
                s += u[i, j - 1]
            if j < m - 1:
                s += u[i, j + 1]
            out[i, j] = s / (h * h) + np.exp(c) - c * c


@njit
def control(x, dt):
    s = 0.0
    for i in range(x.size - 1):
        d = x[i + 1] - x[i]
        s += d * d / dt + dt * np.cos(x[i]) * x[i + 1] ** 2
    return s


def hessian_row(n, rounds):
    x = np.random.default_rng(1).random(n)
    SparseHessian(control)(x[:64].copy(), 0.1)      # builds the product functions
    H = SparseHessian(control)
    t = time.perf_counter()
    S = H(x, 0.1)
    first = time.perf_counter() - t
    kept = best(lambda: H(x, 0.1), rounds)
    v = np.ones(n)
    hvp_t = best(lambda: hessian_vector_product(control, x, v, 0.1), rounds)
    print(f"\nHessian of the chain objective, {n} variables: {S.nnz} nonzeros, {H.ncolours} "
          f"colours; first call {first:.2f} s, with the pattern kept {1e3 * kept:.2f} ms, one "
          f"Hessian-vector product {1e3 * hvp_t:.2f} ms (ratio {kept / hvp_t:.1f})")


@njit
def ba_flat(params, out, ncam, npt, obs, feats):
    nc = ncam * ba_workload.NCAM
    p = obs.shape[0]
    cams = params[:nc].reshape(ncam, ba_workload.NCAM)
    X = params[nc:nc + 3 * npt].reshape(npt, 3)
    w = params[nc + 3 * npt:]
    ba_workload.ba_objective(cams, X, w, obs, feats, out[:2 * p].reshape(p, 2), out[2 * p:])


def ba_row(rounds):
    path = os.path.join(DATA_DIR, "ba", "ba1_n49_m7776_p31843.txt")
    if not os.path.exists(path):
        print(f"\nBA: {path} is missing (set ADBENCH_DATA)")
        return
    inst = ba_workload.instance_from(ba_workload.read_ba(path))
    cams, X, w, obs, feats = inst.data
    ncam, npt, p = cams.shape[0], X.shape[0], obs.shape[0]
    params = np.concatenate([cams.ravel(), X.ravel(), w])
    out = np.zeros(3 * p)
    J = SparseJacobian(ba_flat)
    t = time.perf_counter()
    S = J(params, ncam, npt, obs, feats, out=out)
    first = time.perf_counter() - t
    again = best(lambda: J(params, ncam, npt, obs, feats, out=out), rounds)
    inst.compile()
    hand = best(inst.grad, rounds)
    nc = ncam * ba_workload.NCAM
    cols = np.concatenate([obs[:, :1] * ba_workload.NCAM + np.arange(ba_workload.NCAM),
                           nc + obs[:, 1:2] * 3 + np.arange(3), nc + 3 * npt + np.arange(p)[:, None]],
                          axis=1)
    rows = np.arange(2 * p).reshape(p, 2)
    want = sp.csr_matrix((np.concatenate([inst.J.reshape(-1), inst.Jw]),
                          (np.concatenate([np.repeat(rows.ravel(), cols.shape[1]), 2 * p + np.arange(p)]),
                           np.concatenate([np.tile(cols, (1, 2)).ravel(), nc + 3 * npt + np.arange(p)]))),
                         shape=S.shape)
    diff = abs(S - want).max()
    print(f"\nBA ba1: Jacobian {S.shape}, {S.nnz} stored ({want.nnz} in the hand layout), "
          f"{J.ncolours} colours, input_specific={J.input_specific}, united={J.united} "
          f"({J.decisions[0][1] if J.decisions else ''}); first call {first:.2f} s, next call "
          f"{again:.2f} s; hand-written driver {1e3 * hand:.1f} ms; max diff {diff:.1e}")


def best(fn, rounds):
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def one_grid(n, rounds, dense_max):
    rng = np.random.default_rng(0)
    u, out, h = rng.random((n, n)), np.zeros((n, n)), 1.0 / (n + 1)
    SparseJacobian(residual)(u, h, out=out)   # builds the tangent functions this grid needs
    J = SparseJacobian(residual)
    t = time.perf_counter()
    S = J(u, h, out=out)                     # first call: detection + one evaluation
    first = time.perf_counter() - t
    sparse_t = best(lambda: J(u, h, out=out), rounds)
    detect = first - sparse_t
    du, dout = np.zeros_like(u), np.zeros_like(out)
    du.flat[::7] = 1.0
    fwd_t = best(lambda: autodiff(residual, Duplicated(u.copy(), du), Duplicated(out, dout), h,
                                  mode=Forward), rounds)
    gu, seed = np.zeros_like(u), np.ones_like(out)
    rev_t = best(lambda: autodiff(residual, Duplicated(u.copy(), gu), Duplicated(out, seed.copy()),
                                  h), rounds)
    row = dict(grid=f"{n}x{n}", unknowns=n * n, nnz=S.nnz, colours=J.ncolours, detect=detect,
               sparse=sparse_t, fwd_k=fwd_t * J.ncolours, rev_k=rev_t * J.ncolours,
               dense=None, diff=None)
    if n * n <= dense_max:
        row["dense"] = best(lambda: jacobian(residual, u, h, out=out), 1)
        D = jacobian(residual, u, h, out=out).reshape(n * n, n * n)
        row["diff"] = float(np.abs(S.toarray() - D).max())
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grids", default="32,64,256")
    ap.add_argument("--dense-max", type=int, default=4096)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--hessian-n", type=int, default=100000)
    a = ap.parse_args(argv)
    rows = [one_grid(int(g), a.rounds, a.dense_max) for g in a.grids.split(",")]
    head = (f"{'grid':>8} {'unknowns':>9} {'nnz':>8} {'colours':>7} {'detect s':>9} "
            f"{'sparse ms':>10} {'fwd x k ms':>11} {'rev x k ms':>11} {'dense ms':>10} {'max diff':>9}")
    print(head)
    for r in rows:
        dense = f"{1e3 * r['dense']:10.1f}" if r["dense"] is not None else f"{'-':>10}"
        diff = f"{r['diff']:9.1e}" if r["diff"] is not None else f"{'-':>9}"
        print(f"{r['grid']:>8} {r['unknowns']:>9} {r['nnz']:>8} {r['colours']:>7} "
              f"{r['detect']:9.2f} {1e3 * r['sparse']:10.2f} {1e3 * r['fwd_k']:11.2f} "
              f"{1e3 * r['rev_k']:11.2f} {dense} {diff}")
    ba_row(a.rounds)
    if a.hessian_n:
        hessian_row(a.hessian_n, a.rounds)


if __name__ == "__main__":
    main()
