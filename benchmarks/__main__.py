"""`python -m benchmarks [--quick] [--only NAME] [--cold] [--no-peers]`: see benchmarks/run.py."""
import os
import sys

# One thread everywhere, as the anchors in docs/performance.md were measured (set before any
# peer is imported; a value already in the environment wins).
os.environ.setdefault("XLA_FLAGS",
                      "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

from .run import main  # noqa: E402

sys.exit(main())
