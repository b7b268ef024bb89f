"""The user API: `autodiff`, `compile_gradient`, `inspect`, `compile_count`, `clear_cache`.

Each function picks its row of one table, MODES (`mode_of`): a CUDA launch, forward mode,
batched reverse when an argument is BatchDuplicated (k seeds), or reverse mode. `autodiff`
first binds the call to the kernel's signature (modes/calls.py: keywords, defaults, tuple
arguments, the return value's seed) and runs the bound call in that mode (modes/bound.py). The
modes validate the annotated arguments (`Const`, `Active`, `Duplicated`, `DuplicatedNoNeed`,
`BatchDuplicated`; a bare value means Const), build the derivative once per (kernel, Numba
signature, activity pattern) through modes/pipeline.py and cache it; later calls cost one
@njit call.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ir_passes import ParallelUpdates

from .annotations import BatchDuplicated, Forward, Mode, Reverse, as_annotation
from .arguments import is_cuda, typeof
from .bridge.frozen import as_dispatcher
from .bridge.restype import return_type
from .modes import batched, bound, calls, fast, forward, pipeline, reverse
from .modes.memory import refuse_memory
from .modes.returns import UNSET, ReturnPlan
from .modes.strong_zero_entry import checked_batched, checked_forward, checked_gradient
from .modes.reverse import CompiledGradient, compile_count
from .options import kernel_options

__all__ = ["CompiledGradient", "autodiff", "clear_cache", "compile_count", "compile_gradient",
           "inspect", "refuse_structured_return", "split_mode"]


def _batched(args) -> bool:
    return any(isinstance(a, BatchDuplicated) for a in args)


def check_mode_type(mode) -> None:
    """A mode is one of enzyme_py's Mode markers, not a string or another value."""
    if not isinstance(mode, Mode):
        raise TypeError(f"mode must be enzyme_py.Reverse, Forward, ReverseWithPrimal or "
                        f"ForwardWithPrimal (imported from enzyme_py), not {mode!r}")


def _check_mode(mode) -> None:
    check_mode_type(mode)
    if mode is not Reverse and mode is not Forward:
        raise ValueError(f"mode must be enzyme_py.Reverse or Forward, not {mode!r}")


@kernel_options()
def autodiff(kernel: Callable, *args: Any, mode: Optional[Mode] = None, seed: Any = UNSET,
             cache: str = "auto", deterministic: bool = False, memory: str = "tape",
             **kwargs: Any) -> Any:
    """Differentiate `kernel(*args, **kwargs)` in reverse mode (docs/semantics.md).

    Returns a tuple with one entry per argument, in call order (positional arguments, then
    keyword arguments as given): the derivative (a float) for an Active argument (a tuple of
    them for an Active tuple), None otherwise. Derivatives of Duplicated arrays are added into
    their shadows. Keyword arguments and defaults work as in a plain call (a default left out
    is filled in by Numba); a tuple of arrays is one argument: Duplicated((a, b), (da, db)).

    `seed` is the weight of the return value in L: a float for a float return (default 1.0),
    an array of the returned shape for an array return, a tuple of seeds for a tuple return
    (None for a zero seed); `seed=None` leaves the return value out. An array or tuple return
    needs an explicit seed.

    `autodiff(Reverse, kernel, *args)` (Enzyme.jl's order) is the same call.
    `mode=ReverseWithPrimal` returns (derivatives, the kernel's return value).

    BatchDuplicated(x, (dx_1, ..., dx_k)) gives k seeds in one call (seed may then be a tuple of
    k; a list of k seeds for an array or tuple return); an Active argument's entry is then a
    tuple of k. More than 16 lanes run in chunks of 16.

    With mode=Forward (docs/semantics.md): arrays are Duplicated (or BatchDuplicated for k
    directions) with shadows holding the tangents of their initial values, scalars Active(x, dx);
    the shadows leave holding the tangents of the final values, and the result is the tangent of
    the return value (the same structure as the return value; a tuple of k for k directions), or
    None when it returns nothing differentiable. `ForwardWithPrimal`: (tangent, return value).

    cache (reverse mode): "auto" recomputes cheap values and tapes expensive ones (divisions,
    math calls) inside loops; "minimal" recomputes all it safely can (the smallest tape);
    "always" tapes every value the reverse sweep needs (docs/internals.md).

    deterministic (reverse mode): the gradients of `prange` loops are the same bits on every
    run with the same number of threads (docs/parallel.md); a loop that would need atomic
    additions is refused. For a numba-cuda launch: sums over threads in block order, no float
    atomics (docs/cuda.md).
    memory (reverse mode): "tape" keeps every overwritten value on the tape; a budget such as
    "256MB" reverses the time loops that qualify from snapshots taken within it, recomputing
    the steps between them; "auto" does so within a default budget (docs/checkpointing.md).

    A numba-cuda launch `kernel[blocks, threads]` is differentiated on the GPU (docs/cuda.md).

    A repeated call with the same structure costs little more than the compiled gradient's own
    call (modes/fast.py).
    """
    if (mode is None or mode is Reverse) and not kwargs and not deterministic and memory == "tape":
        result = fast.call(kernel, args, seed, cache)
        if result is not None:
            return result
    kernel, args, mode = split_mode(kernel, args, mode)
    request = Request(kernel, args, mode, cache, memory, kwargs, seed, deterministic)
    if not is_cuda(kernel):
        request.call = calls.bind(as_dispatcher(kernel), args, kwargs)
    return dispatch(request, "autodiff", mode.base, request.call.leaves if request.call else args)


