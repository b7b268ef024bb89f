"""A description of every rule table, for a host's cache key: a rule changed, the key changes."""
from .blas import BLAS
from .convention import success_codes
from .effects import ALLOCATORS, FREES, REALLOCS, WRITES_NOTHING, ZEROED
from .registry import RULES


def rules_fingerprint(skip_prefix=None) -> str:
    """The rule tables; rules whose name starts with `skip_prefix` left out (a host's rules for
    functions at an address in this process, whose kernels it never stores). Refusals are left
    out: they change no generated code, and a host registers some only where it needs them (the
    CUDA bridge's), which would change the key of every process that imported it."""
    rules = sorted((k, r.zero, r.inactive, r.zero_guard, len(r.partials),
                    r.lanes is not None) for k, r in RULES.items()
                   if not (skip_prefix and k.startswith(skip_prefix)))
    return repr((rules, sorted(map(repr, ALLOCATORS.values())), sorted(map(repr, BLAS.items())),
                 sorted(FREES.items()), sorted(REALLOCS.items()), sorted(ZEROED),
                 sorted(WRITES_NOTHING), success_codes()))
