; Fixed-order block sums for deterministic gradients (block_sum.py): TYPE the float type, SUFFIX
; its name, ALIGN its bytes. The kernel's scratch (its address in @enzpy.block_sum.det.scratch,
; set by the kernel before its first barrier) holds a ticket counter (i32, byte 0) and, from
; byte 16, one 8-byte slot per block for each site: site k of block b at 16 + 8 (k blocks + b).

@enzpy.block_sum.det.scratch = internal addrspace(3) global [1 x ptr] undef, align 8
@enzpy.block_sum.det.buffer.{{SUFFIX}} = internal addrspace(3) global [1024 x {{TYPE}}] undef, align 8

; Every thread of the block calls it with its value (all of them: it has barriers): the block
; adds the values in shared memory (a tree, as block_sum_nvptx.ll) and thread 0 stores the sum
; in the block's slot of `site`.
define internal void @enzpy.block_sum.det.nvptx.{{SUFFIX}}(i32 %site, {{TYPE}} %v) {
entry:
  %t = call i32 @enzpy.block_sum.det.thread()
  %n = call i32 @enzpy.block_sum.det.threads()
  %buf = addrspacecast ptr addrspace(3) @enzpy.block_sum.det.buffer.{{SUFFIX}} to ptr
  %mine = getelementptr {{TYPE}}, ptr %buf, i32 %t
  store {{TYPE}} %v, ptr %mine, align {{ALIGN}}
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  br label %step
step:
  %s = phi i32 [ 512, %entry ], [ %s.next, %joined ]
  %low = icmp ult i32 %t, %s
  %j = add i32 %t, %s
  %there = icmp ult i32 %j, %n
  %add = and i1 %low, %there
  br i1 %add, label %sum, label %joined
sum:
  %a = load {{TYPE}}, ptr %mine, align {{ALIGN}}
  %other = getelementptr {{TYPE}}, ptr %buf, i32 %j
  %b = load {{TYPE}}, ptr %other, align {{ALIGN}}
  %ab = fadd {{TYPE}} %a, %b
  store {{TYPE}} %ab, ptr %mine, align {{ALIGN}}
  br label %joined
joined:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %s.next = lshr i32 %s, 1
  %done = icmp eq i32 %s.next, 0
  br i1 %done, label %out, label %step
out:
  %first = icmp eq i32 %t, 0
  br i1 %first, label %publish, label %end
publish:
  %total = load {{TYPE}}, ptr %buf, align {{ALIGN}}
  %block = call i32 @enzpy.block_sum.det.block()
  %slot = call ptr @enzpy.block_sum.det.slot(i32 %site, i32 %block)
  store {{TYPE}} %total, ptr %slot, align {{ALIGN}}
  br label %end
end:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  ret void
}

; In the block that finished last (`last`, from det.last), the slots of `site` summed in block
; order, added into *dst; elsewhere nothing.
define internal void @enzpy.block_sum.det.total.nvptx.{{SUFFIX}}(ptr %dst, i32 %site, i1 %last) {
entry:
  br i1 %last, label %start, label %done
start:
  %n = call i32 @enzpy.block_sum.det.blocks()
  br label %loop
loop:
  %j = phi i32 [ 0, %start ], [ %j.next, %loop ]
  %s = phi {{TYPE}} [ -0.0, %start ], [ %s.next, %loop ]
  %slot = call ptr @enzpy.block_sum.det.slot(i32 %site, i32 %j)
  %x = load volatile {{TYPE}}, ptr %slot, align {{ALIGN}}
  %s.next = fadd {{TYPE}} %s, %x
  %j.next = add i32 %j, 1
  %more = icmp ult i32 %j.next, %n
  br i1 %more, label %loop, label %add
add:
  %old = load {{TYPE}}, ptr %dst, align {{ALIGN}}
  %new = fadd {{TYPE}} %old, %s.next
  store {{TYPE}} %new, ptr %dst, align {{ALIGN}}
  br label %done
done:
  ret void
}

; Called by every thread after all sites' sums: true in thread 0 of the block that takes the
; last ticket (the slots of every block are written then), which resets the counter for the
; next launch; false elsewhere.
define internal i1 @enzpy.block_sum.det.last.nvptx() {
entry:
  %t = call i32 @enzpy.block_sum.det.thread()
  %first = icmp eq i32 %t, 0
  br i1 %first, label %ticket, label %no
ticket:
  %at = addrspacecast ptr addrspace(3) @enzpy.block_sum.det.scratch to ptr
  %scratch = load ptr, ptr %at, align 8
  call void @llvm.nvvm.membar.gl()
  %old = atomicrmw add ptr %scratch, i32 1 monotonic, align 4
  %n = call i32 @enzpy.block_sum.det.blocks()
  %n.1 = sub i32 %n, 1
  %last = icmp eq i32 %old, %n.1
  br i1 %last, label %reset, label %no
reset:
  store i32 0, ptr %scratch, align 4
  call void @llvm.nvvm.membar.gl()
  ret i1 true
no:
  ret i1 false
}

define internal ptr @enzpy.block_sum.det.slot(i32 %site, i32 %block) {
entry:
  %at = addrspacecast ptr addrspace(3) @enzpy.block_sum.det.scratch to ptr
  %scratch = load ptr, ptr %at, align 8
  %n = call i32 @enzpy.block_sum.det.blocks()
  %n.64 = zext i32 %n to i64
  %k = zext i32 %site to i64
  %b = zext i32 %block to i64
  %kn = mul i64 %k, %n.64
  %index = add i64 %kn, %b
  %bytes = mul i64 %index, 8
  %offset = add i64 %bytes, 16
  %slot = getelementptr i8, ptr %scratch, i64 %offset
  ret ptr %slot
}

define internal i32 @enzpy.block_sum.det.thread() {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %zy = mul i32 %tz, %ny
  %row = add i32 %zy, %ty
  %rowx = mul i32 %row, %nx
  %t = add i32 %rowx, %tx
  ret i32 %t
}

define internal i32 @enzpy.block_sum.det.threads() {
entry:
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %nxy = mul i32 %nx, %ny
  %n = mul i32 %nxy, %nz
  ret i32 %n
}

; the block's index in the grid, x fastest
define internal i32 @enzpy.block_sum.det.block() {
entry:
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %bz = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
  %gx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
  %zy = mul i32 %bz, %gy
  %row = add i32 %zy, %by
  %rowx = mul i32 %row, %gx
  %b = add i32 %rowx, %bx
  ret i32 %b
}

define internal i32 @enzpy.block_sum.det.blocks() {
entry:
  %gx = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %gy = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
  %gz = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
  %gxy = mul i32 %gx, %gy
  %n = mul i32 %gxy, %gz
  ret i32 %n
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.z()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.z()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare void @llvm.nvvm.membar.gl()
