"""ADBench objectives (benchmarks/workloads: gmm, lstm, ba) against ADBench's reference outputs.

Values and enzyme_py gradients are compared with ADBench's tolerance,
|x - y| / max(1, |x| + |y|) <= 1e-8, on the test inputs in shared/data/adbench:
GMM on gmm/test.txt (objective, 18-entry gradient), LSTM on lstm/lstm_l2_c1024.txt (loss,
266-entry gradient), BA on ba/test.txt (residuals, the 30 x 62 Jacobian from per-observation
reverse sweeps, each residual seeded in turn). Each gradient is compiled once per module.
"""
import json
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # benchmarks/

from benchmarks.harness import close  # noqa: E402
from benchmarks.workloads import DATA_DIR, ba, gmm, lstm  # noqa: E402

TOL = 1e-8

pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(DATA_DIR, "reference_outputs_from_adbench_tests.json")),
    reason=f"ADBench data not found in {DATA_DIR} (set ADBENCH_DATA)")

@pytest.fixture(scope="module")
def ref():
    with open(os.path.join(DATA_DIR, "reference_outputs_from_adbench_tests.json")) as f:
        return json.load(f)


def assert_close(got, want, what):
    got = np.asarray(got, dtype=float).ravel()
    want = np.asarray(want, dtype=float).ravel()
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    ok = close(got, want, TOL)
    if not ok.all():
        i = int(np.argmin(ok))
        raise AssertionError(f"{what}: {int((~ok).sum())} of {ok.size} entries differ; "
                             f"first at {i}: {got[i]!r} vs reference {want[i]!r}")


# ---- GMM -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def gmm_data():
    return gmm.read_gmm(os.path.join(DATA_DIR, "gmm", "test.txt"))


def test_gmm_reader(gmm_data):
    alphas, means, icf, x, gamma, m = gmm_data
    assert alphas.shape == (3,) and means.shape == (3, 2) and icf.shape == (3, 3)
    assert x.shape == (1, 2) and gamma == 1.0 and m == 0


def test_gmm_objective(gmm_data, ref):
    assert_close(gmm.gmm_objective(*gmm_data), ref["gmm"]["objective"], "GMM objective")


@pytest.fixture(scope="module")
def gmm_gradient(gmm_data):
    inst = gmm.instance_from(gmm_data)
    inst.grad()
    return inst


def test_gmm_gradient(gmm_gradient, ref):
    """Needs np.empty temporaries inside the kernel (Qdiags, sum_qs, ...) differentiated."""
    assert len(ref["gmm"]["gradient"]) == 18
    assert_close(gmm_gradient.grad_vector(), ref["gmm"]["gradient"], "GMM gradient")


# ---- LSTM ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lstm_data():
    return lstm.read_lstm(os.path.join(DATA_DIR, "lstm", "lstm_l2_c1024.txt"))


def test_lstm_reader(lstm_data):
    main, extra, state, seq = lstm_data
    assert main.shape == (4, 56) and extra.shape == (3, 14)
    assert state.shape == (4, 14) and seq.shape == (1024, 14)


def test_lstm_objective(lstm_data, ref):
    main, extra, state, seq = lstm_data
    st = state.copy()
    loss = lstm.lstm_objective(main, extra, st, seq)
    # the reference loss is given to 8 digits only
    assert abs(loss - ref["lstm"]["objective"]) <= 1e-8 * 100
    assert not np.array_equal(st, state), "the state is updated in place"


@pytest.fixture(scope="module")
def lstm_gradient(lstm_data):
    inst = lstm.instance_from(lstm_data)
    inst.reset()
    inst.grad()
    return inst


def test_lstm_gradient(lstm_gradient, ref):
    g = lstm_gradient.grad_vector()
    assert g.size == 266
    assert_close(g, ref["lstm"]["gradient"], "LSTM gradient")


def test_lstm_gradient_keeps_primal(lstm_gradient, lstm_data):
    """The gradient run leaves the state exactly where the plain kernel does."""
    main, extra, state, seq = lstm_data
    st = state.copy()
    lstm.lstm_objective(main, extra, st, seq)
    np.testing.assert_array_equal(lstm_gradient.values[2], st)


# ---- BA --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def ba_data():
    return ba.read_ba(os.path.join(DATA_DIR, "ba", "test.txt"))


def test_ba_reader(ba_data):
    cams, X, w, obs, feats = ba_data
    assert cams.shape == (2, 11) and X.shape == (10, 3) and w.shape == (10,)
    assert feats.shape == (10, 2)
    np.testing.assert_array_equal(obs[:, 0], np.arange(10) % 2)
    np.testing.assert_array_equal(obs[:, 1], np.arange(10))


def test_ba_residuals(ba_data, ref):
    inst = ba.instance_from(ba_data)
    inst.primal()
    assert_close(inst.reproj_err, ref["ba"]["reproj_err"], "BA reprojection error")
    assert_close(inst.w_err, ref["ba"]["w_err"], "BA weight error")


def csr_jacobian(data, J, Jw):
    """ADBench's BASparseMat layout: rows (pointers), cols and the dense matrix."""
    cams, X, w, obs, feats = data
    n, m, p = cams.shape[0], X.shape[0], w.shape[0]
    ncols = ba.NCAM * n + 3 * m + p
    dense = np.zeros((3 * p, ncols))
    rows, cols, vals = [0], [], []
    for i in range(p):
        c, q = obs[i]
        blk_cols = ([ba.NCAM * c + k for k in range(ba.NCAM)]
                    + [ba.NCAM * n + 3 * q + k for k in range(3)] + [ba.NCAM * n + 3 * m + i])
        for r in range(2):
            for col, v in zip(blk_cols, J[i, r]):
                cols.append(col)
                vals.append(v)
                dense[2 * i + r, col] = v
            rows.append(len(cols))
    for i in range(p):
        col = ba.NCAM * n + 3 * m + i
        cols.append(col)
        vals.append(Jw[i])
        dense[2 * p + i, col] = Jw[i]
        rows.append(len(cols))
    return np.array(rows), np.array(cols), np.array(vals), dense


@pytest.fixture(scope="module")
def ba_jacobian(ba_data):
    inst = ba.instance_from(ba_data)
    inst.grad()
    return inst


def test_ba_jacobian(ba_jacobian, ba_data, ref):
    rows, cols, vals, dense = csr_jacobian(ba_data, ba_jacobian.J, ba_jacobian.Jw)
    assert list(dense.shape) == ref["ba"]["J_shape"] == [30, 62]
    assert len(rows) == ref["ba"]["J_rows_len"] and len(vals) == ref["ba"]["J_nnz"]
    assert_close(vals, ref["ba"]["J_vals_csr"], "BA Jacobian (CSR values)")
    # the Jacobian sweep also computes the residuals
    assert_close(ba_jacobian.reproj_err, ref["ba"]["reproj_err"], "BA residuals (Jacobian run)")


def test_ba_theta_zero_branch(ba_jacobian):
    """A camera with zero rotation takes Rodrigues' first-order branch; its Jacobian rows
    (from the same compiled gradient) agree with finite differences."""
    cams, X, w, obs, feats = ba_jacobian.data
    cams0 = cams.copy()
    cams0[:, :3] = 0.0
    inst = ba.instance_from((cams0, X, w, obs, feats))
    inst._entry = ba_jacobian._entry
    inst._jac = ba_jacobian._jac
    inst.grad()
    for i in (0, 1):
        fd = inst.fd_rows(i)
        np.testing.assert_allclose(inst.J[i], fd, rtol=1e-5, atol=1e-5 * np.abs(fd).max())
