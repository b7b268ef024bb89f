"""Gradients called from code that is itself differentiated (nested AD: `autodiff` inside an
@njit kernel that a second `autodiff` differentiates, as GradBench's saddle and particle evals
do).

A gradient's module is compiled on its own and called by symbol (modes/reverse.py's entry), so
the outer capture would see only a declaration. `remember` keeps the verified text of every
generated function compiled in this process, on its code library (as long as the gradient
lives); `link_generated` adds the texts of the generated
functions a captured module declares (and of those they declare), so cleanup inlines them and
the outer transform differentiates the inner gradient's code like any other. The inner
gradient's tape arrays, which a top-level call keeps between calls in a global workspace, live
for one call there (ir_passes' fresh_tapes).

A gradient loaded from the disk cache has no text here: a kernel calling it is refused
("call to external function ... has no derivative rule") until the gradient is built in the
process (`enzyme_py.clear_cache`, or the disk cache off)."""
from __future__ import annotations

import re
import threading
import weakref

from ir_passes import declared_runtime, fresh_tapes_text, runtime_library_text

_lock = threading.Lock()
# generated function symbol -> the code library holding it (its verified text as an attribute):
# the text lives as long as the gradient does
_libraries: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
_TEXT = "_enzyme_py_generated_text"
PREFIX = "__enzyme_py_"
_DECLARED = re.compile(r'^declare [^@\n]*@"?(' + PREFIX + r'[\w.$]+)"?\(', re.M)


def remember(name: str, text: str, library) -> None:
    if name.startswith(PREFIX):
        setattr(library, _TEXT, text)
        with _lock:
            _libraries[name] = library


def link_generated(texts: list) -> list:
    """`texts`, the modules of the generated functions they declare, transitively, and the
    runtime helpers those declare (their definitions, as one module)."""
    out, added = list(texts), set()
    todo = [t for t in texts]
    while todo:
        for name in _DECLARED.findall(todo.pop()):
            library = _libraries.get(name)
            text = getattr(library, _TEXT, None)
            if text is not None and name not in added:
                added.add(name)
                text = fresh_tapes_text(text)
                out.append(text)
                todo.append(text)
    helpers = sorted({n for t in out[len(texts):] for n in declared_runtime(t)})
    if helpers:     # the runtime helpers they declare (bridge/runtime.py), defined for cleanup
        out.append(runtime_library_text(helpers))
    return out
