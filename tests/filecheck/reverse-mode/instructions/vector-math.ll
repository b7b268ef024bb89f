; The math calls a derivative rule adds (cos for sin, pow and log for pow) name libmvec's vector
; variants, so LLVM's loop vectorizer may call them. The primal's own calls stay plain scalar calls:
; the gradient writes y exactly as the kernel does. The variants are kept in @llvm.compiler.used.
; RUN: %opt -p reverse-mode --fn f --activity dup,dup --libmvec bd %s | %filecheck %s
; RUN: %opt -p forward-mode --fn f --activity dup,dup --libmvec d %s | %filecheck %s --check-prefix=FWD
; RUN: %opt -p reverse-mode --fn f --activity dup,dup %s | %filecheck %s --check-prefix=NONE

define void @f(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %xi = load double, ptr %px, align 8
  %s = call double @llvm.sin.f64(double %xi)
  %p = call double @llvm.pow.f64(double %xi, double %s)
  %py = getelementptr double, ptr %y, i64 %i
  store double %p, ptr %py, align 8
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
declare double @llvm.sin.f64(double)
declare double @llvm.pow.f64(double, double)

; CHECK-LABEL: define void @grad(
; CHECK: %s = call double @llvm.sin.f64(double %xi){{$}}
; CHECK: %p = call double @llvm.pow.f64(double %xi, double %s){{$}}
; CHECK: call double @llvm.pow.f64({{.*}}) "vector-function-abi-variant"="_ZGV_LLVM_N2vv_llvm.pow.f64(_ZGVbN2vv_pow),_ZGV_LLVM_N4vv_llvm.pow.f64(_ZGVdN4vv_pow)"
; CHECK: call double @llvm.log.f64({{.*}}) "vector-function-abi-variant"="_ZGV_LLVM_N2v_llvm.log.f64(_ZGVbN2v_log),_ZGV_LLVM_N4v_llvm.log.f64(_ZGVdN4v_log)"
; CHECK: call double @llvm.cos.f64({{.*}}) "vector-function-abi-variant"="_ZGV_LLVM_N2v_llvm.cos.f64(_ZGVbN2v_cos),_ZGV_LLVM_N4v_llvm.cos.f64(_ZGVdN4v_cos)"
; CHECK-DAG: declare <4 x double> @_ZGVdN4v_cos(<4 x double>)
; CHECK-DAG: declare <2 x double> @_ZGVbN2vv_pow(<2 x double>, <2 x double>)
; CHECK-DAG: @llvm.compiler.used = appending global [6 x ptr] [{{.*}}ptr @_ZGVdN4v_cos], section "llvm.metadata"

; FWD-LABEL: define void @fwd(
; FWD: %s = call double @llvm.sin.f64(double %xi){{$}}
; FWD-NEXT: call double @llvm.cos.f64(double %xi) "vector-function-abi-variant"="_ZGV_LLVM_N4v_llvm.cos.f64(_ZGVdN4v_cos)"
; FWD: %p = call double @llvm.pow.f64(double %xi, double %s){{$}}
; FWD: @llvm.compiler.used = appending global [3 x ptr]

; NONE-NOT: vector-function-abi-variant
; NONE-NOT: llvm.compiler.used
