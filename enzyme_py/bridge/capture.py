"""Capture a kernel's linked, not-yet-optimized LLVM module.

Numba optimizes each module as soon as it is added to a code library, and the
final IR (`inspect_llvm`) is vectorized and has its callees inlined away: neither
is a good input for AD. So at import we install a code-library class that records
the text of every module Numba adds, and `capture` compiles a private copy of the
kernel and links the recorded texts of the kernel and all its @njit callees.
The copy is only typed and lowered: Numba stops before optimizing it or making
machine code (nobody calls it), and its own library skips Numba's per-function
optimization (only the recorded, unoptimized text is read).

Callees compiled before that class was installed, or loaded from Numba's
on-disk cache, have no recorded text: they are recompiled as private copies too
(renamed to the symbol the kernel calls). NRT's own module is never linked in:
its functions stay declarations, as refprune and ir_passes expect.

A private copy must be the specialization Numba compiled, not merely the same
source: it is compiled with the dispatcher's `locals`, target options and the
overload's return type (an explicit signature's, say `f4(f4)`), for the overload
Numba would dispatch to, and its compile flags (Numba's ABI tag) are compared
with the original's. A copy that differs is refused (`CaptureMismatch`), never
differentiated.

A copy reads the global and closure values that the overload froze (bridge/frozen.py), not
today's: it is the code a plain call runs even after a global was reassigned.

Numba keys each `@overload` implementation it builds (np.linalg.solve for 2-d float64 arrays,
say) by the compile flags of the function being typed. The copy's flags differ from a plain
compile's only by what the copy adds for itself (debug info, no machine code, no wrappers), none
of which an implementation inherits; so while the copy is typed and lowered, implementations
are looked up (and built, if missing) under the flags a plain compile of the kernel has. The copy
then calls the implementations a plain call runs, compiled once, not a second set. One compiled
before the recorder was installed (no recorded text) is built again under the copy's flags.
"""
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

import llvmlite.binding as llvm
import numba
from numba.core import cgutils, codegen, compiler
from numba.core.base import BaseContext
from numba.core.compiler_lock import global_compiler_lock
from numba.core import types as numba_types
from numba.core.errors import NumbaDebugInfoWarning, NumbaError
from numba.core.registry import cpu_target
from numba.core.runtime import rtsys
from numba.core.targetconfig import ConfigStack
from numba.core.typing import templates

from ..timings import stage
from .frozen import frozen_function
from .nested import link_generated
from .nrt import note_thread_id_pointer

_RECORD_ATTR = "_enzyme_py_ir_texts"
_RECORD_ONLY_ATTR = "_enzyme_py_record_only"   # a private copy's library: record, never compile
_SUBSTITUTE_ATTR = "_enzyme_py_captured_as"     # an overload's library: what capture links instead


def _make_recording_class(base):
    # Printing a module is slow (Python formatting): print it once when `base` adds modules
    # the way Numba's CPU library does, not once to record and again to compile.
    reuse_text = base.add_ir_module is codegen.CPUCodeLibrary.add_ir_module

    class RecordingCodeLibrary(base):
        """A code library that keeps the text of every module added to it."""

        def add_ir_module(self, ir_module):
            text = cgutils.normalize_ir_text(str(ir_module))
            self.__dict__.setdefault(_RECORD_ATTR, []).append(text)
            if self.__dict__.get(_RECORD_ONLY_ATTR):
                return
            if not reuse_text:
                super().add_ir_module(ir_module)
                return
            # Numba's CPUCodeLibrary.add_ir_module, without printing the module again.
            self._raise_if_finalized()
            ll_module = llvm.parse_assembly(text)
            ll_module.name = ir_module.name
            ll_module.verify()
            self.add_llvm_module(ll_module)

    return RecordingCodeLibrary


def forget_recorded_ir(library) -> None:
    """Drop what was recorded for `library`, as if it had been compiled before enzyme_py was
    imported (the fuzzer's "callers" profile checks that capture then rebuilds it)."""
    library.__dict__.pop(_RECORD_ATTR, None)


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

# Copy flags -> the flags of a plain compile of the same kernel, while the copy is compiled.
_PLAIN_FLAGS: list = []


