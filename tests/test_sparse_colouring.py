"""Column colourings (enzyme_py/colouring.py): every order gives a valid colouring, and the
default (the best of the orders, stopping at the lower bound) colours the 5-point stencil with
5 colours, where natural order takes 7."""
import numpy as np
import pytest
import scipy.sparse as sp

from enzyme_py.colouring import ORDERS, check_colouring, colour_columns, column_order


def stencil(n):
    """The 5-point stencil's Jacobian pattern on an n x n grid."""
    eye = sp.identity(n)
    band = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n))
    return sp.csr_matrix(sp.kron(band, eye) + sp.kron(eye, band))


def test_stencil_takes_five_colours():
    P = stencil(32)
    assert colour_columns(P, "natural").max() + 1 == 7
    assert colour_columns(P, "smallest_last").max() + 1 == 5
    c = colour_columns(P)
    assert c.max() + 1 == 5 and check_colouring(P, c)


@pytest.mark.parametrize("order", ORDERS)
def test_every_order_is_a_valid_colouring(order):
    rng = np.random.default_rng(7)
    for density in (0.02, 0.1, 0.3):
        P = sp.random(60, 45, density=density, random_state=rng, format="csr")
        perm = column_order(P, order)
        assert np.array_equal(np.sort(perm), np.arange(45))
        c = colour_columns(P, order)
        assert check_colouring(P, c)
        assert c.max() + 1 >= np.diff(P.indptr).max()


def test_order_must_be_a_permutation():
    with pytest.raises(ValueError, match="permutation"):
        colour_columns(stencil(3), [0, 0, 1, 2, 3, 4, 5, 6, 7])
    with pytest.raises(ValueError, match="not one of"):
        colour_columns(stencil(3), "random")
