"""A gradient as functions that call and are called: calls.py (a callee's split gradient, its
frame and names), public_split.py (a top-level gradient's `.aug.0` / `.rev` / `.reset` / `.drop`
/ `.free` entries), success.py (which returns are successes: the host's status codes)."""
