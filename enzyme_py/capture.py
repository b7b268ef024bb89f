"""Capture a kernel's linked, not-yet-optimized LLVM module.

Numba optimizes each module as soon as it is added to a code library, and the
final IR (`inspect_llvm`) is vectorized and has its callees inlined away: neither
is a good input for AD. So at import we install a code-library class that records
the text of every module Numba adds, and `capture` compiles a private copy of the
kernel and links the recorded texts of the kernel and all its @njit callees.
"""
import re
import warnings
from dataclasses import dataclass
from typing import Any

import llvmlite.binding as llvm
import numba
from numba.core import cgutils, codegen
from numba.core.errors import NumbaDebugInfoWarning, NumbaError
from numba.core.registry import cpu_target

_RECORD_ATTR = "_enzyme_py_ir_texts"


def _make_recording_class(base):
    class RecordingCodeLibrary(base):
        """A code library that keeps the text of every module added to it."""

        def add_ir_module(self, ir_module):
            self.__dict__.setdefault(_RECORD_ATTR, []).append(
                cgutils.normalize_ir_text(str(ir_module)))
            super().add_ir_module(ir_module)

    return RecordingCodeLibrary


def install_recorder():
    """Make Numba's CPU codegen record module texts (idempotent)."""
    cg = cpu_target.target_context.codegen()
    base = cg._library_class
    if getattr(base, "_enzyme_py_recorder", False):
        return
    if not issubclass(base, codegen.JITCodeLibrary):
        base = codegen.JITCodeLibrary
    cls = _make_recording_class(base)
    cls._enzyme_py_recorder = True
    cg._library_class = cls


install_recorder()


@dataclass(frozen=True)
class Captured:
    """The linked module of one kernel signature.

    `text`: LLVM IR of the kernel and every @njit callee (no wrappers, no NRT
    module), verified. `fn_name`: the kernel's mangled name in it. `argtypes`,
    `restype`: the Numba types of the compiled signature. `dispatcher`: the
    private debug copy that was compiled (kept alive for debugging).
    """
    text: str
    fn_name: str
    argtypes: tuple
    restype: Any
    dispatcher: Any


def capture(kernel, argtypes) -> Captured:
    """Compile a private copy of `kernel` for `argtypes` and return its linked module.

    Raises TypeError when Numba cannot compile the kernel for these types.
    """
    try:
        copy = _compile_copy(kernel, argtypes)
    except NumbaError as exc:
        if "re-entrant" not in str(exc):
            raise _cannot_compile(kernel, argtypes, exc) from exc
        # A recursive kernel calls the user's dispatcher, which must not be
        # compiling the same signature while the copy is: compile it first.
        try:
            kernel.compile(tuple(argtypes))
            copy = _compile_copy(kernel, argtypes)
        except NumbaError as exc2:
            raise _cannot_compile(kernel, argtypes, exc2) from exc2
    (cres,) = copy.overloads.values()
    module = link_texts(library_texts(cres.library))
    return Captured(text=str(module), fn_name=cres.fndesc.mangled_name,
                    argtypes=tuple(cres.signature.args),
                    restype=cres.signature.return_type, dispatcher=copy)


def _compile_copy(kernel, argtypes):
    copy = numba.njit(**_copy_options(kernel))(kernel.py_func)
    with warnings.catch_warnings():
        # debug=True is our choice, not the user's: hide its complaints.
        warnings.simplefilter("ignore", NumbaDebugInfoWarning)
        copy.compile(tuple(argtypes))
    return copy


def _cannot_compile(kernel, argtypes, exc) -> TypeError:
    types = ", ".join(str(t) for t in argtypes)
    return TypeError(f"Numba cannot compile {kernel.py_func.__qualname__} for "
                     f"argument types ({types}):\n{exc}")


def _copy_options(kernel) -> dict:
    """The user's target options, plus debug info, minus caching."""
    opts = dict(kernel.targetoptions)
    opts.pop("nopython", None)      # njit implies it and warns when given
    opts.pop("cache", None)         # a cache hit would record nothing
    # debug=True would turn bounds checks on: keep the user's choice.
    opts["boundscheck"] = bool(opts.get("boundscheck") or False)
    opts["debug"] = True
    return opts


def iter_libraries(root):
    """`root` and its linking libraries, depth first, each once, without NRT's."""
    seen = set()
    stack = [root]
    while stack:
        lib = stack.pop()
        if id(lib) in seen or lib.name == "nrt":
            continue
        seen.add(id(lib))
        yield lib
        stack.extend(reversed(lib._linking_libraries))


_WRAPPER_DEF = re.compile(r'^define [^@\n]*@"?(_ZN7cpython|cfunc\.)', re.M)


def library_texts(root) -> list:
    """The module texts to link for library `root` and its callees."""
    texts = []
    for lib in iter_libraries(root):
        recorded = getattr(lib, _RECORD_ATTR, None)
        if recorded:
            texts += [t for t in recorded if not _WRAPPER_DEF.search(t)]
        else:
            # Compiled before we were imported, or loaded from Numba's cache:
            # only its final (optimized, linked) module exists.
            texts.append(_as_linkonce(lib.get_llvm_str()))
    return [strip_noinline(t) for t in texts]


def _as_linkonce(text: str) -> str:
    """Make the external definitions of `text` linkonce_odr so duplicates merge."""
    mod = llvm.parse_assembly(text)
    for fn in mod.functions:
        if not fn.is_declaration and fn.linkage == llvm.Linkage.external:
            fn.linkage = llvm.Linkage.linkonce_odr
    return str(mod)


_ATTR_LINE = re.compile(r"^(define |attributes #)")
_NOINLINE = re.compile(r"\b(noinline|optnone)\b ?")
_EMPTY_GROUP = re.compile(r"\{\s*\}$")     # LLVM rejects an empty attribute group


def strip_noinline(text: str) -> str:
    """Remove `noinline`/`optnone` (added by debug=True) from function attributes."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if _ATTR_LINE.match(line) and ("noinline" in line or "optnone" in line):
            parts = line.split('"')     # even parts lie outside quoted names
            parts[::2] = [_NOINLINE.sub("", p) for p in parts[::2]]
            lines[i] = _EMPTY_GROUP.sub('{ "enzyme-py-inlinable" }', '"'.join(parts))
    return "\n".join(lines)


def link_texts(texts) -> llvm.ModuleRef:
    """Parse and link module texts into one verified module."""
    module = llvm.parse_assembly(texts[0])
    for text in texts[1:]:
        module.link_in(llvm.parse_assembly(text))
    module.verify()
    return module
