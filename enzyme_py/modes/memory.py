"""What `memory="auto"` chooses from: the budget for snapshots, the last-level cache's size and
the memory bandwidth (docs/checkpointing.md)."""
from __future__ import annotations

import json
import os
import time

import numpy as np

from ..disk_cache import cache_dir

DEFAULT_BUDGET = 1 << 30          # where the machine's memory cannot be read: 1 GiB
DEFAULT_CACHE = 8 << 20           # where the last-level cache's size cannot be read: 8 MiB
CACHES = "/sys/devices/system/cpu/cpu0/cache"
CACHE_ENV = "ENZYME_PY_LLC_BYTES"             # overrides the last-level cache's bytes
BANDWIDTH_ENV = "ENZYME_PY_MEMORY_BANDWIDTH"  # overrides the memory bandwidth (bytes / s)
MACHINE_FILE = "machine.json"     # the measured bandwidth, in the disk-cache folder


def auto_budget() -> int:
    """An eighth of the machine's physical memory, at most 4 GiB (1 GiB if it is not known)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return DEFAULT_BUDGET
    return max(1 << 26, min(total // 8, 4 << 30))


def cache_size() -> int:
    """Bytes of the last-level cache that cpu0 sees (the highest level of data or unified cache
    the OS lists), from sysfs, else sysconf, else DEFAULT_CACHE. Read once; ENZYME_PY_LLC_BYTES
    overrides it."""
    global _CACHE
    if os.environ.get(CACHE_ENV):
        return int(os.environ[CACHE_ENV])
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


def memory_bandwidth() -> int:
    """Bytes per second a copy streams between memory and the cores (read and write counted),
    measured once per machine (memory_bandwidth_now) and kept in the disk-cache folder's
    machine.json (in the process when the disk cache is off); ENZYME_PY_MEMORY_BANDWIDTH
    overrides it. Rounded to 0.1 GB/s: it enters the gradient's key."""
    global _BANDWIDTH
    if os.environ.get(BANDWIDTH_ENV):
        return int(float(os.environ[BANDWIDTH_ENV]))
    if _BANDWIDTH is not None:      # every reverse call asks: no folder lookup once known
        return _BANDWIDTH
    folder = cache_dir()
    path = os.path.join(folder, MACHINE_FILE) if folder else None
    if path:
        try:
            with open(path) as f:
                _BANDWIDTH = int(json.load(f)["bandwidth"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
    if _BANDWIDTH is None:
        _BANDWIDTH = memory_bandwidth_now(cache_size())
        if path:
            try:
                os.makedirs(folder, exist_ok=True)
                tmp = f"{path}.{os.getpid()}"
                with open(tmp, "w") as f:
                    json.dump({"bandwidth": _BANDWIDTH}, f)
                os.replace(tmp, path)
            except OSError:
                pass
    return _BANDWIDTH


_BANDWIDTH = None


def memory_bandwidth_now(cache: int) -> int:
    """One measurement (about 35 ms; more on a loaded machine): the best of two copies between two arrays whose bytes
    together exceed the last-level cache by half (at most 48 MiB in all, so that a machine with
    a larger cache measures partly in it), bytes read plus bytes written per second."""
    n = max(1 << 20, min(int(cache * 0.75), 24 << 20)) // 8
    a = np.empty(n)
    a.fill(1.0)
    b = np.empty(n)
    np.copyto(b, a)
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    return max(1, round(16 * n / max(best, 1e-9) / 1e8)) * 10**8


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
