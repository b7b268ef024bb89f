"""Parallel-for launches in reverse mode (rules/parallel.py, docs/parallel.md):
parallel_launch.py (the body's split gradient, the launch record, both sweeps on every thread)
and parallel_private.py (per-thread shadow copies, summed after the launch)."""