def _install_overload_lookup():
    """Make @overload implementations be looked up under a copy's plain flags (idempotent)."""
    cls = templates._OverloadFunctionTemplate
    if getattr(cls._get_impl, "_enzyme_py_plain_flags", False):
        return
    get_impl = cls._get_impl

    def _get_impl(self, args, kws):
        top = ConfigStack.top_or_none()
        plain = next((p for c, p in reversed(_PLAIN_FLAGS) if c == top), None) \
            if top is not None and _PLAIN_FLAGS else None
        if plain is None:
            return get_impl(self, args, kws)
        with ConfigStack().enter(plain.copy()):
            found = get_impl(self, args, kws)
        if _recorded(found[0]):
            return found
        # Compiled before the recorder was installed: build the copy's own, recorded one.
        return get_impl(self, args, kws)

    _get_impl._enzyme_py_plain_flags = True
    cls._get_impl = _get_impl


_install_overload_lookup()


def capture_as(dispatcher, sig, substitute) -> None:
    """Code calling `dispatcher`'s overload for `sig` is captured calling `substitute()`'s
    overload for `sig` instead (an @njit dispatcher, built on first capture), under the same
    symbol: for an overload whose own code AD cannot follow but which computes what the
    substitute does (a strong-zero entry's copies and object-mode rerun around the gradient)."""
    lib = dispatcher.overloads[sig].library
    lib.__dict__[_SUBSTITUTE_ATTR] = (substitute, sig, dispatcher.overloads[sig].fndesc.mangled_name)


def _recorded(dispatcher) -> bool:
    """Have all compiled overloads of `dispatcher` (None: none) recorded module texts?"""
    for cres in getattr(dispatcher, "overloads", {}).values():
        if any(getattr(lib, _RECORD_ATTR, None) is None for lib in iter_libraries(cres.library)):
            return False
    return True


def _install_abi_size_memo():
    """Remember LLVM types' ABI sizes (idempotent). The copy's debug info asks for the size of
    every variable's type, and llvmlite answers each question by printing and parsing a module
    (about 20 ms of a small kernel's build, for a dozen distinct types). Types that name an
    identified struct are not remembered: their body could differ between modules."""
    if getattr(BaseContext.get_abi_sizeof, "_enzyme_py_memo", False):
        return
    get_abi_sizeof = BaseContext.get_abi_sizeof
    sizes = {}

    def memo_abi_sizeof(self, ty):
        text = str(ty)
        if "%" in text:
            return get_abi_sizeof(self, ty)
        td = self.target_data
        hit = sizes.get((id(td), text))
        if hit is None or hit[0] is not td:
            hit = sizes[(id(td), text)] = (td, get_abi_sizeof(self, ty))
        return hit[1]

    memo_abi_sizeof._enzyme_py_memo = True
    BaseContext.get_abi_sizeof = memo_abi_sizeof


_install_abi_size_memo()


@dataclass(frozen=True, eq=False)
class Captured:
    """The linked module of one kernel signature.

    `text`: LLVM IR of the kernel and every @njit callee (no wrappers, no NRT
    module), verified. `fn_name`: the kernel's mangled name in it. `argtypes`,
    `restype`: the Numba types of the compiled signature. `dispatcher`: the
    private debug copy that was lowered (kept alive for debugging; it has no
    overloads: it was never compiled to machine code). `environments`: the Numba
    environment of each function whose module was linked, by its global's name (code that
    raises an exception with run-time arguments checks its environment: bind them with
    `link.compile_library(..., environments=)`). Compared and hashed by identity
    (bridge/memo.py keeps each one's cleaned text).
    """
    text: str
    fn_name: str
    argtypes: tuple
    restype: Any
    dispatcher: Any
    environments: dict = field(default_factory=dict)


class CaptureMismatch(TypeError):
    """A private copy of a function would not be the specialization Numba compiled."""


@stage("capture")
def capture(kernel, argtypes) -> Captured:
    """Compile a private copy of `kernel` for `argtypes` and return its linked module.

    The copy is the overload Numba would run for `argtypes` (with explicit signatures,
    the declared one that matches, so `Captured.argtypes` may differ from `argtypes`).
    Raises TypeError when Numba cannot compile the kernel for these types, and
    CaptureMismatch when the copy would differ from the compiled original.
    """
    argtypes, original = resolve_overload(kernel, tuple(argtypes))
    restype = original.signature.return_type if original is not None else None
    try:
        copy, cres = _compile_copy(kernel, argtypes, restype)
    except NumbaError as exc:
        if "re-entrant" not in str(exc):
            raise _cannot_compile(kernel, argtypes, exc) from exc
        # A recursive kernel calls the user's dispatcher, which must not be
        # compiling the same signature while the copy is: compile it first.
        try:
            kernel.compile(tuple(argtypes))
            copy, cres = _compile_copy(kernel, argtypes, restype)
        except NumbaError as exc2:
            raise _cannot_compile(kernel, argtypes, exc2) from exc2
    if original is not None:
        check_same_specialization(kernel, cres, original)
    note_thread_id_pointer()
    collector = _Collector()
    collector.add(cres)
    module = link_texts(link_generated(collector.texts))
    return Captured(text=str(module), fn_name=cres.fndesc.mangled_name,
                    argtypes=tuple(cres.signature.args),
                    restype=cres.signature.return_type, dispatcher=copy,
                    environments=collector.environments)


