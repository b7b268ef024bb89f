"""Custom rules for @njit functions: custom_vjp, custom_jvp and inactive (docs/custom-rules.md)."""
import numba
import numpy as np
import pytest

import enzyme_py
from enzyme_py import BatchDuplicated, Duplicated, Forward, autodiff, check_gradient


# ---- a numerically stable log(exp(a) + exp(b)) with a reverse rule ----------------------------

@enzyme_py.custom_vjp
@numba.njit
def logaddexp(a, b):
    m = max(a, b)
    return m + np.log(np.exp(a - m) + np.exp(b - m))


@numba.njit
def logaddexp_fwd(a, b):
    y = logaddexp(a, b)
    return y, (a, b, y)


@numba.njit
def logaddexp_bwd(res, g):
    a, b, y = res
    return g * np.exp(a - y), g * np.exp(b - y)


logaddexp.defvjp(logaddexp_fwd, logaddexp_bwd)


@numba.njit
def smooth_max(x, y):   # deep: the kernel calls a helper that calls logaddexp
    for i in range(x.shape[0]):
        y[i] = x[i] * logaddexp(x[i], 2.0 * x[i])


@numba.njit
def smooth_max_outer(x, y):
    smooth_max(x, y)


def smooth_max_grad(x):
    y = np.logaddexp(x, 2 * x)
    pa, pb = np.exp(x - y), np.exp(2 * x - y)
    return y + x * (pa + 2 * pb)


def test_vjp_rule_reverse_matches_analytic_and_finite_differences():
    x = np.linspace(-30.0, 30.0, 7)      # exp overflows nowhere: the rule is the stable one
    dx = np.zeros(7)
    autodiff(smooth_max_outer, Duplicated(x, dx), Duplicated(np.zeros(7), np.ones(7)))
    assert np.allclose(dx, smooth_max_grad(x), rtol=1e-13)
    assert check_gradient(smooth_max_outer, Duplicated(x, np.zeros(7)),
                          Duplicated(np.zeros(7), np.ones(7))).passed


def test_vjp_rule_forward_and_batched():
    x = np.linspace(-2.0, 2.0, 5)
    dy = np.zeros(5)
    autodiff(smooth_max, Duplicated(x, np.ones(5)), Duplicated(np.zeros(5), dy), mode=Forward)
    assert np.allclose(dy, smooth_max_grad(x), rtol=1e-13)
    bdx = [np.zeros(5), np.zeros(5)]
    autodiff(smooth_max, BatchDuplicated(x, bdx),
             BatchDuplicated(np.zeros(5), [np.ones(5), 2 * np.ones(5)]))
    assert np.allclose(bdx[0], smooth_max_grad(x), rtol=1e-13)
    assert np.allclose(bdx[1], 2 * smooth_max_grad(x), rtol=1e-13)


@numba.njit(parallel=True)
def smooth_max_prange(x, y):
    for i in numba.prange(x.shape[0]):
        y[i] = x[i] * logaddexp(x[i], 2.0 * x[i])


def test_vjp_rule_in_a_prange_loop():
    x = np.linspace(-2.0, 2.0, 64)
    dx = np.zeros(64)
    autodiff(smooth_max_prange, Duplicated(x, dx), Duplicated(np.zeros(64), np.ones(64)))
    assert np.allclose(dx, smooth_max_grad(x), rtol=1e-13)


@numba.njit
def relax(u, steps):    # a time loop overwriting its state: checkpointed under a budget
    for t in range(steps):
        for i in range(u.shape[0]):
            u[i] = logaddexp(u[i], -3.0) - 0.05


def test_vjp_rule_in_a_checkpointed_time_loop():
    u = np.linspace(-1.0, 1.0, 8)
    grads = []
    for memory in ("tape", "4096"):
        du = np.ones(8)
        autodiff(relax, Duplicated(u.copy(), du), 100, memory=memory)
        grads.append(du)
    assert np.abs(grads[0]).min() > 1e-4
    assert np.allclose(grads[1], grads[0], rtol=1e-13)
    assert check_gradient(relax, Duplicated(u.copy(), np.ones(8)), 100, memory="4096").passed


# ---- the same function with a tangent rule ------------------------------------------------------

@enzyme_py.custom_jvp
@numba.njit
def softplus(x):
    return max(x, 0.0) + np.log1p(np.exp(-abs(x)))


@numba.njit
def softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t / (1.0 + np.exp(-x))


softplus.defjvp(softplus_jvp)


@numba.njit
def softplus_sum(x, s):
    for i in range(x.shape[0]):
        s[0] += softplus(x[i]) * softplus(x[i])


