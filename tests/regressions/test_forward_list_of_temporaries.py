"""Forward mode over a typed List the kernel builds from temporaries (`x[a:b] * 2.0` appended in a
loop) gave the first item a tangent read from freed memory (seed 72000028 of the fuzzer's lists
profile: 1.83 instead of 4.0, or values near 1e144): the primal list holds a reference to each
item through its method table, the shadow list had none, so the temporary's tangent buffer was
released at the end of its iteration and reused by the next temporary. The shadow list now gets
the primal's method table (rules/effects.py, register_setup)."""
import numpy as np
from numba import njit, typed

from enzyme_py import Duplicated, Forward, autodiff, check_gradient

from nrt_stats import unfreed


@njit
def scaled_parts(x, bounds, out):
    series = typed.List()
    for i in range(bounds.size - 1):
        series.append(x[bounds[i]:bounds[i + 1]] * 2.0)
    for i in range(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


X = np.array([-0.353115, 0.569515, 0.771016, 0.143992, 0.034343])
BOUNDS = np.array([0, 2, 4, 5])


def test_forward_tangents_of_a_list_of_temporaries():
    u = np.array([1.0, -0.5, 0.25, 2.0, -1.5])
    dout = np.zeros(3)

    def call():
        dout[:] = 0.0
        autodiff(scaled_parts, Duplicated(X.copy(), u.copy()), BOUNDS, Duplicated(np.zeros(3), dout),
                 mode=Forward)
    call()
    want = [8 * X[p] @ u[p] for p in (slice(0, 2), slice(2, 4), slice(4, 5))]
    np.testing.assert_allclose(dout, want, rtol=1e-14)
    assert unfreed(call) == (0, 0)


def test_reverse_mode_of_the_same_kernel():
    report = check_gradient(scaled_parts, Duplicated(X.copy(), np.zeros(5)), BOUNDS,
                            Duplicated(np.zeros(3), np.zeros(3)), rng=2)
    assert report.passed, report


def test_several_directions():
    """Each lane's shadow list holds its own tangent buffers."""
    from enzyme_py import BatchDuplicated
    u1, u2 = np.ones(5), np.arange(5.0)
    d1, d2 = np.zeros(3), np.zeros(3)
    autodiff(scaled_parts, BatchDuplicated(X.copy(), (u1, u2)), BOUNDS,
             BatchDuplicated(np.zeros(3), (d1, d2)), mode=Forward)
    for u, d in ((u1, d1), (u2, d2)):
        want = [8 * X[p] @ u[p] for p in (slice(0, 2), slice(2, 4), slice(4, 5))]
        np.testing.assert_allclose(d, want, rtol=1e-14)
