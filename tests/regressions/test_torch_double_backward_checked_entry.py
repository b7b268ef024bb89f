"""Fixed: every enzyme_py.torch double backward was refused (NotImplementedError).

The double backward is forward mode over an @njit function that calls `autodiff` (reverse mode)
in @njit code, whose strong-zero entry copies arrays and reruns an inf or NaN call from an
object-mode block, which forward mode cannot differentiate. The capture now links the guarded
gradient, called straight, in the entry's place (bridge/capture.capture_as).
"""
import numpy as np
import pytest
from numba import njit

torch = pytest.importorskip("torch")

from enzyme_py.torch import kernel_op  # noqa: E402


@njit
def cubes(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += w * x[i] * x[i] * x[i]
    return s


def test_double_backward_matches_the_hessian():
    op = kernel_op(cubes, ["in", "in"], returns=True)
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor(1.5, dtype=torch.float64, requires_grad=True)
    v = torch.tensor([1.0, 2.0, -0.5], dtype=torch.float64)
    (gx,) = torch.autograd.grad(op(x, w), x, create_graph=True)
    hx, hw = torch.autograd.grad((gx * v).sum(), [x, w])
    xn, vn = x.detach().numpy(), v.numpy()
    np.testing.assert_allclose(hx.numpy(), 6 * 1.5 * xn * vn, rtol=1e-14)     # d2/dx2 . v
    np.testing.assert_allclose(hw.item(), (3 * xn * xn * vn).sum(), rtol=1e-14)   # d2/dw dx . v
