"""A loop's tape was sized from the trip bound of its first exit that tests the counter, even
when that exit never fires: `if i == stop: break` with stop = -1 in a loop over 100,000
elements reserved |stop - 0| + 2 = 3 iterations, and the forward sweep wrote the rest past the
buffer (heap corruption, a segfault in most runs); `i >= stop` with stop = 10**15 and a data
test that leaves after 30 iterations reserved 10**15 entries up front (a crash). The bound of an entry is now the least over
the exits whose test holds within it, decided on entry, and a loop that may leave elsewhere grows
its tape on the way. Each case runs in a child process under glibc's and CPython's allocator
checks, so that a corrupted heap fails the test instead of killing pytest; the gradients are
compared with central differences (enzyme_py.check_gradient)."""
import os
import subprocess
import sys
import textwrap

CHILD = textwrap.dedent('''
    import numpy as np
    from numba import njit
    from enzyme_py import autodiff, check_gradient, Duplicated, Const

    @njit
    def before_temporary(x, stop):          # the exit comes first in the loop
        s = 0.0
        for i in range(x.shape[0] - 1):
            if i == stop:
                break
            t = x[i:i + 2] * 2.0
            s += t[0] * t[1]
        return s

    @njit
    def raising(x, stop):                   # an exit into an exception
        s = 0.0
        for i in range(x.shape[0] - 1):
            if i == stop:
                raise ValueError("stop")
            t = x[i:i + 2] * 2.0
            s += t[0] * t[1]
        return s

    @njit
    def data_exit(x, stop):                 # no counter exit fires; a data test leaves
        s = 0.0
        i = 0
        while True:
            if i == stop:
                break
            t = x[i:i + 2] * 2.0
            if x[i] < 0.0:
                break
            s += t[0] * t[1]
            i += 1
        return s

    @njit
    def loose(x, stop):                     # i >= stop bounds it, loosely: a data test leaves
        s = 0.0
        i = 0
        while True:
            if i >= stop:
                break
            t = x[i:i + 2] * 2.0
            if x[i] > 2.0:
                break
            s += t[0] * t[1]
            i += 1
        return s

    @njit
    def below(x, lo):                       # `i < lo` never holds when lo <= 0
        s = 0.0
        for i in range(x.shape[0] - 1):
            if i < lo:
                break
            t = np.empty((2, 2))
            t[0, 0] = x[i] * x[i + 1]
            t[1, 1] = x[i + 1]
            s += t[0, 0] + t[1, 1] * x[i]
        return s

    @njit
    def constant_stop(x):                   # constants: the frame's fixed-size tape
        s = 0.0
        for i in range(200):
            if i == -1:
                break
            t = x[i:i + 2] * 2.0
            s += t[0] * t[1]
        return s

    @njit
    def nested(x, stop):
        s = 0.0
        for j in range(3):
            for i in range(x.shape[0] - 1):
                if i == stop:
                    break
                t = x[i:i + 2] * (j + 1.0)
                s += t[0] * t[1]
        return s

    def check(f, x, *consts):               # enzyme_py's checker: central differences
        rep = check_gradient(f, Duplicated(x.copy(), np.zeros_like(x)),
                             *[Const(c) for c in consts], seed=1.0, rtol=1e-5)
        assert rep.passed, (f.__name__, consts, str(rep))

    rng = np.random.default_rng(3)
    small = rng.uniform(0.5, 1.5, 60)
    big = rng.uniform(0.5, 1.5, 100_000)
    for stop in (-1, 0, 17, 200):               # never, at once, sometimes, past the end
        check(before_temporary, small, stop)
        check(nested, small, stop)
        check(data_exit, np.concatenate([small, [-1.0, 1.0]]), stop)
    for stop in (-1, 100):
        check(raising, small, stop)
    try:
        autodiff(raising, Duplicated(small.copy(), np.zeros(60)), Const(5), seed=1.0)
        raise AssertionError("no exception")
    except ValueError:
        pass
    marked = small.copy()
    marked[30] = 3.0
    for stop in (10**15, 2**62, 2**63 - 1, 10):   # no tape of 10**15 entries up front
        check(loose, marked, stop)
    for lo in (-3, 0):
        check(below, small, lo)
    check(constant_stop, rng.uniform(0.5, 1.5, 201))
    for f in (before_temporary, nested, raising):   # the size that corrupted the heap
        dx = np.zeros_like(big)
        autodiff(f, Duplicated(big, dx), Const(-1), seed=1.0)
        assert np.isfinite(dx).all()
    dx = np.zeros_like(big)
    autodiff(before_temporary, Duplicated(big, dx), Const(-1), seed=1.0)
    expected = np.zeros_like(big)
    expected[:-1] += 4.0 * big[1:]
    expected[1:] += 4.0 * big[:-1]
    assert np.allclose(dx, expected), abs(dx - expected).max()
    print("ok")
''')


def test_exit_never_taken_sizes_no_tape_from_it():
    env = dict(os.environ, PYTHONMALLOC="debug", MALLOC_CHECK_="3")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), \
        f"exit status {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
