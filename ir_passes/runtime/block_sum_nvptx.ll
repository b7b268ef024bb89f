; The block sum of a CUDA block's values (block_sum.py): TYPE the float type, SUFFIX its
; name, ALIGN its bytes.

@enzpy.block_sum.buffer.{{SUFFIX}} = internal addrspace(3) global [1024 x {{TYPE}}] undef, align 8

define internal void @enzpy.block_sum.nvptx.{{SUFFIX}}(ptr %dst, {{TYPE}} %v) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %zy = mul i32 %tz, %ny
  %row = add i32 %zy, %ty
  %rowx = mul i32 %row, %nx
  %t = add i32 %rowx, %tx
  %nxy = mul i32 %nx, %ny
  %n = mul i32 %nxy, %nz
  %buf = addrspacecast ptr addrspace(3) @enzpy.block_sum.buffer.{{SUFFIX}} to ptr
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
  %old = atomicrmw fadd ptr %dst, {{TYPE}} %total monotonic, align {{ALIGN}}
  br label %end
end:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  ret void
}
