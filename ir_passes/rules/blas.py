"""BLAS-style rules: calls whose arguments are whole vectors, differentiated as a unit (Enzyme has
dedicated rules for dot, axpy, gemv, gemm rather than differentiating the library's code).

`dot(n, x, y) -> *out` is described by where its arguments are; its reverse is
  d = shadow(out); shadow(out) = 0; shadow(x) += d * y; shadow(y) += d * x.
x and y must hold their values as of the call when the reverse runs: when a later write may
change them, the forward sweep copies them aside (freed with the call's other allocations).
"""
from __future__ import annotations

from dataclasses import dataclass

DOTS: dict = {}


@dataclass(frozen=True)
class Dot:
    name: str
    n: int          # argument index of the length
    x: int
    y: int
    out: int        # pointer receiving the result
    kind: int | None = None   # argument index of a BLAS type char ('d', 's'), if any


def register_dot(name: str, n: int, x: int, y: int, out: int, kind: int | None = None) -> Dot:
    d = Dot(name, n, x, y, out, kind)
    DOTS[name] = d
    return d
