"""Complex BLAS (rules/blas.py, "Complex data"): np.dot, @ and np.vdot on complex vectors and
matrices (zdotu/zdotc, zgemv, zgemm as Numba calls them) in reverse mode against finite
differences and the analytic adjoints, in forward mode against central differences along a
complex direction (complex LAPACK and the refusal of complex eig's eigenvectors:
test_complex_lu.py, test_complex_lapack.py)."""
import numba
import numpy as np

from enzyme_py import Duplicated, Forward, autodiff, check_gradient

RNG = np.random.default_rng(11)


def crandn(*shape, dtype=np.complex128):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(dtype)


@numba.njit
def dots(x, y):
    return (np.dot(x, y) * (0.5 - 1j)).real + np.vdot(x, y).imag


@numba.njit
def products(a, b, x):       # gemm (plain, transposed operands, a @ a), gemv both ways
    c = a @ b + a.T @ b.T + a @ a
    y = a @ x + x @ b
    return (np.sum(c * c) + np.sum(y * np.conj(y))).real + np.sum(c).imag


@numba.njit
def matmul_into(a, b, c):
    c[:] = a @ b


def check_forward(kernel, args, rtol=1e-6):
    """The tangent along a random complex direction of every array against a central
    difference."""
    dirs = [crandn(*a.shape, dtype=a.dtype) for a in args]
    t = autodiff(kernel, *[Duplicated(a.copy(), d.copy()) for a, d in zip(args, dirs)],
                 mode=Forward)
    h = 1e-6
    plus = kernel(*[a + h * d for a, d in zip(args, dirs)])
    minus = kernel(*[a - h * d for a, d in zip(args, dirs)])
    np.testing.assert_allclose(t, (plus - minus) / (2 * h), rtol=rtol, atol=rtol)


def test_dot_and_vdot():
    x, y = crandn(5), crandn(5)
    report = check_gradient(dots, Duplicated(x, np.zeros(5, complex)),
                            Duplicated(y, np.zeros(5, complex)))
    assert report.passed, str(report)
    dx, dy = np.zeros(5, complex), np.zeros(5, complex)
    autodiff(dots, Duplicated(x.copy(), dx), Duplicated(y.copy(), dy))
    # L = Re(conj(s) x.y) + Re(conj(i) x^H y), s = 0.5 + i:
    # dx = s conj(y) + conj(i) y, dy = s conj(x) + i x
    s = np.conj(0.5 - 1j)
    np.testing.assert_allclose(dx, s * np.conj(y) - 1j * y, rtol=1e-13)
    np.testing.assert_allclose(dy, s * np.conj(x) + 1j * x, rtol=1e-13)
    check_forward(dots, [x, y])


def test_matrix_products_against_finite_differences():
    a, b, x = crandn(3, 3), crandn(3, 3), crandn(3)
    report = check_gradient(products, *[Duplicated(v, np.zeros_like(v)) for v in (a, b, x)])
    assert report.passed, str(report)
    check_forward(products, [a, b, x])


def test_rectangular_matmul_adjoint():
    a, b, s = crandn(2, 4), crandn(4, 3), crandn(2, 3)
    da, db = np.zeros_like(a), np.zeros_like(b)
    autodiff(matmul_into, Duplicated(a.copy(), da), Duplicated(b.copy(), db),
             Duplicated(np.zeros((2, 3), complex), s.copy()))
    np.testing.assert_allclose(da, s @ b.conj().T, rtol=1e-13)     # dA = dC B^H
    np.testing.assert_allclose(db, a.conj().T @ s, rtol=1e-13)     # dB = A^H dC
    c = np.zeros((2, 3), complex)
    tc = np.zeros((2, 3), complex)
    ta, tb = crandn(2, 4), crandn(4, 3)
    autodiff(matmul_into, Duplicated(a.copy(), ta), Duplicated(b.copy(), tb), Duplicated(c, tc),
             mode=Forward)
    np.testing.assert_allclose(tc, ta @ b + a @ tb, rtol=1e-13)


def test_complex64_matmul():
    a, b = crandn(3, 2, dtype=np.complex64), crandn(2, 3, dtype=np.complex64)
    report = check_gradient(matmul_into, Duplicated(a, np.zeros_like(a)),
                            Duplicated(b, np.zeros_like(b)),
                            Duplicated(np.zeros((3, 3), np.complex64), np.zeros((3, 3), np.complex64)),
                            rng=2, fd_dtype=np.float64)
    assert report.passed, str(report)


@numba.njit
def solve_into(a, b, x):
    x[:] = np.linalg.solve(a, b)


def test_solve_adjoint_tangent_and_finite_differences():
    a, b, s = crandn(3, 3) + 3 * np.eye(3), crandn(3, 2), crandn(3, 2)
    da, db = np.zeros_like(a), np.zeros_like(b)
    autodiff(solve_into, Duplicated(a.copy(), da), Duplicated(b.copy(), db),
             Duplicated(np.zeros_like(b), s.copy()))
    x, y = np.linalg.solve(a, b), np.linalg.solve(a.conj().T, s)
    np.testing.assert_allclose(db, y, rtol=1e-12)                  # dB = A^{-H} dX
    np.testing.assert_allclose(da, -y @ x.conj().T, rtol=1e-12)    # dA = -dB X^H
    ta, tb, tx = crandn(3, 3), crandn(3, 2), np.zeros_like(b)
    autodiff(solve_into, Duplicated(a.copy(), ta), Duplicated(b.copy(), tb),
             Duplicated(np.zeros_like(b), tx), mode=Forward)
    np.testing.assert_allclose(tx, np.linalg.solve(a, tb - ta @ x), rtol=1e-12)
    report = check_gradient(solve_into, Duplicated(a, np.zeros_like(a)),
                            Duplicated(b, np.zeros_like(b)),
                            Duplicated(np.zeros_like(b), np.zeros_like(b)), rng=4)
    assert report.passed, str(report)
