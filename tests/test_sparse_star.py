"""Star colourings of symmetric patterns (enzyme_py/star_colouring.py) and the sparse Hessians
that use them: every entry recovered exactly from the compressed products on random symmetric
matrices, and an arrowhead Hessian in 2 Hessian-vector products where a column colouring
takes one per variable."""
import numpy as np
import scipy.sparse as sp
from numba import njit

from enzyme_py import SparseHessian, hessian
from enzyme_py.colouring import colour_columns
from enzyme_py.star_colouring import check_star, colour_star, star_gather, symmetric


def _random_symmetric(rng, n, density):
    a = sp.random(n, n, density=density, random_state=rng, format="csr")
    return sp.csr_matrix(a + a.T + sp.diags(rng.random(n) + 1.0))


def _recover(h, colour):
    """Entries of h (as its symmetric pattern) from H S, S the colours' summed unit vectors."""
    n = h.shape[0]
    k = colour.max() + 1
    seeds = np.zeros((n, k))
    seeds[np.arange(n), colour] = 1.0
    products = (h @ seeds).T.copy()       # colour-major, rows of length n
    p = symmetric(h)
    return sp.csr_matrix((products.ravel()[star_gather(p, colour, n)], p.indices, p.indptr),
                         shape=h.shape)


def test_star_colourings_recover_every_entry():
    rng = np.random.default_rng(3)
    for n, density in ((30, 0.03), (50, 0.08), (80, 0.02), (40, 0.2)):
        h = _random_symmetric(rng, n, density)
        colour = colour_star(symmetric(h))
        assert check_star(symmetric(h), colour)
        np.testing.assert_array_equal(_recover(h, colour).toarray(), h.toarray())


def test_check_star_rejects_a_two_coloured_path():
    path = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(4, 4)).tocsr()
    assert not check_star(path, np.array([0, 1, 0, 1]))
    assert check_star(path, np.array([0, 1, 2, 0]))


def test_arrowhead_takes_two_colours():
    n = 60
    a = sp.lil_matrix((n, n))
    a[0, :] = 1.0
    a[:, 0] = 1.0
    a.setdiag(1.0)
    p = symmetric(a)
    assert colour_columns(p).max() + 1 == n
    colour = colour_star(p)
    assert colour.max() + 1 == 2 and check_star(p, colour)


@njit
def coupled(x, w):
    """A global scale x[0] coupled to every other variable: an arrowhead Hessian."""
    s = 0.0
    for i in range(1, x.size):
        s += w[i] * x[0] * x[0] * x[i] * x[i] + np.sin(x[i])
    return s + np.exp(x[0])


def test_sparse_hessian_of_an_arrowhead_uses_two_products():
    rng = np.random.default_rng(5)
    x, w = rng.random(25), rng.random(25)
    H = SparseHessian(coupled)
    S = H(x, w)
    D = hessian(coupled, x, w)
    assert H.star and H.ncolours == 2
    np.testing.assert_allclose(S.toarray(), D, rtol=1e-12, atol=1e-12)
    # analytic: d2/dx0 dxi = 4 w_i x0 x_i
    np.testing.assert_allclose(S[0, 1:].toarray().ravel(), 4 * w[1:] * x[0] * x[1:], rtol=1e-12)
    x2 = rng.random(25)
    np.testing.assert_allclose(H(x2, w).toarray(), hessian(coupled, x2, w), rtol=1e-12,
                               atol=1e-12)
    assert H.detections == 1

