; Privatised shadows in a parallel loop (transforms/reverse/parallel/parallel_private.py): y[i] = x[i] *
; x[i+1] reads x at neighbouring indices, so several iterations add into one element of x's
; shadow. x is read-only and its extent is known, so each task may add into a copy of its own
; (runtime/launch_pool.ll's enzpy.pool.copy), summed in order after the launch
; (runtime/parfor_sum.ll). By default the copies are chosen by size at run time (the
; loop's iterations: runtime/parfor_iterations.ll) beside a twin task with atomic adds;
; --parallel deterministic keeps only the copies, --parallel atomic only the atomic adds.
; RUN: %opt -p reverse-mode --activity dup,dup,const,const,const --launcher parallel_for,get_thread_id --noalias --extents 0=2.3:4:f64 %s | %filecheck %s
; RUN: %opt -p reverse-mode --activity dup,dup,const,const,const --launcher parallel_for,get_thread_id --noalias --extents 0=2.3:4:f64 --parallel deterministic %s | %filecheck %s --check-prefix=DET
; RUN: %opt -p reverse-mode --activity dup,dup,const,const,const --launcher parallel_for,get_thread_id --noalias --extents 0=2.3:4:f64 --parallel atomic %s | %filecheck %s --check-prefix=ATOMIC

define i32 @f(ptr noalias %x, ptr noalias %y, i64 %n, i64 %stride, i64 %size) {
entry:
  %sched = alloca [2 x i64], align 8
  %args = alloca [3 x ptr], align 8
  %shape = alloca [4 x i64], align 8
  %steps = alloca [6 x i64], align 8
  %last = add i64 %n, -2
  store i64 0, ptr %sched, align 8
  %stop = getelementptr i8, ptr %sched, i64 8
  store i64 %last, ptr %stop, align 8
  store ptr %sched, ptr %args, align 8
  %a1 = getelementptr i8, ptr %args, i64 8
  store ptr %x, ptr %a1, align 8
  %a2 = getelementptr i8, ptr %args, i64 16
  store ptr %y, ptr %a2, align 8
  store i64 1, ptr %shape, align 8
  %s1 = getelementptr i8, ptr %shape, i64 8
  store i64 2, ptr %s1, align 8
  %s2 = getelementptr i8, ptr %shape, i64 16
  store i64 %n, ptr %s2, align 8
  %s3 = getelementptr i8, ptr %shape, i64 24
  store i64 %n, ptr %s3, align 8
  store i64 16, ptr %steps, align 8
  %t1 = getelementptr i8, ptr %steps, i64 8
  call void @llvm.memset.p0.i64(ptr %t1, i8 0, i64 16, i1 false)
  %t3 = getelementptr i8, ptr %steps, i64 24
  store i64 8, ptr %t3, align 8
  %t4 = getelementptr i8, ptr %steps, i64 32
  store i64 8, ptr %t4, align 8
  %t5 = getelementptr i8, ptr %steps, i64 40
  store i64 8, ptr %t5, align 8
  %threads = call i64 @get_num_threads()
  call void @parallel_for(ptr @body, ptr %args, ptr %shape, ptr %steps, ptr null, i64 3, i64 3, i64 %threads)
  ret i32 0
}

define internal void @body(ptr %args, ptr %dims, ptr %steps, ptr %data) {
entry:
  %count = load i64, ptr %dims, align 8
  %sched = load ptr, ptr %args, align 8
  %sstep = load i64, ptr %steps, align 8
  %p1 = getelementptr i8, ptr %args, i64 8
  %x = load ptr, ptr %p1, align 8
  %q1 = getelementptr i8, ptr %steps, i64 8
  %xstep = load i64, ptr %q1, align 8
  %p2 = getelementptr i8, ptr %args, i64 16
  %y = load ptr, ptr %p2, align 8
  %q2 = getelementptr i8, ptr %steps, i64 16
  %ystep = load i64, ptr %q2, align 8
  %any = icmp sgt i64 %count, 0
  br i1 %any, label %entries, label %done
entries:
  %e = phi i64 [ 0, %entry ], [ %e1, %next ]
  %so = mul i64 %e, %sstep
  %entry.sched = getelementptr i8, ptr %sched, i64 %so
  %xo = mul i64 %e, %xstep
  %xe = getelementptr i8, ptr %x, i64 %xo
  %yo = mul i64 %e, %ystep
  %ye = getelementptr i8, ptr %y, i64 %yo
  %start = load i64, ptr %entry.sched, align 8
  %stopp = getelementptr i8, ptr %entry.sched, i64 8
  %stop = load i64, ptr %stopp, align 8
  %len = sub i64 %stop, %start
  %empty = icmp ugt i64 %len, 9223372036854775806
  br i1 %empty, label %next, label %pre
pre:
  %trips = add i64 %len, 1
  br label %loop
loop:
  %i = phi i64 [ %start, %pre ], [ %i1, %loop ]
  %k = phi i64 [ %trips, %pre ], [ %k1, %loop ]
  %k1 = add i64 %k, -1
  %i1 = add i64 %i, 1
  %px = getelementptr double, ptr %xe, i64 %i
  %a = load double, ptr %px, align 8
  %i2 = add i64 %i, 1
  %px2 = getelementptr double, ptr %xe, i64 %i2
  %a2 = load double, ptr %px2, align 8
  %m = fmul double %a, %a2
  %py = getelementptr double, ptr %ye, i64 %i
  store double %m, ptr %py, align 8
  %more = icmp ugt i64 %k, 1
  br i1 %more, label %loop, label %next
next:
  %e1 = add i64 %e, 1
  %last = icmp eq i64 %e1, %count
  br i1 %last, label %done, label %entries
done:
  ret void
}

declare i64 @get_num_threads()
declare i64 @get_thread_id()
declare void @parallel_for(ptr, ptr, ptr, ptr, ptr, i64, i64, i64)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; CHECK-LABEL: define i32 @grad(
; CHECK: call i64 @enzpy.parfor.iterations(
; CHECK: call void @parallel_for(ptr %{{.*}}, ptr %{{.*}}
; CHECK: call void @enzpy.parfor.sum.f64(
; CHECK-LABEL: define internal void @enzpy.parfor.body.1.task.fwd.0(
; CHECK: call ptr @enzpy.pool.copy(
; CHECK-LABEL: define internal i32 @enzpy.parfor.body.1.grad.1(
; CHECK: atomicrmw fadd ptr
; CHECK-LABEL: define internal void @enzpy.parfor.body.1.task.fwd.1(
; CHECK-LABEL: define internal void @enzpy.parfor.sum.f64(

; DET-LABEL: define i32 @grad(
; DET: call void @enzpy.parfor.sum.f64(
; DET-NOT: atomicrmw fadd
; DET-NOT: task.fwd.1

; ATOMIC-LABEL: define i32 @grad(
; ATOMIC-NOT: enzpy.parfor.sum
; ATOMIC: atomicrmw fadd ptr
