"""A reshaped view of the differentiated array made SparseJacobian's pattern input-specific:
ir_passes' decisions took Numba's stack struct holding the view's data pointer for memory
holding x's values, so the shape arithmetic of `reshape` (read back from it and through a
runtime call) and every index after it looked computed from x. Fixed in
ir_passes/analysis/decisions.py (holders of pointers, stack slots, reference counts)."""
import numpy as np
from numba import njit

from enzyme_py import SparseJacobian, jacobian


@njit
def reshaped(x, out, n):
    """A reshaped view of x (Numba stores its data pointer in a stack slot and computes the
    shape through a runtime call): no decision depends on x's values."""
    a = x.reshape(n, 3)
    for i in range(n):
        out[i] = a[i, 0] * a[i, 1] + np.sin(a[i, 2])


def test_reshaped_view_is_not_input_specific():
    J = SparseJacobian(reshaped)
    rng = np.random.default_rng(3)
    for _ in range(2):
        x, out = rng.random(12), np.zeros(4)
        S = J(x, 4, out=out)
        np.testing.assert_allclose(S.toarray(), jacobian(reshaped, x, 4, out=out), rtol=1e-13, atol=0)
    assert J.decisions == [] and not J.input_specific and J.detections == 1
    assert np.array_equal(J.pattern.toarray(), np.kron(np.eye(4), np.ones(3)))

