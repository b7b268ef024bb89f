"""Workload 6: ADBench bundle adjustment, the sparse Jacobian on the ba1 file.

`ba_residual(cam, X, w, feat, err)` computes one observation's two reprojection residuals
(Rodrigues rotation with the theta == 0 first-order branch, radial distortion, focal length,
principal point, weight). The objective runs it over every observation and adds the weight
error 1 - w^2. The Jacobian takes one batched reverse call per observation with both residuals
seeded (two lanes sharing one forward sweep: 3.1x the objective here, against 4.4x for two
separate reverse calls; 2.7x once the driver copied each observation's camera and point into
buffers instead of making views, whose NRT reference counting cost 0.4 ms a Jacobian); the
weight-error rows are d(1 - w^2)/dw = -2w. It is stored like ADBench's BASparseMat: per
observation, two rows of 15 values (11 camera, 3 point, 1 weight).
"""
import math
import os

import numpy as np
from numba import njit

from enzyme_py import disk_cache

from ..harness import Instance
from . import DATA_DIR

NAME = "ba"
TITLE = "ADBench BA Jacobian ba1"

NCAM = 11          # rotation (3), centre (3), focal (1), principal point (2), distortion (2)


def read_ba(path):
    """Read an ADBench BA file: returns (cams (n, 11), X (m, 3), w (p,), obs (p, 2) int,
    feats (p, 2)). The file holds one camera, point, weight and feature, replicated;
    observation i uses camera i mod n and point i mod m."""
    with open(path) as f:
        tok = f.read().split()
    n, m, p = int(tok[0]), int(tok[1]), int(tok[2])
    vals = np.array(tok[3:3 + NCAM + 3 + 1 + 2], dtype=np.float64)
    cam, X, w, feat = vals[:NCAM], vals[NCAM:NCAM + 3], vals[NCAM + 3], vals[NCAM + 4:]
    cams = np.tile(cam, (n, 1))
    Xs = np.tile(X, (m, 1))
    ws = np.full(p, w)
    feats = np.tile(feat, (p, 1))
    idx = np.arange(p)
    obs = np.stack([idx % n, idx % m], axis=1).astype(np.int64)
    return cams, Xs, ws, obs, feats


@njit
def rodrigues_rotate_point(r0, r1, r2, x0, x1, x2):
    sqtheta = r0 * r0 + r1 * r1 + r2 * r2
    if sqtheta != 0.0:
        theta = math.sqrt(sqtheta)
        costheta = math.cos(theta)
        sintheta = math.sin(theta)
        inv = 1.0 / theta
        w0, w1, w2 = r0 * inv, r1 * inv, r2 * inv
        c0 = w1 * x2 - w2 * x1
        c1 = w2 * x0 - w0 * x2
        c2 = w0 * x1 - w1 * x0
        tmp = (w0 * x0 + w1 * x1 + w2 * x2) * (1.0 - costheta)
        return (x0 * costheta + c0 * sintheta + w0 * tmp,
                x1 * costheta + c1 * sintheta + w1 * tmp,
                x2 * costheta + c2 * sintheta + w2 * tmp)
    # first-order approximation near theta == 0: X + rot x X
    return (x0 + r1 * x2 - r2 * x1,
            x1 + r2 * x0 - r0 * x2,
            x2 + r0 * x1 - r1 * x0)


@njit
def ba_residual(cam, X, w, feat, err):
    y0, y1, y2 = rodrigues_rotate_point(cam[0], cam[1], cam[2],
                                        X[0] - cam[3], X[1] - cam[4], X[2] - cam[5])
    p0 = y0 / y2
    p1 = y1 / y2
    rsq = p0 * p0 + p1 * p1
    L = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
    err[0] = w * (p0 * L * cam[6] + cam[7] - feat[0])
    err[1] = w * (p1 * L * cam[6] + cam[8] - feat[1])


@njit
def ba_objective(cams, X, w, obs, feats, reproj_err, w_err):
    for i in range(obs.shape[0]):
        ba_residual(cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i], reproj_err[i])
        w_err[i] = 1.0 - w[i] * w[i]


kernel = ba_objective


