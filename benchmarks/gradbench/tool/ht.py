"""ht: ADBench's hand tracking (the C++ tools' ht.hpp): 26 pose parameters move a skinned hand
model (per bone an Euler-angle rotation of its base relative transform, composed down the bone
tree; vertices blended by bone weights; a global rotation, scale and translation); the residuals
are the data points minus the model's corresponding vertices, or, in the `complicated` variant,
minus points interpolated in the corresponding triangles by the parameters `us`.

The Jacobian (rows: the 3 coordinates of each point; columns: in the complicated variant
first the point's own two `us`, then the 26 pose parameters) comes from forward mode in two
batched calls of one width (14: one compiled tangent function): the pose parameters' unit
directions, and for the `us` the directions with every point's u0 (then u1) set, since each
point's residuals depend only on its own `us`. Nothing is hand-written."""
import math

import numpy as np
from numba import njit

from enzyme_py import BatchDuplicated, Const, Forward, autodiff

from .protocol import Function


@njit
def _angle_axis_to_rotation(r0, r1, r2, R):
    norm = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
    if norm < 0.0001:
        for i in range(3):
            for j in range(3):
                R[i, j] = 1.0 if i == j else 0.0
        return
    x, y, z = r0 / norm, r1 / norm, r2 / norm
    s, c = math.sin(norm), math.cos(norm)
    R[0, 0] = x * x + (1 - x * x) * c
    R[0, 1] = x * y * (1 - c) - z * s
    R[0, 2] = x * z * (1 - c) + y * s
    R[1, 0] = x * y * (1 - c) + z * s
    R[1, 1] = y * y + (1 - y * y) * c
    R[1, 2] = y * z * (1 - c) - x * s
    R[2, 0] = x * z * (1 - c) - y * s
    R[2, 1] = z * y * (1 - c) + x * s
    R[2, 2] = z * z + (1 - z * z) * c


@njit
def _euler_to_rotation(tx, tz, ty, out):
    """Rz Ry Rx into the 3 x 3 block of `out` (a 4 x 4 identity elsewhere)."""
    cx, sx, cy, sy, cz, sz = (math.cos(tx), math.sin(tx), math.cos(ty), math.sin(ty),
                              math.cos(tz), math.sin(tz))
    Rx, Ry, Rz = np.eye(3), np.eye(3), np.eye(3)
    Rx[1, 1], Rx[1, 2], Rx[2, 1], Rx[2, 2] = cx, -sx, sx, cx
    Ry[0, 0], Ry[0, 2], Ry[2, 0], Ry[2, 2] = cy, sy, -sy, cy
    Rz[0, 0], Rz[0, 1], Rz[1, 0], Rz[1, 1] = cz, -sz, sz, cz
    R = Rz @ Ry @ Rx
    for i in range(4):
        for j in range(4):
            out[i, j] = R[i, j] if i < 3 and j < 3 else (1.0 if i == j else 0.0)


@njit
def _pose_params(theta, nbones):
    """The 3 x (nbones + 3) pose parameters: global rotation, scale (1), translation, then
    per bone its Euler angles (the fingers' first joints two, the others one)."""
    pose = np.zeros((3, nbones + 3))
    for i in range(3):
        pose[i, 0] = theta[i]
        pose[i, 1] = 1.0
        pose[i, 2] = theta[3 + i]
    i_theta, i_pose = 6, 5
    for _ in range(5):
        for i in range(2, 5):
            pose[0, i_pose] = theta[i_theta]
            i_theta += 1
            if i == 2:
                pose[1, i_pose] = theta[i_theta]
                i_theta += 1
            i_pose += 1
        i_pose += 1
    return pose


