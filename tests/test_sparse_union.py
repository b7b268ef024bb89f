"""A branch on the inputs' values whose arms can both run (ir_passes transforms/pattern_union.py):
the pattern is the union of both arms', found once and kept for every input; each input's
values equal the dense Jacobian's. A decision that cannot be united (an address computed from
the inputs' values) still makes the pattern input-specific."""
import numpy as np
from numba import njit

from enzyme_py import SparseJacobian, jacobian


@njit
def two_ways(x):
    """The arms read different inputs: y0 reads x1 or x2, y1 x3 or x4 (through a store in
    each arm), y2 picks through a select."""
    y = np.empty(3)
    if x[0] > 0.0:
        y[0] = x[1] * x[1]
        y[1] = np.exp(x[3])
    else:
        y[0] = np.sin(x[2])
        y[1] = x[4] / (1.0 + x[4] * x[4])
    y[2] = x[5] if x[5] > x[6] else 2.0 * x[6]
    return y


UNION = np.array([[0, 1, 1, 0, 0, 0, 0],
                  [0, 0, 0, 1, 1, 0, 0],
                  [0, 0, 0, 0, 0, 1, 1]])


@njit
def rotate(x):
    """Rodrigues' rotation of (x3, x4, x5) by (x0, x1, x2), with bundle adjustment's first-order
    arm at theta == 0: both arms read all six inputs but the third output x5's."""
    r0, r1, r2, p0, p1, p2 = x[0], x[1], x[2], x[3], x[4], x[5]
    y = np.empty(2)
    sq = r0 * r0 + r1 * r1 + r2 * r2
    if sq != 0.0:
        t = np.sqrt(sq)
        c, s = np.cos(t), np.sin(t)
        y[0] = p0 * c + (r1 * p2 - r2 * p1) * s / t
        y[1] = p1 * c + (r2 * p0 - r0 * p2) * s / t
    else:
        y[0] = p0 + r1 * p2 - r2 * p1
        y[1] = p1 + r2 * p0 - r0 * p2
    return y


@njit
def gather(x):
    """An address computed from x's values: no union can cover it."""
    y = np.empty(x.size)
    k = int(abs(x[0]) * 100.0) % x.size
    for i in range(x.size):
        y[i] = x[i] * x[k]
    return y


def test_arms_reading_different_inputs_give_the_union():
    J = SparseJacobian(two_ways)
    rng = np.random.default_rng(0)
    for sign in (1.0, -1.0, 1.0, -1.0):
        x = rng.random(7)
        x[0] = sign * (0.1 + x[0])
        x[5], x[6] = (x[5] + 1.0, x[6]) if sign > 0 else (x[5], x[6] + 1.0)
        S = J(x)
        D = jacobian(two_ways, x)
        np.testing.assert_allclose(S.toarray(), D, rtol=1e-13, atol=0)
        assert np.array_equal(J.pattern.toarray(), UNION)
        assert not ((D != 0) & (UNION == 0)).any()
    assert J.united and not J.input_specific and J.decisions
    assert J.detections == 1


def test_rodrigues_branch_keeps_its_pattern_at_theta_zero():
    J = SparseJacobian(rotate)
    rng = np.random.default_rng(1)
    for zero in (False, True, False):
        x = rng.random(6)
        if zero:
            x[:3] = 0.0
        np.testing.assert_allclose(J(x).toarray(), jacobian(rotate, x), rtol=1e-13, atol=1e-15)
    assert J.united and not J.input_specific and J.detections == 1
    assert np.array_equal(J.pattern.toarray(), np.ones((2, 6)))
    x = np.zeros(6)
    x[3:] = 1.0
    assert jacobian(rotate, x)[0, 0] == 0.0      # the first-order arm alone misses d y0 / d r0


def test_address_from_values_stays_input_specific():
    J = SparseJacobian(gather)
    rng = np.random.default_rng(2)
    for _ in range(2):
        x = rng.random(9)
        np.testing.assert_allclose(J(x).toarray(), jacobian(gather, x), rtol=1e-13, atol=0)
    assert J.input_specific and not J.united and J.detections == 2
    assert any("address" in reason for _, reason in J.decisions)


