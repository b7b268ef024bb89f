"""On-disk cache of compiled gradients, like Numba's `cache=True` (docs/caching.md).

Off by default. `ENZYME_PY_CACHE_DIR=/path` or `enzyme_py.set_cache_dir(path)` turns it on. A
gradient is stored as the object code of its library and of its @njit entry, plus the spec and
tape layout, under a key derived from the overload a plain call runs (the kernel is compiled
for the types if it was not): library versions and sources, CPU, the bytecode of the kernel and
of every function it reaches, every global and closure value it and each @njit callee froze
when Numba compiled them (module attributes at any depth, arrays by content), the compile flags,
the Numba types, the activity, the options and ir_passes' rule tables. A hit skips capture, cleanup,
AD and LLVM. Gradients whose code holds process-specific addresses (ctypes/cffi functions,
custom derivatives) are never stored.
"""
from __future__ import annotations

import copy
import hashlib
import os
import pickle
import re
import secrets
import sys

import llvmlite
import numba
import numpy as np
from numba.core.compiler import CompileResult
from numba.core.environment import Environment
from numba.core.registry import cpu_target

from ir_passes import rules_fingerprint
from .bridge import nrt  # noqa: F401 - Numba's entries of the rule tables, part of the key
from ir_passes import declared_runtime

from .bridge import frozen, rule_calls, runtime
from .bridge.capture import callee_overloads, resolve_overload
from .bridge.frozen import note_use
from .bridge.link import bind_environments, define_counts, find_environment
from .bridge.vector_math import cache_tag

ENV_VAR = "ENZYME_PY_CACHE_DIR"
_MAGIC = b"enzyme_py-gradient-cache-1\n"
_dir = None                 # set_cache_dir(path); None: ENZYME_PY_CACHE_DIR decides
_loaded = {}                # key digest -> fields of a gradient loaded or built in this process
_versions = []
# builds: gradients built (every mode) while the cache was on; the others count files
stats = {"hits": 0, "misses": 0, "stores": 0, "uncacheable": 0, "bad_files": 0, "builds": 0}
refused = {}                # file label -> why its gradient was not stored (why_not)


def set_cache_dir(path: str | os.PathLike | None) -> None:
    """Store compiled gradients under `path` (created if needed); None turns the cache off
    unless ENZYME_PY_CACHE_DIR is set."""
    global _dir
    _dir = None if path is None else os.fspath(path)


enable = set_cache_dir


def disable() -> None:
    """Turn the disk cache off in this process, whatever ENZYME_PY_CACHE_DIR says."""
    global _dir
    _dir = ""


def cache_dir():
    """The folder in use, or None when the disk cache is off."""
    d = os.environ.get(ENV_VAR) if _dir is None else _dir
    return d or None


# ---- the key -----------------------------------------------------------------------------------

def _library_version() -> bytes:
    """Versions of Python, Numba, llvmlite, NumPy, the CPU, and the text of enzyme_py and
    ir_passes, runtime .ll files included (a changed derivative rule or runtime helper must not
    reuse old code). Computed once."""
    if not _versions:
        h = hashlib.sha256()
        h.update(repr((sys.version, numba.__version__, llvmlite.__version__, np.__version__,
                       cpu_target.target_context.codegen().magic_tuple(),
                       numba.config.OPT, numba.config.BOUNDSCHECK, cache_tag())).encode())
        here = os.path.dirname(os.path.abspath(__file__))
        ir_dir = os.path.join(os.path.dirname(here), "ir_passes")
        files = []
        for top in (here, ir_dir):
            for root, _, names in os.walk(top):
                files += [os.path.join(root, f) for f in names if f.endswith((".py", ".ll"))]
        for path in sorted(files):
            with open(path, "rb") as f:
                h.update(os.path.relpath(path, os.path.dirname(here)).encode() + f.read())
        _versions.append(h.digest())
    return _versions[0]


def _rules_state() -> str:
    """ir_passes' rule tables, minus rules keyed by an address (those kernels are never stored)."""
    return rules_fingerprint(skip_prefix="numba.dynamic.globals.")