def resolve_overload(kernel, argtypes):
    """(argument types, compiled overload or None) of the call `kernel(*argtypes)`.

    An exact compiled overload is taken as it is. A dispatcher that cannot compile new
    signatures (explicit signatures) converts the arguments to the declared overload that
    Numba's typing selects; the copy is built for that one."""
    compiled = kernel.overloads.get(argtypes)
    if compiled is not None or kernel._can_compile:
        return argtypes, compiled
    template, _, args, kws = kernel.get_call_template(list(argtypes), {})
    sig = template(kernel.typingctx).apply(args, kws)
    if sig is None:
        declared = ", ".join(f"({_names(s)})" for s in kernel.signatures)
        raise TypeError(f"{kernel.py_func.__qualname__} was compiled only for its declared "
                        f"signatures {declared}; none accepts ({_names(argtypes)})")
    return tuple(sig.args), kernel.overloads[tuple(sig.args)]


def _names(numba_types) -> str:
    return ", ".join(str(t) for t in numba_types)


# Flags the private copy adds for itself: debug info, no machine code, no wrappers.
_COPY_ONLY_FLAGS = frozenset({"debuginfo", "dbg_extend_lifetimes", "dbg_optnone", "no_compile",
                              "no_cpython_wrapper", "no_cfunc_wrapper"})


def check_same_specialization(dispatcher, copy, original) -> None:
    """Refuse a private copy whose signature or compile flags differ from the original's."""
    what = None
    if copy.signature != original.signature:
        what = f"its signature is {copy.signature}, the compiled one {original.signature}"
    else:
        mine, theirs = _flags_of(copy), _flags_of(original)
        if mine is not None and theirs is not None and mine != theirs:
            diff = sorted(set(mine.items()) ^ set(theirs.items()))
            what = "its compile flags differ: " + ", ".join(f"{k}={v}" for k, v in diff)
    if what is not None:
        raise CaptureMismatch(
            f"enzyme_py cannot reproduce the compiled {dispatcher.py_func.__qualname__}: "
            f"{what}. Differentiating a different function would give a wrong gradient. "
            f"Import enzyme_py before compiling it, or clear Numba's cache for it.")


_FLAG_ITEM = re.compile(r"(\w+)=((?:[^,(){}]|\([^)]*\)|\{[^}]*\})+)")


def _flags_of(cres):
    """The compile flags encoded in a compile result's ABI tag, minus the copy's own, as a
    dict of printed values; None when the tag cannot be read."""
    tags = getattr(cres.fndesc, "abi_tags", ())
    if len(tags) != 1:
        return None
    try:
        summary = compiler.Flags.demangle(tags[0])
    except Exception:   # noqa: BLE001 - an ABI tag from another Numba: nothing to compare
        return None
    return {k: v.strip() for k, v in _FLAG_ITEM.findall(summary) if k not in _COPY_ONLY_FLAGS}


def _compile_copy(kernel, argtypes, return_type=None):
    """Type and lower a private copy of `kernel` for `argtypes`: (copy dispatcher, result).

    Numba's pipeline stops after lowering (`no_compile`), the way it compiles internal
    helpers: the copy's module is recorded, never optimized, finalized or turned into
    machine code, and the copy gets no overload (it is never called). Callees are compiled
    as usual, by their own dispatchers."""
    copy = numba.njit(**_copy_options(kernel))(frozen_function(kernel, argtypes))
    fcomp = copy._compiler
    flags = _flags(fcomp)
    flags.no_compile = True
    library = cpu_target.target_context.codegen().create_library(
        f"enzyme_py.capture.{kernel.py_func.__qualname__}")
    library.__dict__[_RECORD_ONLY_ATTR] = True
    with warnings.catch_warnings(), global_compiler_lock:
        # debug=True is our choice, not the user's: hide its complaints.
        warnings.simplefilter("ignore", NumbaDebugInfoWarning)
        _PLAIN_FLAGS.append((flags, _flags(kernel._compiler)))
        try:
            cres = compiler.compile_extra(
                fcomp.targetdescr.typing_context, fcomp.targetdescr.target_context,
                fcomp._get_implementation(tuple(argtypes), {}), args=tuple(argtypes),
                return_type=return_type, flags=flags, locals=kernel.locals, library=library,
                pipeline_class=fcomp.pipeline_class)
        finally:
            _PLAIN_FLAGS.pop()
    if cres.typing_error is not None:
        raise cres.typing_error
    return copy, cres