def make_jacobian(entry):
    """An @njit Jacobian driver around the batched (two seeds) gradient entry of `ba_residual`:
    one call per observation gives both residuals' rows
    (entry(cam, X, w, feat, err, zcam, zX, zerr, dcam0, dcam1, dX0, dX1, derr0, derr1, 1.0, 1.0)
    -> ((dw0, dw1),)). With enzyme_py's disk cache on, Numba's cache keeps the driver: entries
    stored there pickle as their disk-cache key, so a fresh process that loads the gradient loads
    the driver too. With it off an entry does not pickle, so the driver is not cached."""
    @njit(cache=disk_cache.cache_dir() is not None)
    def jacobian(cams, X, w, obs, feats, reproj_err, w_err, J, Jw):
        zc, zX, ze = np.zeros(NCAM), np.zeros(3), np.zeros(2)
        dc0, dc1 = np.zeros(NCAM), np.zeros(NCAM)
        dX0, dX1 = np.zeros(3), np.zeros(3)
        de0, de1 = np.zeros(2), np.zeros(2)
        # the observation's camera, point, feature and residuals go through buffers allocated
        # once: a view per call (cams[obs[i, 0]]) would cost NRT reference counting each time
        cam, pt, ft, err = np.empty(NCAM), np.empty(3), np.empty(2), np.empty(2)
        for i in range(obs.shape[0]):
            c, q = obs[i, 0], obs[i, 1]
            for k in range(NCAM):
                cam[k] = cams[c, k]
                dc0[k] = 0.0
                dc1[k] = 0.0
            for k in range(3):
                pt[k] = X[q, k]
                dX0[k] = 0.0
                dX1[k] = 0.0
            ft[0], ft[1] = feats[i, 0], feats[i, 1]
            de0[0], de0[1], de1[0], de1[1] = 1.0, 0.0, 0.0, 1.0
            dw = entry(cam, pt, w[i], ft, err, zc, zX, ze,
                       dc0, dc1, dX0, dX1, de0, de1, 1.0, 1.0)[0]
            reproj_err[i, 0], reproj_err[i, 1] = err[0], err[1]
            for k in range(NCAM):
                J[i, 0, k] = dc0[k]
                J[i, 1, k] = dc1[k]
            for k in range(3):
                J[i, 0, NCAM + k] = dX0[k]
                J[i, 1, NCAM + k] = dX1[k]
            J[i, 0, NCAM + 3] = dw[0]
            J[i, 1, NCAM + 3] = dw[1]
            w_err[i] = 1.0 - w[i] * w[i]
            Jw[i] = -2.0 * w[i]
    return jacobian


def csr_values(J, Jw):
    """The Jacobian's values in ADBench's CSR order (reprojection rows, then weight rows)."""
    return np.concatenate([J.reshape(-1), Jw])


class BAInstance(Instance):
    """BA: the primal is the full objective; the 'gradient' is the sparse Jacobian."""

    def __init__(self, data, note=""):
        self.data = data
        cams, X, w, obs, feats = data
        p = obs.shape[0]
        self.reproj_err = np.zeros((p, 2))
        self.w_err = np.zeros(p)
        self.J = np.zeros((p, 2, NCAM + 4))
        self.Jw = np.zeros(p)
        self.kernel = ba_objective
        self.spec = []
        self.hand = None
        self.note = note
        self.seed = 1.0
        self.derivs = None
        self._entry = None
        self._jac = None

    def reset(self):
        pass

    def residual_args(self):
        from enzyme_py import Active, Const, Duplicated
        cams, X, w, obs, feats = self.data
        return [Duplicated(cams[0].copy(), np.zeros(NCAM)), Duplicated(X[0].copy(), np.zeros(3)),
                Active(float(w[0])), Const(feats[0].copy()),
                Duplicated(np.zeros(2), np.zeros(2))]

    def batched_args(self):
        """residual_args with two shadows per array: both residuals seeded in one call."""
        from enzyme_py import BatchDuplicated
        a = self.residual_args()
        return [BatchDuplicated(x.value, (np.zeros_like(x.shadow), np.zeros_like(x.shadow)))
                if hasattr(x, "shadow") else x for x in a]

    def primal(self):
        cams, X, w, obs, feats = self.data
        ba_objective(cams, X, w, obs, feats, self.reproj_err, self.w_err)

    def compile(self):
        from enzyme_py import compile_gradient
        self._entry = compile_gradient(ba_residual, *self.batched_args()).entry
        self._jac = make_jacobian(self._entry)
        self.grad()
        return self._entry

    def grad(self):
        if self._jac is None:
            self.compile()
        cams, X, w, obs, feats = self.data
        self._jac(cams, X, w, obs, feats, self.reproj_err, self.w_err, self.J, self.Jw)

    def grad_api(self):
        raise NotImplementedError

    def grad_vector(self):
        return csr_values(self.J, self.Jw)

    def annotated(self):
        return self.residual_args()

    def verify(self, rng, g=None):
        """Jacobian blocks of a few observations against finite differences."""
        J = self.J if g is None else g[:self.J.size].reshape(self.J.shape)
        p = self.data[3].shape[0]
        for i in sorted(set(rng.integers(0, p, 3).tolist()) | {0, p - 1}):
            fd = self.fd_rows(i)
            err = np.abs(J[i] - fd) / np.maximum(1.0, np.abs(fd))
            if not np.all(err <= 1e-5):
                return False, f"observation {i}: Jacobian differs from finite differences " \
                              f"by {float(err.max()):.2e} (relative)"
        return True, "Jacobian rows agree with finite differences"

    def fd_rows(self, i, h=1e-6):
        """Finite-difference Jacobian block (2 x 15) of observation i."""
        cams, X, w, obs, feats = self.data
        cam, pt, wi, ft = cams[obs[i, 0]], X[obs[i, 1]], w[i], feats[i]
        base = np.concatenate([cam, pt, [wi]])
        out = np.zeros((2, NCAM + 4))
        err_p, err_m = np.zeros(2), np.zeros(2)
        for k in range(NCAM + 4):
            step = h * max(1.0, abs(base[k]))
            vp, vm = base.copy(), base.copy()
            vp[k] += step
            vm[k] -= step
            ba_residual(vp[:NCAM].copy(), vp[NCAM:NCAM + 3].copy(), vp[-1], ft, err_p)
            ba_residual(vm[:NCAM].copy(), vm[NCAM:NCAM + 3].copy(), vm[-1], ft, err_m)
            out[:, k] = (err_p - err_m) / (2 * step)
        return out


