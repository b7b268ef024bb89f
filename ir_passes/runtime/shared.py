"""The runtime helpers a host may compile once per process instead of into every module.

A helper that loops over a matrix or a vector (gemm_guarded, the elementwise grids, trsm_sized,
nrm2_adjoint, ...) is optimized and compiled again in every generated module that calls it.
`reverse_mode(..., runtime="declare")` (and forward_mode's) leaves only a declaration of each
helper that is `shareable` in the generated module; the host compiles `library_text(names)`
once and lets the generated code call it by symbol (enzyme_py/bridge/runtime.py).

Shareable: a registered helper (helpers.HELPERS) whose own body loops and that allocates
nothing, so its code is the same for every heap (heap.rewrite leaves it unchanged). Helpers
without a loop stay in the module, where LLVM inlines them into the caller's loops."""
from __future__ import annotations

import re
from functools import lru_cache

from ..ir.module import Module
from ..ir.parser import parse_module
from ..ir.printer import print_module
from . import matrix, triangular  # noqa: F401  (register the BLAS and LAPACK records' helpers)
from .helpers import HELPERS, keep_repeated_loops_apart, loops

_ALLOCATES = re.compile(r"@(malloc|realloc|free)\(")
_DECLARED = re.compile(r'^declare [^@\n]*@"?(enzpy\.[\w.]+)"?\(', re.M)


@lru_cache(maxsize=None)
def _shareable(name: str, text: str) -> bool:
    if _ALLOCATES.search(text):
        return False
    fn = parse_module(text).functions.get(name)
    return fn is not None and not fn.is_declaration and loops(fn)


def shareable(name: str) -> bool:
    """Whether helper `name` is compiled once per process under runtime="declare"."""
    text = HELPERS.get(name)
    return text is not None and _shareable(name, text)


def declare_shared(module: Module) -> list[str]:
    """Replace the definition of every shareable helper in `module` by its declaration;
    returns their names. What only they called is left for the host's dead-code pass."""
    names = sorted(n for n, fn in module.functions.items() if not fn.is_declaration and shareable(n))
    for name in names:
        fn = module.functions[name]
        fn.blocks = []
        fn.is_declaration = True
        fn.prefix = "declare"
        fn.raw = ""
        fn.suffix = re.sub(r"\s*!dbg ![0-9]+", "", fn.suffix)
    return names


def declared(text: str) -> list[str]:
    """The shareable helpers module text `text` declares (and so calls from a shared library)."""
    return sorted({n for n in _DECLARED.findall(text) if shareable(n)})


def library_text(names) -> str:
    """Module text that defines each helper of `names` with external linkage (what they call
    stays internal) and declares the external globals they read: the runtime library as one
    module."""
    module = Module()
    for name in sorted(names):
        if not shareable(name):
            raise ValueError(f"{name} is not a shareable runtime helper")
        helper = parse_module(HELPERS[name])
        for item in helper.items:
            if isinstance(item, str) and " = external global " in item and item not in module.items:
                module.items.append(item)      # a host's value the helper reads (trsm_sized's)
        for fn in helper.functions.values():
            if fn.name not in module.functions:
                module.add_function(fn)
    for name in names:
        fn = module.functions[name]
        fn.prefix = re.sub(r"\b(internal|private|linkonce_odr)\b\s*", "", fn.prefix).strip()
    return print_module(module)


RUNTIME = "runtime"      # module.facts key: "define" (the default) or "declare"


def set_runtime(module: Module, runtime: str) -> None:
    """Record a driver's `runtime` option on the module (place_helpers reads it)."""
    if runtime not in ("define", "declare"):
        raise ValueError(f'runtime must be "define" or "declare", not {runtime!r}')
    module.facts[RUNTIME] = runtime


def place_helpers(module: Module) -> None:
    """A driver's last step: helpers that loop and are called twice or more stay out of line;
    under runtime="declare" the shareable ones are declared only."""
    keep_repeated_loops_apart(module)
    if module.facts.get(RUNTIME) == "declare":
        declare_shared(module)