def _overload_state(dispatcher, argtypes) -> bytes:
    """The code of the overload a plain call runs for `argtypes` and every value it and its
    callees froze (bridge/frozen.py), its compile flags and locals. The kernel is compiled
    for `argtypes` first when it has no overload: the key must describe machine code."""
    argtypes = tuple(argtypes)
    try:
        argtypes, original = resolve_overload(dispatcher, argtypes)
        if original is None:
            dispatcher.compile(argtypes)
            original = dispatcher.overloads[argtypes]
    except Exception:     # noqa: BLE001 - Numba cannot compile it: the build says why
        original = None
    note_use(dispatcher, argtypes)
    h = hashlib.sha256(frozen.fingerprint(dispatcher, argtypes))
    h.update(repr(sorted(map(repr, getattr(dispatcher, "locals", {}).items()))).encode())
    h.update(rule_calls.token(dispatcher).encode())      # custom rules: the kernel's and callees'
    if original is not None:
        h.update(repr(tuple(getattr(original.fndesc, "abi_tags", ()))).encode())
        callees = sorted(callee_overloads(original).values(),
                         key=lambda c: c[2].fndesc.mangled_name)
        for callee, sig, _ in callees:
            h.update(frozen.fingerprint(callee, sig))
            h.update(rule_calls.token(callee).encode())
    return h.digest()


def make_key(mode, dispatcher, numba_types, options, argtypes=None) -> str:
    h = hashlib.sha256(_library_version())
    h.update(_overload_state(dispatcher, numba_types if argtypes is None else argtypes))
    h.update(repr((mode, tuple(map(str, numba_types)), options, _rules_state())).encode())
    return h.hexdigest()


# ---- what may be stored ------------------------------------------------------------------------

_ADDRESS = re.compile(r"inttoptr \(i64 (-?\d+) to")
_PROCESS_SPECIFIC = {"numba.dynamic.globals": "it calls a ctypes/cffi function or a custom "
                                              "derivative by its address in this process",
                     ".numba.unresolved$": "it recurses through Numba's unresolved-symbol slots"}
_ENV_DEFINITION = re.compile(r'^@"?_ZN08NumbaEnv.*$', re.M)   # every kernel module has one
_ENV_NAME = re.compile(r'@"?(_ZN08NumbaEnv[^",)\s]*)')


def used_environments(text: str) -> set:
    """The Numba environment globals the module's code reads (an exception raised with
    run-time arguments boxes them through its function's environment)."""
    return set(_ENV_NAME.findall(_ENV_DEFINITION.sub("", text)))