def instance_from(data, note=""):
    return BAInstance(data, note=note)


def setup(quick=False):
    inst = instance_from(read_ba(os.path.join(DATA_DIR, "ba", "ba1_n49_m7776_p31843.txt")),
                         note="ba1 n=49 m=7776 p=31843")
    if quick:
        cams, X, w, obs, feats = inst.data
        inst = instance_from((cams, X, w[:2000].copy(), obs[:2000].copy(), feats[:2000].copy()),
                             note="ba1, first 2000 obs")
    return inst


def jax_setup(inst):
    import jax
    import jax.numpy as jnp
    cams, X, w, obs, feats = (jnp.asarray(a) for a in inst.data)

    def rot(r, x):
        sq = jnp.sum(r * r)
        safe = jnp.where(sq != 0.0, sq, 1.0)
        theta = jnp.sqrt(safe)
        wv = r / theta
        full = x * jnp.cos(theta) + jnp.cross(wv, x) * jnp.sin(theta) \
            + wv * jnp.dot(wv, x) * (1.0 - jnp.cos(theta))
        return jnp.where(sq != 0.0, full, x + jnp.cross(r, x))

    def residual(cam, pt, wi, ft):
        y = rot(cam[:3], pt - cam[3:6])
        p = y[:2] / y[2]
        rsq = jnp.sum(p * p)
        L = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
        return wi * (p * L * cam[6] + cam[7:9] - ft)

    def objective(cams, X, w):
        r = jax.vmap(residual)(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
        return r, 1.0 - w * w
    jac1 = jax.jacrev(residual, argnums=(0, 1, 2))

    def jac(cams, X, w):
        jc, jx, jw = jax.vmap(jac1)(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
        blk = jnp.concatenate([jc, jx, jw[:, :, None]], axis=2)
        return blk, -2.0 * w
    fwd = jax.jit(objective)
    g = jax.jit(jac)

    def result():
        blk, jw = g(cams, X, w)
        return np.concatenate([np.asarray(blk).ravel(), np.asarray(jw)])
    return (lambda: jax.block_until_ready(fwd(cams, X, w))), \
        (lambda: jax.block_until_ready(g(cams, X, w))), result


def torch_setup(inst):
    """Per-observation Jacobian blocks with torch.func (vmap of jacrev), like the JAX port."""
    import torch
    from torch.func import jacrev, vmap
    cams, X, w, obs, feats = (torch.from_numpy(np.array(a, copy=True)) for a in inst.data)
    cam_o, X_o = cams[obs[:, 0]], X[obs[:, 1]]

    def rot(r, x):
        sq = torch.sum(r * r)
        safe = torch.where(sq != 0.0, sq, torch.ones_like(sq))
        theta = torch.sqrt(safe)
        wv = r / theta
        full = x * torch.cos(theta) + torch.linalg.cross(wv, x) * torch.sin(theta) \
            + wv * torch.dot(wv, x) * (1.0 - torch.cos(theta))
        return torch.where(sq != 0.0, full, x + torch.linalg.cross(r, x))

    def residual(cam, pt, wi, ft):
        y = rot(cam[:3], pt - cam[3:6])
        p = y[:2] / y[2]
        rsq = torch.sum(p * p)
        L = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
        return wi * (p * L * cam[6] + cam[7:9] - ft)

    jac = vmap(jacrev(residual, argnums=(0, 1, 2)))

    def fwd():
        with torch.no_grad():
            return vmap(residual)(cam_o, X_o, w, feats), 1.0 - w * w

    def grad():
        jc, jx, jw = jac(cam_o, X_o, w, feats)
        return torch.cat([jc, jx, jw[:, :, None]], dim=2), -2.0 * w

    def result():
        blk, jw = grad()
        return np.concatenate([blk.numpy().ravel(), jw.numpy()])
    return fwd, grad, result
