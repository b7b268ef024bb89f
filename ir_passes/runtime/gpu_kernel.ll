; The kernel around a GPU kernel's derivative (transforms/gpu_kernel.py), in pieces: `kernel`
; defines @NAME(PARAMS), whose entry block runs LINES and calls @NAME.body(BODY_ARGS), after the
; shared globals GLOBALS; `thread_position` computes %t, the thread's index in its block, and %n,
; the block's size; `shared_shadow` is the shadow J of a shared array (COUNT elements of ELEMENT,
; aligned to ALIGN), which `zero_loop` zeroes, thread t the elements t, t + n, t + 2n, ... (PTR
; its address, ZERO the element's zero, PREV the block before), `scratch` puts the kernel's
; %scratch parameter in shared memory for the deterministic block sums (thread 0), and `barrier`
; waits for all.

; -- kernel
{{GLOBALS}}
define ptx_kernel void @"{{NAME}}"({{PARAMS}}) {
entry:
{{LINES}}
  call void @"{{NAME}}.body"({{BODY_ARGS}})
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)

; -- thread_position
  %tid.x = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %tid.y = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tid.z = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %ntid.x = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ntid.y = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %ntid.z = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %zy = mul i32 %tid.z, %ntid.y
  %row = add i32 %zy, %tid.y
  %rowx = mul i32 %row, %ntid.x
  %t = add i32 %rowx, %tid.x
  %nxy = mul i32 %ntid.x, %ntid.y
  %n = mul i32 %nxy, %ntid.z

; -- shared_shadow
@"{{NAME}}.shared.{{J}}" = internal addrspace(3) global [{{COUNT}} x {{ELEMENT}}] undef, align {{ALIGN}}

; -- zero_loop
  br label %zero.{{J}}
zero.{{J}}:
  %i.{{J}} = phi i32 [ %t, %{{PREV}} ], [ %i.{{J}}.next, %zero.{{J}}.body ]
  %more.{{J}} = icmp ult i32 %i.{{J}}, {{COUNT}}
  br i1 %more.{{J}}, label %zero.{{J}}.body, label %zero.{{J}}.done
zero.{{J}}.body:
  %at.{{J}} = getelementptr {{ELEMENT}}, ptr {{PTR}}, i32 %i.{{J}}
  store {{ELEMENT}} {{ZERO}}, ptr %at.{{J}}
  %i.{{J}}.next = add i32 %i.{{J}}, %n
  br label %zero.{{J}}
zero.{{J}}.done:

; -- barrier
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)

; -- scratch
  %first = icmp eq i32 %t, 0
  br i1 %first, label %scratch.set, label %scratch.done
scratch.set:
  store ptr %scratch, ptr addrspacecast (ptr addrspace(3) @enzpy.block_sum.det.scratch to ptr), align 8
  br label %scratch.done
scratch.done:

; -- dynamic_size
  %dyn.size = trunc i64 %dyn.bytes to i32

; -- dynamic_shadows
; a dynamic shared array's shadows: %dyn.count elements of P bytes at the region's start, each
; shadow (elements of S bytes) from a 16-byte boundary after them, %dyn.step bytes apart
  %dyn.count.64 = udiv i64 %dyn.bytes, {{P}}
  %dyn.count = trunc i64 %dyn.count.64 to i32
  %dyn.end = add i64 %dyn.bytes, 15
  %dyn.start = and i64 %dyn.end, -16
  %dyn.bytes.s = mul i64 %dyn.count.64, {{S}}
  %dyn.bytes.s.end = add i64 %dyn.bytes.s, 15
  %dyn.step = and i64 %dyn.bytes.s.end, -16
  %dyn.base = addrspacecast ptr addrspace(3) @{{SYMBOL}} to ptr

; -- dynamic_lane
  %dyn.skip.{{L}} = mul i64 %dyn.step, {{L}}
  %dyn.at.{{L}} = add i64 %dyn.start, %dyn.skip.{{L}}
  %dyn.shadow.{{L}} = getelementptr i8, ptr %dyn.base, i64 %dyn.at.{{L}}
