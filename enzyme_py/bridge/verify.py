"""Parse generated LLVM IR into an llvmlite module, raising on invalid IR instead of aborting.

llvmlite's `parse_assembly` ends the whole process ("LLVM ERROR: Broken module found,
compilation aborted!") when a module carrying the "Debug Info Version" flag fails LLVM's
verifier: the debug-info upgrade that runs on parse verifies the module and treats a failure as
fatal. Without that flag the parse strips the debug info instead and verifies nothing, so the
text is first parsed and verified that way (a failure is a Python exception), then parsed as it is.
"""
import re

import llvmlite.binding as llvm

from ..errors import InternalError

_DEBUG_VERSION = re.compile(r'!"Debug Info Version"')


def parse_checked(text: str):
    """The llvmlite module of `text`, verified; InternalError (with LLVM's message) when the
    verifier rejects it."""
    if _DEBUG_VERSION.search(text):
        _verify(llvm.parse_assembly(_DEBUG_VERSION.sub('!"enzyme_py.unchecked"', text)))
    module = llvm.parse_assembly(text)
    _verify(module)
    return module


def _verify(module) -> None:
    try:
        module.verify()
    except RuntimeError as e:
        raise InternalError("the generated module fails LLVM's verifier: " + str(e).strip()) from None
