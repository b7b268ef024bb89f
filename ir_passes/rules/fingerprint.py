"""A description of every rule table, for a host's cache key: a rule changed, the key changes."""
from .blas import BLAS
from .convention import success_codes
from .effects import ALLOCATORS, FREES, REALLOCS, WRITES_NOTHING, ZEROED
from .registry import RULES


def rules_fingerprint() -> str:
    """The rule tables, minus rules keyed by an address (a host must not store their kernels)."""
    rules = sorted((k, r.zero, r.inactive, r.zero_guard, len(r.partials)) for k, r in RULES.items()
                   if not k.startswith("numba.dynamic.globals."))
    return repr((rules, sorted(map(repr, ALLOCATORS.values())), sorted(map(repr, BLAS.items())),
                 sorted(FREES.items()), sorted(REALLOCS.items()), sorted(ZEROED),
                 sorted(WRITES_NOTHING), success_codes()))
