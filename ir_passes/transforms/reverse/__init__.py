"""Reverse mode: the augmented forward sweep, the reverse sweep, and what they share.

Grouped by concern; imports go down this list (one pair both ways: calls.py asks loops/checkpoint/
whether a callee is an outlined time loop, and checkpoint/emit.py and fusion.py use calls/):
- sweeps/: the pass's driver, the state of one gradient, both sweeps, one instruction's reverse,
  the report behind `explain`;
- parallel/: parallel-for launches (both sweeps on every thread, per-thread shadow copies);
- loops/: loops reversed other than by the tape (fused, gated, checkpointed time loops) and the
  run-time trip bound of a loop entry;
- calls/: a gradient as functions that call and are called: callees' split gradients, a
  top-level gradient's split entries, the host's success codes;
- shadows/: how adjoints reach shadow memory (loads, stores, memory intrinsics, reallocations;
  plain, privatised or atomic updates; deferred sums and rank-1 updates);
- tape/: what the reverse sweep reads back and how: the frame and its tape, the kinds of entry,
  values recomputed, restored, run backwards or kept alive instead of taped.
"""
