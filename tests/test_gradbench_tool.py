"""The GradBench tool answers hello and lse through the runner's relay, with a stand-in eval that
checks the outputs (GradBench's own evals need a checkout and the C++ `manual` tool)."""
import io
import subprocess
import sys
import textwrap
from pathlib import Path

from benchmarks.gradbench.runner import relay

REPO = Path(__file__).resolve().parents[1]

STAND_IN = textwrap.dedent("""
    import json, math, sys
    def send(m):
        print(json.dumps(m), flush=True)
        return json.loads(sys.stdin.readline()) if m["kind"] != "end" else None
    def check(i, r, ok):
        send({"id": i + 1, "kind": "analysis", "of": i, "valid": bool(r["success"] and ok(r["output"]))})
    send({"id": 0, "kind": "start", "eval": "hello"})
    send({"id": 1, "kind": "define", "module": "hello"})
    r = send({"id": 2, "kind": "evaluate", "module": "hello", "function": "double", "input": 3.0})
    check(2, r, lambda y: y == 6.0)
    x = [0.5, -1.0, 2.0]
    s = sum(math.exp(v) for v in x)
    inp = {"x": x, "min_runs": 2, "min_seconds": 0}
    r = send({"id": 4, "kind": "evaluate", "module": "lse", "function": "primal", "input": inp})
    check(4, r, lambda y: abs(y - math.log(s)) < 1e-12)
    r = send({"id": 6, "kind": "evaluate", "module": "lse", "function": "gradient", "input": inp})
    check(6, r, lambda g: all(abs(a - math.exp(v) / s) < 1e-12 for a, v in zip(g, x)))
    send({"id": 8, "kind": "end"})
""")


