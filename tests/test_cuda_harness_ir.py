"""The CPU harness's own IR (enzyme_py/cuda/harness.ll, filled by host_ir.py) is valid LLVM,
every piece for both float types; its golden test is tests/filecheck/host/cuda_harness.ll.
Needs no numba-cuda."""
import llvmlite.binding as llvm

from enzyme_py.cuda import host_ir


def test_harness_ir_is_valid_llvm():
    text = host_ir.everything()
    llvm.parse_assembly(text).verify()
    for name in host_ir.LIBDEVICE:
        assert f"@__nv_{name}(" in text and f"@__nv_{name}f(" in text
