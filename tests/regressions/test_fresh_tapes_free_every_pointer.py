"""Hessian-vector products and batched seeds replace the gradient's workspace helpers by ones
that keep nothing (ir_passes/runtime/fresh_workspace.py). The replacement `park` read its last
argument as a bit mask of pointer fields, but the gradient passes the number of leading pointer
fields (runtime/workspace.ll): with 2 tape arrays it freed only the second, with 4 only
the third, and the others leaked on every call. It now frees the first `pointers` fields, null
ones skipped, with the module's heap."""
import ctypes

import llvmlite.binding as llvm

from ir_passes import parse_module, print_module
from ir_passes.runtime.fresh_workspace import fresh_tapes
from ir_passes.runtime.heap import Heap

CALLER = """
@freed = global i64 0
@last = global i64 0

define void @count_free(ptr %p) {
entry:
  %n = load i64, ptr @freed
  %n1 = add i64 %n, 1
  store i64 %n1, ptr @freed
  %v = ptrtoint ptr %p to i64
  %l = load i64, ptr @last
  %l1 = add i64 %l, %v
  store i64 %l1, ptr @last
  ret void
}

define void @run(ptr %fields, i64 %n, i64 %pointers) {
entry:
  call void @enzpy.park(ptr null, ptr null, ptr %fields, i64 %n, i64 %pointers)
  ret void
}

declare void @enzpy.park(ptr, ptr, ptr, i64, i64)
"""


def _park(fields, pointers):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = parse_module(CALLER)
    module.heap = Heap(allocate="unused", free="count_free")
    fresh_tapes(module)
    mod = llvm.parse_assembly(print_module(module))
    mod.verify()
    target = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, target)
    engine.finalize_object()
    run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(
        engine.get_function_address("run"))
    buf = (ctypes.c_int64 * len(fields))(*fields)
    run(ctypes.addressof(buf), len(fields), pointers)
    count = ctypes.c_int64.from_address(engine.get_global_value_address("freed")).value
    total = ctypes.c_int64.from_address(engine.get_global_value_address("last")).value
    return count, total


def test_park_frees_each_leading_pointer_field():
    # 4 pointer fields (one null), then 2 capacities that must not be freed
    count, total = _park([0x1000, 0x2000, 0, 0x4000, 7, 9], pointers=4)
    assert count == 3
    assert total == 0x1000 + 0x2000 + 0x4000


def test_park_with_two_pointers_frees_both():
    assert _park([0x10, 0x20, 5], pointers=2) == (2, 0x30)
