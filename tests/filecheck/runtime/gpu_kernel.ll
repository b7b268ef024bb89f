; runtime/gpu_kernel.ll: the pieces of the kernel around a GPU kernel's derivative (transforms/gpu_kernel.py).
; RUN: %runtime gpu_kernel:kernel GLOBALS= NAME=k 'PARAMS=ptr noalias %a0, ptr %x.0' LINES= 'BODY_ARGS=ptr %a0, ptr %x.0' | %filecheck %s --check-prefix=CHECK
; RUN: %runtime gpu_kernel:thread_position  | %filecheck %s --check-prefix=THREAD
; RUN: %runtime gpu_kernel:shared_shadow NAME=k J=0 COUNT=64 ELEMENT=double ALIGN=8 | %filecheck %s --check-prefix=SHARED
; RUN: %runtime gpu_kernel:zero_loop J=1 PREV=zero.0.done COUNT=32 ELEMENT=i32 PTR=@g ZERO=0 | %filecheck %s --check-prefix=ZERO
; RUN: %runtime gpu_kernel:barrier  | %filecheck %s --check-prefix=BARRIER
; RUN: %runtime gpu_kernel:scratch  | %filecheck %s --check-prefix=SCRATCH
; RUN: %runtime gpu_kernel:dynamic_size  | %filecheck %s --check-prefix=DSIZE
; RUN: %runtime gpu_kernel:dynamic_shadows SYMBOL=_cudapy_smem_1 P=4 S=8 | %filecheck %s --check-prefix=DYNAMIC
; RUN: %runtime gpu_kernel:dynamic_lane L=1 | %filecheck %s --check-prefix=LANE

; CHECK-LABEL: define ptx_kernel void @"k"(ptr noalias %a0, ptr %x.0) {
; CHECK: entry:
; CHECK: call void @"k.body"(ptr %a0, ptr %x.0)
; CHECK: ret void
; CHECK: }
; CHECK: declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; CHECK: declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
; CHECK: declare i32 @llvm.nvvm.read.ptx.sreg.tid.z()
; CHECK: declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
; CHECK: declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
; CHECK: declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
; CHECK: declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
; THREAD: %tid.x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
; THREAD: %tid.y = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
; THREAD: %tid.z = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
; THREAD: %ntid.x = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
; THREAD: %ntid.y = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
; THREAD: %ntid.z = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
; THREAD: %zy = mul i32 %tid.z, %ntid.y
; THREAD: %row = add i32 %zy, %tid.y
; THREAD: %rowx = mul i32 %row, %ntid.x
; THREAD: %t = add i32 %rowx, %tid.x
; THREAD: %nxy = mul i32 %ntid.x, %ntid.y
; THREAD: %n = mul i32 %nxy, %ntid.z
; SHARED: @"k.shared.0" = internal addrspace(3) global [64 x double] undef, align 8
; ZERO: br label %zero.1
; ZERO: zero.1:
; ZERO: %i.1 = phi i32 [ %t, %zero.0.done ], [ %i.1.next, %zero.1.body ]
; ZERO: %more.1 = icmp ult i32 %i.1, 32
; ZERO: br i1 %more.1, label %zero.1.body, label %zero.1.done
; ZERO: zero.1.body:
; ZERO: %at.1 = getelementptr i32, ptr @g, i32 %i.1
; ZERO: store i32 0, ptr %at.1
; ZERO: %i.1.next = add i32 %i.1, %n
; ZERO: br label %zero.1
; ZERO: zero.1.done:
; BARRIER: call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
; SCRATCH: %first = icmp eq i32 %t, 0
; SCRATCH: br i1 %first, label %scratch.set, label %scratch.done
; SCRATCH: scratch.set:
; SCRATCH: store ptr %scratch, ptr addrspacecast (ptr addrspace(3) @enzpy.block_sum.det.scratch to ptr), align 8
; SCRATCH: br label %scratch.done
; SCRATCH: scratch.done:
; DSIZE: %dyn.size = trunc i64 %dyn.bytes to i32
; DYNAMIC: %dyn.count.64 = udiv i64 %dyn.bytes, 4
; DYNAMIC: %dyn.count = trunc i64 %dyn.count.64 to i32
; DYNAMIC: %dyn.end = add i64 %dyn.bytes, 15
; DYNAMIC: %dyn.start = and i64 %dyn.end, -16
; DYNAMIC: %dyn.bytes.s = mul i64 %dyn.count.64, 8
; DYNAMIC: %dyn.bytes.s.end = add i64 %dyn.bytes.s, 15
; DYNAMIC: %dyn.step = and i64 %dyn.bytes.s.end, -16
; DYNAMIC: %dyn.base = addrspacecast ptr addrspace(3) @_cudapy_smem_1 to ptr
; LANE: %dyn.skip.1 = mul i64 %dyn.step, 1
; LANE: %dyn.at.1 = add i64 %dyn.start, %dyn.skip.1
; LANE: %dyn.shadow.1 = getelementptr i8, ptr %dyn.base, i64 %dyn.at.1
