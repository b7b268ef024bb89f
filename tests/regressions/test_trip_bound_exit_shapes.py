"""Fixed: a loop with a per-iteration temporary and an early exit that is never taken overflowed
its tape ("double free or corruption", "corrupted double-linked list" or a segfault).

More loop shapes than test_trip_bound_exit_never_taken.py for the same bug: `raise`, `break` and
`return` exits; stop never hit (-1, past the end), hit after a few iterations, hit at once; 1-D
slices, `np.empty` and 2-D temporaries; a loop nested in a counted one; a `while` loop counting
down. Root cause: analysis/tripcount.trip_bound took any exit testing the induction variable
against a loop-invariant value as a bound (|stop - init| / |step| + 2) whatever its test, and the
forward sweep then never grew the tape. A bound now counts on an entry only when its exit's test
is sure to hold within it (analysis/tripcount.py, transforms/reverse/loops/trips.py).

The kernels run in a subprocess under PYTHONMALLOC=debug and MALLOC_CHECK_=3 so that heap
corruption fails the test instead of killing pytest.
"""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(r'''
    import numpy as np
    from numba import njit
    from enzyme_py import Duplicated, autodiff, check_gradient

    @njit
    def raise_1d(x, stop):
        s = 0.0
        for i in range(x.shape[0] - 2):
            if i == stop:
                raise ValueError("stop")
            t = x[i:i + 3] * 2.0
            s += t[0] * t[1] + t[2]
        return s

    @njit
    def break_empty(x, stop):
        s = 0.0
        for i in range(x.shape[0]):
            t = np.empty(3)
            t[0] = x[i]; t[1] = x[i] * x[i]; t[2] = np.sin(x[i])
            if i == stop:
                break
            s += t[0] * t[1] + t[2]
        return s

    @njit
    def return_2d(x, stop):
        s = 0.0
        for i in range(x.shape[0]):
            t = np.empty((2, 2))
            t[0, 0] = x[i]; t[0, 1] = x[i] * 3.0; t[1, 0] = x[i] ** 2; t[1, 1] = 1.0
            if i == stop:
                return s + t[1, 0]
            s += t[0, 0] * t[0, 1] + t[1, 0]
        return s

    @njit
    def nested(x, stop):
        s = 0.0
        for j in range(3):
            for i in range(x.shape[0] - 1):
                t = x[i:i + 2] * (j + 1.0)
                if i == stop:
                    break
                s += t[0] * t[1]
        return s

    @njit
    def downward(x, stop):
        s = 0.0
        i = x.shape[0] - 1
        while i >= 0:
            t = np.empty(2)
            t[0] = x[i]; t[1] = x[i] * x[i]
            if i == stop:
                break
            s += t[0] * t[1]
            i -= 1
        return s

    rng = np.random.default_rng(0)
    n = 30
    for k in (raise_1d, break_empty, return_2d, nested, downward):
        for stop in (-1, n + 7, 5, 0):          # never, never (past the end), sometimes, at once
            x = rng.uniform(0.5, 1.5, n)
            if k is raise_1d and 0 <= stop < n - 2:
                dx = np.zeros(n)
                try:
                    autodiff(k, Duplicated(x, dx), stop)
                except ValueError:
                    pass
                else:
                    raise AssertionError("no ValueError")
                continue
            rep = check_gradient(k, Duplicated(x.copy(), np.zeros(n)), stop, rtol=1e-5)
            assert rep.passed, (k.__name__, stop, str(rep))
        big = rng.uniform(0.5, 1.5, 20000)      # thousands of iterations past a small bound
        small = big[:n].copy()
        for _ in range(3):
            db, ds = np.zeros_like(big), np.zeros(n)
            autodiff(k, Duplicated(big, db), -1, seed=1.0)
            autodiff(k, Duplicated(small, ds), -1, seed=1.0)
            assert np.allclose(db[:n - 3], ds[:n - 3], rtol=1e-12), k.__name__
            if k is not downward:
                assert np.array_equal(db[n - 3:n + 3] != 0, np.ones(6, bool)), k.__name__
    # the analytic derivative of one kernel, never-taken exit
    x = rng.uniform(0.5, 1.5, 50)
    dx = np.zeros(50)
    autodiff(break_empty, Duplicated(x, dx), -1, seed=1.0)
    want = 3 * x ** 2 + np.cos(x)
    assert np.allclose(dx, want, rtol=1e-12), np.max(np.abs(dx - want))
    print("OK")
''')


def test_early_exit_never_taken_keeps_the_heap_intact():
    env = dict(os.environ, PYTHONMALLOC="debug", MALLOC_CHECK_="3")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=root, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout[-2000:], r.stderr[-4000:])
