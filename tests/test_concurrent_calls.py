"""autodiff called from several Python threads at once: the first build of one gradient, the
fast path's tables and the compiled call all shared. Every thread's gradient must be the
analytic one, with no exception (docs/semantics.md, "Inputs and environments attacked")."""
import threading

import numpy as np
from numba import njit

from enzyme_py import Active, Duplicated, autodiff


@njit
def weighted_square(x, a):
    s = 0.0
    for i in range(x.shape[0]):
        s += a * x[i] * x[i]
    return s


@njit
def shifted_cube(x, y):
    for i in range(x.shape[0]):
        y[i] = (x[i] + 1.0) ** 3


def test_threads_share_first_build_and_fast_path():
    x = np.linspace(-1.0, 1.0, 50)
    errors, start = [], threading.Barrier(6)

    def work(k):
        try:
            start.wait()
            for r in range(20):
                a = 1.0 + k + r
                dx = np.zeros_like(x)
                _, da = autodiff(weighted_square, Duplicated(x, dx), Active(a), seed=1.0)
                assert np.allclose(dx, 2.0 * a * x) and np.isclose(da, np.sum(x * x)), k
                y, dy, dx2 = np.zeros_like(x), np.ones_like(x), np.zeros_like(x)
                autodiff(shifted_cube, Duplicated(x.copy(), dx2), Duplicated(y, dy))
                assert np.allclose(dx2, 3.0 * (x + 1.0) ** 2) and not dy.any(), k
        except BaseException as exc:      # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