def why_not(text: str, environments=None):
    """Why the module cannot be stored (a sentence), or None: it embeds something valid in this
    process only (a ctypes/cffi function or custom-derivative address, an unresolved recursion
    slot), or uses a Numba environment that is not in `environments` ({name: Environment}) or
    cannot be pickled as Numba's cache pickles one (module name and constants)."""
    for marker, reason in _PROCESS_SPECIFIC.items():
        if marker in text:
            return reason
    if any(abs(int(n)) > 0xFFFF for n in _ADDRESS.findall(text)):
        return "it holds an absolute address of this process"
    for name in sorted(used_environments(text)):
        env = find_environment(name, environments)
        if env is None or not env.can_cache():
            return f"it uses the Numba environment {name}, which has no module to rebuild it from"
        try:
            pickle.dumps(env, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:      # noqa: BLE001 - a constant that does not pickle
            return f"the constants of the Numba environment {name} do not pickle ({exc})"
    return None


def cacheable(text: str, environments=None) -> bool:
    """Whether `why_not` finds nothing."""
    return why_not(text, environments) is None


# ---- load and store ----------------------------------------------------------------------------

def _reduce_entry(entry):
    """The compile result of `entry` (its only overload) as Numba's own cache pickles it, but
    with its environments as (name, consts): their globals are the exec'd entry's scope."""
    (cres,) = entry.overloads.values()
    fndesc = copy.copy(cres.fndesc)
    fndesc.typemap = fndesc.calltypes = fndesc.global_dict = None
    envs = [(e.env_name, list(e.consts)) for e in cres._find_referenced_environments()]
    return (cres.library.serialize_using_object_code(), fndesc,
            (cres.environment.env_name, list(cres.environment.consts)), cres.signature,
            cres.objectmode, cres.lifted, "", cres.reload_init, envs)


def _rebuild_entry(entry, data):
    def env(name, consts):
        found = Environment._memo.get(name)
        if found is None:
            found = Environment(entry.py_func.__globals__)
            found.consts[:] = consts
            found.env_name = name
            Environment._memo[name] = found
        return found

    libdata, fndesc, main_env = data[:3]
    ctx = cpu_target.target_context
    cres = CompileResult._rebuild(ctx, libdata, fndesc, env(*main_env), *data[3:8],
                                  tuple(env(*e) for e in data[8]))
    ctx.insert_user_function(cres.entry_point, cres.fndesc, [cres.library])
    entry.add_overload(cres)
    entry.disable_compile()     # its one signature; Numba converts arguments to it


def pickle_by_key(entry, key) -> None:
    """Pickle the @njit `entry` as its disk-cache key. Numba's cache=True keys a closure by the
    pickle of its closure variables, and a dispatcher pickles with a random UUID and its Python
    function: a @njit driver that closes over a gradient entry (a Jacobian loop) could never be
    cached. By key, the pickle is the same in every process that loads the same gradient."""
    entry.__reduce_ex__ = lambda protocol: (loaded_entry, (key,))


def entry_key(entry):
    """The disk-cache key `entry` pickles as (pickle_by_key), or None."""
    reduce = entry.__dict__.get("__reduce_ex__")
    if reduce is None:
        return None
    fn, args = reduce(4)
    return args[0] if fn is loaded_entry else None


def loaded_entry(key):
    """The entry of the gradient with this key loaded or built in this process."""
    fields = _loaded.get(key)
    if fields is None:
        raise LookupError("this enzyme_py gradient is not loaded in this process: build it "
                          "(compile_gradient) before unpickling what refers to it")
    return fields["entry"]


class Slot:
    """One (kernel, types, activity, options) in the disk cache.

    `hit`: the fields of the compiled gradient (spec, library, entry, layout, ...) when it was
    found, else None. `symbol(role)` names a gradient's function after the key; `save(...)`
    stores a gradient built after a miss."""

    def __init__(self, folder, key, label, make_entry):
        self.folder, self.key, self.make_entry, self.label = folder, key, make_entry, label
        safe = re.sub(r"[^A-Za-z0-9_.]", "_", label)[:60]
        self.path = os.path.join(folder, f"{safe}-{key[:32]}.nbg")
        self.hit = _loaded.get(key) or self._load()
        stats["hits" if self.hit else "misses"] += 1

    def symbol(self, role: str) -> str:
        """The symbol of the gradient's function `role` ("grad", "fwd", ...), named after the
        key alone (a kernel's mangled name changes with what the process compiled before): the
        same in every process that builds or loads this gradient (once per process: `_loaded`),
        so code compiled against it in another process (a driver kept by Numba's cache, which
        calls it by name) finds it even when this process built it again."""
        return f"__enzyme_py_{role}_{self.key[:32]}"

    def _load(self):
        try:
            with open(self.path, "rb") as f:
                blob = f.read()
        except OSError:
            return None
        try:
            head, digest, body = blob[:len(_MAGIC)], blob[len(_MAGIC):len(_MAGIC) + 32], \
                blob[len(_MAGIC) + 32:]
            if head != _MAGIC or hashlib.sha256(body).digest() != digest:
                raise ValueError("bad header or checksum")
            record = pickle.loads(body)
            if record["key"] != self.key:
                raise ValueError("key mismatch")
            fields = self._rebuild(record)
        except Exception:         # noqa: BLE001 - a corrupt or foreign file: rebuild
            stats["bad_files"] += 1
            return None
        _loaded[self.key] = fields
        return fields

    def _rebuild(self, record):
        fields = dict(record["fields"])
        if "library" not in record:       # a record of fields only (CUDA: the kernel's text)
            return fields
        cpu_target.target_context.refresh()   # as Numba's cache does: NRT is set up on first use
        define_counts(fields.get("layout"))   # the gradient reads this global: define it first
        load_runtime(self.folder, record.get("runtime", ()))   # the helpers it calls, likewise
        codegen = cpu_target.target_context.codegen()
        library = codegen.unserialize_library(record["library"])
        bind_environments(library, record.get("environments", ()))
        entry = self.make_entry(fields["spec"], library)
        _rebuild_entry(entry, record["entry"])
        pickle_by_key(entry, self.key)
        fields.update(library=library, entry=entry)
        return fields

    def save(self, fields: dict, verified_text: str, environments=None) -> bool:
        """Store a freshly built gradient: `fields` holds spec, library, entry and what the
        result type needs besides (or, with no library, only what is to be stored: CUDA's
        texts). `environments` ({name: Numba Environment}, capture's): those the code uses are
        stored with it and bound again at load. Returns whether it was stored; when it cannot
        be, `refused[label]` says why."""
        stats["builds"] += 1
        kept = {k: v for k, v in fields.items() if k not in ("library", "entry")}
        reason = why_not(verified_text, environments)
        if reason is not None:
            stats["uncacheable"] += 1
            refused[self.label] = reason
            return False
        used = [find_environment(n, environments) for n in sorted(used_environments(verified_text))]
        _loaded[self.key] = fields
        if "entry" in fields:
            pickle_by_key(fields["entry"], self.key)
        try:
            helpers = declared_runtime(verified_text)
            record = {"key": self.key, "fields": kept, "environments": used, "runtime": helpers}
            if helpers:     # compiled by this build for exactly these helpers: stored too
                _store_runtime(self.folder, _runtime_path(self.folder, helpers),
                               runtime.compiled_for(helpers))
            if "library" in fields:
                record.update(library=fields["library"].serialize_using_object_code(),
                              entry=_reduce_entry(fields["entry"]))
            _write(self.folder, self.path, pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:         # noqa: BLE001 - an unwritable folder never fails a gradient
            return False
        stats["stores"] += 1
        return True


def load_runtime(folder, names) -> None:
    """Make the runtime helpers `names` (bridge/runtime.py) callable in this process: those
    missing are loaded from their own file, `runtime-<key>.nbr` (the object code of a library
    defining exactly them), or compiled and stored there."""
    todo = runtime.missing(names)
    if not todo:
        return
    path = _runtime_path(folder, todo)
    codegen = cpu_target.target_context.codegen()
    try:
        with open(path, "rb") as f:
            blob = f.read()
        body = blob[len(_MAGIC) + 32:]
        if blob[:len(_MAGIC)] != _MAGIC or hashlib.sha256(body).digest() != blob[len(_MAGIC):len(_MAGIC) + 32]:
            raise ValueError("bad header or checksum")
        runtime.add(todo, codegen.unserialize_library(pickle.loads(body)))
        return
    except Exception:         # noqa: BLE001 - no file, or a corrupt one: compile
        pass
    _store_runtime(folder, path, runtime.ensure(todo))


def _runtime_path(folder, names) -> str:
    key = hashlib.sha256(_library_version() + repr(list(names)).encode()).hexdigest()[:32]
    return os.path.join(folder, f"runtime-{key}.nbr")


def _store_runtime(folder, path, library) -> None:
    """Store a runtime library's object code (a fresh process loading the gradients that call
    exactly its helpers finds it)."""
    if library is None or os.path.exists(path):
        return
    try:
        _write(folder, path, pickle.dumps(library.serialize_using_object_code(),
                                          protocol=pickle.HIGHEST_PROTOCOL))
    except OSError:      # an unwritable folder never fails a gradient
        pass


def _write(folder, path, body) -> None:
    """Write `body` with the header and checksum to `path`, atomically (readers see the old
    file or the new one). os.open with 0o666, not mkstemp's 0o600: the file follows the umask,
    so a folder shared by a group stays readable."""
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    with os.fdopen(fd, "wb") as f:
        f.write(_MAGIC + hashlib.sha256(body).digest() + body)
    os.replace(tmp, path)


def _entry_path(kind: str, parts) -> str | None:
    folder = cache_dir()
    if folder is None:
        return None
    key = hashlib.sha256(_library_version() + repr(parts).encode()).hexdigest()[:32]
    return os.path.join(folder, f"{kind}-{key}.nbe")


def load_entry(kind: str, parts, entry) -> bool:
    """Give the @njit `entry` (not compiled) its one overload from the file stored for
    (`kind`, `parts`) by store_entry; whether there was one. For entries built over loaded
    gradients (a checked entry: modes/strong_zero_entry.py), `parts` naming all they depend
    on (the gradients' keys, the entry's source and signature)."""
    path = _entry_path(kind, parts)
    if path is None:
        return False
    try:
        with open(path, "rb") as f:
            blob = f.read()
        body = blob[len(_MAGIC) + 32:]
        if blob[:len(_MAGIC)] != _MAGIC or hashlib.sha256(body).digest() != blob[len(_MAGIC):len(_MAGIC) + 32]:
            raise ValueError("bad header or checksum")
        data = pickle.loads(body)
    except Exception:         # noqa: BLE001 - no file, or a corrupt one: compile
        return False
    _rebuild_entry(entry, data)
    return True


def store_entry(kind: str, parts, entry) -> None:
    """Store the compiled @njit `entry` for (`kind`, `parts`) (load_entry); nothing when the
    disk cache is off or its environments' constants do not pickle."""
    path = _entry_path(kind, parts)
    if path is None:
        return
    try:
        _write(os.path.dirname(path), path, pickle.dumps(_reduce_entry(entry),
                                                         protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:         # noqa: BLE001 - an unwritable folder or a constant that does not pickle
        pass


def open_slot(mode, dispatcher, numba_types, options, make_entry, argtypes=None):
    """The Slot for this gradient, or None when the disk cache is off. `argtypes`: the
    kernel's own argument types (the first of `numba_types` when not given)."""
    folder = cache_dir()
    if folder is None:
        return None
    key = make_key(mode, dispatcher, numba_types, options, argtypes)
    label = f"{dispatcher.py_func.__module__}.{dispatcher.py_func.__qualname__}-{mode}"
    return Slot(folder, key, label, make_entry)
