"""Argument annotations and mode markers for `autodiff`.

- `Const(v)`: `v` is not differentiated. A bare (unannotated) value means Const.
- `Active(x)`: `x` is a float passed by value; its derivative is returned.
- `Duplicated(a, da)`: `a` is a float array; the derivative is *added* into the
  shadow `da` (same shape, dtype and strides as `a`). A shadow of memory the kernel
  writes holds the seed for that memory's final value on entry; the reverse sweep
  consumes it (overwritten locations come back zeroed).
- `DuplicatedNoNeed(a, da)`: like Duplicated, but the caller does not need the
  primal result in `a`: the gradient skips the stores into `a` (and the arithmetic only they
  use) when nothing in the kernel reads `a` back, leaving `a` unspecified; otherwise `a` is
  computed as for Duplicated.
- `BatchDuplicated(a, (da_1, ..., da_k))`: k shadows: k directions (forward mode) or k seeds
  (reverse mode) in one call.
- In forward mode, `Active(x, dx)` carries the tangent of a scalar (docs/semantics.md).
"""
from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Const:
    """A value that is not differentiated."""
    value: Any


@dataclass(frozen=True)
class Active:
    """A float scalar passed by value whose derivative `autodiff` returns.

    In forward mode it carries its tangent: `Active(x, dx)`, or `Active(x, (dx_1, ..., dx_k))`
    for k directions. Reverse mode ignores `tangent`."""
    value: Any
    tangent: Any = None


@dataclass(frozen=True)
class Duplicated:
    """A float array `value` with a shadow array `shadow` that receives its derivative."""
    value: Any
    shadow: Any


@dataclass(frozen=True)
class DuplicatedNoNeed:
    """Duplicated, but the caller does not need the primal result: its stores may be skipped
    (then `value` is left unspecified), exactly as docs/semantics.md says."""
    value: Any
    shadow: Any


@dataclass(frozen=True)
class BatchDuplicated:
    """A float array with k shadows, one per direction (forward mode) or seed (reverse mode):
    `shadows` is a tuple of arrays laid out like `value`. One call differentiates all k, sharing
    the primal work."""
    value: Any
    shadows: Any

    def __post_init__(self):
        if not isinstance(self.shadows, (tuple, list)):
            raise TypeError("BatchDuplicated(x, shadows): shadows must be a tuple of arrays, "
                            f"not {type(self.shadows).__name__}")
        object.__setattr__(self, "shadows", tuple(self.shadows))


class Mode:
    """A differentiation mode marker: `Reverse`, `Forward`, or `ReverseWithPrimal` /
    `ForwardWithPrimal` (the same, also returning the kernel's return value, as Enzyme's modes
    of these names do). `base` is Reverse or Forward; `with_primal` says which of the two."""

    def __init__(self, name: str, base: Optional["Mode"] = None):
        self.name = name
        self.base = self if base is None else base
        self.with_primal = base is not None

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self):
        return self.name     # pickled as the module's global: one object per mode (disk cache)


Reverse = Mode("Reverse")
Forward = Mode("Forward")
ReverseWithPrimal = Mode("ReverseWithPrimal", Reverse)
ForwardWithPrimal = Mode("ForwardWithPrimal", Forward)


def as_annotation(arg: Any):
    """Return `arg` if it is an annotation, else `Const(arg)`."""
    if isinstance(arg, (Const, Active, Duplicated, DuplicatedNoNeed, BatchDuplicated)):
        return arg
    return Const(arg)
