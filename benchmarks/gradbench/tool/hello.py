"""hello: square(x) = x * x and double(x) = square'(x)."""
from numba import njit

from enzyme_py import Active, autodiff

from .protocol import Function


@njit
def square(x):
    return x * x


@njit
def double(x):
    return autodiff(square, Active(x))[0]


FUNCTIONS = {
    "square": Function(lambda x: (float(x),), square),
    "double": Function(lambda x: (float(x),), double),
}
