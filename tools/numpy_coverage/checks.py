"""Check one catalog entry: compile its kernel, then its reverse gradient (check_gradient) and
its forward tangent (against a central difference along a random direction).

Each mode's outcome is one of
  pass     agrees with finite differences;
  refused  enzyme_py raised UnsupportedError (a clear message: the user knows);
  wrong    a gradient that disagrees with finite differences (a silent wrong gradient);
  crash    any other exception from enzyme_py (an internal error);
  numba    the plain kernel does not compile (the installed Numba does not support the call).

`complex` checks the same kernel on complex128 inputs (inputs.make_complex; the result's real
part plus 0.37 times its imaginary part): reverse mode with check_gradient (central differences
along both parts of every element), forward mode along a random complex direction; its outcome
is the first of the two that does not pass.
"""
from dataclasses import dataclass

import numpy as np

from enzyme_py import Duplicated, Forward, UnsupportedError, autodiff, check_gradient

from .inputs import make, make_complex
from .kernels import build

RTOL = 1e-5
STEP = 1e-6


@dataclass
class Outcome:
    status: str
    detail: str = ""


@dataclass
class Result:
    entry: object
    reverse: Outcome
    forward: Outcome
    complex: Outcome = None

    @property
    def passed(self) -> bool:
        return self.reverse.status == "pass" and self.forward.status == "pass"


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


def _guarded(check):
    try:
        return check()
    except UnsupportedError as e:
        return Outcome("refused", str(e).strip().splitlines()[0])
    except Exception as e:  # noqa: BLE001 - every other failure is recorded, not raised
        return Outcome("crash", _first_line(e))


def _reverse(kernel, args):
    report = check_gradient(kernel, *[Duplicated(a.copy(), np.zeros_like(a)) for a in args],
                            seed=1.0, rtol=RTOL)
    if report.passed:
        return Outcome("pass")
    worst = max(report.args, key=lambda a: a.max_rel_err)
    return Outcome("wrong", f"argument {worst.label}: max relative error {worst.max_rel_err:.2e}")


def _forward(kernel, args):
    rng = np.random.default_rng(0)
    dirs = [rng.standard_normal(a.shape) + (1j * rng.standard_normal(a.shape)
                                            if a.dtype.kind == "c" else 0) for a in args]
    tangent = autodiff(kernel, *[Duplicated(a.copy(), d.copy()) for a, d in zip(args, dirs)],
                       mode=Forward)
    plus = kernel(*[a + STEP * d for a, d in zip(args, dirs)])
    minus = kernel(*[a - STEP * d for a, d in zip(args, dirs)])
    fd = (plus - minus) / (2 * STEP)
    if abs(tangent - fd) <= RTOL * max(1.0, abs(fd)):
        return Outcome("pass")
    return Outcome("wrong", f"tangent {tangent:.6g}, finite difference {fd:.6g}")


def check(entry, complex_inputs=True) -> Result:
    """Both modes of one differentiable entry (and on complex inputs)."""
    kernel = build(entry.name, entry.expr, list(entry.params))
    args = make(entry.params)
    try:
        kernel(*[a.copy() for a in args])
    except Exception as e:  # noqa: BLE001 - Numba's typing or lowering errors
        failed = Outcome("numba", _first_line(e))
        return Result(entry, failed, failed, failed)
    return Result(entry, _guarded(lambda: _reverse(kernel, args)),
                  _guarded(lambda: _forward(kernel, args)),
                  check_complex(entry) if complex_inputs else None)


def check_complex(entry) -> Outcome:
    """Both modes of the entry's kernel on complex inputs (one outcome)."""
    kernel = build(entry.name, entry.expr, list(entry.params), real=True)
    args = make_complex(entry.params)
    try:
        kernel(*[a.copy() for a in args])
    except Exception as e:  # noqa: BLE001 - Numba does not compile the call for complex inputs
        return Outcome("numba", _first_line(e))
    for mode in (_reverse, _forward):
        out = _guarded(lambda: mode(kernel, args))
        if out.status != "pass":
            return out
    return Outcome("pass")
