"""colour_columns with a non-natural order set the data of the caller's float csr pattern to
ones (column_graph wrote into a matrix that scipy had not copied)."""
import numpy as np
import scipy.sparse as sp

from enzyme_py.colouring import colour_columns
from enzyme_py.star_colouring import colour_star, symmetric


def _random_symmetric(rng, n, density):
    a = sp.random(n, n, density=density, random_state=rng, format="csr")
    return sp.csr_matrix(a + a.T + sp.diags(rng.random(n) + 1.0))


def test_colourings_leave_the_given_pattern_alone():
    rng = np.random.default_rng(9)
    h = _random_symmetric(rng, 20, 0.1)
    keep = h.copy()
    colour_columns(h, "smallest_last")
    colour_star(h)
    symmetric(h)
    assert (h != keep).nnz == 0 and np.array_equal(h.indices, keep.indices)
