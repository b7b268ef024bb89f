"""kmeans: the k-means cost (each point's squared distance to its nearest centroid, summed) and
the Newton direction for the centroids, gradient / (Hessian times ones), as GradBench defines
`dir`. Both come from one call of the Hessian-vector product entry (forward mode over reverse
mode: it adds the gradient into one array and H v into another)."""
import numpy as np
from numba import njit

from enzyme_py.modes.hvp import compile_hvp

from .protocol import Function


@njit
def cost(centroids, points):
    total = 0.0
    k, d = centroids.shape
    for i in range(points.shape[0]):
        best = np.inf
        for c in range(k):
            s = 0.0
            for j in range(d):
                t = points[i, j] - centroids[c, j]
                s += t * t
            best = min(best, s)
        total += best
    return total


def _direction(entry):
    @njit
    def direction(centroids, points):
        g = np.zeros_like(centroids)
        hv = np.zeros_like(centroids)
        entry(centroids.copy(), points, 1.0, g, np.ones_like(centroids), hv)
        return g / hv
    return direction


_built = {}


def direction(centroids, points):
    key = (centroids.shape[1], points.shape[1])
    if key not in _built:
        _built[key] = _direction(compile_hvp(cost, centroids, points).entry)
    return _built[key](centroids, points)


def prepare(raw):
    return (np.array(raw["centroids"], dtype=np.float64), np.array(raw["points"], dtype=np.float64))


FUNCTIONS = {
    "cost": Function(prepare, cost),
    "dir": Function(prepare, direction, post=lambda r: r.tolist()),
}
