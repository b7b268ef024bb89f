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


def refuse_memory(memory, what: str) -> None:
    """Checkpointing is reverse mode's (docs/checkpointing.md): raise when `memory` asks for it
    in a mode that does not do it, rather than keep the full tape silently."""
    if isinstance(memory, str) and memory == "tape" or memory is None or \
            getattr(memory, "checkpoints", True) is False:
        return
    raise NotImplementedError(
        f"memory={memory!r}: {what} does not checkpoint time loops; memory= is reverse mode's, "
        "with Duplicated and Active arguments on the CPU (docs/checkpointing.md). Leave it out "
        "(memory='tape') here")