def _flags(fcomp):
    """The compile flags `fcomp` (a dispatcher's compiler) gives a new overload."""
    flags = compiler.Flags()
    fcomp.targetdescr.options.parse_as_flags(flags, fcomp.targetoptions)
    return fcomp._customize_flags(flags)


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
    # The copy is only read, never called from Python: skip compiling its wrappers.
    opts["no_cpython_wrapper"] = True
    opts["no_cfunc_wrapper"] = True
    return opts


def iter_libraries(root, seen=None):
    """`root` and its linking libraries, depth first, each once, without NRT's."""
    seen = set() if seen is None else seen
    stack = [root]
    while stack:
        lib = stack.pop()
        if id(lib) in seen or lib.name == "nrt":
            continue
        seen.add(id(lib))
        yield lib
        stack.extend(reversed(lib._linking_libraries))


_UNRESOLVED = re.compile(r'@"\.numba\.unresolved\$([^"]+)"')
_WRAPPER_DEF = re.compile(r'^define [^@\n]*@"?(_ZN7cpython|cfunc\.)', re.M)


class _Collector:
    """Gathers the module texts of a compile result and its callees, each library once.

    A library with no recorded text (compiled before we were imported, or
    loaded from Numba's on-disk cache) is recompiled as a private copy when
    its @njit dispatcher can be found; the copy's function takes the name the
    callers use. Otherwise its final (optimized) module is used.
    """

    def __init__(self):
        self.texts = []
        self.seen = set()
        # `seen` holds ids: keep every visited library alive, or a private copy's library,
        # freed after its texts were taken, could hand its id to a later copy (whose texts
        # would then be skipped: an undefined callee).
        self.visited = []
        self.environments = {}
        self.nrt_names = {fn.name for fn in rtsys.library.get_defined_functions()}

    def add(self, cres, rename=None):
        owners = callee_overloads(cres)
        for c in [cres] + [callee for _, _, callee in owners.values()]:
            env = getattr(c, "environment", None)
            if env is not None:
                self.environments.setdefault(env.env_name, env)
        for lib in iter_libraries(cres.library, self.seen):
            self.visited.append(lib)
            recorded = getattr(lib, _RECORD_ATTR, None)
            substitute = lib.__dict__.get(_SUBSTITUTE_ATTR)
            if substitute is not None:
                self._add_substitute(*substitute)
            elif recorded:
                texts = [t for t in recorded if not _WRAPPER_DEF.search(t)]
                if rename and lib is cres.library:
                    texts = [t.replace(*rename) for t in texts]
                self.texts += [strip_noinline(t) for t in texts]
            elif id(lib) in owners:
                self._add_fresh_copy(*owners[id(lib)])
            elif lib._disable_inspection:
                raise TypeError(
                    f"enzyme_py cannot see the IR of {lib.name!r}: it was loaded "
                    f"from Numba's on-disk cache. Clear the cache or call it "
                    f"from an @njit function without cache=True.")
            else:
                self.texts.append(strip_noinline(
                    _final_module_text(lib, self.nrt_names)))
        self._add_unresolved(owners)

    def _add_unresolved(self, owners):
        """Recursive calls go through `.numba.unresolved$NAME` slots, not linking libraries:
        add the libraries of those NAMEs too (cleanup turns the slots into direct calls).
        A private copy names such a callee with the copy's compile flags in its ABI tag, while
        the callee was compiled with its own: the slot is then renamed to the callee's name."""
        by_name = {c.fndesc.mangled_name: c for _, _, c in owners.values()}
        by_stem = {_without_flags(n): c for n, c in by_name.items()}
        for name in sorted(set(_UNRESOLVED.findall("\n".join(self.texts)))):
            callee = by_name.get(name)
            if callee is None and _without_flags(name) in by_stem:
                callee = by_stem[_without_flags(name)]
                old, new = f".numba.unresolved${name}", f".numba.unresolved${callee.fndesc.mangled_name}"
                self.texts = [t.replace(old, new) for t in self.texts]
            if callee is not None and id(callee.library) not in self.seen:
                self.add(callee)

    def _add_substitute(self, substitute, sig, name):
        dispatcher = substitute()
        dispatcher.compile(sig)
        cres = dispatcher.overloads[sig]
        self.add(cres, rename=(cres.fndesc.mangled_name, name))

    def _add_fresh_copy(self, dispatcher, argtypes, old):
        _, cres = _compile_copy(dispatcher, argtypes, old.signature.return_type)
        check_same_specialization(dispatcher, cres, old)
        self.add(cres, rename=(cres.fndesc.mangled_name, old.fndesc.mangled_name))


