"""ba: ADBench's bundle adjustment (benchmarks/workloads/ba.py's kernels): the objective
(reprojection and weight errors of every observation) and its sparse Jacobian in GradBench's
format (the C++ tools' SparseMat: per observation two rows of 11 camera, 3 point and 1 weight
columns, then one row per weight; the output keeps the first 30 and the last entry of rows,
cols and vals). Each observation's block is one batched reverse call of `ba_residual` (both
residuals seeded), each weight row a reverse call of the weight error; nothing hand-written."""
import numpy as np
from numba import njit

from enzyme_py import Active, BatchDuplicated, Const, autodiff, compile_gradient

from ...workloads.ba import NCAM, ba_objective, ba_residual
from .protocol import Function


@njit
def weight_error(w):
    return 1.0 - w * w


def prepare(raw):
    n, m, p = int(raw["n"]), int(raw["m"]), int(raw["p"])
    cams = np.tile(np.array(raw["cam"], dtype=np.float64), (n, 1))
    X = np.tile(np.array(raw["x"], dtype=np.float64), (m, 1))
    w = np.full(p, float(raw["w"]))
    feats = np.tile(np.array(raw["feat"], dtype=np.float64), (p, 1))
    idx = np.arange(p)
    obs = np.stack([idx % n, idx % m], axis=1).astype(np.int64)
    return cams, X, w, obs, feats


def objective(cams, X, w, obs, feats):
    p = obs.shape[0]
    reproj_err, w_err = np.zeros((p, 2)), np.zeros(p)
    ba_objective(cams, X, w, obs, feats, reproj_err, w_err)
    return reproj_err, w_err


def post_objective(out):
    reproj_err, w_err = out
    return {"reproj_error": {"elements": reproj_err[0].tolist(), "repeated": len(reproj_err)},
            "w_err": {"element": float(w_err[0]), "repeated": len(w_err)}}


_driver = []


def _entry():
    """The batched (two seeds) gradient entry of ba_residual, built once."""
    if not _driver:
        z = np.zeros
        args = [BatchDuplicated(z(NCAM), (z(NCAM), z(NCAM))), BatchDuplicated(z(3), (z(3), z(3))),
                Active(1.0), Const(z(2)), BatchDuplicated(z(2), (z(2), z(2)))]
        _driver.append(_sparse_jacobian(compile_gradient(ba_residual, *args).entry))
    return _driver[0]


def _sparse_jacobian(entry):
    @njit
    def jacobian(cams, X, w, obs, feats):
        n, m, p = cams.shape[0], X.shape[0], obs.shape[0]
        per_row = NCAM + 4
        rows = np.empty(3 * p + 1, np.int64)
        cols = np.empty(2 * per_row * p + p, np.int64)
        vals = np.empty(2 * per_row * p + p)
        zc, zX, ze = np.zeros(NCAM), np.zeros(3), np.zeros(2)
        dc0, dc1, dX0, dX1 = np.zeros(NCAM), np.zeros(NCAM), np.zeros(3), np.zeros(3)
        de0, de1 = np.zeros(2), np.zeros(2)
        cam, pt, ft, err = np.empty(NCAM), np.empty(3), np.empty(2), np.empty(2)
        rows[0] = 0
        at = 0
        for i in range(p):
            c, q = obs[i, 0], obs[i, 1]
            for k in range(NCAM):
                cam[k], dc0[k], dc1[k] = cams[c, k], 0.0, 0.0
            for k in range(3):
                pt[k], dX0[k], dX1[k] = X[q, k], 0.0, 0.0
            ft[0], ft[1] = feats[i, 0], feats[i, 1]
            de0[0], de0[1], de1[0], de1[1] = 1.0, 0.0, 0.0, 1.0
            dw = entry(cam, pt, w[i], ft, err, zc, zX, ze, dc0, dc1, dX0, dX1, de0, de1,
                       1.0, 1.0)[0]
            for r in range(2):
                rows[2 * i + r + 1] = rows[2 * i + r] + per_row
                dc = dc0 if r == 0 else dc1
                dX = dX0 if r == 0 else dX1
                for k in range(NCAM):
                    cols[at], vals[at] = NCAM * c + k, dc[k]
                    at += 1
                for k in range(3):
                    cols[at], vals[at] = NCAM * n + 3 * q + k, dX[k]
                    at += 1
                cols[at], vals[at] = NCAM * n + 3 * m + i, dw[r]
                at += 1
        for i in range(p):
            rows[2 * p + i + 1] = rows[2 * p + i] + 1
            cols[at] = NCAM * n + 3 * m + i
            vals[at] = autodiff(weight_error, Active(w[i]))[0]
            at += 1
        return rows, cols, vals
    return jacobian


def jacobian(cams, X, w, obs, feats):
    return _entry()(cams, X, w, obs, feats)


def post_jacobian(out):
    keep = 2 * (NCAM + 4)
    return {name: a[:keep].tolist() + [a[-1].item()] for name, a in zip(("rows", "cols", "vals"), out)}


FUNCTIONS = {
    "objective": Function(prepare, objective, post=post_objective),
    "jacobian": Function(prepare, jacobian, post=post_jacobian),
}
