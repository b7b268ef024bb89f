"""The runtime's LLVM IR files (ir_passes/runtime/*.ll): each has a golden test, every helper made
from them is valid LLVM, and a template refuses a missing or unknown placeholder."""
import os

import llvmlite.binding as llvm
import pytest

from ir_passes.ir.parser import parse_module
from ir_passes.passes import add_helper
from ir_passes.ir.printer import print_module
from ir_passes.runtime import source
from ir_passes.runtime.helpers import HELPERS

HERE = os.path.dirname(os.path.abspath(__file__))


def test_every_runtime_file_has_a_golden_test():
    tests = {n[:-3] for n in os.listdir(os.path.join(HERE, "filecheck", "runtime")) if n.endswith(".ll")}
    assert set(source.files()) - tests == set()
    assert tests - set(source.files()) == set()


@pytest.mark.parametrize("name", sorted(set(HELPERS) - {"enzpy.host_error", "enzpy.host_error_pending"})
                         + ["enzpy.block_sum.nvptx.f64", "enzpy.warp_add.nvptx.f32", "enzpy.ckpt.frame"])
def test_helper_is_valid_llvm(name):
    module = parse_module("")
    add_helper(module, name)
    assert name in module.functions
    llvm.parse_assembly(print_module(module)).verify()


def test_load_checks_the_placeholders():
    assert source.placeholders("copy_adjoint") == {"SUFFIX", "TYPE", "WIDTH"}
    assert "fadd float" in source.load("copy_adjoint", SUFFIX="f32", TYPE="float", WIDTH=4)
    with pytest.raises(KeyError, match="WIDTH"):
        source.load("copy_adjoint", SUFFIX="f32", TYPE="float")
    with pytest.raises(KeyError, match="EXTRA"):
        source.load("digamma", EXTRA=1)
