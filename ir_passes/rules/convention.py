"""What a host's calling convention says about the functions it generates.

Status codes: a host may return a status from its functions (an integer return value), some of
whose values mean success. Reverse mode runs the reverse sweep only after a successful return,
and gives adjoint code only to blocks from which one can be reached. `register_success_codes`
names the codes (enzyme_py registers its host's); by default every return succeeds.
"""
from __future__ import annotations

from typing import Iterable

_success: list = [None]
_report: list = [None]


def register_success_codes(codes: Iterable[int] | None) -> tuple | None:
    """Integer returns equal to one of `codes` are successes, any other value an error (None:
    every return succeeds). Returns the previous codes."""
    old = _success[0]
    _success[0] = None if codes is None else tuple(int(c) for c in codes)
    return old


def success_codes() -> tuple | None:
    """The registered success codes, or None when every return succeeds."""
    return _success[0]


def register_error_report(helper: str, status: int, pending: str) -> None:
    """How generated code raises an error the host's caller sees: it calls `helper` (a runtime
    helper the host adds to runtime.helpers.HELPERS, `void (ptr message)`: records the error
    with the host, for the running thread) and the function returns `status`; `pending`
    (`i1 ()`, a helper too) says whether the running thread has such an error recorded.
    Without a report, such errors abort."""
    _report[0] = (helper, int(status), pending)


def error_report() -> tuple | None:
    """(helper, status, pending) registered by register_error_report, or None."""
    return _report[0]
