"""The budget `memory="auto"` stands for: what checkpointed loops may keep in snapshots."""
from __future__ import annotations

import os

DEFAULT_BUDGET = 1 << 30          # where the machine's memory cannot be read: 1 GiB
DEFAULT_CACHE = 8 << 20           # where the last-level cache's size cannot be read: 8 MiB
CACHES = "/sys/devices/system/cpu/cpu0/cache"


def auto_budget() -> int:
    """An eighth of the machine's physical memory, at most 4 GiB (1 GiB if it is not known)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return DEFAULT_BUDGET
    return max(1 << 26, min(total // 8, 4 << 30))


def cache_size() -> int:
    """Bytes of the last-level cache that cpu0 sees (the highest level of data or unified cache
    the OS lists), from sysfs, else sysconf, else DEFAULT_CACHE. Read once."""
    global _CACHE
    if _CACHE is None:
        _CACHE = _sysfs_cache() or _sysconf_cache() or DEFAULT_CACHE
    return _CACHE


_CACHE = None
_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _sysfs_cache() -> int:
    best = (0, 0)
    try:
        names = os.listdir(CACHES)
    except OSError:
        return 0
    for name in names:
        if not name.startswith("index"):
            continue
        try:
            with open(f"{CACHES}/{name}/level") as f:
                level = int(f.read())
            with open(f"{CACHES}/{name}/type") as f:
                kind = f.read().strip()
            with open(f"{CACHES}/{name}/size") as f:
                text = f.read().strip()
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        size = int(text.rstrip("KMG")) * _UNITS.get(text[-1], 1) if text[-1] in _UNITS or \
            text.isdigit() else 0
        best = max(best, (level, size))
    return best[1]


def _sysconf_cache() -> int:
    for name in ("SC_LEVEL3_CACHE_SIZE", "SC_LEVEL2_CACHE_SIZE"):
        try:
            size = os.sysconf(name)
        except (ValueError, OSError, AttributeError):
            continue
        if size > 0:
            return size
    return 0


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
