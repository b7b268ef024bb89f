"""NRT statistics around repeated calls, shared by the tests that check a gradient frees what it
allocates. No tests here."""
from numba.core.runtime import _nrt_python, rtsys


def unfreed(call, repeats=20):
    """(allocations not freed, meminfos not freed) over `repeats` calls of `call`, after one
    call that compiles and fills caches."""
    call()
    was = _nrt_python.memsys_stats_enabled()
    _nrt_python.memsys_enable_stats()
    try:
        before = rtsys.get_allocation_stats()
        for _ in range(repeats):
            call()
        after = rtsys.get_allocation_stats()
    finally:
        if not was:
            _nrt_python.memsys_disable_stats()
    return (after.alloc - before.alloc - (after.free - before.free),
            after.mi_alloc - before.mi_alloc - (after.mi_free - before.mi_free))
