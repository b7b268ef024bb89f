"""How the reverse sweep gets each primal value it needs (availability.py decides)."""
from __future__ import annotations

from enum import Enum


class Plan(Enum):
    """How the reverse sweep gets a primal value."""
    RECOMPUTE = "recompute"    # cheap and pure, its operands available: evaluated again
    INDUCTION = "induction"    # an induction variable: rebuilt from the loop counter
    RELOAD = "reload"          # a load of memory nothing overwrites: loaded again
    RESTORE = "restore"        # a load whose clobbering stores the reverse sweep undoes
    TAPE = "tape"              # expensive (cache="auto"): read back from the tape
    RECURRENCE = "recurrence"  # an integer recurrence run backwards (recurrence.py)
    CACHE = "cache"            # anything else: cached on the tape


AVAILABLE = (Plan.RECOMPUTE, Plan.INDUCTION, Plan.RELOAD, Plan.RESTORE, Plan.TAPE, Plan.RECURRENCE)
