"""Structural promises of the code (docs/architecture.md): declared fields fail loudly on a typo,
internal errors are told apart from unsupported code, ir_passes names no host, and the FileCheck
folders are named as the passes."""
import os
import re

import pytest

import ir_passes
from ir_passes import InternalError, UnsupportedError, parse_module
from ir_passes.ir.instructions import Instruction
from ir_passes.passes import PASSES
from ir_passes.transforms.forward.state import ForwardMode
from ir_passes.transforms.reverse.gradient import Gradient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MODULE = """
define void @f(ptr %x, ptr %y) {
entry:
  %a = load double, ptr %x, align 8
  %m = fmul double %a, %a
  store double %m, ptr %y, align 8
  ret void
}
"""


def test_instruction_fields_are_declared():
    inst = Instruction("fadd")
    inst.flags = ["fast"]
    with pytest.raises(AttributeError):
        inst.flag = ["fast"]          # a typo of `flags`
    c = inst.copy()
    assert c.flags == ["fast"] and c.flags is not inst.flags


def test_reverse_and_forward_state_fields_are_declared():
    module = parse_module(MODULE)
    g = Gradient(module, module.functions["f"], ["dup", "dup"], "grad")
    g.layout = None
    with pytest.raises(AttributeError):
        g.layuot = None
    fm = ForwardMode(module, "f", ["dup", "dup"], "fwd")
    with pytest.raises(AttributeError):
        fm.widht = 2


def test_internal_error_is_not_unsupported_and_asks_for_the_kernel():
    err = InternalError("a value is used before it is defined", "%x = fadd double %a, %b")
    assert not isinstance(err, UnsupportedError)
    assert "report" in str(err) and "kernel" in str(err)


def test_ir_passes_names_no_host():
    found = []
    for folder, _, names in os.walk(os.path.join(ROOT, "ir_passes")):
        for n in names:
            if n.endswith(".py"):
                text = open(os.path.join(folder, n)).read()
                found += [f"{n}: {m}" for m in re.findall(r"(?i)numba|NRT_\w*", text)]
    assert found == []


def test_filecheck_folders_are_named_as_the_passes():
    root = os.path.join(HERE, "filecheck")
    folders = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))
               and any(f.endswith(".ll") for f in os.listdir(os.path.join(root, d)))}
    # (a folder with no test left, e.g. lit's Output/ after a rename, is not a test folder;
    # host/ holds the host's own IR files, enzyme_py/bridge/*.ll, not a pass's)
    assert folders - {"roundtrip", "host"} <= set(PASSES), folders - set(PASSES)


def test_public_names_still_exported():
    for name in ("parse_module", "print_module", "reverse_mode", "forward_mode", "Extent", "Heap",
                 "LIBC_HEAP", "register_heap", "UnsupportedError", "register_allocator",
                 "register_dot", "register_external", "register_inactive", "Activity",
                 "CacheMode", "InternalError", "register_success_codes"):
        assert hasattr(ir_passes, name), name
