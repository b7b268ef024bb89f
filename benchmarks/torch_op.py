"""A kernel called through enzyme_py.torch against the same kernel called directly.

    python -m benchmarks.torch_op [--quick]

Per-call overhead: the op on small tensors (no grad) minus a direct call on the same arrays, in
microseconds. Gradient time: forward + backward through torch (augmented forward, reverse from
the tape) over the direct `autodiff` call, on the heat equation and N-body forces.
"""
import sys
import time

import numpy as np
import torch

from enzyme_py import Active, Const, Duplicated, autodiff
from enzyme_py.torch import Out, kernel_op
from tests import torch_kernels as K


def best(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def overhead(reps):
    op = kernel_op(K.elementwise, ["in", "in", Out(like=0)])
    x, y = torch.rand(8, dtype=torch.float64), torch.rand(8, dtype=torch.float64)
    xa, ya, out = x.numpy(), y.numpy(), np.zeros(8)
    direct = best(lambda: K.elementwise(xa, ya, out), reps)
    through = best(lambda: op(x, y), reps)
    xg, yg = x.clone().requires_grad_(), y.clone().requires_grad_()
    w = torch.ones(8, dtype=torch.float64)
    grad_torch = best(lambda: torch.autograd.grad(op(xg, yg), (xg, yg), w), reps)
    dx, dy, dout = np.zeros(8), np.zeros(8), np.ones(8)
    grad_direct = best(lambda: autodiff(K.elementwise, Duplicated(xa, dx), Duplicated(ya, dy),
                                        Duplicated(out, dout)), reps)
    print(f"elementwise n=8: direct {direct * 1e6:.1f} us, op {through * 1e6:.1f} us "
          f"(+{(through - direct) * 1e6:.1f} us); gradient direct {grad_direct * 1e6:.1f} us, "
          f"through torch {grad_torch * 1e6:.1f} us (+{(grad_torch - grad_direct) * 1e6:.1f} us)")


def heat(n, steps, reps):
    op = kernel_op(K.heat_inplace, ["inout", "in", int])
    rerun = kernel_op(K.heat_inplace, ["inout", "in", int], backward="rerun")
    u0 = torch.rand(n, dtype=torch.float64)
    alpha = torch.tensor(0.2, dtype=torch.float64)
    w = torch.rand(n, dtype=torch.float64)
    primal = best(lambda: K.heat_inplace(u0.numpy().copy(), 0.2, steps), reps)

    def direct():
        du = w.numpy().copy()
        autodiff(K.heat_inplace, Duplicated(u0.numpy().copy(), du), Active(0.2), Const(steps))
    ug, ag = u0.clone().requires_grad_(), alpha.clone().requires_grad_()
    through = best(lambda: torch.autograd.grad(op(ug, ag, steps), (ug, ag), w), reps)
    again = best(lambda: torch.autograd.grad(rerun(ug, ag, steps), (ug, ag), w), reps)
    report(f"heat n={n} steps={steps}", primal, best(direct, reps), through, again)


def nbody(n, reps):
    op = kernel_op(K.nbody, ["in", "in", "in", Out(like=0), Out(like=0)])
    rerun = kernel_op(K.nbody, ["in", "in", "in", Out(like=0), Out(like=0)], backward="rerun")
    px, py, m = (torch.rand(n, dtype=torch.float64) for _ in range(3))
    wx, wy = torch.rand(n, dtype=torch.float64), torch.rand(n, dtype=torch.float64)
    fx, fy = np.zeros(n), np.zeros(n)
    primal = best(lambda: K.nbody(px.numpy(), py.numpy(), m.numpy(), fx, fy), reps)

    def direct():
        dpx, dpy, dm = np.zeros(n), np.zeros(n), np.zeros(n)
        autodiff(K.nbody, Duplicated(px.numpy(), dpx), Duplicated(py.numpy(), dpy),
                 Duplicated(m.numpy(), dm), Duplicated(fx, wx.numpy().copy()),
                 Duplicated(fy, wy.numpy().copy()))
    args = [t.clone().requires_grad_() for t in (px, py, m)]
    through = best(lambda: torch.autograd.grad(op(*args), args, (wx, wy)), reps)
    again = best(lambda: torch.autograd.grad(rerun(*args), args, (wx, wy)), reps)
    report(f"nbody n={n}", primal, best(direct, reps), through, again)


def report(name, primal, direct, through, again):
    print(f"{name}: primal {primal * 1e3:.2f} ms, autodiff {direct * 1e3:.2f} ms "
          f"({direct / primal:.1f}x); forward + backward through torch: tape "
          f"{through * 1e3:.2f} ms ({through / direct:.2f}x autodiff), rerun {again * 1e3:.2f} ms "
          f"({again / direct:.2f}x autodiff)")


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    torch.set_num_threads(1)
    overhead(200 if quick else 2000)
    heat(10_000 if quick else 100_000, 100, 3 if quick else 10)
    nbody(300 if quick else 1000, 3 if quick else 10)
