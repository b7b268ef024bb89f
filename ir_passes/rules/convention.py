"""What a host's calling convention says about the functions it generates.

Status codes: a host may return a status from its functions (an integer return value), some of
whose values mean success. Reverse mode runs the reverse sweep only after a successful return,
and gives adjoint code only to blocks from which one can be reached. `register_success_codes`
names the codes (enzyme_py registers its host's); by default every return succeeds.
"""
from __future__ import annotations

from typing import Iterable

_success: list = [None]


def register_success_codes(codes: Iterable[int] | None) -> tuple | None:
    """Integer returns equal to one of `codes` are successes, any other value an error (None:
    every return succeeds). Returns the previous codes."""
    old = _success[0]
    _success[0] = None if codes is None else tuple(int(c) for c in codes)
    return old


def success_codes() -> tuple | None:
    """The registered success codes, or None when every return succeeds."""
    return _success[0]
