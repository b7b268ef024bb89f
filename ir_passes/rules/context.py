"""What a rule emitter may ask of the transform calling it (Enzyme's GradientUtils idea).

A BLAS/LAPACK record's `reverse(g, call, block, b)` and `tangent(fm, call)` (and nvptx.py's
warp shuffles') get the transform's state, but use only the members below: reverse mode's `Gradient`
(transforms/reverse/sweeps/gradient.py) implements ReverseContext, forward mode's `ForwardMode`
(transforms/forward/state.py) ForwardContext. These are the documented contract: a rule that
needs more adds a member here and to its implementation, and does not reach into the state.
(rules/ import no transforms: the Protocols are for reading and type checking.)
"""
from __future__ import annotations

from typing import Protocol


class RuleContext(Protocol):
    module: object        # the ir Module being built (declarations, runtime helpers)
    types: object         # analysis.types.TypeInfo of the primal function

    def has_shadow(self, v) -> bool:
        """Does pointer v carry a shadow (differentiable memory)?"""

    def unsupported(self, what: str, inst, hint: str = ""):
        """The error to raise to refuse `inst` (UnsupportedError, located at inst)."""


class ReverseContext(RuleContext, Protocol):
    """Reverse mode: code is emitted with builder `b` in the reverse sweep of primal block
    `block`."""

    def primal_at(self, v, block, b):
        """Primal value v, available in the reverse sweep (recomputed, reloaded or taped)."""

    def shadow_at(self, p, block, b):
        """The shadow of pointer p in the reverse sweep."""

    def is_active(self, v) -> bool:
        """Does register value v carry an adjoint?"""

    def take_adjoint(self, b, v):
        """The adjoint of register value v, reset to zero."""

    def add_adjoint(self, b, v, d) -> None:
        """adj[v] += d."""

    def stack_slot(self, type, name: str = ""):
        """A stack slot of `type` in the gradient's entry block."""

    def written_after(self, inst, p) -> bool:
        """May a write after `inst` change what p points to before the reverse sweep reads it?"""

    def saved(self, key, type, at, block, b, reason: str):
        """Save for the reverse sweep: the value tape key `key` (of `type`) names, kept by the
        forward sweep at primal instruction `at` (key.save writes it), read here."""

    def arena_base(self, b):
        """The arena's base pointer (saved copies are offsets into it; it may move when it grows,
        so load it after pushing)."""

    def arena_push(self, b, sizes, data=None) -> list:
        """Reserve blocks of `sizes` bytes (i64 values) in the arena, the first filled from
        `data` when given: their i64 offsets."""

    def copy_to_arena(self, b, e, data, size) -> None:
        """Forward sweep (a saved key's `save`): copy `size` bytes at `data` into the arena;
        tape entry `e` keeps the offset."""

    def rank1(self, b, call, block, ft, alpha, u, v, adjoint, a, dims) -> None:
        """shadow(a) += alpha u v^T, deferred over a loop when it can be (deferred_rank1.py)."""


class ForwardContext(RuleContext, Protocol):
    """Forward mode: code is emitted with builder `b` where the primal call stands."""
    width: int            # tangent lanes
    b: object             # the builder at the call

    def emit_primal(self, inst):
        """Emit the primal call; the clone."""

    def val(self, v):
        """Primal value v in the generated function."""

    def shadow(self, p, user=None) -> list:
        """The shadow of pointer p, one per lane."""

    def varying(self, v) -> bool:
        """Does register value v carry a tangent?"""

    def tan(self, v):
        """The tangents of v (one per lane), or None where they are zero."""

    def set_tangent(self, v, lanes) -> None:
        """Give v its tangents (one per lane; None: zero)."""

    def entry_slot(self, t, name: str = ""):
        """A stack slot of type t in the generated function's entry block."""