def clear_cache() -> None:
    """Forget every compiled gradient, of every mode (the next call rebuilds)."""
    pipeline.clear()
    fast.forget_all()


def split_mode(kernel, args, mode) -> tuple:
    """(kernel, args, mode) from `autodiff(kernel, *args, mode=...)` or Enzyme.jl's
    `autodiff(mode, kernel, *args)`."""
    if isinstance(kernel, Mode):
        if mode is not None and mode is not kernel:
            raise ValueError(f"autodiff({kernel!r}, ...) was also given mode={mode!r}")
        if not args:
            raise TypeError(f"autodiff({kernel!r}, kernel, *args): the kernel is missing")
        return args[0], args[1:], kernel
    if mode is None:
        return kernel, args, Reverse
    check_mode_type(mode)
    return kernel, args, mode


@kernel_options()
def compile_gradient(kernel: Callable, *args: Any, mode: Mode = Reverse,
                     cache: str = "auto", memory: str = "tape") -> Any:
    """Build (or fetch from the cache) the gradient for these annotated arguments.

    Use `.entry` to call the gradient from @njit code. With mode=Forward it is
    the CompiledForward of enzyme_py.modes.forward; with BatchDuplicated arguments the
    CompiledBatched of enzyme_py.modes.batched (k seeds per call); for a CUDA launch the
    CompiledKernel of enzyme_py.cuda.api.
    """
    return dispatch(Request(kernel, args, mode, cache, memory), "compile", mode, args)


def refuse_structured_return(kernel: Callable, args: tuple, what: str) -> None:
    """Compiled entries seed a float return only: refuse an array or tuple return (before
    anything is built in forward mode) rather than leave it out of L silently."""
    argtypes = tuple(typeof(i, as_annotation(a).value) for i, a in enumerate(args))
    restype = return_type(as_dispatcher(kernel), argtypes)
    if ReturnPlan.of(restype).kind == "structured":
        raise TypeError(f"{what}: the kernel returns {restype}, and a compiled entry seeds a float "
                        f"return only. Call autodiff(kernel, ..., seed=...) (it seeds array and "
                        f"tuple returns), or return a float / write the result into a Duplicated "
                        f"argument")


@kernel_options()
def inspect(kernel: Callable, *args: Any, mode: Mode = Reverse, cache: str = "auto",
            memory: str = "tape") -> Any:
    """The CompiledGradient for these arguments, with its IR texts
    (`.captured`, `.cleaned`, `.generated`, `.verified`).

    Unlike `compile_gradient`, a failure after capture (in cleanup, ir_passes
    or compilation) is not raised: it is returned in `.error`, with the texts
    produced before it. Validation and Numba typing errors still raise.
    A CUDA kernel launch gets its CompiledKernel (docs/cuda.md), failures raised.
    """
    return dispatch(Request(kernel, args, mode, cache, memory), "inspect", mode, args)


# ---- the modes ---------------------------------------------------------------------------------

@dataclass
class Request:
    """One call of autodiff, compile_gradient or inspect: the kernel, its annotated arguments,
    the mode, the options; `call`: the arguments bound to the kernel's signature (autodiff on
    the CPU, modes/calls.py)."""
    kernel: Any
    args: tuple
    mode: Any
    cache: str = "auto"
    memory: str = "tape"
    kwargs: dict = field(default_factory=dict)
    seed: Any = UNSET
    deterministic: bool = False
    call: Any = None


