"""A GPU kernel with an integer shared array before a float one: the wrapper kernel zeroes only the
float array's shadow, and its loop's phi named the block `zero.0.done` of the integer array, which
has no shadow and no loop, so the kernel was not valid LLVM (gpu_kernel._finish). The zero loop of
a shadow now comes from the block before it. Checked on the IR (no GPU needed): the derivative
kernel parses and verifies, and its zero loop starts from the entry block."""
import llvmlite.binding as llvm

from ir_passes import Activity, gpu_forward_kernel, gpu_reverse_kernel

TEXT = """
target triple = "nvptx64-nvidia-cuda"
@idx = internal addrspace(3) global [32 x i32] undef, align 4
@buf = internal addrspace(3) global [32 x double] undef, align 8

define void @kern(ptr %x) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t64 = zext i32 %t to i64
  %pi = getelementptr i32, ptr addrspacecast (ptr addrspace(3) @idx to ptr), i64 %t64
  store i32 %t, ptr %pi
  %px = getelementptr double, ptr %x, i64 %t64
  %v = load double, ptr %px
  %pb = getelementptr double, ptr addrspacecast (ptr addrspace(3) @buf to ptr), i64 %t64
  store double %v, ptr %pb
  call void @llvm.nvvm.barrier0()
  %w = load double, ptr %pb
  %w2 = fmul double %w, %w
  store double %w2, ptr %px
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.barrier0()
"""


def test_forward_kernel_with_an_integer_shared_array_first_is_valid():
    k = gpu_forward_kernel(TEXT, "kern", [Activity.DUP], "kern.fwd", {})
    assert "[ %t, %entry ], [ %i.1.next, %zero.1.body ]" in k.text
    llvm.parse_assembly(k.text).verify()


def test_reverse_kernel_with_an_integer_shared_array_first_is_valid():
    k = gpu_reverse_kernel(TEXT, "kern", [Activity.DUP], "kern.grad", {}, {})
    assert "[ %t, %entry ], [ %i.1.next, %zero.1.body ]" in k.text
    llvm.parse_assembly(k.text).verify()
