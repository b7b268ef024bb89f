"""Parse generated LLVM IR into an llvmlite module, raising on invalid IR instead of aborting.

llvmlite's `parse_assembly` ends the whole process ("LLVM ERROR: Broken module found,
compilation aborted!") when a module carrying the "Debug Info Version" flag fails LLVM's
verifier: the debug-info upgrade that runs on parse verifies the module and treats a failure as
fatal. So generated text is parsed with that upgrade switched off (LLVM's
-disable-auto-upgrade-debug-info, set only for the parse), then verified: a failure is a Python
exception. A module whose only fault is its debug info is parsed again as LLVM always did, which
drops the debug info with a warning.
"""
import re
import threading

import llvmlite.binding as llvm

from ..errors import InternalError

_OPTION = "-disable-auto-upgrade-debug-info"
_lock = threading.Lock()
_DEBUG_VERSION = re.compile(r'!"Debug Info Version"')


def parse_checked(text: str):
    """The llvmlite module of `text`, verified; InternalError (with LLVM's message) when the
    verifier rejects it."""
    with _lock:
        llvm.set_option("", _OPTION + "=true")
        try:
            module = llvm.parse_assembly(text)
        finally:
            llvm.set_option("", _OPTION + "=false")
    try:
        module.verify()
        return module
    except RuntimeError as e:
        message = str(e).strip()
    try:            # without its debug-info version, the parse drops the debug info, verifying nothing
        llvm.parse_assembly(_DEBUG_VERSION.sub('!"enzyme_py.unchecked"', text)).verify()
    except RuntimeError:
        raise InternalError("the generated module fails LLVM's verifier: " + message) from None
    return llvm.parse_assembly(text)
