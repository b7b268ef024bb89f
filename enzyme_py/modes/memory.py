"""The budget `memory="auto"` stands for: what checkpointed loops may keep in snapshots."""
from __future__ import annotations

import os

DEFAULT_BUDGET = 1 << 30          # where the machine's memory cannot be read: 1 GiB


def auto_budget() -> int:
    """An eighth of the machine's physical memory, at most 4 GiB (1 GiB if it is not known)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return DEFAULT_BUDGET
    return max(1 << 26, min(total // 8, 4 << 30))
