"""A Numba kernel as a PyTorch layer: fit the diffusivity and the amplitude of a 1-D heat
equation's initial profile (the kernel steps it in place) to an observed final profile, with
torch's Adam.

    pip install -e '.[torch]' && python examples/torch_layer.py

enzyme_py.torch.kernel_op makes the kernel a torch operator: its backward is the reverse sweep
enzyme_py generates from the kernel's LLVM IR, run from the tape of the forward call.
"""
import numpy as np
import torch
from numba import njit

from enzyme_py.torch import kernel_op


@njit
def heat(u, alpha, steps):
    """`steps` explicit steps of u_t = u_xx, in place, ends fixed (alpha = dt / dx^2)."""
    n = u.shape[0]
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            ui = u[i]
            u[i] = ui + alpha * (left - 2.0 * ui + u[i + 1])
            left = ui


# u is overwritten ("inout": the op runs on a copy and returns it), alpha is differentiable,
# steps is a Python int
heat_op = kernel_op(heat, ["inout", "in", int])


class Diffusion(torch.nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.shape = shape
        self.amplitude = torch.nn.Parameter(torch.tensor(0.5, dtype=torch.float64))
        self.raw_alpha = torch.nn.Parameter(torch.tensor(0.0, dtype=torch.float64))

    def alpha(self):
        return 0.45 * torch.sigmoid(self.raw_alpha)     # stable: alpha < 1/2

    def forward(self, steps):
        return heat_op(self.amplitude * self.shape, self.alpha(), steps)


def main(n=64, steps=50, iters=300):
    x = np.linspace(0.0, 1.0, n)
    shape = torch.tensor(np.exp(-80.0 * (x - 0.4) ** 2))
    observed = heat_op(1.7 * shape, torch.tensor(0.3, dtype=torch.float64), steps)
    model = Diffusion(shape)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for it in range(iters):
        opt.zero_grad()
        loss = ((model(steps) - observed) ** 2).sum()
        loss.backward()
        opt.step()
        if it % 50 == 0 or it == iters - 1:
            print(f"step {it:3d}  loss {loss.item():.3e}  alpha {model.alpha().item():.4f} "
                  f"(true 0.3)  amplitude {model.amplitude.item():.4f} (true 1.7)")
    return loss.item()


if __name__ == "__main__":
    main()