def test_hello_and_lse_through_the_relay():
    tool = subprocess.Popen([sys.executable, "-m", "benchmarks.gradbench.tool"], cwd=REPO,
                            text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    stand_in = subprocess.Popen([sys.executable, "-c", STAND_IN], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    log = io.StringIO()
    try:
        records = relay(stand_in, tool, log, echo=None)
    finally:
        for proc in (stand_in, tool):
            proc.stdin.close()
            proc.wait(timeout=30)
    evaluated = [r for r in records if r["kind"] == "evaluate"]
    assert [r["function"] for r in evaluated] == ["double", "primal", "gradient"]
    assert all(r["success"] and r["valid"] for r in evaluated)
    assert log.getvalue().count('"response"') == 8


def test_saddle_and_particle_nested_ad_give_the_evals_values():
    """GradBench's saddle and particle evals (nested AD: a gradient inside the objective a
    gradient descent differentiates) expect these values from every tool and every mode pair."""
    import numpy as np

    from benchmarks.gradbench.tool import particle, saddle
    out = saddle.SOLVERS["rf"](np.array([1.0, 1.0]))
    np.testing.assert_allclose(out, [8.246324826140356e-06] * 4, rtol=1e-4)
    w = particle.SOLVERS["rr"](np.array([0.0]))
    np.testing.assert_allclose(w, 0.2071918746486116, rtol=1e-10)


def test_ba_sparse_jacobian_layout_and_values():
    """The ba eval's sparse Jacobian (GradBench's SparseMat layout) against finite differences
    of one observation's residuals and the weight error's derivative -2w."""
    import numpy as np

    from benchmarks.gradbench.tool import ba
    from benchmarks.workloads.ba import BAInstance
    raw = {"n": 3, "m": 4, "p": 5, "cam": [0.1, -0.2, 0.3, 1.0, 2.0, -3.0, 500.0, 2.0, 3.0, 1e-3, 1e-6],
           "x": [0.5, -1.5, 8.0], "w": 0.8, "feat": [10.0, -20.0]}
    args = ba.prepare(raw)
    rows, cols, vals = ba.jacobian(*args)
    assert rows.tolist() == [0, 15, 30, 45, 60, 75, 90, 105, 120, 135, 150, 151, 152, 153, 154, 155]
    fd = BAInstance(args).fd_rows(4)                 # observation 4: camera 1, point 0
    block = vals[4 * 30:5 * 30].reshape(2, 15)
    np.testing.assert_allclose(block, fd, rtol=1e-5, atol=1e-7)
    assert cols[4 * 30:4 * 30 + 11].tolist() == list(range(11, 22))
    assert cols[4 * 30 + 11:4 * 30 + 14].tolist() == [33, 34, 35]
    assert cols[4 * 30 + 14] == 3 * 11 + 4 * 3 + 4
    np.testing.assert_allclose(vals[-5:], -2 * 0.8, rtol=1e-15)
    out = ba.post_jacobian((rows, cols, vals))
    assert len(out["vals"]) == 31 and out["rows"][-1] == 155 and out["cols"][-1] == 3 * 11 + 4 * 3 + 4


def test_gmm_jacobian_against_finite_differences():
    import numpy as np

    from benchmarks.gradbench.tool import gmm
    from enzyme_py import Const, Duplicated, check_gradient
    rng = np.random.default_rng(3)
    d, k, n = 3, 2, 5
    args = (rng.normal(size=k), rng.uniform(size=(k, d)), rng.normal(size=(k, d)),
            rng.normal(size=(k, d * (d - 1) // 2)), rng.normal(size=(n, d)), 1.0, 0)
    grads = gmm.jacobian(*args)
    report = check_gradient(gmm.objective, *[Duplicated(a.copy(), np.zeros_like(a)) for a in args[:4]],
                            Const(args[4]), args[5], args[6])
    assert report.passed, str(report)
    for g, r in zip(grads, report.args):
        np.testing.assert_allclose(g, r.ad, rtol=1e-12)


def test_kmeans_direction_is_gradient_over_hessian_diagonal():
    import numpy as np

    from benchmarks.gradbench.tool import kmeans
    rng = np.random.default_rng(4)
    points = rng.random((40, 3))
    centroids = points[-4:].copy()
    nearest = np.argmin(((points[:, None, :] - centroids[None]) ** 2).sum(-1), axis=1)
    grad = np.zeros_like(centroids)
    count = np.zeros(4)
    for i, c in enumerate(nearest):
        grad[c] += -2 * (points[i] - centroids[c])
        count[c] += 1
    np.testing.assert_allclose(kmeans.direction(centroids, points), grad / (2 * count[:, None]),
                               rtol=1e-12, atol=1e-15)


def test_ode_gradient_of_the_last_state():
    """ode: y_{n-1} after s RK4 steps; its gradient against central differences."""
    import numpy as np

    from benchmarks.gradbench.tool import ode
    x = np.random.default_rng(5).random(6)
    g = ode.gradient(x, 3)
    fd = np.empty(6)
    for i in range(6):
        h = 1e-6
        xp, xm = x.copy(), x.copy()
        xp[i] += h
        xm[i] -= h
        fd[i] = (ode.primal(xp, 3)[-1] - ode.primal(xm, 3)[-1]) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_det_by_minors_recursive_gradient_is_the_adjugate():
    import numpy as np

    from benchmarks.gradbench.tool import det
    A = np.random.default_rng(6).random(25)
    M = A.reshape(5, 5)
    np.testing.assert_allclose(det.determinant(A, 5), np.linalg.det(M), rtol=1e-12)
    np.testing.assert_allclose(det.gradient(A, 5).reshape(5, 5),
                               np.linalg.det(M) * np.linalg.inv(M).T, rtol=1e-10)


def test_lstm_jacobian_leaves_the_state_and_matches_finite_differences():
    import numpy as np

    from benchmarks.gradbench.tool import lstm
    rng = np.random.default_rng(7)
    main, extra, state = rng.random((2, 12)), rng.random((3, 3)), rng.random((2, 3))
    seq = (rng.random((6, 3)) > 0.5).astype(np.float64)
    before = state.copy()
    g = lstm.jacobian(main, extra, state, seq)
    np.testing.assert_array_equal(state, before)
    flat = np.concatenate((main.ravel(), extra.ravel()))
    fd = np.empty_like(flat)
    for i in range(flat.size):
        h = 1e-6
        up, dn = flat.copy(), flat.copy()
        up[i] += h
        dn[i] -= h
        f = [lstm.objective(v[:24].reshape(2, 12), v[24:].reshape(3, 3), state, seq) for v in (up, dn)]
        fd[i] = (f[0] - f[1]) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_ht_jacobian_columns_against_finite_differences():
    """ht on a made-up 22-bone model (complicated variant): the Jacobian's `us` and pose
    columns against central differences of the objective."""
    import numpy as np

    from benchmarks.gradbench.tool import ht
    rng = np.random.default_rng(8)
    nb, nv, npts = 22, 10, 4
    rel = np.tile(np.eye(4), (nb, 1, 1))
    rel[:, :3, 3] = rng.normal(size=(nb, 3))
    inv = np.tile(np.eye(4), (nb, 1, 1))
    inv[:, :3, 3] = rng.normal(size=(nb, 3))
    base = np.vstack([rng.normal(size=(3, nv)), np.ones((1, nv))])
    weights = rng.random((nb, nv))
    weights /= weights.sum(axis=0)
    parents = np.array([-1] + list(range(nb - 1)))
    tri = rng.integers(0, nv, (6, 3))
    theta, us = rng.normal(size=26) * 0.3, rng.random((npts, 2)) * 0.5
    rest = (parents, rel, inv, base, weights, False, tri, rng.integers(0, 6, npts),
            rng.normal(size=(npts, 3)))
    J = ht.jacobian(theta, us, *rest)
    assert J.shape == (3 * npts, 28)
    h = 1e-6
    for col in (0, 1, 2, 9, 27):
        tp, tm, up, um = theta.copy(), theta.copy(), us.copy(), us.copy()
        if col < 2:
            up[:, col] += h
            um[:, col] -= h
        else:
            tp[col - 2] += h
            tm[col - 2] -= h
        fd = (ht.objective(tp, up, *rest) - ht.objective(tm, um, *rest)) / (2 * h)
        np.testing.assert_allclose(J[:, col], fd, rtol=1e-6, atol=1e-8)


def test_lstm_text_substitute_keeps_the_decoded_prefix_and_alphabet():
    """The eval's missing text: ADBench's decoded characters first, then a seeded substitute
    drawn from their alphabet, so the eval's bits per character do not change."""
    from benchmarks.gradbench.lstm_text import extend
    text = "From fairest creatures we desire increase,\nThat thereby beauty\u2019s rose"
    long = extend(text, 500)
    assert len(long) == 500 and long.startswith(text)
    assert set(long) == set(text)
    assert long == extend(text, 500)
    assert extend(text, 10) == text[:10]
