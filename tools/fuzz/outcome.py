"""What a check of one generated kernel comes to (`Outcome`), and the small helpers every
profile's checker shares (checker.py, parallel.py, exits.py, complex_data.py)."""
from __future__ import annotations

import linecache
import re
import traceback
from dataclasses import dataclass

import numpy as np

# outcome statuses
PASS, DISCARD, UNSUPPORTED, FAIL, INVALID = "pass", "discard", "unsupported", "fail", "invalid"


@dataclass
class Outcome:
    """What happened to one program.

    status: "pass", "discard" (finite differences unreliable: `category` says why),
    "unsupported" (`category` names the construct), "fail" (`category`: "wrong_gradient",
    "nan_gradient", "primal_mismatch", "forward_mismatch", "crash:<Exception>", or from a campaign
    "died:<signal>", "timeout"), "invalid" (the generator made a program Numba rejects: a fuzzer
    bug).
    """
    status: str
    category: str = ""
    detail: str = ""
    seconds: float = 0.0
    rules: frozenset = frozenset()
    forward: str = ""          # "", "checked", "skipped:<why>"
    triage: str = ""           # for failures: the known bug that explains it, if one does

    @property
    def key(self):
        return (self.status, self.category)


def tolerance(fd, rtol):
    """check_gradient's tolerance per element: rtol * max(1, max|fd|) + rtol * |fd|."""
    fd = np.asarray(fd, np.float64)
    scale = float(np.max(np.abs(fd))) if fd.size else 0.0
    return rtol * max(1.0, scale) + rtol * np.abs(fd)


def fd_discard(fd1, fd2, rtol, consistency):
    """An Outcome DISCARD when finite differences at h (`fd1`) and 2h (`fd2`) are not finite or
    do not agree to `consistency` of the tolerance, else None."""
    for a, b in zip(fd1, fd2):
        if a is None:
            continue
        a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            return Outcome(DISCARD, "nonfinite")
        if np.any(np.abs(a - b) > consistency * tolerance(a, rtol)):
            return Outcome(DISCARD, "fd_noise")
    return None


def normalize_construct(text: str) -> str:
    """A short, stable name for an UnsupportedError's construct (for counting)."""
    text = text.splitlines()[0] if text else "?"
    text = re.sub(r"%[\w.\"-]+", "%_", text)
    text = re.sub(r"\b\d+\b", "N", text)
    return text[:120]


def unsupported(exc, prefix: str = "", **fields) -> Outcome:
    """The Outcome UNSUPPORTED of an UnsupportedError, its construct named."""
    return Outcome(UNSUPPORTED, prefix + normalize_construct(getattr(exc, "construct", str(exc))),
                   short(exc), **fields)


def selected(seed, salt, fraction) -> bool:
    """A deterministic pseudo-random choice of `fraction` of the seeds."""
    return ((seed * salt) >> 7) % 1000 < fraction * 1000


def short(exc) -> str:
    s = f"{type(exc).__name__}: {exc}"
    return s if len(s) < 4000 else s[:4000] + " ..."


def tb(exc) -> str:
    s = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return s if len(s) < 8000 else s[-8000:]


def run_source(source: str, label: str, module: str) -> dict:
    """Execute a generated kernel's source as a module named `module`, its lines kept in
    linecache under `label` (tracebacks and Numba's errors show them)."""
    linecache.cache[label] = (len(source), None, source.splitlines(True), label)
    ns: dict = {"__name__": module}
    exec(compile(source, label, "exec"), ns)
    return ns


def gradient_failure(rep) -> str:
    """The category of a check_gradient report that did not pass."""
    if rep.primal_mismatches:
        return "primal_mismatch"
    if any(np.isnan(np.asarray(a.ad, np.float64)).any() for a in rep.args):
        return "nan_gradient"
    return "wrong_gradient"
