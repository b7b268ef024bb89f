"""The frames of freed split-mode tapes, kept for the next augmented forward sweep.

A split gradient's frame (the tape) holds its arrays' pointers and capacities
(ir_passes/transforms/reverse/calls/public_split.py). Freeing a Tape resets its frame (what the call
allocated besides the tape is released) and parks it here; the next `augmented_forward` of the
same compiled gradient fills a parked frame again instead of a new one, so a repeat call with the
same shapes touches memory it has touched before. A frame is parked only once no Tape holds it,
and taken out before a call fills it, so no two live tapes share memory. The pool is small:
at most `max_frames` frames and `max_bytes` bytes; a frame that does not fit is freed.
"""
from __future__ import annotations

import ctypes
import threading
import weakref

MAX_FRAMES = 2
MAX_BYTES = 1 << 30


def frame_bytes(layout, frame: int) -> int:
    """Bytes a frame holds: itself and the arrays behind it, at their capacity."""
    return layout.frame_bytes + sum(ctypes.c_int64.from_address(frame + off).value * per
                                    for off, per in layout.held)


class FramePool:
    """Parked frames of one compiled split gradient; thread-safe. `reset(frame)` and
    `drop(frame)` are its `.reset` and `.drop` entries."""

    def __init__(self, layout, reset, drop, max_frames=MAX_FRAMES, max_bytes=MAX_BYTES):
        self._layout, self._reset, self._drop = layout, reset, drop
        self.max_frames, self.max_bytes = max_frames, max_bytes
        self._frames: list = []     # (frame, bytes), the last parked last
        self._lock = threading.Lock()
        weakref.finalize(self, _drop_all, self._frames, drop)

    def take(self) -> int:
        """A parked frame (the last parked), or 0: the call makes a new one."""
        with self._lock:
            return self._frames.pop()[0] if self._frames else 0

    def put(self, frame: int, reset: bool = True) -> None:
        """Park `frame`, which no tape holds any more (reset first unless it is), or free it."""
        if not frame:
            return
        if reset:
            self._reset(frame)
        size = frame_bytes(self._layout, frame)
        with self._lock:
            if len(self._frames) < self.max_frames and \
                    size + sum(s for _, s in self._frames) <= self.max_bytes:
                self._frames.append((frame, size))
                return
        self._drop(frame)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(s for _, s in self._frames)

    def clear(self) -> None:
        """Free every parked frame."""
        with self._lock:
            frames = list(self._frames)
            self._frames.clear()
        _drop_all(frames, self._drop)


def _drop_all(frames, drop) -> None:
    for frame, _ in frames:
        drop(frame)
    frames.clear()
