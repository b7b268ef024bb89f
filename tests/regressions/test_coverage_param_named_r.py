"""The coverage table's complex kernels returned `R(<value>)` while the rectangular-matrix input is
also named R: the parameter shadowed the helper, Numba refused to call an array, and lstsq, pinv,
qr and svd showed "numba" in the complex column."""
import numpy as np

from tools.numpy_coverage.kernels import build


def test_complex_kernel_with_a_parameter_named_r():
    kernel = build("sum_r", "np.sum(R)", ["R"], real=True)
    r = np.array([[1.0 + 2.0j, 3.0 - 1.0j]])
    assert kernel(r) == 4.0 + 0.37 * 1.0
