"""The differentiation modes on the Numba CPU target, each a build pipeline (capture, cleanup,
ir_passes, link) and the entry that calls its result: reverse.py, forward.py, batched.py (reverse
mode with k seeds), hvp.py (forward over reverse) and value_grad.py (the reverse gradient's
entry that also returns the value)."""
