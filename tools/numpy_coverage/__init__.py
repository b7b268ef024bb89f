"""The NumPy coverage table: `python -m tools.numpy_coverage` differentiates one small kernel per
function of Numba's supported NumPy API (catalog.py) in reverse and forward mode, compares both
with finite differences and writes docs/numpy-coverage.md (table.py)."""
