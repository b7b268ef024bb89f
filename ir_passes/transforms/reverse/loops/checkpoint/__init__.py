"""Checkpointed time loops: the outer loop of a kernel reversed from snapshots (docs/checkpointing.md)."""