@njit
def ratio(x):
    """At x0 == 0 the way not taken divides by zero (Numba's zero check would raise)."""
    y = np.empty(2)
    if x[0] != 0.0:
        y[0] = x[1] / x[0]
    else:
        y[0] = x[1]
    y[1] = x[2] * x[2]
    return y


def test_arm_dividing_by_zero_on_the_way_not_taken():
    """The arm run on the way not taken computes inf; the guarded products keep the zero
    tangents zero, so row 0 depends on x0 and x1 only, and nothing raises."""
    J = SparseJacobian(ratio)
    x = np.array([0.0, 0.7, 0.3])
    np.testing.assert_allclose(J(x).toarray(), jacobian(ratio, x), rtol=1e-13, atol=0)
    assert J.united
    assert np.array_equal(J.pattern.toarray(), [[1, 1, 0], [0, 0, 1]])
    x = np.array([0.5, 0.7, 0.3])
    np.testing.assert_allclose(J(x).toarray(), jacobian(ratio, x), rtol=1e-13, atol=0)
    assert J.detections == 1


@njit
def weighted(x, v):
    """sum v_k c_k(x) for chain constraints c_k = x_{k+1} - x_k - sin(x_k) x_{k+1}: the
    Hessian of a constraint term of a Lagrangian, v its multipliers (Const)."""
    s = 0.0
    for k in range(x.size - 1):
        s += v[k] * (x[k + 1] - x[k] - np.sin(x[k]) * x[k + 1])
    return s


@njit
def switched(x, c):
    """A Const value decides which input y0 reads."""
    y = np.empty(2)
    y[0] = x[1] * x[1] if c[0] > 0.0 else x[2] * x[2]
    y[1] = c[1] * x[0]
    return y


def test_const_values_that_reach_no_decision_keep_the_pattern():
    from enzyme_py import SparseHessian, hessian
    H = SparseHessian(weighted)
    rng = np.random.default_rng(5)
    x = rng.random(12)
    for _ in range(3):
        v = rng.standard_normal(11)
        np.testing.assert_allclose(H(x, v).toarray(), hessian(weighted, x, v), rtol=1e-12,
                                   atol=1e-14)
    assert H.detections == 1 and H.ncolours == 3


def test_const_value_deciding_the_pattern_finds_it_again():
    J = SparseJacobian(switched)
    x = np.array([0.3, 0.5, 0.7])
    for c0 in (1.0, -1.0):
        c = np.array([c0, 2.0])
        np.testing.assert_allclose(J(x, c).toarray(), jacobian(switched, x, c), rtol=1e-13, atol=0)
        assert J.pattern[0, 1 if c0 > 0 else 2] == 1 and J.pattern[0].nnz == 1
    assert J.detections == 2 and not J.input_specific


@njit
def nested(x):
    """An if/else inside an arm whose ways meet the outer join directly, in a loop."""
    y = np.zeros(x.size)
    for i in range(1, x.size - 1):
        if x[i] > 0.5:
            if x[i - 1] > 0.5:
                y[i] = x[i - 1] * x[i]
            else:
                y[i] = np.exp(x[i + 1])
        else:
            y[i] += x[i] * 2.0
    return y


@njit
def loop_in_arm(x):
    """An arm that is a loop (its header is the arm's first block)."""
    y = np.empty(2)
    if x[0] > 0.5:
        s = 0.0
        for k in range(1, 4):
            s += x[k] * x[k]
        y[0] = s
    else:
        y[0] = x[4]
    y[1] = max(x[5], x[6])
    return y


def test_nested_arms_and_an_arm_that_loops():
    rng = np.random.default_rng(8)
    band = np.zeros((9, 9))
    for i in range(1, 8):
        band[i, i - 1:i + 2] = 1.0
    want = {nested: band, loop_in_arm: np.array([[0, 1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 1, 1]])}
    for f, pattern in want.items():
        J = SparseJacobian(f)
        for _ in range(4):
            x = rng.random(pattern.shape[1])
            np.testing.assert_allclose(J(x).toarray(), jacobian(f, x), rtol=1e-13, atol=0)
            assert np.array_equal(J.pattern.toarray(), pattern)
        assert J.united and J.detections == 1
