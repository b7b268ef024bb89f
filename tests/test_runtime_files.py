"""The runtime's LLVM IR files (ir_passes/runtime/*.ll): each has a golden test, every helper made
from them is valid LLVM, and a template refuses a missing or unknown placeholder."""
import ctypes
import os

import llvmlite.binding as llvm
import pytest

from ir_passes.ir.parser import parse_module
from ir_passes.passes import add_helper
from ir_passes.ir.printer import print_module
from ir_passes.runtime import source
from ir_passes.runtime.helpers import HELPERS, keep_repeated_loops_apart, merge

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


def _jit(text):
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(text)
    mod.verify()
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    return engine


def test_growable_lists_grow_and_keep_their_entries():
    """push_allocation (8-byte entries, grown by 2c + 8) and push_child (16-byte entries, grown
    by 2c + 2; null frames skipped) keep every entry in order across several growths, and
    free_children calls each child's free function once."""
    module = parse_module("")
    for name in ("enzpy.push_allocation", "enzpy.push_child"):
        add_helper(module, name)
    merge(module, """
@calls = global i64 0
define void @count(ptr %frame) {
entry:
  %c = load i64, ptr @calls
  %c1 = add i64 %c, 1
  store i64 %c1, ptr @calls
  ret void
}
define void @fill(ptr %allocs, ptr %children, i64 %n) {
entry:
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k1, %loop ]
  %k1 = add i64 %k, 1
  %p = inttoptr i64 %k1 to ptr
  call void @enzpy.push_allocation(ptr %allocs, ptr %p)
  call void @enzpy.push_child(ptr %children, ptr @count, ptr %p)
  call void @enzpy.push_child(ptr %children, ptr @count, ptr null)
  %more = icmp slt i64 %k1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}
define i64 @release(ptr %children) {
entry:
  call void @enzpy.free_children(ptr %children)
  %c = load i64, ptr @calls
  ret i64 %c
}
declare void @enzpy.push_allocation(ptr, ptr)
declare void @enzpy.push_child(ptr, ptr, ptr)
declare void @enzpy.free_children(ptr)
""")
    engine = _jit(print_module(module))
    n = 37
    allocs, children = (ctypes.c_int64 * 3)(), (ctypes.c_int64 * 3)()
    fill = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(
        engine.get_function_address("fill"))
    fill(ctypes.addressof(allocs), ctypes.addressof(children), n)
    assert allocs[1] == n and allocs[2] == 56            # capacities 8, 24, 56
    assert children[1] == n and children[2] == 62        # capacities 2, 6, 14, 30, 62
    data = (ctypes.c_int64 * n).from_address(allocs[0])
    assert list(data) == list(range(1, n + 1))
    pairs = (ctypes.c_int64 * (2 * n)).from_address(children[0])
    assert list(pairs[1::2]) == list(range(1, n + 1))
    assert set(pairs[0::2]) == {engine.get_function_address("count")}
    release = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p)(engine.get_function_address("release"))
    assert release(ctypes.addressof(children)) == n
    ctypes.CDLL(None).free(ctypes.c_void_p(allocs[0]))


def test_helpers_that_loop_and_are_called_twice_are_not_inlined():
    """keep_repeated_loops_apart: a looping helper called from two places gets `noinline` (O3
    would optimize its loop once per call site); one called once, or without a loop, does not."""
    loop = """define internal void @enzpy.{name}(ptr %p, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %j, %loop ]
  %q = getelementptr double, ptr %p, i64 %i
  store double 0.0, ptr %q
  %j = add i64 %i, 1
  %more = icmp slt i64 %j, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""
    text = loop.format(name="twice") + loop.format(name="once") + """
define internal void @enzpy.flat(ptr %p) {
entry:
  store double 0.0, ptr %p
  ret void
}
define void @f(ptr %p, i64 %n) {
entry:
  call void @enzpy.twice(ptr %p, i64 %n)
  call void @enzpy.twice(ptr %p, i64 %n)
  call void @enzpy.once(ptr %p, i64 %n)
  call void @enzpy.flat(ptr %p)
  call void @enzpy.flat(ptr %p)
  ret void
}
"""
    module = parse_module(text)
    keep_repeated_loops_apart(module)
    heads = {line.split("@")[1].split("(")[0]: line for line in print_module(module).splitlines()
             if line.startswith("define")}
    assert heads["enzpy.twice"].endswith("noinline {")
    assert "noinline" not in heads["enzpy.once"] + heads["enzpy.flat"] + heads["f"]
