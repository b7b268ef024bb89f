; The launch records of a gradient's parallel loops, kept between calls (launch_pool.py says how).

define internal ptr @enzpy.pool.take(ptr %slot) {
entry:
  %p = atomicrmw xchg ptr %slot, ptr null acq_rel
  ret ptr %p
}

define internal void @enzpy.pool.each(ptr %pool, i64 %n, i64 %hook) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %more = icmp slt i64 %i, %n
  br i1 %more, label %each, label %end
each:
  %at = getelementptr ptr, ptr %pool, i64 %i
  %slotp = getelementptr i8, ptr %at, i64 16
  %r = load ptr, ptr %slotp
  %has = icmp ne ptr %r, null
  br i1 %has, label %callit, label %next
callit:
  %hdr = getelementptr i8, ptr %r, i64 %hook
  %fn = load ptr, ptr %hdr
  call void %fn(ptr %r)
  br label %next
next:
  %i1 = add i64 %i, 1
  br label %loop
end:
  ret void
}

define internal void @enzpy.pool.drop(ptr %pool) {
entry:
  %none = icmp eq ptr %pool, null
  br i1 %none, label %done, label %start
start:
  %n = load i64, ptr %pool
  call void @enzpy.pool.each(ptr %pool, i64 %n, i64 -32)
  call void @free(ptr %pool)
  br label %done
done:
  ret void
}

define internal void @enzpy.pool.park(ptr %slot, ptr %pool, i64 %used, i1 %failed) {
entry:
  %none = icmp eq ptr %pool, null
  br i1 %none, label %done, label %check
check:
  br i1 %failed, label %fail, label %put
fail:
  call void @enzpy.pool.each(ptr %pool, i64 %used, i64 -24)
  br label %put
put:
  %old = atomicrmw xchg ptr %slot, ptr %pool acq_rel
  call void @enzpy.pool.drop(ptr %old)
  br label %done
done:
  ret void
}

define internal void @enzpy.pool.release(ptr %slot) {
entry:
  %old = atomicrmw xchg ptr %slot, ptr null acq_rel
  call void @enzpy.pool.drop(ptr %old)
  ret void
}

define internal ptr @enzpy.pool.record(ptr %poolp, i64 %i, i64 %size, ptr %drop, ptr %fail) {
entry:
  %pool0 = load ptr, ptr %poolp
  %nopool = icmp eq ptr %pool0, null
  br i1 %nopool, label %grow, label %cap
cap:
  %capp = getelementptr i8, ptr %pool0, i64 8
  %c = load i64, ptr %capp
  %fits = icmp slt i64 %i, %c
  br i1 %fits, label %have, label %grow
grow:
  %oldcap = phi i64 [ 0, %entry ], [ %c, %cap ]
  %c2 = shl i64 %oldcap, 1
  %need = add i64 %i, 8
  %big = icmp sgt i64 %c2, %need
  %newcap = select i1 %big, i64 %c2, i64 %need
  %bytes0 = mul i64 %newcap, 8
  %bytes = add i64 %bytes0, 16
  %new = call ptr @malloc(i64 %bytes)
  call void @llvm.memset.p0.i64(ptr %new, i8 0, i64 %bytes, i1 false)
  br i1 %nopool, label %fresh, label %move
move:
  %oldn = load i64, ptr %pool0
  %oldbytes0 = mul i64 %oldn, 8
  %oldbytes = add i64 %oldbytes0, 16
  call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %pool0, i64 %oldbytes, i1 false)
  call void @free(ptr %pool0)
  br label %fresh
fresh:
  %newcapp = getelementptr i8, ptr %new, i64 8
  store i64 %newcap, ptr %newcapp
  store ptr %new, ptr %poolp
  br label %have
have:
  %pool = phi ptr [ %pool0, %cap ], [ %new, %fresh ]
  %n = load i64, ptr %pool
  %beyond = icmp sge i64 %i, %n
  br i1 %beyond, label %count, label %look
count:
  %n1 = add i64 %i, 1
  store i64 %n1, ptr %pool
  br label %look
look:
  %at0 = getelementptr ptr, ptr %pool, i64 %i
  %at = getelementptr i8, ptr %at0, i64 16
  %r = load ptr, ptr %at
  %has = icmp ne ptr %r, null
  br i1 %has, label %same, label %make
same:
  %hdr = getelementptr i8, ptr %r, i64 -32
  %rdrop = load ptr, ptr %hdr
  %sizep = getelementptr i8, ptr %r, i64 -16
  %rsize = load i64, ptr %sizep
  %d_ok = icmp eq ptr %rdrop, %drop
  %s_ok = icmp eq i64 %rsize, %size
  %ok = and i1 %d_ok, %s_ok
  br i1 %ok, label %reuse, label %stale
stale:
  call void %rdrop(ptr %r)
  br label %make
make:
  %total = add i64 %size, 32
  %blk = call ptr @malloc(i64 %total)
  call void @llvm.memset.p0.i64(ptr %blk, i8 0, i64 %total, i1 false)
  store ptr %drop, ptr %blk
  %failp = getelementptr i8, ptr %blk, i64 8
  store ptr %fail, ptr %failp
  %szp = getelementptr i8, ptr %blk, i64 16
  store i64 %size, ptr %szp
  %rec = getelementptr i8, ptr %blk, i64 32
  store ptr %rec, ptr %at
  br label %reuse
reuse:
  %out = phi ptr [ %r, %same ], [ %rec, %make ]
  ret ptr %out
}

define internal ptr @enzpy.pool.copy(ptr %kept, i64 %nbytes) {
entry:
  %blk = load ptr, ptr %kept
  %has = icmp ne ptr %blk, null
  br i1 %has, label %check, label %make
check:
  %cap = load i64, ptr %blk
  %fits = icmp sge i64 %cap, %nbytes
  br i1 %fits, label %zero, label %drop
drop:
  call void @free(ptr %blk)
  br label %make
make:
  %total = add i64 %nbytes, 24
  %new = call ptr @malloc(i64 %total)
  store i64 %nbytes, ptr %new
  store ptr %new, ptr %kept
  br label %zero
zero:
  %b = phi ptr [ %blk, %check ], [ %new, %make ]
  %data = getelementptr i8, ptr %b, i64 16
  call void @llvm.memset.p0.i64(ptr %data, i8 0, i64 %nbytes, i1 false)
  ret ptr %data
}

declare ptr @malloc(i64)
declare void @free(ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
