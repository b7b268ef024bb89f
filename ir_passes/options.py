"""What a caller says about a differentiation: each parameter's activity, and reverse mode's
cache mode. Both are enums whose members equal their strings ("dup" == Activity.DUP), so
callers may pass either; the transforms compare members."""
from __future__ import annotations

from enum import Enum


class Activity(str, Enum):
    """How a parameter takes part in differentiation."""
    CONST = "const"     # not differentiated
    DUP = "dup"         # a pointer whose memory has a shadow
    ACTIVE = "active"   # a float passed by value whose derivative is wanted

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__


class CacheMode(str, Enum):
    """Which primal values reverse mode keeps on the tape (docs/caching.md)."""
    AUTO = "auto"         # recompute what is cheap, tape divisions and math calls in loops
    MINIMAL = "minimal"   # recompute all it safely can: the smallest tape
    ALWAYS = "always"     # tape every value the reverse sweep needs

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__


def activities(values) -> list[Activity]:
    """`values` (Activity members or their strings) as a list of Activity; ValueError naming the
    first that is neither."""
    out = []
    for k, v in enumerate(values):
        try:
            out.append(Activity(v))
        except ValueError:
            raise ValueError(f"activity[{k}] must be const, dup or active, not {v!r}") from None
    return out


def cache_mode(value) -> CacheMode:
    try:
        return CacheMode(value)
    except ValueError:
        raise ValueError(f"cache must be 'auto', 'minimal' or 'always', not {value!r}") from None
