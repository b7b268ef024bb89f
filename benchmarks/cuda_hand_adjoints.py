"""Hand-written CUDA adjoints of tests/cuda_kernels.py's elementwise kernel, in three load orders
(benchmarks/cuda_ratio.py prints their times beside the generated gradient's)."""
import math

from numba import cuda


@cuda.jit
def elementwise_adjoint(x, a, y, dx, dy):
    """y[i] = sin(x) x + a exp(-x^2); the primal's y written, dy consumed, dx accumulated."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        s = math.sin(v)
        e = math.exp(-v * v)
        y[i] = s * v + a * e
        g = dy[i]
        dy[i] = 0.0
        dx[i] += g * (math.cos(v) * v + s - 2.0 * a * v * e)


@cuda.jit
def elementwise_adjoint_loads_first(x, a, y, dx, dy):
    """The same, with every load issued before the first store."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        g = dy[i]
        d = dx[i]
        s = math.sin(v)
        e = math.exp(-v * v)
        y[i] = s * v + a * e
        dy[i] = 0.0
        dx[i] = d + g * (math.cos(v) * v + s - 2.0 * a * v * e)


@cuda.jit
def elementwise_adjoint_loads_after_math(x, a, y, dx, dy):
    """The same, with the shadows' loads after the primal's math but before its store."""
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        s = math.sin(v)
        e = math.exp(-v * v)
        g = dy[i]
        d = dx[i]
        y[i] = s * v + a * e
        dy[i] = 0.0
        dx[i] = d + g * (math.cos(v) * v + s - 2.0 * a * v * e)
