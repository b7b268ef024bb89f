"""The derivative rule table: one record per opcode, intrinsic or libm family.

How to add a rule
-----------------
Register it in one of the rule modules (`arithmetic.py`, `intrinsics.py`, `libm.py`) with
`define(key, *partials, spellings=...)`; rules/__init__.py imports them all, so the table is full
whenever any part of ir_passes.rules is imported:

- `key` is the LLVM opcode (`fdiv`), the intrinsic without its type suffix (`llvm.sin`), or the libm
  name (`tanh`). `spellings` lists other callee names that mean the same function (`tanhf`).
- Each entry of `partials` is the reverse expression for one operand: a function
  `(b, d, x, y) -> Value | None` that returns d * (partial derivative of y w.r.t. that operand).
  `b` is a Builder positioned in the reverse sweep, `d` the adjoint of the result, `x[k]` the primal
  value of operand k and `y` the primal result. `x` and `y` are fetched only when a rule reads them,
  so the tape holds exactly what the rules use. Return None for an operand with no derivative
  (an integer exponent, a condition).
- Every partial must be linear in `d`: forward mode derives the tangent rule as
  sum_k partial_k(d = tangent of operand k).
- `ZERO` is a partial for an operand the result does not depend on locally (copysign's sign).
- `zero(key)` declares a function whose derivative is zero everywhere it is defined (floor).
- `inactive(key)` declares a function that never carries derivatives (refcounting, lifetime
  markers): calls to it are copied into the forward sweep and have no reverse (effects.py
  lists LLVM's; a host registers its own).
- `cross_lane(key, emitter)` declares a function that exchanges values between threads (a warp
  shuffle, rules/nvptx.py): `emitter.reverse(g, inst, block, b)` and `emitter.tangent(fm, inst)`
  emit its reverse and tangent code, which exchange adjoints and tangents the same way. Its calls
  are never evaluated again in the reverse sweep (every thread of the exchange must take part).
- `mirrored(key)` declares an inactive function whose reverse is itself, called again at the
  mirrored place of the reverse sweep (a GPU block barrier: the reverse of a barrier is a
  barrier). Alias analysis counts it as writing whatever the function writes anywhere (other
  threads' writes become visible at a barrier).
- Strong zero: a zero `d` contributes exactly zero, even where the partial is inf or NaN (a term
  that a select, `nansum` or an `isnan` test drops has a zero adjoint, and LLVM computes both
  sides of such a branch: `np.where(np.isnan(w), 0, x * w)`, `np.cbrt` of a negative number).
  rules/partials.py wraps every partial in the guard, in every mode; a rule need not test d
  itself. `zero_guard` says when the guard can be left out:
  "always" (the default): the partial may be inf or NaN at finite operands (fdiv, log, sqrt);
  "operands": the partial is finite wherever the primal operands it reads are (fmul's d * x[1],
  fma): guarded unless rules/finite.py proves each operand it read finite (a constant), and
  only in modules that test a float for NaN or infinity (`finite.tests_nan`: every product
  guarded cost up to 3.6x of a gradient's time); such a rule reads `x` only, never `y` or a
  sibling;
  "never": the partial never scales d by a primal value (fadd's d, select's choice of d or 0,
  copysign's +-1).

A call or opcode with float data and no rule raises UnsupportedError naming it; it never gets a
zero derivative by accident.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

Partial = Callable[..., object]


@dataclass(frozen=True)
class Rule:
    key: str
    partials: tuple[Partial | None, ...]
    zero: bool = False
    inactive: bool = False
    zero_guard: str = "always"  # when a zero d needs the strong-zero guard: "always", "operands", "never"
    mirror: bool = False  # inactive, and called again at the mirrored place in reverse
    lanes: object = None  # cross_lane: the emitter of its reverse and tangent code

    def partial(self, k: int) -> Partial | None:
        return self.partials[k] if k < len(self.partials) else None


RULES: dict[str, Rule] = {}


def ZERO(b, d, x, y):
    return None


GUARDS = ("always", "operands", "never")


def define(key: str, *partials: Partial | None, spellings: tuple[str, ...] = (),
           zero_guard: str = "always") -> Rule:
    if zero_guard not in GUARDS:
        raise ValueError(f"zero_guard must be one of {GUARDS}, not {zero_guard!r}")
    rule = Rule(key, tuple(partials), zero_guard=zero_guard)
    for name in (key, *spellings):
        RULES[name] = rule
    return rule


def zero(key: str, spellings: tuple[str, ...] = ()) -> Rule:
    rule = Rule(key, (), zero=True)
    for name in (key, *spellings):
        RULES[name] = rule
    return rule


def inactive(key: str, spellings: tuple[str, ...] = ()) -> Rule:
    rule = Rule(key, (), inactive=True)
    for name in (key, *spellings):
        RULES[name] = rule
    return rule


def mirrored(key: str, spellings: tuple[str, ...] = ()) -> Rule:
    rule = Rule(key, (), inactive=True, mirror=True)
    for name in (key, *spellings):
        RULES[name] = rule
    return rule


def cross_lane(key: str, emitter, spellings: tuple[str, ...] = ()) -> Rule:
    rule = Rule(key, (), lanes=emitter)
    for name in (key, *spellings):
        RULES[name] = rule
    return rule


def alias(name: str, key: str) -> Rule:
    """Callee `name` means the function whose rule is `key` (a host's own spelling of a libm
    function: its wrapper around `tgamma`)."""
    rule = RULES[key]
    RULES[name] = rule
    return rule


def external(key: str, partials: Sequence[int | None], inactive_fn: bool = False) -> Rule:
    """A rule for an external function whose partial derivatives are other external functions:
    `partials[k]` is the address of a function of the same arguments returning d f / d x_k
    (None: not differentiable in that argument; 0: the derivative is zero)."""
    if inactive_fn:
        return inactive(key)

    def partial(address):
        if address is None:
            return None
        if address == 0:
            return ZERO

        def emit(b, d, x, y):
            args = [x[k] for k in range(len(x))]
            return b.fmul(d, b.call_address(address, d.type, args))
        return emit
    rule = Rule(key, tuple(partial(a) for a in partials))
    RULES[key] = rule
    return rule


_SUFFIX = re.compile(r"^(f16|f32|f64|f80|f128|bf16|i\d+|v\d+\w+|p\d+)$")


def intrinsic_key(name: str) -> str:
    """`llvm.powi.f64.i32` -> `llvm.powi`."""
    if not name.startswith("llvm."):
        return name
    parts = name.split(".")
    while len(parts) > 2 and _SUFFIX.match(parts[-1]):
        parts.pop()
    return ".".join(parts)


def lookup(opcode_or_callee: str) -> Rule | None:
    return RULES.get(intrinsic_key(opcode_or_callee))
