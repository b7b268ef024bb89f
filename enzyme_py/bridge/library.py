"""Numba's code library class for generated modules and the shared runtime helpers: one O3
module pipeline instead of Numba's three runs (docs/performance.md, compile time)."""


def library_class(codegen):
    """Numba's code library class, with one O3 module pipeline instead of its three runs.

    Numba optimizes each added function at O3, then the linked module with a cheap pipeline
    and again at full O3 (refcount pruning after each). A generated module arrives verified
    and whole, so one O3 module pipeline (vectorizing loops as Numba's does) and the refcount
    pruner give the same code at about half the optimization time (docs/performance.md).
    Only libraries made here use it; Numba's own are unchanged."""
    base = codegen._library_class
    cls = _LIBRARY_CLASSES.get(base)
    if cls is None:
        cls = _LIBRARY_CLASSES[base] = type("GradientLibrary", (base,), {
            "_optimize_functions": _set_data_layout,
            "_optimize_final_module": _optimize_once,
        })
    return cls


_LIBRARY_CLASSES = {}


def _set_data_layout(library, ll_module) -> None:
    ll_module.data_layout = library._codegen._data_layout


def _optimize_once(library) -> None:
    codegen = library._codegen
    pm, pb = codegen._module_pass_manager()     # O3 as configured in Numba, + refprune
    with library._recorded_timings.record("Module passes (one O3 pipeline)", pb):
        pm.run(library._final_module, pb)
