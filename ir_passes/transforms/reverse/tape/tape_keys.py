"""What a tape entry holds: one small record per kind, the key of its entry (tape.Tape.entry).

Equal keys share one entry. Each kind knows how the forward sweep puts its value on the tape
(`save`, run by ForwardSweep.write_tape once the reverse sweep has made every entry) and, for
`explain` (report.py), what it holds when no primal instruction stands for it (`what`), where it
comes from in the source (`places`: instructions, blocks or loops, the first located one wins)
and a short `label`. rules/blas.py's SavedInput (an input of a BLAS/LAPACK call copied into the
arena) has the same shape: rules do not import transforms.
"""
from __future__ import annotations

from dataclasses import dataclass


class TapeKey:
    label = ""
    what = ""

    def places(self) -> tuple:
        return ()

    def value(self, fwd):
        """The forward sweep's value the entry keeps."""
        raise NotImplementedError

    def save(self, fwd, e) -> None:
        """Forward sweep: write the value into entry `e` right after it is defined."""
        v = self.value(fwd)
        fwd.insert_after(v, lambda b: fwd.g.tape.write(b, e, v))


@dataclass(frozen=True)
class Value(TapeKey):
    """A primal value, read in reverse code of its own loop."""
    primal: object

    @property
    def label(self) -> str:
        return str(self.primal)

    @property
    def what(self) -> str:
        return str(self.primal)

    def value(self, fwd):
        return fwd.vmap[self.primal]


@dataclass(frozen=True)
class LastValue(TapeKey):
    """A primal value defined in a loop inside `loop` (None: the function), read after that
    inner loop ended: its last iteration's value, one per iteration of `loop`."""
    primal: object
    loop: object
    label = "last"
    what = "the recurrence's value when the loop ended"

    def places(self) -> tuple:
        return (self.primal, self.loop)

    def value(self, fwd):
        return fwd.vmap[self.primal]


@dataclass(frozen=True)
class Shadow(TapeKey):
    """The shadow of a pointer the forward sweep loaded or joined (which array it points into)."""
    pointer: object
    label = "shadow"
    what = "shadow"

    def places(self) -> tuple:
        return (self.pointer,)

    def value(self, fwd):
        return fwd.smap[self.pointer]


@dataclass(frozen=True)
class CallFrame(TapeKey):
    """The frame a call's augmented forward (or a parallel loop's launch record) left for its
    reverse."""
    call: object
    label = "callframe"
    what = "the saved values of this call's reverse sweep"

    def places(self) -> tuple:
        return (self.call,)

    def value(self, fwd):
        return fwd.call_frames[self.call]


@dataclass(frozen=True)
class Branch(TapeKey):
    """Which predecessor control came from into `block` (the forward sweep's i32 phi)."""
    block: object
    phi: object
    label = "from"
    what = "which branch control took into this block"

    def places(self) -> tuple:
        return (self.block, self.phi)

    def value(self, fwd):
        return self.phi


@dataclass(frozen=True)
class Moved(TapeKey):
    """One forward value of a reallocation that moved a shadow (growing.py): the old shadow or
    the bytes kept."""
    call: object
    kept: object
    label = "moved"
    what = "a growing allocation's old shadow and the bytes its reallocation kept"

    def places(self) -> tuple:
        return (self.call, self.kept)

    def value(self, fwd):
        return self.kept


@dataclass(frozen=True)
class Overwritten(TapeKey):
    """The value a store overwrites, loaded right before the store (restore.py)."""
    store: object
    label = "old"
    what = "the value this store overwrites"

    def places(self) -> tuple:
        return (self.store,)

    def save(self, fwd, e) -> None:
        fwd.save_overwritten(self.store, e)


@dataclass(frozen=True)
class LoopStart(TapeKey):
    """A loop counter's value on entering `loop`: written on the loop's entry edges, not here."""
    loop: object
    label = "start"
    what = "the loop counter's value on entering the loop"

    def places(self) -> tuple:
        return (self.loop,)

    def save(self, fwd, e) -> None:
        pass
