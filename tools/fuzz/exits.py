"""The `exits` profile: loops with per-iteration temporaries and early exits that are never,
sometimes or always taken, checked under the allocators' own checks.

A kernel loops over `x` (a `for` over a range, a `while` with its test, or `while True` with a
last-resort exit), makes a temporary every iteration (a slice times a constant, `np.empty`
filled, a 2-D `np.zeros`, a ufunc of a slice), and leaves early through one or two exits: a
counter test (`i == stop`, `i > stop`, `i >= stop`, `i < lo`) or a data test (`x[i] > 2.0`, true
only at a marker element far from the others), each by `break`, `raise ValueError` or
`return`. The Const values decide whether an exit is never taken (stop = -1 or past the end,
lo <= 0, no marker), sometimes (the middle) or always (at once). A third of the kernels wrap
the loop in an outer one. Tape room is sized from such exits (transforms/reverse/loops/trips.py).
About 30% also add to `s` a value chosen by `if stop == 3 or stop == 5: ... else: ...`, which
LLVM turns into a switch with two cases to one block (two edges, a phi with two entries from one block: the kind of
tests/regressions/test_forward_switch_two_cases_one_block.py).

`Config(exits=True)` runs the campaign's workers with PYTHONMALLOC=debug and MALLOC_CHECK_=3
(campaign.Pool), so heap corruption kills the worker ("died:<signal>", a failure) instead of
passing unnoticed. A kernel whose plain call raises must raise the same exception under
`autodiff` and leave the primal arrays as the plain call does; otherwise its gradient is checked
against central finite differences (check_gradient).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import List

import numpy as np

from enzyme_py import Const, Duplicated, UnsupportedError, autodiff
from enzyme_py.check import check_gradient
from .outcome import FAIL, INVALID, PASS, Outcome, run_source, short, tb, unsupported

MEMCHECK_ENV = {"PYTHONMALLOC": "debug", "MALLOC_CHECK_": "3"}

TEMPS = {
    "slice": "t = x[i:i + {w}] * 2.0",
    "empty": "t = np.empty({w})\n{ind}for q in range({w}):\n{ind}    t[q] = x[i + q] * x[i + q]",
    "zeros2d": "t2 = np.zeros((2, {w}))\n{ind}t2[1, :] = x[i:i + {w}]\n{ind}t = t2[1]",
    "ufunc": "t = np.sqrt(x[i:i + {w}] + 1.0)",
}
TESTS = {"eq": "i == stop", "gt": "i > stop", "ge": "i >= stop", "lt": "i < lo",
         "data": "x[i] > 2.0"}
ACTIONS = {"break": "break", "raise": 'raise ValueError("stop")', "return": "return s"}
WHEN = ("never", "sometimes", "always")


@dataclass
class ExitKernel:
    """A generated kernel of the `exits` profile: its source and argument values."""
    seed: int
    source: str
    n: int
    marker: int              # index of the data exit's marker element, -1 for none
    stop: int
    lo: int
    exits: List[tuple] = field(default_factory=list)   # (test, action, when, place)
    forms = None             # (the default profile's call forms: none here)


def _stop_for(test, when, n, rng) -> tuple:
    """(stop, lo) making a counter exit never, sometimes or always taken."""
    mid = max(1, n // 2)
    if test == "eq":
        return {"never": rng.choice([-1, n + 7]), "sometimes": mid, "always": 0}[when], 0
    if test in ("gt", "ge"):
        return {"never": n + 7, "sometimes": mid, "always": -1}[when], 0
    if test == "lt":
        return 0, {"never": rng.choice([0, -3]), "sometimes": 0, "always": n + 7}[when]
    return 0, 0


def generate_exits(seed: int) -> ExitKernel:
    rng = random.Random(seed)
    n = rng.choice([0, 1, 3, 9, 20, 40, 70])
    w = rng.choice([1, 2, 3])
    temp = rng.choice(sorted(TEMPS))
    form = rng.choice(["for", "while", "while_true"])
    nested = rng.random() < 1 / 3
    exits, stop, lo, marker = [], 0, 0, -1
    for _ in range(rng.choice([1, 1, 2])):
        test = rng.choice(sorted(TESTS))
        when = rng.choice(WHEN)
        action = rng.choice(sorted(ACTIONS))
        place = rng.choice(["first", "after_temp", "last"])
        if test == "data":
            if when != "never" and n > 0:
                marker = 0 if when == "always" else n // 2
        elif not any(e[0] in TESTS and e[0] != "data" for e in exits):
            stop, lo = _stop_for(test, when, n, rng)
        else:
            test = "data"
            if when != "never" and n > 0:
                marker = 0 if when == "always" else n // 2
        exits.append((test, action, when, place))
    # drawn last, so the earlier draws (and the kernels of earlier seeds) stay as they were
    pair = rng.random() < 0.3       # `stop == 3 or stop == 5`: a switch, two cases to one block
    ind = "        " if not nested else "            "
    body = {"first": [], "after_temp": [], "last": []}
    for test, action, _, place in exits:
        body[place].append(f"if {TESTS[test]}:\n{ind}    {ACTIONS[action]}")
    lines = [f"{ind}{s}" for s in body["first"]]
    lines.append(ind + TEMPS[temp].format(w=w, ind=ind))
    lines += [f"{ind}{s}" for s in body["after_temp"]]
    lines.append(f"{ind}s += t[0] * t[{w - 1}] + t[{w // 2}] * x[i] * c")
    if pair:
        lines.append(f"{ind}if stop == 3 or stop == 5:\n{ind}    v = x[i] * x[i]\n{ind}else:\n"
                     f"{ind}    v = 2.0 * x[i]\n{ind}s += v * c")
    lines += [f"{ind}{s}" for s in body["last"]]
    m = f"x.shape[0] - {w}"
    outer = ["    for j in range(2):", "        c = j + 1.0"] if nested else ["    c = 1.0"]
    head = ["    s = 0.0"] + outer
    pad = "    " if nested else ""
    if form == "for":
        loop = [f"{pad}    for i in range({m} + 1):"] + lines
    elif form == "while":
        loop = [f"{pad}    i = 0", f"{pad}    while i <= {m}:"] + lines + [f"{ind}i += 1"]
    else:
        loop = [f"{pad}    i = 0", f"{pad}    while True:", f"{ind}if i > {m}:",
                f"{ind}    break"] + lines + [f"{ind}i += 1"]
    src = "\n".join(["import numpy as np", "from numba import njit", "", "", "@njit",
                     "def kern(x, stop, lo):"] + head + loop + ["    return s", ""])
    return ExitKernel(seed, src, n + w - 1 if n else 0, marker, stop, lo, exits)


def load(k: ExitKernel) -> dict:
    return run_source(k.source, f"<tools.fuzz exits seed={k.seed}>", f"tools_fuzz_exits_{k.seed}")


def values(k: ExitKernel) -> np.ndarray:
    x = np.random.default_rng(k.seed).uniform(0.5, 1.5, k.n)
    if 0 <= k.marker < k.n:
        x[k.marker] = 3.0
    return x


def check_exits(k: ExitKernel, st) -> "Outcome":    # noqa: F821 - checker.Outcome

    try:
        kern = load(k)["kern"]
    except Exception as exc:       # noqa: BLE001 - the generator printed bad Python
        return Outcome(INVALID, f"source:{type(exc).__name__}", short(exc))
    x = values(k)
    try:
        plain_x = x.copy()
        kern(plain_x, k.stop, k.lo)
        raised = None
    except ValueError as exc:
        raised = exc
    except Exception as exc:       # noqa: BLE001
        return Outcome(INVALID, f"plain:{type(exc).__name__}", tb(exc))
    args = (Duplicated(x.copy(), np.zeros_like(x)), Const(k.stop), Const(k.lo))
    try:
        if raised is not None:
            before = args[0].value.copy()
            try:
                autodiff(kern, *args, seed=1.0)
            except ValueError:
                if not np.array_equal(args[0].value, before):
                    return Outcome(FAIL, "primal_mismatch[raised]", "x changed by a raising call")
                return Outcome(PASS)
            return Outcome(FAIL, "no_exception", "the plain call raised ValueError; autodiff did not")
        rep = check_gradient(kern, *args, seed=1.0, rtol=st.rtol64, eps=st.eps64)
    except UnsupportedError as exc:
        return unsupported(exc)
    except Exception as exc:       # noqa: BLE001
        return Outcome(FAIL, f"crash:{type(exc).__name__}", tb(exc))
    if not rep.passed:
        return Outcome(FAIL, "primal_mismatch" if rep.primal_mismatches else "wrong_gradient",
                       str(rep))
    return Outcome(PASS)
