"""Clean a captured module into compact SSA with LLVM's own passes.

Callees are marked `alwaysinline` (so Numba's allocation helpers inline too) and
made internal (so they disappear once inlined); then LLVM's O2 module pipeline
runs with vectorization, unrolling and interleaving off, followed by NRT's
refcount pruner (O1 instead when O2 leaves irreducible control flow). The kernel
keeps its name and signature.

Debug records (`#dbg_value`) are dropped: they carry variable locations, which AD
does not use. `!dbg` line locations stay, so errors can name the Python line.
"""
import re

import llvmlite.binding as llvm
from numba.core.registry import cpu_target

from ..timings import stage
from .optimize import DEBUG_RECORD, inline_and_optimize, o2_or_o1, reducible


@stage("cleanup")
def cleanup(text: str, fn_name: str) -> str:
    """Return `text` after inlining callees into `fn_name` and running O2 (O1 when O2 leaves
    irreducible control flow: optimize.py)."""
    return o2_or_o1(lambda level: _clean(text, fn_name, level))


def _clean(text: str, fn_name: str, level: int, keep_debug: bool = False) -> str:
    module = llvm.parse_assembly(resolve_recursion_slots(text))
    inline_and_optimize(module, fn_name, cpu_target.target_context.codegen()._tm, level, refprune=True)
    return str(module) if keep_debug else DEBUG_RECORD.sub("", str(module))


_VALUE_RECORD = re.compile(r'#dbg_value\(\w+ %("[^"]+"|[\w.$-]+), (!\d+), !DIExpression\(\),')
_LOCAL_VARIABLE = re.compile(r'^(!\d+) = !DILocalVariable\(name: "([^"]+)"', re.M)


def variable_names(text: str, fn_name: str) -> dict:
    """{LLVM value name in the cleaned module: the Python variable it holds}, read from the
    debug records that `cleanup` drops (the same passes run again, so the names are the same).
    Numba's own temporaries (`$...`) are left out. For `explain`, which names what it caches."""
    level = 2 if reducible(_clean(text, fn_name, 2)) else 1
    full = _clean(text, fn_name, level, keep_debug=True)
    variables = dict(_LOCAL_VARIABLE.findall(full))
    names = {}
    for value, var in _VALUE_RECORD.findall(full):
        name = variables.get(var, "")
        if name and not name.startswith("$") and not name.startswith("arg."):
            names.setdefault(value.strip('"'), name.split('$')[0].split('.')[0])
    return names


_UNRESOLVED = re.compile(r'^(@"\.numba\.unresolved\$([^"]+)") = external global ptr\s*$', re.M)


def resolve_recursion_slots(text: str) -> str:
    """Numba calls mutually recursive functions through a pointer global filled in at load time
    (`@".numba.unresolved$NAME"`). When NAME is defined in the module, make the global a constant
    pointing at it, so cleanup turns the indirect call into a direct one that AD can follow."""
    def fill(m):
        name = m.group(2)
        if re.search(r"^define [^\n]*@" + re.escape(name) + r"\(", text, re.M):
            return f"{m.group(1)} = internal constant ptr @{name}"
        return m.group(0)
    return _UNRESOLVED.sub(fill, text)

