"""numba.typed.List arguments holding float arrays: Duplicated(lst, shadow_lst), the shadow a
typed List of the items' shadows (docs/semantics.md, "Annotations"). Reverse and forward mode
against finite differences and the analytic derivative; the refusals of bad shadow lists."""
import numpy as np
import pytest
from numba import njit, prange, typed

from enzyme_py import (Active, Const, Duplicated, Forward, UnsupportedError, autodiff, check_gradient,
                       explain)
from enzyme_py.modes.strong_zero import reruns

from nrt_stats import unfreed

LENGTHS = (3, 5, 4)


@njit
def pairwise(series, out):
    for i in range(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


@njit
def weighted(series, w, out):
    for i in range(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += w * np.sin(s[t]) * s[t]
        out[i] = acc * w


@njit(parallel=True)
def pairwise_parallel(series, out):
    for i in prange(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


@njit
def roots(series, w, out):
    for i in range(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            x = s[t]
            r = np.sqrt(x) * w
            acc += r if x > 0 else 0.0
        out[i] = acc


def series(seed=0, lengths=LENGTHS):
    rng = np.random.default_rng(seed)
    return typed.List([rng.standard_normal(n) for n in lengths])


def zeros_like(lst):
    return typed.List([np.zeros_like(a) for a in lst])


def test_reverse_against_finite_differences_and_analytic():
    lst = series()
    report = check_gradient(pairwise, Duplicated(lst, zeros_like(lst)),
                            Duplicated(np.zeros(3), np.zeros(3)), rng=1)
    assert report.passed, report
    shadow = zeros_like(lst)
    out, dout = np.zeros(3), np.array([1.0, -2.0, 0.5])
    autodiff(pairwise, Duplicated(lst, shadow), Duplicated(out, dout))
    for k, (s, a) in enumerate(zip(shadow, lst)):
        np.testing.assert_allclose(s, 2 * a * [1.0, -2.0, 0.5][k], rtol=1e-14)
    np.testing.assert_allclose(out, [a @ a for a in lst], rtol=1e-14)
    np.testing.assert_array_equal(dout, 0.0)      # overwritten: consumed


def test_reverse_with_an_active_weight():
    lst, w = series(2), 0.7
    report = check_gradient(weighted, Duplicated(lst, zeros_like(lst)), Active(w),
                            Duplicated(np.zeros(3), np.zeros(3)), rng=3)
    assert report.passed, report
    shadow = zeros_like(lst)
    dw = autodiff(weighted, Duplicated(lst, shadow), Active(w),
                  Duplicated(np.zeros(3), np.ones(3)))[1]
    assert dw == pytest.approx(sum(2 * w * (np.sin(a) * a).sum() for a in lst), rel=1e-13)
    for s, a in zip(shadow, lst):
        np.testing.assert_allclose(s, w * w * (np.cos(a) * a + np.sin(a)), rtol=1e-13)


def test_forward_mode_tangents():
    lst, tangents = series(4), series(5)
    out, dout = np.zeros(3), np.zeros(3)
    autodiff(pairwise, Duplicated(lst, tangents), Duplicated(out, dout), mode=Forward)
    np.testing.assert_allclose(dout, [2 * a @ t for a, t in zip(lst, tangents)], rtol=1e-14)


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
def test_parallel_loop_over_the_items_in_both_modes():
    lst = series(7, (3, 5, 4, 6))
    report = check_gradient(pairwise_parallel, Duplicated(lst, zeros_like(lst)),
                            Duplicated(np.zeros(4), np.zeros(4)), rng=8)
    assert report.passed, report
    shadow = zeros_like(lst)
    autodiff(pairwise_parallel, Duplicated(lst, shadow), Duplicated(np.zeros(4), np.ones(4)))
    for s, a in zip(shadow, lst):
        np.testing.assert_allclose(s, 2 * a, rtol=1e-14)
    tangents, dout = series(9, (3, 5, 4, 6)), np.zeros(4)
    autodiff(pairwise_parallel, Duplicated(lst, tangents), Duplicated(np.zeros(4), dout),
             mode=Forward)
    np.testing.assert_allclose(dout, [2 * a @ t for a, t in zip(lst, tangents)], rtol=1e-14)


def test_strong_zero_rerun_puts_the_list_items_back():
    lst = typed.List([np.array([4.0, -1.0]), np.array([-2.0, 9.0, 1.0])])
    shadow = zeros_like(lst)
    before = reruns(roots)
    dw = autodiff(roots, Duplicated(lst, shadow), Active(2.0), Duplicated(np.zeros(2), np.ones(2)))[1]
    assert reruns(roots) == before + 1        # the unguarded sqrt(-1) * 0 gave NaN
    assert dw == 6.0
    np.testing.assert_allclose(shadow[0], [0.5, 0.0])
    np.testing.assert_allclose(shadow[1], [0.0, 1 / 3, 1.0])


def test_one_array_twice_in_the_list_with_one_shadow():
    a = np.array([1.0, 2.0, 3.0])
    da = np.zeros(3)
    autodiff(pairwise, Duplicated(typed.List([a, a]), typed.List([da, da])),
             Duplicated(np.zeros(2), np.ones(2)))
    np.testing.assert_allclose(da, 4 * a)


def test_const_list_still_differentiates_the_other_arguments():
    lst = series(6)
    w = autodiff(weighted, Const(lst), Active(0.3), Duplicated(np.zeros(3), np.ones(3)))[1]
    assert w == pytest.approx(sum(2 * 0.3 * (np.sin(a) * a).sum() for a in lst), rel=1e-13)


def _call(shadow, lst=None):
    lst = series() if lst is None else lst
    autodiff(pairwise, Duplicated(lst, shadow), Duplicated(np.zeros(3), np.ones(3)))


@pytest.mark.parametrize("make, error, words", [
    (lambda lst: typed.List([np.zeros(3), np.zeros(5)]), ValueError, "has 2 items, the list 3"),
    (lambda lst: [np.zeros_like(a) for a in lst], TypeError, "must be a typed List"),
    (lambda lst: typed.List([np.zeros(3), np.zeros(4), np.zeros(4)]), ValueError, "shape"),
    (lambda lst: typed.List([np.zeros(n, np.float32) for n in LENGTHS]), ValueError, "dtype"),
    (lambda lst: typed.List([lst[0], np.zeros(5), np.zeros(4)]), ValueError, "shares memory"),
])
def test_bad_shadow_lists_are_refused(make, error, words):
    lst = series()
    before = [a.copy() for a in lst]
    with pytest.raises(error, match=words):
        _call(make(lst), lst)
    for a, b in zip(lst, before):
        np.testing.assert_array_equal(a, b)


def test_integer_items_are_refused():
    ints = typed.List([np.arange(3), np.arange(2)])
    with pytest.raises(TypeError, match="only float arrays"):
        autodiff(pairwise, Duplicated(ints, typed.List([np.arange(3), np.arange(2)])),
                 Duplicated(np.zeros(2), np.ones(2)))


def test_one_memory_with_two_shadows_is_refused():
    a = np.ones(3)
    with pytest.raises(ValueError, match="two of its items"):
        _call(typed.List([np.zeros(3), np.zeros(3)]), typed.List([a, a]))


def test_active_on_a_typed_list_is_refused():
    with pytest.raises(TypeError, match="typed List"):
        autodiff(pairwise, Active(series()), Duplicated(np.zeros(3), np.ones(3)))


@njit
def mixed(a, c, out):
    series = typed.List()
    series.append(a)
    series.append(c)
    for i in range(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


@njit
def float_list(a, out):
    vals = typed.List()
    for t in range(a.size):
        vals.append(a[t] * 2.0)
    acc = 0.0
    for t in range(len(vals)):
        acc += vals[t] * vals[t]
    out[0] = acc


def test_a_list_built_in_the_kernel_is_refused_when_it_cannot_be_shadowed():
    with pytest.raises(UnsupportedError, match="receives an item without derivatives") as info:
        autodiff(mixed, Duplicated(np.ones(3), np.zeros(3)), Const(np.ones(2)),
                 Duplicated(np.zeros(2), np.ones(2)))
    assert info.value.location[0] == __file__
    with pytest.raises(UnsupportedError, match="a list of floats built in the kernel"):
        autodiff(float_list, Duplicated(np.ones(3), np.zeros(3)), Duplicated(np.zeros(1), np.ones(1)))


@njit
def built(a, b, out):
    series = typed.List()
    series.append(a)
    series.append(b)
    for i in range(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


def test_lists_built_in_the_kernel_in_forward_mode():
    rng = np.random.default_rng(11)
    a, b, ta, tb = (rng.standard_normal(n) for n in (3, 5, 3, 5))
    dout = np.zeros(2)

    def call():
        autodiff(built, Duplicated(a, ta), Duplicated(b, tb), Duplicated(np.zeros(2), dout),
                 mode=Forward)
    call()
    np.testing.assert_allclose(dout, [2 * a @ ta, 2 * b @ tb], rtol=1e-14)
    assert unfreed(call) == (0, 0)
    d = np.zeros(1)          # a list of floats: the tangents are copied into the shadow list
    autodiff(float_list, Duplicated(a, ta), Duplicated(np.zeros(1), d), mode=Forward)
    np.testing.assert_allclose(d, [8 * a @ ta], rtol=1e-14)


@njit
def dtw(a, b):
    n, m = a.size, b.size
    D = np.full((n + 1, m + 1), np.inf)
    D[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            c = (a[i - 1] - b[j - 1]) ** 2
            D[i, j] = c + min(D[i - 1, j], D[i, j - 1], D[i - 1, j - 1])
    return D[n, m]


@njit
def pairwise_dtw(series, out):
    k = 0
    for i in range(len(series)):
        for j in range(i + 1, len(series)):
            out[k] = dtw(series[i], series[j])
            k += 1


@njit
def split_dtw(x, bounds, out):
    series = typed.List()
    for i in range(bounds.size - 1):
        series.append(x[bounds[i]:bounds[i + 1]])
    pairwise_dtw(series, out)


@njit(parallel=True)
def split_norms_parallel(x, bounds, out):
    series = typed.List()
    for i in range(bounds.size - 1):
        series.append(x[bounds[i]:bounds[i + 1]])
    for i in prange(len(series)):
        s = series[i]
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


def test_pairwise_time_warp_distance_over_unequal_series():
    lst = series(12, (4, 6, 5))
    report = check_gradient(pairwise_dtw, Duplicated(lst, zeros_like(lst)),
                            Duplicated(np.zeros(3), np.zeros(3)), rng=13)
    assert report.passed, report
    rng = np.random.default_rng(14)
    x, t, bounds = rng.standard_normal(15), rng.standard_normal(15), np.array([0, 4, 10, 15])
    report = check_gradient(split_dtw, Duplicated(x, np.zeros(15)), bounds,
                            Duplicated(np.zeros(3), np.zeros(3)), rng=15)
    assert report.passed, report
    tangent = np.zeros(3)
    autodiff(split_dtw, Duplicated(x, t), bounds, Duplicated(np.zeros(3), tangent), mode=Forward)
    for k in range(3):         # forward mode's J t against reverse mode's rows of J
        row, seed = np.zeros(15), np.zeros(3)
        seed[k] = 1.0
        autodiff(split_dtw, Duplicated(x, row), bounds, Duplicated(np.zeros(3), seed))
        assert tangent[k] == pytest.approx(row @ t, rel=1e-12)


@pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaTypeSafetyWarning")
def test_parallel_loop_over_a_list_built_in_the_kernel():
    rng = np.random.default_rng(16)
    x, t, bounds = rng.standard_normal(15), rng.standard_normal(15), np.array([0, 4, 10, 15])
    report = check_gradient(split_norms_parallel, Duplicated(x, np.zeros(15)), bounds,
                            Duplicated(np.zeros(3), np.zeros(3)), rng=17)
    assert report.passed, report
    tangent = np.zeros(3)
    autodiff(split_norms_parallel, Duplicated(x, t), bounds, Duplicated(np.zeros(3), tangent),
             mode=Forward)
    parts = [slice(bounds[i], bounds[i + 1]) for i in range(3)]
    np.testing.assert_allclose(tangent, [2 * x[p] @ t[p] for p in parts], rtol=1e-13)


@njit
def overwrite_items(series, out):
    for i in range(len(series)):
        s = series[i]
        for t in range(s.size):
            s[t] = np.sin(s[t]) * 2.0
        acc = 0.0
        for t in range(s.size):
            acc += s[t] * s[t]
        out[i] = acc


def test_items_written_in_place():
    lst = series(18, (3, 5))
    report = check_gradient(overwrite_items, Duplicated(lst, zeros_like(lst)),
                            Duplicated(np.zeros(2), np.zeros(2)), rng=19)
    assert report.passed and not report.primal_mismatches, report
    start = [a.copy() for a in lst]
    shadow = typed.List([np.ones(3), np.ones(5)])     # seeds on the final items
    autodiff(overwrite_items, Duplicated(lst, shadow), Duplicated(np.zeros(2), np.ones(2)))
    for s, a0, a in zip(shadow, start, lst):
        np.testing.assert_allclose(a, 2 * np.sin(a0), rtol=1e-15)
        np.testing.assert_allclose(s, (1 + 2 * a) * 2 * np.cos(a0), rtol=1e-13)


@njit
def reverse_inside(lst, shadow, out, dout):
    autodiff(pairwise, Duplicated(lst, shadow), Duplicated(out, dout))


@njit
def forward_inside(lst, tangents, out, dout):
    autodiff(pairwise, Duplicated(lst, tangents), Duplicated(out, dout), mode=Forward)


def test_autodiff_inside_njit_code():
    lst = series(20)
    shadow = zeros_like(lst)
    reverse_inside(lst, shadow, np.zeros(3), np.ones(3))
    for s, a in zip(shadow, lst):
        np.testing.assert_allclose(s, 2 * a, rtol=1e-14)
    tangents, dout = series(21), np.zeros(3)
    forward_inside(lst, tangents, np.zeros(3), dout)
    np.testing.assert_allclose(dout, [2 * a @ t for a, t in zip(lst, tangents)], rtol=1e-14)
    with pytest.raises(ValueError, match="length differs"):
        reverse_inside(lst, typed.List([np.zeros(3)]), np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="shape or strides differ"):
        reverse_inside(lst, typed.List([np.zeros(3), np.zeros(5), np.zeros(5)]), np.zeros(3),
                       np.ones(3))


def test_explain_runs_on_copies_of_the_lists():
    lst = series(22)
    shadow = typed.List([np.ones_like(a) for a in lst])
    before = [a.copy() for a in lst]
    text = str(explain(overwrite_items, Duplicated(lst, shadow), Duplicated(np.zeros(3), np.ones(3))))
    assert "s = series[i]" in text
    for a, b, s in zip(lst, before, shadow):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(s, 1.0)
