"""The user API: `autodiff`, `compile_gradient`, `inspect`, `compile_count`, `clear_cache`.

Each function picks the mode (modes/): reverse, forward, or batched reverse when an argument is
BatchDuplicated (k seeds). The modes validate the annotated arguments (`Const`, `Active`,
`Duplicated`, `DuplicatedNoNeed`, `BatchDuplicated`; a bare value means Const), build the
derivative once per (kernel, Numba signature, activity pattern) and cache it; later calls cost
one @njit call.
"""
from __future__ import annotations

from typing import Any, Callable

from .annotations import BatchDuplicated, Forward, Mode, Reverse
from .arguments import is_cuda
from .modes import batched, forward, reverse
from .modes.reverse import CompiledGradient, clear_cache, compile_count

__all__ = ["CompiledGradient", "autodiff", "clear_cache", "compile_count", "compile_gradient",
           "inspect"]


def _batched(args) -> bool:
    return any(isinstance(a, BatchDuplicated) for a in args)


def _check_mode(mode) -> None:
    if mode is not Reverse and mode is not Forward:
        raise ValueError(f"mode must be enzyme_py.Reverse or Forward, not {mode!r}")


def autodiff(kernel: Callable, *args: Any, mode: Mode = Reverse, seed: Any = 1.0,
             cache: str = "auto") -> Any:
    """Differentiate `kernel(*args)` in reverse mode.

    Returns a tuple with one entry per argument: the derivative (a float) for
    an Active argument, None otherwise. Derivatives of Duplicated arrays are
    added into their shadows. If the kernel returns a float, `seed` multiplies
    its derivative (the adjoint of the return value).

    BatchDuplicated(x, (dx_1, ..., dx_k)) gives k seeds in one call (seed may
    then be a tuple of k); an Active argument's entry is then a tuple of k.

    With mode=Forward (docs/semantics.md): arrays are Duplicated (or
    BatchDuplicated for k directions) with shadows holding the tangents of
    their initial values, scalars Active(x, dx); the shadows leave holding the
    tangents of the final values, and the result is the tangent of the return
    value (a tuple of k for k directions), or None when it returns no float.

    cache (reverse mode): "auto" recomputes cheap values and tapes expensive ones (divisions,
    math calls) inside loops; "minimal" recomputes all it safely can (the smallest tape);
    "always" tapes every value the reverse sweep needs (docs/internals.md).

    A numba-cuda launch `kernel[blocks, threads]` is differentiated on the GPU (docs/cuda.md).
    """
    if is_cuda(kernel):
        from .cuda.api import autodiff as cuda_autodiff   # the optional `cuda` extra
        return cuda_autodiff(kernel, *args, mode=mode, cache=cache)
    if mode is Forward:
        return forward.forward_autodiff(kernel, *args)
    if mode is Reverse and _batched(args):
        return batched.autodiff(kernel, *args, seed=seed)
    _check_mode(mode)
    return reverse.autodiff(kernel, *args, seed=seed, cache=cache)


def compile_gradient(kernel: Callable, *args: Any, mode: Mode = Reverse,
                     cache: str = "auto") -> Any:
    """Build (or fetch from the cache) the gradient for these annotated arguments.

    Use `.entry` to call the gradient from @njit code. With mode=Forward it is
    the CompiledForward of enzyme_py.modes.forward; with BatchDuplicated arguments the
    CompiledBatched of enzyme_py.modes.batched (k seeds per call); for a CUDA launch the
    CompiledKernel of enzyme_py.cuda.api.
    """
    if is_cuda(kernel):
        from .cuda.api import compile_kernel   # the optional `cuda` extra
        return compile_kernel(kernel, *args, mode=mode, cache=cache)
    if mode is Forward:
        return forward.compile_forward(kernel, *args)
    if mode is Reverse and _batched(args):
        return batched.compile_batched(kernel, *args)
    _check_mode(mode)
    return reverse.compile_gradient(kernel, *args, cache=cache)


def inspect(kernel: Callable, *args: Any, mode: Mode = Reverse, cache: str = "auto") -> Any:
    """The CompiledGradient for these arguments, with its IR texts
    (`.captured`, `.cleaned`, `.generated`, `.verified`).

    Unlike `compile_gradient`, a failure after capture (in cleanup, ir_passes
    or compilation) is not raised: it is returned in `.error`, with the texts
    produced before it. Validation and Numba typing errors still raise.
    A CUDA kernel launch gets its CompiledKernel (docs/cuda.md), failures raised.
    """
    if is_cuda(kernel):
        from .cuda.api import compile_kernel   # the optional `cuda` extra
        return compile_kernel(kernel, *args, mode=mode, cache=cache)
    if mode is Forward:
        return forward.compile_forward(kernel, *args, keep_failure=True)
    _check_mode(mode)
    if _batched(args):
        raise NotImplementedError(
            "compile_gradient/inspect take Duplicated in reverse mode; BatchDuplicated (k seeds "
            "in one call) goes through autodiff (enzyme_py.modes.batched)")
    return reverse.inspect(kernel, *args, cache=cache)
