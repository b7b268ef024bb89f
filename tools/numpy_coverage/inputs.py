"""The kernels' arguments, by name: small float64 arrays whose values keep every catalog function
away from its kinks (distinct values, no ties, inside the domains of arcsin, log, arccosh...)."""
import numpy as np


def _vector(lo, hi, n, seed):
    return np.random.default_rng(seed).permutation(np.linspace(lo, hi, n))


def _square(n, seed):
    r = np.random.default_rng(seed)
    return r.uniform(-0.5, 0.5, (n, n)) + n * np.eye(n)


def _spd(n, seed):
    a = np.random.default_rng(seed).uniform(-1.0, 1.0, (n, n))
    return a @ a.T + n * np.eye(n)


def _symmetric(n, seed):
    a = np.random.default_rng(seed).uniform(-1.0, 1.0, (n, n))
    return (a + a.T) / 2 + np.diag(np.arange(n) * 2.0)


MAKERS = {
    "x": lambda: _vector(0.15, 0.85, 6, 1),         # a vector in (0, 1)
    "y": lambda: _vector(0.3, 1.05, 6, 2),          # another, same length
    "q": lambda: np.array([0.55, 0.25]),            # two numbers in (0, 1)
    "b": lambda: _vector(1.2, 2.6, 6, 3),           # a vector above 1
    "u": lambda: _vector(-0.9, 0.8, 6, 4),          # both signs
    "z": lambda: _vector(0.2, 0.7, 3, 5),           # three numbers
    "A": lambda: _square(3, 6),                     # a well-conditioned square matrix
    "B": lambda: np.random.default_rng(7).uniform(-1.0, 1.0, (3, 3)),
    "R": lambda: np.random.default_rng(8).uniform(-1.0, 1.0, (4, 3)),  # rectangular, full rank
    "S": lambda: _spd(3, 9),                        # symmetric positive definite
    "H": lambda: _symmetric(3, 10),                 # symmetric, distinct eigenvalues
}


def make(names):
    """Fresh arrays for a kernel's parameters, e.g. make("xy")."""
    return [MAKERS[n]() for n in names]


def make_complex(names):
    """The same arrays with small imaginary parts (a tenth of the values' scale, so the
    functions defined on part of the real line stay away from their branch cuts)."""
    out = []
    for k, a in enumerate(make(names)):
        im = np.random.default_rng(100 + k).uniform(-0.1, 0.1, a.shape)
        out.append(a + 1j * im * max(1.0, float(np.abs(a).max())))
    return out
