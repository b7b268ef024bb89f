"""Fixed: `mode="Forward"` (a string) gave AttributeError ('str' object has no attribute
'base'); a wrong-shaped return seed's message printed as a Python tuple. Now a TypeError names the
Mode markers, and the seed's message is a sentence (modes/returns.ShapeMismatch)."""
import numpy as np
import pytest
from numba import njit

from enzyme_py import Duplicated, autodiff, compile_gradient


@njit
def square(x):
    return x[0] * x[0]


@njit
def doubled(x):
    return x * 2.0


@pytest.mark.parametrize("mode", ["Forward", "reverse", 1])
def test_mode_must_be_a_mode_marker(mode):
    x, dx = np.array([1.0]), np.zeros(1)
    with pytest.raises(TypeError, match="mode must be enzyme_py.Reverse, Forward"):
        autodiff(square, Duplicated(x, dx), mode=mode)
    with pytest.raises(TypeError, match="mode must be enzyme_py.Reverse, Forward"):
        compile_gradient(square, Duplicated(x, dx), mode=mode)


def test_wrong_seed_shape_reads_as_a_sentence():
    x, dx = np.ones(3), np.zeros(3)
    with pytest.raises(ValueError) as info:
        autodiff(doubled, Duplicated(x, dx), seed=np.ones(2))
    assert str(info.value) == ("autodiff: the seed for the return value has shape (2,), but the "
                               "kernel returned an array of shape (3,); pass a seed of the "
                               "returned shape")
    np.testing.assert_array_equal(dx, 0.0)
