"""capture remembers LLVM types' ABI sizes for the debug copy (bridge/capture.py): the sizes
must be llvmlite's own."""
from llvmlite import ir
from numba.core.registry import cpu_target

import enzyme_py.bridge.capture  # noqa: F401 - installs the memo


def _llvmlite_size(ty):
    return ty.get_abi_size(cpu_target.target_context.target_data)


def test_sizes_are_llvmlite_sizes_and_repeat():
    ctx = cpu_target.target_context
    f64, i8 = ir.DoubleType(), ir.IntType(8)
    types = [f64, ir.IntType(32), ir.LiteralStructType([i8, f64, ir.ArrayType(f64, 3)]),
             ir.ArrayType(ir.LiteralStructType([f64, i8]), 5)]
    for ty in types + types:
        assert ctx.get_abi_sizeof(ty) == _llvmlite_size(ty)
    assert ctx.get_abi_sizeof(types[2]) == 40


def test_identified_struct_sizes_are_llvmlite_sizes():
    ctx = cpu_target.target_context
    named = ir.global_context.get_identified_type("enzyme_py.test.abi_size")
    named.set_body(ir.IntType(8), ir.DoubleType())
    holder = ir.LiteralStructType([named, ir.IntType(8)])
    for ty in (named, holder, named):
        assert ctx.get_abi_sizeof(ty) == _llvmlite_size(ty)
    assert ctx.get_abi_sizeof(holder) == 24