@dataclass(frozen=True)
class Route:
    """What autodiff, compile_gradient and inspect run in one mode, each a function of the
    Request. `memory_refusal`: the mode's words when it does not checkpoint (None: it does)."""
    autodiff: Callable
    compile: Callable
    inspect: Callable
    memory_refusal: Optional[str] = None


def dispatch(request: Request, what: str, mode, leaves):
    """Run `what` ("autodiff", "compile", "inspect") of the request's mode (MODES)."""
    route = MODES[mode_of(request.kernel, mode, leaves)]
    if route.memory_refusal is not None:
        refuse_memory(request.memory, route.memory_refusal)
    return getattr(route, what)(request)


def mode_of(kernel, mode, leaves) -> str:
    """The key of MODES for a call: a CUDA launch, forward mode, reverse mode with k seeds
    (an argument is BatchDuplicated) or with one."""
    if is_cuda(kernel):
        return "cuda"
    if mode is Forward:
        return "forward"
    _check_mode(mode)
    return "batched" if _batched(leaves) else "reverse"


def _reverse(r: Request):
    updates = ParallelUpdates.DETERMINISTIC if r.deterministic else ParallelUpdates.AUTO
    result, value = bound.reverse(r.call, r.seed, r.cache, r.mode.with_primal, updates, r.memory)
    if r.mode.with_primal:
        return result, value
    if not r.kwargs and not r.deterministic and r.memory == "tape" and r.call.plan.identity and \
            r.call.plan.returns.kind != "structured":
        fast.remember(r.kernel, r.args, r.cache)
    return result


def _compile_reverse(r: Request):
    grad = pipeline.compiled(reverse.REVERSE, r.kernel, r.args, cache=r.cache, memory=r.memory)[0]
    refuse_structured_return(r.kernel, r.args, "compile_gradient")
    return checked_gradient(r.kernel, grad, lambda: pipeline.compiled(
        reverse.REVERSE, r.kernel, r.args, cache=r.cache, memory=r.memory, guarded=True)[0])


def _compile_forward(r: Request):
    refuse_structured_return(r.kernel, r.args, "compile_gradient(mode=Forward)")
    return checked_forward(r.kernel, pipeline.compiled(forward.FORWARD, r.kernel, r.args)[0],
                           lambda: pipeline.compiled(forward.FORWARD, r.kernel, r.args,
                                                     guarded=True)[0])


def _inspect_reverse(r: Request):
    return pipeline.compiled(reverse.REVERSE, r.kernel, r.args, cache=r.cache, memory=r.memory,
                             keep_failure=True)[0]


def _inspect_forward(r: Request):
    return pipeline.compiled(forward.FORWARD, r.kernel, r.args, keep_failure=True)[0]


def _batched_reverse(r: Request):
    if r.mode.with_primal:
        raise NotImplementedError("ReverseWithPrimal with BatchDuplicated arguments: call "
                                  "the kernel for its value, or use Duplicated")
    return bound.batched(r.call, r.seed)


def _compile_batched(r: Request):
    return checked_batched(r.kernel, pipeline.compiled(batched.BATCHED, r.kernel, r.args)[0],
                           lambda: pipeline.compiled(batched.BATCHED, r.kernel, r.args,
                                                     guarded=True)[0])


def _inspect_batched(r: Request):
    raise NotImplementedError(
        "inspect takes Duplicated in reverse mode; BatchDuplicated (k seeds in one call) goes "
        "through autodiff or compile_gradient (enzyme_py.modes.batched)")


def _cuda(r: Request):
    if r.kwargs or r.seed is not UNSET or r.mode.with_primal:
        raise TypeError("a numba-cuda launch takes positional annotated arguments, "
                        "mode=Reverse or Forward and no seed (docs/cuda.md)")
    from .cuda.api import autodiff as cuda_autodiff   # the optional `cuda` extra
    return cuda_autodiff(r.kernel, *r.args, mode=r.mode, cache=r.cache,
                         deterministic=r.deterministic)


def _compile_cuda(r: Request):
    from .cuda.api import compile_kernel   # the optional `cuda` extra
    return compile_kernel(r.kernel, *r.args, mode=r.mode, cache=r.cache)


MODES = {
    "reverse": Route(_reverse, _compile_reverse, _inspect_reverse),
    "forward": Route(lambda r: bound.forward(r.call, with_primal=r.mode.with_primal),
                     _compile_forward, _inspect_forward, "forward mode"),
    "batched": Route(_batched_reverse, _compile_batched, _inspect_batched,
                     "reverse mode with BatchDuplicated arguments"),
    "cuda": Route(_cuda, _compile_cuda, _compile_cuda, "a numba-cuda launch"),
}
