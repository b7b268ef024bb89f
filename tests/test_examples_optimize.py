"""examples/fit_ode.py and examples/newton_cg.py run and converge.

fit_ode: scipy's L-BFGS-B with enzyme_py gradients through an in-place RK4 integrator recovers
the Lotka-Volterra parameters the data was made with (5% observation noise) to 2%; the table is
printed, and the plot saved when matplotlib is installed.
newton_cg: Newton-CG with Hessian-vector products by forward over reverse reaches the minimum of
the extended Rosenbrock function (x = 1) to 1e-8, and so does scipy's Newton-CG given `hessp`.
"""
import importlib.util
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", os.path.join(ROOT, "examples",
                                                                                  f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fit_ode_recovers_the_parameters(tmp_path, capsys):
    fit_ode = load("fit_ode")
    res = fit_ode.main(["--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert res.success, res.message
    np.testing.assert_allclose(res.x, fit_ode.TRUE, rtol=0.02)
    assert "fitted" in out and "L-BFGS-B" in out
    rows = [line for line in out.splitlines() if line[:4].strip().isdigit()]
    assert len(rows) >= 10
    losses = [float(line.split()[1]) for line in rows]
    assert losses[-1] < 0.01 * losses[0]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in out
    else:
        assert (tmp_path / "fit_ode.png").stat().st_size > 10_000


def test_newton_cg_converges(capsys):
    newton_cg = load("newton_cg")
    x, history, res = newton_cg.main(["--n", "40"])
    np.testing.assert_allclose(x, 1.0, atol=1e-8)
    assert history[-1][2] <= 1e-10
    assert res.success
    np.testing.assert_allclose(res.x, 1.0, atol=1e-6)
    out = capsys.readouterr().out
    assert "Newton-CG" in out and "CG its" in out


def test_newton_cg_hessian_vector_products_are_exact():
    newton_cg = load("newton_cg")
    import enzyme_py
    x = np.linspace(-1.0, 1.5, 6)
    v = np.arange(1.0, 7.0)
    H = np.zeros((6, 6))
    for i in (0, 2, 4):      # 2x2 blocks of the extended Rosenbrock function
        a, b = x[i], x[i + 1]
        H[i, i] = 1200 * a * a - 400 * b + 2
        H[i, i + 1] = H[i + 1, i] = -400 * a
        H[i + 1, i + 1] = 200
    hv = enzyme_py.hessian_vector_product(newton_cg.rosenbrock, x, v)
    np.testing.assert_allclose(hv, H @ v, rtol=1e-14, atol=1e-12)
    assert pytest.approx(float(hv @ v)) == float(v @ H @ v)
