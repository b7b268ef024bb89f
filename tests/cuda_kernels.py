"""CUDA kernels for the GPU-free checks (test_cuda_codegen.py) and the GPU tests.

Run as a script, it checks the kernels named, one after the other in this process, and prints a
JSON report for each, one line each, as soon as it is made:

    python tests/cuda_kernels.py elementwise gather

For reverse and forward mode: the generated module verifies, its PTX (LLVM's NVPTX backend,
libdevice linked) is accepted by ptxas for sm_80 and sm_90, and the CPU harness
(enzyme_py/cuda/harness.py) runs the generated kernel against central finite differences of the
primal kernel run the same way. Code generation runs in a process of its own because some
backend errors abort the process (docs/cuda.md).
"""
from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32, float64

# run as a script, check this checkout's enzyme_py (not whichever one is installed)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@cuda.jit
def elementwise(x, a, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = math.sin(x[i]) * x[i] + a * math.exp(-x[i] * x[i])


@cuda.jit
def early_return(x, n, y):
    i = cuda.grid(1)
    if i >= n:
        return
    v = x[i]
    y[i] = math.sqrt(v * v + 1.0) / (1.0 + math.tanh(v))


@cuda.jit
def gather(x, idx, w, y):
    """Shared inputs: x[idx[i]] is read by several threads (atomic), w[0] by all (privatised)."""
    i = cuda.grid(1)
    if i < y.size:
        y[i] = w[0] * x[idx[i]] + w[1] * math.cos(x[i])


@cuda.jit
def nbody(pos, mass, force):
    """Softened gravity: every thread reads every body (pos[j] is shared: atomic)."""
    i = cuda.grid(1)
    if i >= pos.shape[0]:
        return
    fx = 0.0
    fy = 0.0
    fz = 0.0
    for j in range(pos.shape[0]):
        dx = pos[j, 0] - pos[i, 0]
        dy = pos[j, 1] - pos[i, 1]
        dz = pos[j, 2] - pos[i, 2]
        r2 = dx * dx + dy * dy + dz * dz + 0.01
        s = mass[j] / (r2 * math.sqrt(r2))
        fx += dx * s
        fy += dy * s
        fz += dz * s
    force[i, 0] = fx
    force[i, 1] = fy
    force[i, 2] = fz


@cuda.jit
def block_sum(x, out):
    """A block-level tree reduction in shared memory; one partial sum per block."""
    s = cuda.shared.array(64, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = math.sin(x[i]) * x[i] if i < x.size else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@cuda.jit
def block_sum_atomic(x, out):
    """The reduction finished with one atomic add per block into out[0]."""
    s = cuda.shared.array(64, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] * x[i] if i < x.size else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cuda.jit
def two_partials(x, out):
    """Two partial results at constant shared indices (s[0], s[1]), combined by thread 0, as the
    last step of a block reduction writes them."""
    s = cuda.shared.array(2, float64)
    t = cuda.threadIdx.x
    b = cuda.blockIdx.x
    if t == 0:
        s[0] = math.sin(x[2 * b])
    if t == 1:
        s[1] = x[2 * b + 1] * x[2 * b + 1]
    cuda.syncthreads()
    if t == 0:
        out[b] = s[0] * s[1] + s[1]


@cuda.jit
def noisy_scale(x, state, y):
    """Each thread advances its own xorshift state (a Const array) and scales x[i] by noise
    drawn from it, as a stochastic kernel does."""
    i = cuda.grid(1)
    if i < x.size:
        s = state[i]
        s ^= (s << 13) & 0xFFFFFFFF
        s ^= s >> 17
        s ^= (s << 5) & 0xFFFFFFFF
        state[i] = s
        y[i] = x[i] * x[i] * (1.0 + (s % 1000) / 1000.0)


@cuda.jit
def kepler(M, e, E):
    """A per-thread Newton solve of Kepler's equation that leaves early on convergence."""
    i = cuda.grid(1)
    if i < M.size:
        x = M[i]
        for _ in range(50):
            f = x - e[i] * math.sin(x) - M[i]
            if abs(f) < 1e-13:
                break
            x = x - f / (1.0 - e[i] * math.cos(x))
        E[i] = x


@cuda.jit
def elementwise_f32(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = math.log(float32(1.0) + x[i] * x[i]) * math.cos(x[i])


@cuda.jit
def local_array(x, y):
    """A per-thread local array (cuda.local.array): the thread's own memory."""
    i = cuda.grid(1)
    if i < x.size:
        t = cuda.local.array(3, float64)
        for k in range(3):
            t[k] = x[i] * (k + 1)
        s = 0.0
        for k in range(3):
            s += math.sin(t[k]) * t[k]
        y[i] = s


@cuda.jit
def warp_block_sum(x, out):
    """A block sum through warp shuffles, as public numba-cuda code writes it: each warp sums with
    shfl_down, lane 0 of each warp puts its sum in shared memory, the first warp sums those."""
    s = cuda.shared.array(32, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    v = math.sin(x[i]) * x[i] if i < x.size else 0.0
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    if t % 32 == 0:
        s[t // 32] = v
    cuda.syncthreads()
    if t < 32:
        v = s[t] if t < cuda.blockDim.x // 32 else 0.0
        offset = 16
        while offset > 0:
            v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
            offset //= 2
        if t == 0:
            out[cuda.blockIdx.x] = v


@cuda.jit
def warp_softmax(x, y):
    """A softmax over each warp: a butterfly (shfl_xor) leaves the sum in every lane."""
    i = cuda.grid(1)
    e = math.exp(x[i]) if i < x.size else 0.0
    total = e
    m = 16
    while m > 0:
        total += cuda.shfl_xor_sync(0xFFFFFFFF, total, m)
        m //= 2
    if i < x.size:
        y[i] = e / total


@cuda.jit
def warp_broadcast(x, y):
    """shfl_sync from lane 0 (a broadcast: many lanes read one) and from the next lane;
    shfl_up, whose first lanes keep their own value; a half-warp butterfly under its own mask."""
    i = cuda.grid(1)
    lane = cuda.laneid
    v = math.sin(x[i]) if i < x.size else 0.0
    first = cuda.shfl_sync(0xFFFFFFFF, v, 0)
    nxt = cuda.shfl_sync(0xFFFFFFFF, v, (lane + 1) % 32)
    up = cuda.shfl_up_sync(0xFFFFFFFF, v, 3)
    h = v
    if lane < 16:
        h = cuda.shfl_xor_sync(0xFFFF, v, 1)
    if i < x.size:
        y[i] = first * x[i] + nxt * nxt + up * v + h * x[i]


@cuda.jit
def warp_partial(x, y):
    """A block of 48 threads, whose second warp has 16 lanes: shfl_up and a broadcast from lane 0
    read only lanes that exist (the adjoints must not read the missing ones either)."""
    i = cuda.grid(1)
    v = math.sin(x[i])
    first = cuda.shfl_sync(0xFFFFFFFF, v, 0)
    up = cuda.shfl_up_sync(0xFFFFFFFF, v, 1)
    y[i] = first * x[i] + up * v


@cuda.jit
def warp_sum_f32(x, out):
    """A float32 warp sum (shfl_down of 32-bit floats), then syncwarp."""
    i = cuda.grid(1)
    v = x[i] * x[i] if i < x.size else float32(0.0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xFFFFFFFF, v, offset)
        offset //= 2
    cuda.syncwarp()
    if cuda.laneid == 0:
        out[i // 32] = v


NBINS = 8


TILE = 16


def _nbody_tiled(dtype):
    @cuda.jit
    def nbody_tiled(pos, mass, force):
        """Softened gravity with the bodies read in tiles through shared memory, one tile per block
        width at a time (the CUDA n-body sample's scheme)."""
        tile = cuda.shared.array((TILE, 4), dtype)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        n = pos.shape[0]
        px = pos[i, 0] if i < n else 0.0
        py = pos[i, 1] if i < n else 0.0
        pz = pos[i, 2] if i < n else 0.0
        fx = 0.0
        fy = 0.0
        fz = 0.0
        for start in range(0, n, TILE):
            j = start + t
            if j < n:
                tile[t, 0] = pos[j, 0]
                tile[t, 1] = pos[j, 1]
                tile[t, 2] = pos[j, 2]
                tile[t, 3] = mass[j]
            else:
                tile[t, 0] = 0.0
                tile[t, 1] = 0.0
                tile[t, 2] = 0.0
                tile[t, 3] = 0.0
            cuda.syncthreads()
            for k in range(TILE):
                dx = tile[k, 0] - px
                dy = tile[k, 1] - py
                dz = tile[k, 2] - pz
                r2 = dx * dx + dy * dy + dz * dz + 0.01
                s = tile[k, 3] / (r2 * math.sqrt(r2))
                fx += dx * s
                fy += dy * s
                fz += dz * s
            cuda.syncthreads()
        if i < n:
            force[i, 0] = fx
            force[i, 1] = fy
            force[i, 2] = fz
    return nbody_tiled


nbody_tiled = _nbody_tiled(float64)
nbody_tiled_f32 = _nbody_tiled(float32)


@cuda.jit
def pair_sum(x, out):
    """out[i] = sum over j of f(x[j] - x[i]), f(d) = d / (d * d + 1e-6): the j == i term's
    adjoint (f'(0) = 1e6) goes to x[j] through shared memory (atomic) and comes back negated
    through x[i] (a register summed over the loop); only their sum is small."""
    i = cuda.grid(1)
    if i < x.size:
        xi = x[i]
        e = float32(0.0)              # float32 constants: float32 data stays float32
        for j in range(x.size):
            d = x[j] - xi
            e += d / (d * d + float32(1e-6))
        out[i] = e


@cuda.jit
def histogram_f32(x, w, a, hist):
    """A float32 histogram privatised per block (one bin per thread), with an Active float32
    scale a: with accumulate="float64" the shared bins' shadow is float64 in shared memory,
    a's derivative a float64 block sum."""
    bins = cuda.shared.array(NBINS, float32)
    t = cuda.threadIdx.x
    if t < NBINS:
        bins[t] = float32(0.0)
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        b = int(x[i] * NBINS) % NBINS
        cuda.atomic.add(bins, b, a * w[i] * w[i])
    cuda.syncthreads()
    if t < NBINS:
        cuda.atomic.add(hist, t, bins[t])


TPB = 4


@cuda.jit
def matmul_shared(A, B, C):
    """numba-cuda's documented fast matrix product: TPB x TPB tiles of A and B in shared
    memory, a 2-D grid of 2-D blocks."""
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float64)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float64)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = 0.0
    for i in range(bpg):
        sA[ty, tx] = 0.0
        sB[ty, tx] = 0.0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


WIDE_BINS = 40


@cuda.jit
def histogram_shared(x, w, hist):
    """A weighted histogram privatised per block: each block counts into bins in shared memory
    (shared atomics), then adds its bins into the global histogram, one atomic per bin; more
    bins than threads, so the block zeroes and flushes them in strided loops. The bin comes
    from x (its derivative is zero)."""
    bins = cuda.shared.array(WIDE_BINS, float64)
    t = cuda.threadIdx.x
    for k in range(t, WIDE_BINS, cuda.blockDim.x):
        bins[k] = 0.0
    cuda.syncthreads()
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(bins, int(x[i] * WIDE_BINS) % WIDE_BINS, math.exp(w[i]))
    cuda.syncthreads()
    for k in range(t, WIDE_BINS, cuda.blockDim.x):
        cuda.atomic.add(hist, k, bins[k])


@cuda.jit
def block_sum_pair(x, out):
    """A tree reduction that stops at two partials and ends in s[0] + s[1]."""
    s = cuda.shared.array(64, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = math.cos(x[i]) * x[i] if i < x.size else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 1:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0] + s[1]


@cuda.jit
def relax_in_place(x, c, steps):
    """Each thread advances its own state x[i] in place, steps[i] times (a trip count read from
    data): every iteration overwrites the value the next one reads."""
    i = cuda.grid(1)
    if i < x.size:
        for _ in range(steps[i]):
            x[i] = x[i] + 0.3 * math.sin(c[i] * x[i])


@cuda.jit
def weighted(x, w, a, y):
    """Every thread reads w[0], w[1] and the Active a: three sums over all threads."""
    i = cuda.grid(1)
    if i < y.size:
        y[i] = w[0] * math.sin(x[i]) + w[1] * x[i] * x[i] + a * math.cos(x[i])


@cuda.jit
def dynamic_sum(x, out):
    """A tree reduction in dynamic shared memory: the launch gives the buffer, whose size
    (s.size, read from %dynamic_smem_size) sets the first stride."""
    s = cuda.shared.array(0, float64)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = x[i] * x[i] if i < x.size else 0.0
    cuda.syncthreads()
    stride = s.size // 2
    while stride > 0:
        if t < stride:
            s[t] += math.sin(s[t + stride])
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


@dataclass
class Case:
    """A kernel, its launch, and a function making its arguments: a list of (kind, value) with
    kind "dup" (an array with a seed / tangent), "const" or "active" (a float)."""
    kernel: object
    blocks: int
    threads: int
    make: object
    rtol: float = 1e-6
    accumulate: str | None = None      # reverse mode: "float64" sums float32 adjoints in float64
    deterministic: bool = False        # reverse mode: fixed-order sums (and compared with atomic)
    dynamic: int = 0                   # bytes of dynamic shared memory of the launch

    @property
    def config(self):
        if self.dynamic:
            return self.kernel[self.blocks, self.threads, 0, self.dynamic]
        return self.kernel[self.blocks, self.threads]


def _rng():
    return np.random.default_rng(7)


CASES = {
    "elementwise": Case(elementwise, 2, 32, lambda r: [
        ("dup", r.normal(size=50)), ("active", 0.7), ("dup", np.zeros(50))]),
    "early_return": Case(early_return, 2, 32, lambda r: [
        ("dup", r.normal(size=64)), ("const", 45), ("dup", np.zeros(64))]),
    "gather": Case(gather, 2, 32, lambda r: [
        ("dup", r.normal(size=40)), ("const", r.integers(0, 40, size=40)),
        ("dup", np.array([1.3, -0.4])), ("dup", np.zeros(40))]),
    "nbody": Case(nbody, 2, 16, lambda r: [
        ("dup", r.normal(size=(20, 3))), ("dup", r.uniform(1.0, 2.0, size=20)),
        ("dup", np.zeros((20, 3)))]),
    "block_sum": Case(block_sum, 2, 16, lambda r: [
        ("dup", r.normal(size=28)), ("dup", np.zeros(2))]),
    "block_sum_atomic": Case(block_sum_atomic, 2, 16, lambda r: [
        ("dup", r.normal(size=28)), ("dup", np.zeros(1))]),
    "two_partials": Case(two_partials, 2, 2, lambda r: [
        ("dup", r.normal(size=4)), ("dup", np.zeros(2))]),
    "noisy_scale": Case(noisy_scale, 1, 32, lambda r: [
        ("dup", r.normal(size=20)), ("const", r.integers(1, 2**32 - 1, size=20, dtype=np.uint64)),
        ("dup", np.zeros(20))]),
    "kepler": Case(kepler, 1, 32, lambda r: [
        ("dup", r.uniform(0.1, 3.0, size=24)), ("dup", r.uniform(0.05, 0.6, size=24)),
        ("dup", np.zeros(24))]),
    "local_array": Case(local_array, 2, 32, lambda r: [
        ("dup", r.normal(size=50)), ("dup", np.zeros(50))]),
    "warp_block_sum": Case(warp_block_sum, 1, 64, lambda r: [
        ("dup", r.normal(size=40)), ("dup", np.zeros(1))]),
    "warp_softmax": Case(warp_softmax, 1, 32, lambda r: [
        ("dup", r.normal(size=28)), ("dup", np.zeros(28))]),
    "warp_broadcast": Case(warp_broadcast, 1, 32, lambda r: [
        ("dup", r.normal(size=30)), ("dup", np.zeros(30))]),
    "warp_partial": Case(warp_partial, 1, 48, lambda r: [
        ("dup", r.normal(size=48)), ("dup", np.zeros(48))]),
    "warp_sum_f32": Case(warp_sum_f32, 1, 64, lambda r: [
        ("dup", r.normal(size=40).astype(np.float32)), ("dup", np.zeros(2, np.float32))],
        rtol=2e-2),
    "elementwise_f32": Case(elementwise_f32, 2, 32, lambda r: [
        ("dup", r.normal(size=40).astype(np.float32)), ("dup", np.zeros(40, np.float32))],
        rtol=2e-2),
    "nbody_tiled": Case(nbody_tiled, 2, TILE, lambda r: [
        ("dup", r.normal(size=(27, 3))), ("dup", r.uniform(1.0, 2.0, size=27)),
        ("dup", np.zeros((27, 3)))]),
    "histogram_f32_wide": Case(histogram_f32, 3, 32, lambda r: [
        ("const", r.uniform(0.0, 1.0, size=90).astype(np.float32)),
        ("dup", r.normal(size=90).astype(np.float32)), ("active", np.float32(0.7)),
        ("dup", np.zeros(NBINS, np.float32))], rtol=2e-2, accumulate="float64"),
    "matmul_shared": Case(matmul_shared, (2, 2), (TPB, TPB), lambda r: [
        ("dup", r.normal(size=(7, 6))), ("dup", r.normal(size=(6, 7))),
        ("dup", np.zeros((7, 7)))]),
    "histogram_shared": Case(histogram_shared, 3, 16, lambda r: [
        ("dup", r.uniform(0.01, 0.99, size=45)), ("dup", r.normal(size=45)),
        ("dup", np.zeros(WIDE_BINS))]),
    "nbody_tiled_f32_wide": Case(nbody_tiled_f32, 2, TILE, lambda r: [
        ("dup", r.normal(size=(27, 3)).astype(np.float32)),
        ("dup", r.uniform(1.0, 2.0, size=27).astype(np.float32)),
        ("dup", np.zeros((27, 3), np.float32))], rtol=2e-2, accumulate="float64"),
    "block_sum_pair": Case(block_sum_pair, 2, 16, lambda r: [
        ("dup", r.normal(size=28)), ("dup", np.zeros(2))]),
    "weighted_deterministic": Case(weighted, 3, 32, lambda r: [
        ("dup", r.normal(size=80)), ("dup", np.array([0.8, -0.3])), ("active", 0.6),
        ("dup", np.zeros(80))], deterministic=True),
    "dynamic_sum": Case(dynamic_sum, 2, 16, lambda r: [
        ("dup", r.normal(size=28)), ("dup", np.zeros(2))], dynamic=16 * 8),
    "relax_in_place": Case(relax_in_place, 2, 16, lambda r: [
        ("dup", r.normal(size=27)), ("dup", r.uniform(0.5, 1.5, size=27)),
        ("const", r.integers(0, 9, size=27))]),
}


# ---- the GPU-free check -------------------------------------------------------------------

def check(name: str) -> dict:
    from enzyme_py import Active, Const, Duplicated, Forward, Reverse
    from enzyme_py.cuda.api import compile_kernel
    from enzyme_py.cuda.codegen import ptxas
    from enzyme_py.cuda.harness import HostKernel, kernel_params
    case = CASES[name]
    rng = _rng()
    spec = case.make(rng)
    config = case.config
    report = {"kernel": name}
    for mode in (Reverse, Forward):
        annotated = [Duplicated(v, np.zeros_like(v)) if k == "dup" else
                     Active(v, 0.3) if k == "active" else Const(v) for k, v in spec]
        reverse = mode is Reverse
        ck = compile_kernel(config, *annotated, mode=mode, cc=(8, 0),
                            accumulate=case.accumulate if reverse else None,
                            deterministic=case.deterministic and reverse)
        entry = report.setdefault(mode.name, {})
        entry["updates"] = sorted({u.how for u in ck.updates})
        entry["atomics"] = sum(u.how == "atomic" for u in ck.updates)
        entry["float_atomics"] = ck.generated.count("atomicrmw fadd")
        if case.deterministic and reverse:
            atomic = compile_kernel(config, *annotated, cc=(8, 0))
            entry["float_atomics_without"] = atomic.generated.count("atomicrmw fadd")
            entry["versus_atomic"] = _versus_atomic(case, spec, ck, atomic)
        for cc in ((8, 0), (9, 0)):
            rc, msg = ptxas(ck.ptx(cc), f"sm_{cc[0]}{cc[1]}")
            entry[f"ptxas_sm_{cc[0]}{cc[1]}"] = [rc, msg[-400:]]
        primal = HostKernel(ck.cleaned, _kernel_symbol(ck), case.dynamic)
        generated = _host(case, ck)
        run = _reverse if mode is Reverse else _forward
        entry["errors"] = run(case, spec, ck, primal, generated, kernel_params, rng)
    return report


def _host(case, ck):
    """The generated kernel on the CPU harness, with the dynamic shared memory it needs."""
    from enzyme_py.cuda.harness import HostKernel
    from ir_passes import dynamic_shared_bytes
    return HostKernel(ck.generated, ck.name, dynamic_shared_bytes(case.dynamic, ck.dynamic))


def _dynamic(case, ck) -> list:
    """The generated kernel's last parameter when it has dynamic shadows: the launch's size."""
    return [case.dynamic] if ck.dynamic is not None else []


def _kernel_symbol(ck) -> str:
    import re
    return re.search(r"^define ptx_kernel void @(\S+)\(", ck.cleaned, re.M).group(1)


def _launch(case, host, argtypes, values, extra=(), reverse_blocks=False):
    from enzyme_py.cuda.harness import kernel_params
    host.launch(case.blocks, case.threads, kernel_params(argtypes, values) + list(extra),
                reverse_blocks=reverse_blocks)


def _loss(case, primal, argtypes, spec, values, seeds):
    vals = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    _launch(case, primal, argtypes, vals)
    return sum(float(np.sum(seeds[k].astype(np.float64) * vals[k])) for k in seeds)


def _reverse(case, spec, ck, primal, generated, kernel_params, rng) -> dict:
    """Shadows seeded at random against central differences of L = sum <seed, final array>."""
    values = [v for _, v in spec]
    seeds = {k: rng.normal(size=np.shape(v)).astype(v.dtype) for k, (kind, v) in enumerate(spec)
             if kind == "dup"}
    shadows, douts = _run_reverse(case, spec, ck, generated, seeds)
    errors = {}
    for k, (kind, v) in enumerate(spec):
        if kind == "const":
            continue
        eps = 1e-3 if np.asarray(v).dtype == np.float32 else 1e-6
        fd = np.zeros(np.shape(v))
        for j in np.ndindex(*np.shape(v)):
            plus, minus = list(values), list(values)
            if kind == "dup":
                plus[k], minus[k] = v.copy(), v.copy()
                plus[k][j] += eps
                minus[k][j] -= eps
            else:
                plus[k], minus[k] = v + eps, v - eps
            fd[j] = (_loss(case, primal, ck.argtypes, spec, plus, seeds) -
                     _loss(case, primal, ck.argtypes, spec, minus, seeds)) / (2 * eps)
        ad = shadows[k] if kind == "dup" else douts[k][0]
        errors[str(k)] = _relative(ad, fd)
    return errors


def _run_reverse(case, spec, ck, generated, seeds, reverse_blocks=False):
    """(shadows, Active derivative outputs) of one run of the gradient kernel on the harness
    (its blocks in reverse order with `reverse_blocks`)."""
    values = [v for _, v in spec]
    wide = {k for k, s in seeds.items() if case.accumulate and s.dtype == np.float32}
    shadows = {k: s.astype(np.float64) if k in wide else s.copy() for k, s in seeds.items()}
    douts = {k: np.zeros(1, np.float32 if np.asarray(v).dtype == np.float32 and not
                         case.accumulate else np.float64)
             for k, (kind, v) in enumerate(spec) if kind == "active"}
    run_values = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    # deterministic sums: a ticket counter, then a slot per (sum, block) (block_sum.scratch_bytes)
    scratch = np.zeros(2 + ck.scratch_sites * int(np.prod(case.blocks)))
    _launch(case, generated, ck.argtypes, run_values,
            [shadows[k].ctypes.data for k in sorted(shadows)] +
            [douts[k].ctypes.data for k in sorted(douts)] +
            ([scratch.ctypes.data] if ck.scratch_sites else []) + _dynamic(case, ck),
            reverse_blocks)
    for k in wide:                      # float64 sums, rounded to float32 once
        shadows[k] = shadows[k].astype(np.float32)
    return shadows, douts


def _versus_atomic(case, spec, det, atomic) -> dict:
    """For the same seeds: the largest relative difference between the deterministic gradient
    and the one with atomic adds, and whether the deterministic one has the same bits when the
    blocks run in reverse order (then the first block takes the last ticket)."""
    seeds = {k: _rng().normal(size=np.shape(v)) for k, (kind, v) in enumerate(spec) if kind == "dup"}
    host = _host(case, det)
    (sa, da), (sb, db), (sr, dr) = [
        _run_reverse(case, spec, ck, h, seeds, rev) for ck, h, rev in
        ((det, host, False), (atomic, _host(case, atomic), False), (det, host, True))]
    same = all(np.array_equal(sa[k], sr[k]) for k in sa) and \
        all(np.array_equal(da[k], dr[k]) for k in da)
    return {"error": max([_relative(sa[k], sb[k]) for k in sa] +
                         [_relative(da[k], db[k]) for k in da]), "reversed_same_bits": same}


def _forward(case, spec, ck, primal, generated, kernel_params, rng) -> dict:
    """Random tangents of the initial arrays against a central difference along them."""
    values = [v for _, v in spec]
    tangents = {k: rng.normal(size=np.shape(v)).astype(v.dtype) for k, (kind, v) in
                enumerate(spec) if kind == "dup"}
    scalar_t = {k: 0.3 for k, (kind, _) in enumerate(spec) if kind == "active"}
    shadows = {k: t.copy() for k, t in tangents.items()}
    run_values = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    _launch(case, generated, ck.argtypes, run_values,
            [shadows[k].ctypes.data for k in sorted(shadows)] +
            [scalar_t[k] for k in sorted(scalar_t)] + _dynamic(case, ck))
    eps = 1e-3 if any(np.asarray(v).dtype == np.float32 for _, v in spec) else 1e-6

    def moved(sign):
        vals = []
        for k, (kind, v) in enumerate(spec):
            if kind == "dup":
                vals.append((v + sign * eps * tangents[k]).astype(v.dtype))
            elif kind == "active":
                vals.append(v + sign * eps * scalar_t[k])
            else:     # a copy each run: a kernel may advance state held in a Const array
                vals.append(v.copy() if isinstance(v, np.ndarray) else v)
        _launch(case, primal, ck.argtypes, vals)
        return vals

    plus, minus = moved(1), moved(-1)
    errors = {}
    for k in shadows:
        fd = (plus[k].astype(np.float64) - minus[k].astype(np.float64)) / (2 * eps)
        errors[str(k)] = _relative(shadows[k], fd)
    return errors


def check_batched(name: str, width: int = 2) -> dict:
    """Forward mode with `width` directions in one launch (BatchDuplicated; an Active argument
    gets a tuple of tangents): ptxas for sm_80 and sm_90, and each direction's tangents on the
    CPU harness against a central difference of the primal along that direction."""
    from enzyme_py import Active, BatchDuplicated, Const, Forward
    from enzyme_py.cuda.api import compile_kernel
    from enzyme_py.cuda.codegen import ptxas
    from enzyme_py.cuda.harness import HostKernel
    case = CASES[name]
    rng = _rng()
    spec = case.make(rng)
    values = [v for _, v in spec]
    tangents = {k: [rng.normal(size=np.shape(v)).astype(v.dtype) for _ in range(width)]
                for k, (kind, v) in enumerate(spec) if kind == "dup"}
    scalar_t = {k: tuple(0.3 * (lane + 1) for lane in range(width))
                for k, (kind, _) in enumerate(spec) if kind == "active"}
    shadows = {k: [t.copy() for t in ts] for k, ts in tangents.items()}
    annotated = [BatchDuplicated(v, tuple(shadows[k])) if kind == "dup" else
                 Active(v, scalar_t[k]) if kind == "active" else Const(v)
                 for k, (kind, v) in enumerate(spec)]
    ck = compile_kernel(case.config, *annotated, mode=Forward, cc=(8, 0))
    report = {"kernel": name, "width": width}
    for cc in ((8, 0), (9, 0)):
        rc, msg = ptxas(ck.ptx(cc), f"sm_{cc[0]}{cc[1]}")
        report[f"ptxas_sm_{cc[0]}{cc[1]}"] = [rc, msg[-400:]]
    primal = HostKernel(ck.cleaned, _kernel_symbol(ck), case.dynamic)
    run_values = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    _launch(case, _host(case, ck), ck.argtypes, run_values,
            [s.ctypes.data for k in sorted(shadows) for s in shadows[k]] +
            [t for k in sorted(scalar_t) for t in scalar_t[k]] + _dynamic(case, ck))
    eps = 1e-3 if any(np.asarray(v).dtype == np.float32 for _, v in spec) else 1e-6
    errors = {}
    for lane in range(width):
        def moved(sign):
            vals = []
            for k, (kind, v) in enumerate(spec):
                if kind == "dup":
                    vals.append((v + sign * eps * tangents[k][lane]).astype(v.dtype))
                elif kind == "active":
                    vals.append(v + sign * eps * scalar_t[k][lane])
                else:
                    vals.append(v.copy() if isinstance(v, np.ndarray) else v)
            _launch(case, primal, ck.argtypes, vals)
            return vals
        plus, minus = moved(1), moved(-1)
        for k in shadows:
            fd = (plus[k].astype(np.float64) - minus[k].astype(np.float64)) / (2 * eps)
            errors[f"{k}.{lane}"] = _relative(shadows[k][lane], fd)
    report["errors"] = errors
    return report


def _relative(ad, fd) -> float:
    ad, fd = np.asarray(ad, dtype=np.float64), np.asarray(fd, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(fd))) if fd.size else 1.0)
    return float(np.max(np.abs(ad - fd)) / scale) if fd.size else 0.0


# ---- float32 adjoints summed in float64 (accumulate="float64") ------------------------------

def check_float64_sums(n: int = 512, threads: int = 128) -> dict:
    """pair_sum's float32 gradient, with float32 sums and with float64 sums, against its float64
    gradient at the same (float32) points: the largest error relative to the largest entry,
    and ptxas on the float64-sum kernel's PTX."""
    from enzyme_py.cuda.codegen import ptxas
    rng = _rng()
    x = (np.arange(n) * 0.1 + rng.uniform(0.0, 0.02, size=n)).astype(np.float32)
    rng.shuffle(x)
    seed = rng.normal(size=n).astype(np.float32)
    config = pair_sum[(n + threads - 1) // threads, threads]
    ref, _ = _pair_gradient(config, x.astype(np.float64), seed.astype(np.float64), None)
    report = {}
    for accumulate in (None, "float64"):
        dx, ck = _pair_gradient(config, x, seed, accumulate)
        err = float(np.max(np.abs(dx.astype(np.float64) - ref)) / np.max(np.abs(ref)))
        report[str(accumulate)] = {"error": err}
        if accumulate:
            for cc in ((8, 0), (9, 0)):
                rc, msg = ptxas(ck.ptx(cc), f"sm_{cc[0]}{cc[1]}")
                report[accumulate][f"ptxas_sm_{cc[0]}{cc[1]}"] = [rc, msg[-400:]]
    return report


def _pair_gradient(config, x, seed, accumulate):
    """The reverse-mode gradient of pair_sum w.r.t. x, run on the CPU harness: with
    accumulate="float64" the kernel takes float64 shadows, rounded to float32 once after."""
    from enzyme_py import Duplicated
    from enzyme_py.cuda.api import compile_kernel
    from enzyme_py.cuda.harness import HostKernel
    out = np.zeros_like(x)
    ck = compile_kernel(config, Duplicated(x, np.zeros_like(x)), Duplicated(out, seed.copy()),
                        cc=(8, 0), accumulate=accumulate)
    wide = np.float64 if accumulate else x.dtype
    shadows = [np.zeros(x.shape, wide), seed.astype(wide)]
    case = Case(config, config.griddim[0], config.blockdim[0], None)
    _launch(case, HostKernel(ck.generated, ck.name), ck.argtypes, [x.copy(), out],
            [a.ctypes.data for a in shadows])
    return shadows[0].astype(x.dtype), ck


if __name__ == "__main__":
    import warnings
    warnings.simplefilter("ignore")
    if sys.argv[1] == "--float64-sums":
        print(json.dumps({"kernel": sys.argv[1], **check_float64_sums()}))
    elif sys.argv[1] == "--batched":
        for name in sys.argv[2:]:
            print(json.dumps(check_batched(name)), flush=True)
    else:
        for name in sys.argv[1:]:
            print(json.dumps(check(name)), flush=True)