_TAGS = re.compile(r"B(\d+)v\d+B(\d+)")


def _without_flags(mangled: str) -> str:
    """A Numba mangled name without its second ABI tag (the compile flags': `B<n><tag>` after
    the `B<n>v<uid>` tag), so one function compiled with other flags has the same stem."""
    m = _TAGS.search(mangled)
    if m is None:
        return mangled
    start = m.start(2) - 1
    return mangled[:start] + mangled[m.end(2) + int(m.group(2)):]


def callee_overloads(cres) -> dict:
    """id(library) -> (dispatcher, argtypes, cres) of the @njit callees reachable
    from `cres` through Numba's type maps. A call of a dispatcher that was compiling when the
    caller was typed (the same solver at two levels of nested AD) is typed `RecursiveCall` and
    made through an unresolved symbol: its dispatcher is followed too."""
    found, stack, visited = {}, [cres], set()
    while stack:
        typemap = getattr(stack.pop().fndesc, "typemap", None) or {}
        for ty in typemap.values():
            if isinstance(ty, numba_types.RecursiveCall):
                ty = ty.dispatcher_type
            if not isinstance(ty, numba_types.Dispatcher):
                continue
            dispatcher = ty.dispatcher
            for sig, callee in list(dispatcher.overloads.items()):
                if id(callee) not in visited:
                    visited.add(id(callee))
                    found[id(callee.library)] = (dispatcher, sig, callee)
                    stack.append(callee)
    return found


def _final_module_text(lib, nrt_names) -> str:
    """The final module of `lib`, external definitions made linkonce_odr (so
    duplicates merge) and NRT's functions reduced to declarations, as in
    recorded texts."""
    mod = llvm.parse_assembly(lib.get_llvm_str())
    decls = []
    for fn in mod.functions:
        if fn.is_declaration:
            continue
        if fn.name in nrt_names:
            ret, params = str(fn.global_value_type).split(" (", 1)
            decls.append((fn.name, f'declare {ret} @"{fn.name}"({params}'))
        elif fn.linkage == llvm.Linkage.external:
            fn.linkage = llvm.Linkage.linkonce_odr
    return _replace_definitions(str(mod), dict(decls))


def _replace_definitions(text: str, decls: dict) -> str:
    """Replace the definitions of the functions in `decls` by the given declarations."""
    out, skipping = [], False
    for line in text.split("\n"):
        if skipping:
            skipping = line != "}"
            continue
        m = re.match(r'define [^@]*@"?([^"(]+)"?\(', line)
        if m and m.group(1) in decls:
            out.append(decls[m.group(1)])
            skipping = not line.rstrip().endswith("}")
            continue
        out.append(line)
    return "\n".join(out)


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
    """Parse and link module texts into one verified module.

    A symbol defined by several texts is linked once: its later definitions become
    linkonce_odr, as Numba's own linker makes every library's definitions. Numba names some
    functions by a hash of what they do, not by the library that emits them (a dynamic
    exception's `__excinfo_unwrap_args<sha1>`), so two callees' modules may both define one."""
    module = llvm.parse_assembly(texts[0])
    defined = {v.name for v in _definitions(module)}
    for text in texts[1:]:
        other = llvm.parse_assembly(text)
        for value in _definitions(other):
            if value.name in defined and value.linkage == llvm.Linkage.external:
                value.linkage = llvm.Linkage.linkonce_odr
            defined.add(value.name)
        module.link_in(other)
    module.verify()
    return module


def _definitions(module: llvm.ModuleRef) -> list:
    """The functions and global variables that `module` defines."""
    values = list(module.functions) + list(module.global_variables)
    return [v for v in values if not v.is_declaration]
