"""Loops reversed other than by the tape: fusion.py (each iteration reversed right after it
runs), gated.py (a loop's reverse skipped by a select's choice), checkpoint/ (time loops reversed
from snapshots within a memory budget); trips.py (the run-time trip bound of a loop entry: the
tape room, a time loop's steps)."""
