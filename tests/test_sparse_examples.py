"""examples/sparse_trust_constr.py: trust-constr with enzyme_py's sparse objective Hessian and
constraint Jacobian reaches the swing-up, each pattern found once, the matrices equal the dense
ones."""
import importlib.util
import os

import numpy as np

from enzyme_py import hessian, jacobian

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}",
                                                  os.path.join(ROOT, "examples", name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_trust_constr_swing_up():
    ex = _example("sparse_trust_constr")
    n = 20
    res, H, J, Hc, _ = ex.solve(steps=n)
    assert res.status in (1, 2) and res.constr_violation < 1e-8
    assert abs(res.x[n] - np.pi) < 1e-8 and abs(res.x[0]) < 1e-8
    assert H.detections == 1 and J.detections == 1 and Hc.detections == 1
    dt = 4.0 / n
    z = np.random.default_rng(0).random(3 * n + 2)
    np.testing.assert_allclose(H(z, n, dt).toarray(), hessian(ex.effort, z, n, dt), rtol=1e-12,
                               atol=1e-14)
    v = np.random.default_rng(1).standard_normal(2 * n + 4)
    np.testing.assert_allclose(Hc(z, v, n, dt).toarray(), hessian(ex.weighted, z, v, n, dt),
                               rtol=1e-12, atol=1e-14)
    out = np.zeros(2 * n + 4)
    np.testing.assert_allclose(J(z, n, dt, out=out).toarray(),
                               jacobian(ex.dynamics, z, n, dt, out=out), rtol=1e-12, atol=0)
