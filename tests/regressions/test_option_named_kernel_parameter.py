"""Fixed: a kernel parameter named like an option (`def k(x, memory=2)`) passed by keyword was
taken as the option: `autodiff(k, Duplicated(x, dx), memory=5)` ran the kernel with memory=2.

Now (enzyme_py/options.py) such a keyword is a TypeError saying how to pass it, in autodiff,
compile_gradient, inspect, the helpers and check_gradient; passed positionally, the parameter
is the kernel's and the keyword the option.
"""
import numpy as np
import pytest
from numba import njit

import enzyme_py
from enzyme_py import Duplicated, autodiff, check_gradient


@njit
def scaled(x, memory=2.0):
    return x[0] * x[0] * memory


@njit
def seeded(x, seed=2.0):
    return x[0] * seed


def test_autodiff_refuses_the_ambiguous_keyword():
    x, dx = np.array([3.0]), np.zeros(1)
    with pytest.raises(TypeError, match="`memory` is both an option of autodiff"):
        autodiff(scaled, Duplicated(x, dx), memory=5.0)
    np.testing.assert_array_equal(dx, 0.0)


def test_positional_value_is_the_kernels():
    x, dx = np.array([3.0]), np.zeros(1)
    autodiff(scaled, Duplicated(x, dx), 5.0)
    np.testing.assert_array_equal(dx, [30.0])
    dx[:] = 0.0
    autodiff(seeded, Duplicated(x, dx), 4.0, seed=0.5)      # the kernel's seed 4, L's seed 0.5
    np.testing.assert_array_equal(dx, [2.0])


def test_plain_defaults_still_work():
    x, dx = np.array([3.0]), np.zeros(1)
    autodiff(scaled, Duplicated(x, dx))
    np.testing.assert_array_equal(dx, [12.0])


@pytest.mark.parametrize("call", [
    lambda x: enzyme_py.gradient(njit(lambda x, argnums=1.0: x[0] * argnums), x, argnums=0),
    lambda x: enzyme_py.hessian_vector_product(scaled, x, np.ones(1), memory=5.0),
    lambda x: enzyme_py.hessian(scaled, x, memory=5.0),
    lambda x: enzyme_py.jacobian(scaled, x, memory=5.0),
    lambda x: check_gradient(scaled, Duplicated(x, np.zeros(1)), memory=5.0),
    lambda x: enzyme_py.compile_gradient(scaled, Duplicated(x, np.zeros(1)), memory=5.0),
    lambda x: enzyme_py.explain(scaled, Duplicated(x, np.zeros(1)), memory=5.0),
])
def test_helpers_refuse_it(call):
    with pytest.raises(TypeError, match="is both an option of"):
        call(np.array([3.0]))


def test_keywords_that_are_no_option_of_the_helper_go_to_the_kernel():
    x = np.array([3.0])
    np.testing.assert_array_equal(enzyme_py.gradient(scaled, x, memory=5.0), [30.0])
    np.testing.assert_array_equal(enzyme_py.gradient(seeded, x, seed=5.0), [5.0])