def test_jvp_rule_in_both_modes():
    x = np.linspace(-3.0, 3.0, 6)
    sig, sp = 1 / (1 + np.exp(-x)), np.logaddexp(0, x)
    dx = np.zeros(6)
    autodiff(softplus_sum, Duplicated(x, dx), Duplicated(np.zeros(1), np.ones(1)))
    assert np.allclose(dx, 2 * sp * sig, rtol=1e-13)
    ds = np.zeros(1)
    autodiff(softplus_sum, Duplicated(x, np.ones(6)), Duplicated(np.zeros(1), ds), mode=Forward)
    assert np.isclose(ds[0], np.sum(2 * sp * sig), rtol=1e-13)


@enzyme_py.custom_jvp
@numba.njit
def clip(x):
    return min(max(x, -1.0), 1.0)


@numba.njit
def clip_jvp(primals, tangents):
    return clip(primals[0]), tangents[0]      # straight through the clip


clip.defjvp(clip_jvp)


@numba.njit
def clipped(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * clip(x[i])


def test_jvp_surrogate_is_used_in_both_modes():
    x = np.array([-3.0, -0.5, 0.25, 2.0])
    expect = np.clip(x, -1, 1) + x
    dx = np.zeros(4)
    autodiff(clipped, Duplicated(x, dx), Duplicated(np.zeros(4), np.ones(4)))
    assert np.allclose(dx, expect, rtol=1e-15)
    dy = np.zeros(4)
    autodiff(clipped, Duplicated(x, np.ones(4)), Duplicated(np.zeros(4), dy), mode=Forward)
    assert np.allclose(dy, expect, rtol=1e-15)


# ---- a surrogate gradient: round with the identity's derivative ---------------------------------

@enzyme_py.custom_vjp
@numba.njit
def ste_round(x):
    return np.round(x)


@numba.njit
def ste_fwd(x):
    return np.round(x), 0.0


@numba.njit
def ste_bwd(res, g):
    return (g,)


ste_round.defvjp(ste_fwd, ste_bwd)


@numba.njit
def quantize(w, y):
    for i in range(w.shape[0]):
        y[i] = 3.0 * ste_round(w[i] * 4.0)


def test_straight_through_gradient_is_the_surrogate():
    w = np.array([0.1, 0.33, -0.7, 1.2])
    dw = np.zeros(4)
    autodiff(quantize, Duplicated(w, dw), Duplicated(np.zeros(4), np.ones(4)))
    assert np.array_equal(dw, np.full(4, 12.0))          # 3 * 1 * 4, not round's zero
    # finite differences of the function as written see round's zero derivative
    assert not check_gradient(quantize, Duplicated(w, np.zeros(4)),
                              Duplicated(np.zeros(4), np.ones(4))).passed


@numba.njit
def quantize_gradient_inside_njit(w, dw):
    autodiff(quantize, Duplicated(w, dw), Duplicated(np.zeros(w.shape[0]), np.ones(w.shape[0])))


def test_surrogate_through_autodiff_inside_njit():
    dw = np.zeros(4)
    quantize_gradient_inside_njit(np.linspace(0.0, 1.0, 4), dw)
    assert np.array_equal(dw, np.full(4, 12.0))


# ---- integer arguments, and a bare cotangent for a one-argument function ------------------------

@enzyme_py.custom_vjp
@numba.njit
def power(x, n):
    return x ** n


@numba.njit
def power_fwd(x, n):
    return x ** n, (x, n)


@numba.njit
def power_bwd(res, g):
    x, n = res
    return g * n * x ** (n - 1), 0


power.defvjp(power_fwd, power_bwd)


@enzyme_py.custom_vjp
@numba.njit
def cube(x):
    return x * x * x


@numba.njit
def cube_fwd(x):
    return x * x * x, x


@numba.njit
def cube_bwd(x, g):
    return 3.0 * x * x * g


cube.defvjp(cube_fwd, cube_bwd)


@numba.njit
def powers(x, y, n):
    for i in range(x.shape[0]):
        y[i] = power(x[i], n) + cube(x[i])


def test_integer_argument_and_bare_cotangent():
    x = np.linspace(0.5, 1.5, 4)
    dx = np.zeros(4)
    autodiff(powers, Duplicated(x, dx), Duplicated(np.zeros(4), np.ones(4)), 4)
    assert np.allclose(dx, 4 * x ** 3 + 3 * x ** 2, rtol=1e-14)


# ---- inactive: a random number source --------------------------------------------------------

@enzyme_py.inactive
@numba.njit
def noise():
    return np.random.uniform(0.5, 1.5)


@numba.njit
def seed(s):
    np.random.seed(s)


@enzyme_py.inactive
@numba.njit
def jitter(v):
    return v * np.random.uniform(0.5, 1.5)


@numba.njit
def noisy(x, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i] * noise() + jitter(x[i])


def test_inactive_random_source_is_a_constant():
    x = np.linspace(0.5, 2.0, 5)
    seed(7)
    expect = np.array([(noise(), jitter(1.0)) for _ in range(5)])[:, 0]
    seed(7)
    dx = np.zeros(5)
    autodiff(noisy, Duplicated(x, dx), Duplicated(np.zeros(5), np.ones(5)))
    assert np.allclose(dx, 2 * x * expect, rtol=1e-14)     # jitter(x) has no derivative


@enzyme_py.inactive
@numba.njit
def counted(counts, v):     # an inactive function of an array: a call counter
    counts[0] += 1
    return 2.0 * v


@numba.njit
def uses_counted(x, y, counts):
    for i in range(x.shape[0]):
        y[i] = x[i] * counted(counts, x[i])


def test_inactive_counter_of_an_array_runs_once_per_call():
    x, counts = np.linspace(0.0, 1.0, 4), np.zeros(1, np.int64)
    dx = np.zeros(4)
    autodiff(uses_counted, Duplicated(x, dx), Duplicated(np.zeros(4), np.ones(4)), counts)
    assert np.allclose(dx, 2 * x, rtol=1e-15) and counts[0] == 4     # as a plain call counts
    dy = np.zeros(4)
    autodiff(uses_counted, Duplicated(x, np.ones(4)), Duplicated(np.zeros(4), dy), counts,
             mode=Forward)
    assert np.allclose(dy, 2 * x, rtol=1e-15) and counts[0] == 8


# ---- what is refused ---------------------------------------------------------------------------

@enzyme_py.inactive
@numba.njit
def fill(buf, v):
    buf[:] = v


@numba.njit
def uses_fill(x, buf):
    fill(buf, x[0])


def test_inactive_function_writing_a_float_array_is_refused():
    with pytest.raises(TypeError, match="inactive `fill` takes .* integer or boolean arrays only"):
        autodiff(uses_fill, Duplicated(np.ones(3), np.zeros(3)), Duplicated(np.zeros(3), np.ones(3)))


def test_second_derivatives_through_a_rule_are_refused():
    @numba.njit
    def total(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += softplus(x[i]) ** 2
        return s
    with pytest.raises(enzyme_py.UnsupportedError, match="function pointer"):
        enzyme_py.hessian_vector_product(total, np.linspace(-1.0, 1.0, 4), np.ones(4))


@enzyme_py.custom_vjp
@numba.njit
def array_sum(x):
    return x.sum()


@numba.njit
def array_sum_fwd(x):
    return x.sum(), 0.0


@numba.njit
def array_sum_bwd(res, g):
    return (g,)


array_sum.defvjp(array_sum_fwd, array_sum_bwd)


@numba.njit
def uses_array_sum(x, y):
    y[0] = array_sum(x)


def test_rule_of_an_array_function_is_refused():
    with pytest.raises(TypeError, match=r"custom rule of `array_sum` is for functions of float "
                                        r"and integer scalars"):
        autodiff(uses_array_sum, Duplicated(np.ones(3), np.zeros(3)),
                 Duplicated(np.zeros(1), np.ones(1)))


# ---- rules are checked at their first use -------------------------------------------------------

@enzyme_py.custom_vjp
@numba.njit
def wrong(a, b):
    return a * b


@numba.njit
def wrong_fwd(a, b):
    return a * b, (a, b)


@numba.njit
def wrong_bwd(res, g):
    return (g * res[1],)      # one cotangent for two arguments


wrong.defvjp(wrong_fwd, wrong_bwd)


@numba.njit
def uses_wrong(x, y):
    for i in range(x.shape[0]):
        y[i] = wrong(x[i], x[i])


def test_rule_with_the_wrong_signature_is_refused_at_first_use():
    with pytest.raises(TypeError, match=r"custom rule of `wrong\(float64, float64\)`: bwd must "
                                        r"return one cotangent per argument \(2\)"):
        autodiff(uses_wrong, Duplicated(np.ones(3), np.zeros(3)),
                 Duplicated(np.zeros(3), np.ones(3)))


# ---- the disk cache -----------------------------------------------------------------------------

def test_rules_change_the_disk_cache_key_and_kernels_using_them_are_not_stored(tmp_path):
    """A rule on a function the kernel calls changes the kernel's key; a rule on a function it
    does not call leaves it (a worker process without that rule loads the same entry)."""
    from enzyme_py import disk_cache

    @numba.njit
    def halve(a):
        return 0.5 * a

    @numba.njit
    def halve_fwd(a):
        return 0.5 * a, 0.0

    @numba.njit
    def halve_bwd(res, g):
        return (0.5 * g,)

    @numba.njit
    def twice(a):
        return 2.0 * a

    @numba.njit
    def uses_halve(x, y):
        for i in range(x.shape[0]):
            y[i] = halve(x[i]) * x[i]

    types = (numba.typeof(np.zeros(5)),) * 2
    before = disk_cache.make_key("reverse", uses_halve, types, ())
    enzyme_py.custom_vjp(twice).defvjp(halve_fwd, halve_bwd)
    assert disk_cache.make_key("reverse", uses_halve, types, ()) == before
    enzyme_py.custom_vjp(halve).defvjp(halve_fwd, halve_bwd)
    assert disk_cache.make_key("reverse", uses_halve, types, ()) != before

    disk_cache.set_cache_dir(tmp_path)
    try:
        x = np.linspace(-1.0, 1.0, 5)
        autodiff(smooth_max, Duplicated(x, np.zeros(5)), Duplicated(np.zeros(5), np.ones(5)))
        assert "custom derivative" in disk_cache.refused[f"{__name__}.smooth_max-reverse"]
        assert not any(p.is_file() for p in tmp_path.rglob("*"))
    finally:
        disk_cache.set_cache_dir(None)


# ---- the surrogate rule in the other modes: the gradient is the rule's, not the code's ---------

@numba.njit(parallel=True)
def quantize_prange(w, y):
    for i in numba.prange(w.shape[0]):
        y[i] = w[i] * w[i] + 3.0 * ste_round(w[i] * 4.0)


def test_surrogate_in_a_prange_loop_and_with_batched_seeds():
    w = np.linspace(-1.0, 1.0, 64)
    dw = np.zeros(64)
    autodiff(quantize_prange, Duplicated(w, dw), Duplicated(np.zeros(64), np.ones(64)))
    assert np.allclose(dw, 2 * w + 12.0, rtol=1e-15)
    bdw = [np.zeros(4), np.zeros(4)]
    autodiff(quantize, BatchDuplicated(np.linspace(0.0, 1.0, 4), bdw),
             BatchDuplicated(np.zeros(4), [np.ones(4), 2 * np.ones(4)]))
    assert np.array_equal(bdw[0], np.full(4, 12.0)) and np.array_equal(bdw[1], np.full(4, 24.0))


@numba.njit
def relax_quantized(u, steps):
    for t in range(steps):
        for i in range(u.shape[0]):
            u[i] = 0.5 * u[i] + 0.1 * ste_round(4.0 * u[i])


def test_surrogate_in_a_checkpointed_time_loop():
    for memory in ("tape", "4096"):
        du = np.ones(8)
        autodiff(relax_quantized, Duplicated(np.linspace(-1.0, 1.0, 8), du), 100, memory=memory)
        assert np.allclose(du, 0.9 ** 100, rtol=1e-12)    # 0.5 + 0.1 * 4 per step


def test_a_function_numba_inlines_is_refused():
    @numba.njit(inline="always")
    def inlined(x):
        return x

    with pytest.raises(TypeError, match="inlined by Numba"):
        enzyme_py.inactive(inlined)


@enzyme_py.custom_vjp
@numba.njit
def checked_square(a):
    if a < 0.0:
        raise ValueError("negative input")
    return a * a


@numba.njit
def checked_square_fwd(a):
    return checked_square(a), a


@numba.njit
def checked_square_bwd(a, g):
    return (2.0 * a * g,)


checked_square.defvjp(checked_square_fwd, checked_square_bwd)


@numba.njit
def squares(x, y):
    for i in range(x.shape[0]):
        y[i] = checked_square(x[i])


def test_an_exception_inside_a_ruled_function_reaches_the_caller():
    x, dx = np.array([1.0, -1.0]), np.zeros(2)
    with pytest.raises(ValueError, match="negative input"):
        autodiff(squares, Duplicated(x, dx), Duplicated(np.zeros(2), np.ones(2)))
    x, dx = np.array([1.0, 3.0]), np.zeros(2)
    autodiff(squares, Duplicated(x, dx), Duplicated(np.zeros(2), np.ones(2)))
    assert np.array_equal(dx, [2.0, 6.0])