@njit
def _vertices(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
              mirrored):
    nbones, nverts = weights.shape
    pose = _pose_params(theta, nbones)
    absolutes = np.empty((nbones, 4, 4))
    tr = np.empty((4, 4))
    for b in range(nbones):
        _euler_to_rotation(pose[0, b + 3], pose[1, b + 3], pose[2, b + 3], tr)
        rel = base_relatives[b] @ tr
        absolutes[b] = rel if parents[b] == -1 else absolutes[parents[b]] @ rel
    positions = np.zeros((3, nverts))
    for b in range(nbones):
        transform = absolutes[b] @ inverse_base_absolutes[b]
        curr = transform @ base_positions
        for v in range(nverts):
            for i in range(3):
                positions[i, v] += curr[i, v] * weights[b, v]
    if mirrored:
        for v in range(nverts):
            positions[0, v] = -positions[0, v]
    R = np.empty((3, 3))
    _angle_axis_to_rotation(pose[0, 0], pose[1, 0], pose[2, 0], R)
    for i in range(3):
        for j in range(3):
            R[j, i] *= pose[i, 1]
    moved = R @ positions
    for v in range(nverts):
        for i in range(3):
            moved[i, v] += pose[i, 2]
    return moved


@njit
def residuals(theta, us, parents, base_relatives, inverse_base_absolutes, base_positions,
              weights, mirrored, triangles, correspondences, points, err):
    """err[3 i + j] = points[i, j] minus the model's point i (complicated when us has rows)."""
    verts = _vertices(theta, parents, base_relatives, inverse_base_absolutes, base_positions,
                      weights, mirrored)
    for i in range(correspondences.shape[0]):
        c = correspondences[i]
        for j in range(3):
            if us.shape[0] > 0:
                t = triangles[c]
                u0, u1 = us[i, 0], us[i, 1]
                p = u0 * verts[j, t[0]] + u1 * verts[j, t[1]] + (1.0 - u0 - u1) * verts[j, t[2]]
            else:
                p = verts[j, c]
            err[3 * i + j] = points[i, j] - p


def prepare(raw):
    d, m = raw["data"], raw["data"]["model"]
    f = np.float64
    us = np.array(raw.get("us", []), f).reshape(-1, 2)
    model = (np.array(m["parents"], np.int64), np.array(m["base_relatives"], f),
             np.array(m["inverse_base_absolutes"], f),
             np.ascontiguousarray(np.array(m["base_positions"], f).T),
             np.ascontiguousarray(np.array(m["weights"], f).T), bool(m["is_mirrored"]),
             np.array(m["triangles"], np.int64).reshape(-1, 3))
    return (np.array(raw["theta"], f), us) + model + (np.array(d["correspondences"], np.int64),
                                                      np.array(d["points"], f).reshape(-1, 3))


def objective(theta, us, *rest):
    err = np.empty(3 * rest[-2].shape[0])
    residuals(theta, us, *rest, err)
    return err


def jacobian(theta, us, *rest):
    """Columns (complicated: u0, u1, then) the 26 pose parameters, by forward mode."""
    n = 3 * rest[-2].shape[0]
    dirs = []
    if us.shape[0]:
        for k in range(2):
            du = np.zeros_like(us)
            du[:, k] = 1.0
            dirs.append((np.zeros_like(theta), du))
    for k in range(theta.size):
        dt = np.zeros_like(theta)
        dt[k] = 1.0
        dirs.append((dt, np.zeros_like(us)))
    cols = []
    width = -(-len(dirs) // -(-len(dirs) // 16))     # equal chunks of at most 16
    for start in range(0, len(dirs), width):
        chunk = dirs[start:start + width]
        outs = tuple(np.zeros(n) for _ in chunk)
        autodiff(residuals, BatchDuplicated(theta.copy(), tuple(c[0] for c in chunk)),
                 BatchDuplicated(us.copy(), tuple(c[1] for c in chunk)), *[Const(a) for a in rest],
                 BatchDuplicated(np.zeros(n), outs), mode=Forward)
        cols.extend(outs)
    return np.stack(cols, axis=1)


FUNCTIONS = {
    "objective": Function(prepare, objective, post=lambda e: e.tolist()),
    "jacobian": Function(prepare, jacobian, post=lambda J: J.tolist()),
}
