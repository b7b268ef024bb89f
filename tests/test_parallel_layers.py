"""prange gradients under each of Numba's threading layers (chosen once per process, so each
runs in a subprocess): the same gradients as the serial copies', with 1 and 2 threads."""
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import sys
    import numba
    import numpy as np
    sys.path.insert(0, {tests!r})
    import parallel_kernels as K
    from enzyme_py import Active, Const, Duplicated, autodiff

    def grads(kernel, make):
        args = make()
        d = autodiff(kernel, *args, seed=1.0)
        return [a.shadow for a in args if isinstance(a, Duplicated)] + [v for v in d if v is not None]

    rng = np.random.default_rng(5)
    x, w = rng.standard_normal(301), rng.standard_normal(301)
    pairs = rng.integers(0, 301, (600, 2))
    cases = {{
        "elementwise": lambda: [Duplicated(x.copy(), np.zeros(301)), Duplicated(np.zeros(301), w.copy())],
        "gather": lambda: [Duplicated(x.copy(), np.zeros(301)), Const(pairs),
                           Duplicated(np.zeros(600), np.ones(600))],
        "weighted_sum": lambda: [Active(0.4), Duplicated(x.copy(), np.zeros(301))],
        "heat": lambda: [Duplicated(x.copy(), w.copy()), Active(0.2), Const(4)],
    }}
    for nthreads in (1, 2):
        numba.set_num_threads(min(nthreads, numba.config.NUMBA_NUM_THREADS))
        for name, make in cases.items():
            kernel = getattr(K, name)
            got, want = grads(kernel, make), grads(K.serial(kernel), make)
            for g, v in zip(got, want):
                np.testing.assert_allclose(g, v, rtol=1e-12, atol=1e-12, err_msg=name)
    print(numba.threading_layer())
""")


def _available(layer) -> bool:
    probe = "import numba, numpy as np\n@numba.njit(parallel=True)\ndef f(x):\n" \
            "    for i in numba.prange(x.shape[0]):\n        x[i] += 1\nf(np.zeros(4))\n" \
            "print(numba.threading_layer())"
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer)
    r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.strip() == layer


@pytest.mark.parametrize("layer", ["workqueue", "omp", "tbb"])
def test_threading_layer(layer):
    if not _available(layer):
        pytest.skip(f"the {layer} threading layer is not available here")
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer)
    tests = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", SCRIPT.format(tests=tests)], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == layer
