"""NVIDIA Warp kernels for the Warp peer (imported only when warp is installed).

Warp differentiates a recorded tape of kernel launches and does not support overwriting an
array that a recorded launch read, so the in-place workloads keep one array per state (heat,
RNN) or per cell (soft-DTW's DP table is written once per cell); loop-carried sums inside a
kernel go through `wp.atomic_add` into an output array, which Warp can differentiate.
"""
import warp as wp

wp.config.quiet = True

DT_OVER_DX2 = 0.5
EPS2 = 1e-2


@wp.kernel
def elementwise(x: wp.array(dtype=wp.float64), y: wp.array(dtype=wp.float64)):
    i = wp.tid()
    y[i] = x[i] * x[i] + wp.sin(x[i])


@wp.kernel
def heat_step(u: wp.array(dtype=wp.float64), alpha: wp.array(dtype=wp.float64),
              out: wp.array(dtype=wp.float64)):
    i = wp.tid()
    n = u.shape[0]
    if i == 0 or i == n - 1:
        out[i] = u[i]
    else:
        r = alpha[0] * wp.float64(DT_OVER_DX2)
        out[i] = u[i] + r * (u[i - 1] - wp.float64(2.0) * u[i] + u[i + 1])


@wp.kernel
def nbody(px: wp.array(dtype=wp.float64), py: wp.array(dtype=wp.float64),
          m: wp.array(dtype=wp.float64), fx: wp.array(dtype=wp.float64),
          fy: wp.array(dtype=wp.float64)):
    i = wp.tid()
    n = px.shape[0]
    for j in range(n):
        if j != i:
            dx = px[j] - px[i]
            dy = py[j] - py[i]
            r2 = dx * dx + dy * dy + wp.float64(EPS2)
            s = m[i] * m[j] / (r2 * wp.sqrt(r2))
            wp.atomic_add(fx, i, s * dx)
            wp.atomic_add(fy, i, s * dy)


@wp.kernel
def softdtw_diag(D: wp.array2d(dtype=wp.float64), gamma: wp.float64, k: int,
                 R: wp.array2d(dtype=wp.float64)):
    # the cells (i, j) with i + j == k, one thread per row i - 1
    i = wp.tid() + 1
    j = k - i
    n = D.shape[1]
    if j >= 1 and j <= n:
        r0 = -R[i - 1, j - 1] / gamma
        r1 = -R[i - 1, j] / gamma
        r2 = -R[i, j - 1] / gamma
        rmax = wp.max(wp.max(r0, r1), r2)
        rsum = wp.exp(r0 - rmax) + wp.exp(r1 - rmax) + wp.exp(r2 - rmax)
        R[i, j] = D[i - 1, j - 1] - gamma * (wp.log(rsum) + rmax)


@wp.kernel
def rnn_pre(W: wp.array2d(dtype=wp.float64), U: wp.array2d(dtype=wp.float64),
            hs: wp.array2d(dtype=wp.float64), xs: wp.array2d(dtype=wp.float64), t: int,
            pre: wp.array2d(dtype=wp.float64)):
    # pre[t, i] += W[i, j] h_t[j] (j < H) or U[i, j - H] x_t[j - H]
    i, j = wp.tid()
    H = W.shape[1]
    if j < H:
        wp.atomic_add(pre, t, i, W[i, j] * hs[t, j])
    else:
        wp.atomic_add(pre, t, i, U[i, j - H] * xs[t, j - H])


@wp.kernel
def rnn_act(pre: wp.array2d(dtype=wp.float64), b: wp.array(dtype=wp.float64), t: int,
            hs: wp.array2d(dtype=wp.float64)):
    i = wp.tid()
    hs[t + 1, i] = wp.tanh(pre[t, i] + b[i])
