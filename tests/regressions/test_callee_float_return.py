"""A differentiated call of a module function that returns a float: the split gradient's reverse
took no adjoint for the returned value (activity analysis also counted it constant), so
y = h(x) left x's shadow untouched: a silent zero gradient. Now refused; a callee that returns
through memory (as a host's return pointer does) gets the exact gradient."""
import ctypes

import llvmlite.binding as llvm
import numpy as np
import pytest

from ir_passes import UnsupportedError, parse_module, print_module, reverse_mode

IR = """
define internal double @h(ptr %x, i64 %i) {
entry:
  %p = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %p, align 8
  %s = call double @llvm.sin.f64(double %a)
  ret double %s
}
define void @by_value(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %v = call double @h(ptr %x, i64 %i)
  %q = getelementptr double, ptr %y, i64 %i
  store double %v, ptr %q, align 8
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
define internal void @sin_into(ptr %y, ptr %x, i64 %i) {
entry:
  %p = getelementptr double, ptr %x, i64 %i
  %a = load double, ptr %p, align 8
  %s = call double @llvm.sin.f64(double %a)
  %q = getelementptr double, ptr %y, i64 %i
  store double %s, ptr %q, align 8
  ret void
}
define void @through_memory(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  call void @sin_into(ptr %y, ptr %x, i64 %i)
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret void
}
declare double @llvm.sin.f64(double)
"""


def test_float_return_of_a_differentiated_call_is_refused():
    module = parse_module(IR)
    with pytest.raises(UnsupportedError, match="returns a float"):
        reverse_mode(module, "by_value", ["dup", "dup", "const"], "grad", noalias=True)


def test_result_through_memory_gets_the_gradient():
    module = parse_module(IR)
    reverse_mode(module, "through_memory", ["dup", "dup", "const"], "grad", noalias=True)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(print_module(module))
    tm = llvm.Target.from_default_triple().create_target_machine()
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    grad = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                            ctypes.c_void_p)(engine.get_function_address("grad"))
    x, y, dx, dy = np.array([0.5, 1.0, -2.0]), np.zeros(3), np.full(3, 0.25), np.array([1.0, 2.0, -1.5])
    grad(x.ctypes.data, y.ctypes.data, 3, dx.ctypes.data, dy.ctypes.data)
    np.testing.assert_allclose(y, np.sin(x), rtol=1e-15)
    np.testing.assert_allclose(dx, 0.25 + np.cos(x) * np.array([1.0, 2.0, -1.5]), rtol=1e-14)
    np.testing.assert_array_equal(dy, np.zeros(3))
