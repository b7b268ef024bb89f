"""The prepare pipelines: the passes each mode runs on the primal before differentiating it, in
order. A step is named as its pass (passes.py; its golden tests in tests/filecheck/<name>/) and
runs on the function with what the caller said about it (`Facts`); `opt -p prepare --mode
reverse` runs a whole pipeline. A new prepare pass is one file here and one step below."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .drop_parameter_refcounts import drop_parameter_refcounts
from .float_copies import retype_float_copies
from .fold_select_recurrences import fold_select_recurrences
from .fold_sign_tests import fold_sign_tests
from .forward_stores import forward_loop_stores
from .hoist_loads import hoist_invariant_loads
from .split_returns import split_returns


@dataclass(frozen=True)
class Facts:
    """What the caller says about the primal: distinct pointer parameters never overlap
    (`noalias`); the memory extents of pointer parameters ({index: Extent})."""
    noalias: bool = False
    extents: dict = field(default_factory=dict)

    @property
    def nonnegative(self) -> list:
        """The parameters holding the extents' lengths: never negative."""
        return [n for e in self.extents.values() for n, _ in e.dims]


@dataclass(frozen=True)
class Step:
    name: str                 # the pass's name in passes.py
    run: Callable             # run(fn, facts)


REVERSE = (
    Step("split-returns", lambda fn, f: split_returns(fn)),
    Step("float-copies", lambda fn, f: retype_float_copies(fn)),
    Step("drop-parameter-refcounts", lambda fn, f: drop_parameter_refcounts(fn)),
    Step("fold-sign-tests", lambda fn, f: fold_sign_tests(fn, f.nonnegative)),
    Step("fold-select-recurrences", lambda fn, f: fold_select_recurrences(fn)),
    Step("hoist-loads", lambda fn, f: hoist_invariant_loads(fn, f.noalias)),
    Step("forward-stores", lambda fn, f: forward_loop_stores(fn, f.noalias)),
)

FORWARD = (
    Step("float-copies", lambda fn, f: retype_float_copies(fn)),
    # only with extents: forward mode folds no sign test on its own
    Step("fold-sign-tests", lambda fn, f: fold_sign_tests(fn, f.nonnegative) if f.extents else 0),
)

PIPELINES = {"reverse": REVERSE, "forward": FORWARD}


def prepare(pipeline, fn, noalias: bool = False, extents=None) -> None:
    """Run the steps of `pipeline` on function `fn`, in order."""
    facts = Facts(noalias, dict(extents or {}))
    for step in pipeline:
        step.run(fn, facts)
