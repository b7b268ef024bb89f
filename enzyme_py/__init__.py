"""enzyme_py: reverse-mode automatic differentiation of Numba @njit kernels,
done on their LLVM IR the way Enzyme does it.

    from enzyme_py import autodiff, Active, Duplicated
    autodiff(kernel, Duplicated(x, dx), Active(a))   # -> (None, da)

The layout is in docs/architecture.md: api.py (the public functions), modes/ (reverse,
forward, batched reverse, Hessian-vector products), bridge/ (the Numba CPU target).
"""
from . import njit_api  # noqa: F401 - autodiff and the annotations inside @njit code
from .annotations import (Active, BatchDuplicated, Const, Duplicated, DuplicatedNoNeed, Forward,
                          ForwardWithPrimal, Reverse, ReverseWithPrimal)
from .api import autodiff, clear_cache, compile_count, compile_gradient, inspect
from .check import check_gradient
from .custom import custom_jvp, custom_vjp, implicit, inactive, register_derivative
from .disk_cache import set_cache_dir
from .errors import InternalError, UnsupportedError
from .explain import explain
from .modes.split import Tape, augmented_forward, reverse
from .helpers import (differentiable, forward_entry, gradient, gradient_entry, hessian,
                      hessian_vector_product, jacobian, jvp, value_and_grad, vjp)
from .sparse import SparseHessian, SparseJacobian, SparseJacobianWarning

__all__ = [
    "autodiff", "compile_gradient", "inspect", "compile_count", "clear_cache",
    "Const", "Active", "Duplicated", "DuplicatedNoNeed", "BatchDuplicated", "Reverse", "Forward",
    "ReverseWithPrimal", "ForwardWithPrimal",
    "UnsupportedError", "InternalError", "explain", "register_derivative", "set_cache_dir",
    "custom_vjp", "custom_jvp", "inactive", "implicit",
    "gradient", "value_and_grad", "jvp", "vjp", "jacobian", "hessian_vector_product", "hessian",
    "differentiable", "gradient_entry", "forward_entry", "check_gradient",
    "augmented_forward", "reverse", "Tape", "SparseJacobian", "SparseHessian", "SparseJacobianWarning",
]
