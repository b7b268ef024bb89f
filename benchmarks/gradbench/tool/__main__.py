"""`python -m benchmarks.gradbench.tool`: see protocol.py."""
import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from .protocol import main  # noqa: E402

main()
