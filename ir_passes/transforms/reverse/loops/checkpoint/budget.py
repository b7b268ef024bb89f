"""The memory option of reverse mode: keep the full tape, or checkpoint time loops in a budget."""
from __future__ import annotations

import re
from dataclasses import dataclass

UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
         "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}
SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?)\s*([KMGT]?I?B?)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Memory:
    """How reverse mode keeps what the reverse sweep needs of a loop.

    budget: None keeps the full tape (memory="tape"); otherwise the bytes that the snapshots of
    a checkpointed loop may take. auto: the budget is the default one (memory="auto").
    cache: the bytes of the last-level cache (0: unknown, or a size given: one step at a time):
    a loop checkpointed is reversed in segments of steps whose tapes fit a quarter of it and
    half the budget (checkpoint/version.py). memory_option sets it for "auto" only.
    bandwidth: the machine's memory bandwidth (bytes / s; 0: unknown). With the cache, "auto"
    keeps the full tape only when it fits the cache or when recomputing costs more than the
    tape's traffic (version.py); without, whenever it fits the budget."""
    budget: int | None
    auto: bool = False
    cache: int = 0
    bandwidth: int = 0

    @property
    def checkpoints(self) -> bool:
        return self.budget is not None

    @property
    def key(self) -> str:
        """Tells apart every Memory that builds another gradient (symbol names, cache keys)."""
        return "tape" if self.budget is None else \
            f"{self.budget}" + ("_auto" if self.auto else "") + f"_{self.cache}" + \
            (f"_{self.bandwidth}" if self.bandwidth else "")

    def __str__(self) -> str:
        return "tape" if self.budget is None else "auto" if self.auto else f"{self.budget}B"


TAPE = Memory(None)


def parse_size(text: str) -> int:
    """Bytes in a size such as "256MB", "1.5GiB" or "4096" (ValueError when it is none)."""
    m = SIZE.match(text)
    if not m or m.group(2).upper() not in UNITS:
        raise ValueError(f"memory must be 'auto', 'tape' or a size such as '256MB', not {text!r}")
    n = int(float(m.group(1)) * UNITS[m.group(2).upper()])
    if n <= 0:
        raise ValueError(f"memory budget must be positive, not {text!r}")
    return n


def memory_option(value, auto_budget: int, cache: int = 0, bandwidth: int = 0) -> Memory:
    """A Memory from "tape", "auto", a size string, a byte count or a Memory; `auto_budget` is
    the budget "auto" stands for, `cache` the last-level cache's bytes it sizes segments by,
    `bandwidth` the memory's bytes per second it weighs recomputation against."""
    if isinstance(value, Memory):
        return value
    if value is None or value == "tape":
        return TAPE
    if value == "auto":
        return Memory(int(auto_budget), auto=True, cache=int(cache), bandwidth=int(bandwidth))
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"memory must be 'auto', 'tape' or a size such as '256MB', not {value!r}")
    n = value if isinstance(value, int) else parse_size(value)
    if n <= 0:
        raise ValueError(f"memory budget must be positive, not {value!r}")
    return Memory(n)
