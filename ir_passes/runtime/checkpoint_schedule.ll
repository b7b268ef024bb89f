; The checkpoint schedule (transforms/reverse/loops/checkpoint/schedule.py describes the frame and
; the placement). TAKE and PUT swap the frame with the pool: an atomic exchange, or (frames
; fresh per call: `unpooled`) a select that keeps none.

define internal ptr @enzpy.ckpt.frame(i64 %S, i64 %budget, ptr %pool) {
entry:
  %tiny = icmp ult i64 %S, 1
  %S1 = select i1 %tiny, i64 1, i64 %S
  %q = udiv i64 %budget, %S1
  %c0 = sub i64 %q, 2
  %few = icmp slt i64 %c0, 2
  %c = select i1 %few, i64 2, i64 %c0
  %parked = {{TAKE}}
  %none = icmp eq ptr %parked, null
  br i1 %none, label %fresh, label %reuse
fresh:
  %new = call ptr @malloc(i64 104)
  call void @llvm.memset.p0.i64(ptr %new, i8 0, i64 104, i1 false)
  br label %init
reuse:
  %oldcap = call i64 @enzpy.ckpt.get(ptr %parked, i64 48)
  %oldS = call i64 @enzpy.ckpt.get(ptr %parked, i64 40)
  %bytes = mul i64 %oldcap, %oldS
  %fit = udiv i64 %bytes, %S1
  %less = icmp ult i64 %fit, %oldcap
  %cap0 = select i1 %less, i64 %fit, i64 %oldcap
  %over = icmp ugt i64 %cap0, %c
  %cap = select i1 %over, i64 %c, i64 %cap0
  call void @enzpy.ckpt.set(ptr %parked, i64 48, i64 %cap)
  br label %init
init:
  %f = phi ptr [ %new, %fresh ], [ %parked, %reuse ]
  call void @enzpy.ckpt.set(ptr %f, i64 16, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 24, i64 %c)
  call void @enzpy.ckpt.set(ptr %f, i64 32, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 40, i64 %S1)
  call void @enzpy.ckpt.set(ptr %f, i64 56, i64 1)
  call void @enzpy.ckpt.set(ptr %f, i64 64, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 72, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 80, i64 %c)
  call void @enzpy.ckpt.set(ptr %f, i64 88, i64 0)
  call void @enzpy.ckpt.set(ptr %f, i64 96, i64 0)
  ret ptr %f
}

define internal void @enzpy.ckpt.trips(ptr %f, i64 %n) {
entry:
  %known = icmp sgt i64 %n, 0
  %v = select i1 %known, i64 %n, i64 0
  call void @enzpy.ckpt.set(ptr %f, i64 88, i64 %v)
  ret void
}

define internal void @enzpy.ckpt.aim(ptr %f, i64 %k) {
entry:
  %n = call i64 @enzpy.ckpt.get(ptr %f, i64 88)
  %known = icmp sgt i64 %n, 0
  br i1 %known, label %plan, label %done
plan:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %c = call i64 @enzpy.ckpt.get(ptr %f, i64 24)
  %full = icmp sge i64 %top, %c
  %end = sub i64 %n, 1
  %past = icmp sge i64 %k, %end
  %stop = or i1 %full, %past
  br i1 %stop, label %none, label %next
next:
  %m = call i64 @enzpy.ckpt.next(ptr %f, i64 %k, i64 %end)
  call void @enzpy.ckpt.set(ptr %f, i64 96, i64 %m)
  br label %done
none:
  call void @enzpy.ckpt.set(ptr %f, i64 96, i64 -1)
  br label %done
done:
  ret void
}

define internal i64 @enzpy.ckpt.get(ptr %f, i64 %field) {
entry:
  %p = getelementptr i8, ptr %f, i64 %field
  %v = load i64, ptr %p
  ret i64 %v
}

define internal void @enzpy.ckpt.set(ptr %f, i64 %field, i64 %v) {
entry:
  %p = getelementptr i8, ptr %f, i64 %field
  store i64 %v, ptr %p
  ret void
}

define internal void @enzpy.ckpt.add(ptr %f, i64 %field, i64 %v) {
entry:
  %p = getelementptr i8, ptr %f, i64 %field
  %old = load i64, ptr %p
  %new = add i64 %old, %v
  store i64 %new, ptr %p
  ret void
}

define internal ptr @enzpy.ckpt.push(ptr %f, i64 %k) {
entry:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %cap = call i64 @enzpy.ckpt.get(ptr %f, i64 48)
  %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
  %pbuf = getelementptr i8, ptr %f, i64 0
  %ppos = getelementptr i8, ptr %f, i64 8
  %full = icmp uge i64 %top, %cap
  br i1 %full, label %grow, label %put
grow:
  %c = call i64 @enzpy.ckpt.get(ptr %f, i64 24)
  %dbl = shl i64 %cap, 1
  %zero = icmp eq i64 %cap, 0
  %want = select i1 %zero, i64 4, i64 %dbl
  %over = icmp ugt i64 %want, %c
  %ncap = select i1 %over, i64 %c, i64 %want
  %bytes = mul i64 %ncap, %S
  %nbuf = call ptr @malloc(i64 %bytes)
  %obuf = load ptr, ptr %pbuf
  %used = mul i64 %top, %S
  call void @llvm.memcpy.p0.p0.i64(ptr %nbuf, ptr %obuf, i64 %used, i1 false)
  call void @free(ptr %obuf)
  store ptr %nbuf, ptr %pbuf
  %pbytes = mul i64 %ncap, 8
  %npos = call ptr @malloc(i64 %pbytes)
  %opos = load ptr, ptr %ppos
  %pused = mul i64 %top, 8
  call void @llvm.memcpy.p0.p0.i64(ptr %npos, ptr %opos, i64 %pused, i1 false)
  call void @free(ptr %opos)
  store ptr %npos, ptr %ppos
  call void @enzpy.ckpt.set(ptr %f, i64 48, i64 %ncap)
  br label %put
put:
  %pos = load ptr, ptr %ppos
  %pk = getelementptr i64, ptr %pos, i64 %top
  store i64 %k, ptr %pk
  %buf = load ptr, ptr %pbuf
  %off = mul i64 %top, %S
  %slot = getelementptr i8, ptr %buf, i64 %off
  %top1 = add i64 %top, 1
  call void @enzpy.ckpt.set(ptr %f, i64 16, i64 %top1)
  %peak = call i64 @enzpy.ckpt.get(ptr %f, i64 72)
  %higher = icmp ugt i64 %top1, %peak
  %npeak = select i1 %higher, i64 %top1, i64 %peak
  call void @enzpy.ckpt.set(ptr %f, i64 72, i64 %npeak)
  ret ptr %slot
}

define internal void @enzpy.ckpt.thin(ptr %f) {
entry:
  %c = call i64 @enzpy.ckpt.get(ptr %f, i64 24)
  %half = lshr i64 %c, 1
  %tiny = icmp ult i64 %half, 2
  %lim = select i1 %tiny, i64 2, i64 %half
  call void @enzpy.ckpt.set(ptr %f, i64 80, i64 %lim)
  %d = call i64 @enzpy.ckpt.get(ptr %f, i64 56)
  %d2 = shl i64 %d, 1
  call void @enzpy.ckpt.set(ptr %f, i64 56, i64 %d2)
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
  %pbuf = getelementptr i8, ptr %f, i64 0
  %buf = load ptr, ptr %pbuf
  %ppos = getelementptr i8, ptr %f, i64 8
  %pos = load ptr, ptr %ppos
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %j = phi i64 [ 0, %entry ], [ %j2, %next ]
  %more = icmp ult i64 %i, %top
  br i1 %more, label %body, label %done
body:
  %pi = getelementptr i64, ptr %pos, i64 %i
  %at = load i64, ptr %pi
  %r = urem i64 %at, %d2
  %keep = icmp eq i64 %r, 0
  br i1 %keep, label %move, label %next
move:
  %pj = getelementptr i64, ptr %pos, i64 %j
  store i64 %at, ptr %pj
  %soff = mul i64 %i, %S
  %src = getelementptr i8, ptr %buf, i64 %soff
  %doff = mul i64 %j, %S
  %dst = getelementptr i8, ptr %buf, i64 %doff
  %same = icmp eq i64 %i, %j
  br i1 %same, label %moved, label %copy
copy:
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %src, i64 %S, i1 false)
  br label %moved
moved:
  %j1 = add i64 %j, 1
  br label %next
next:
  %j2 = phi i64 [ %j1, %moved ], [ %j, %body ]
  %i1 = add i64 %i, 1
  br label %loop
done:
  call void @enzpy.ckpt.set(ptr %f, i64 16, i64 %j)
  ret void
}

define internal i1 @enzpy.ckpt.wants(ptr %f, i64 %k) {
entry:
  %n = call i64 @enzpy.ckpt.get(ptr %f, i64 88)
  %known = icmp sgt i64 %n, 0
  br i1 %known, label %aimed, label %online
aimed:
  %aim = call i64 @enzpy.ckpt.get(ptr %f, i64 96)
  %at = icmp eq i64 %k, %aim
  ret i1 %at
online:
  %d = call i64 @enzpy.ckpt.get(ptr %f, i64 56)
  %r = urem i64 %k, %d
  %on = icmp eq i64 %r, 0
  br i1 %on, label %check, label %no
check:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %lim = call i64 @enzpy.ckpt.get(ptr %f, i64 80)
  %full = icmp uge i64 %top, %lim
  br i1 %full, label %thin, label %yes
thin:
  call void @enzpy.ckpt.thin(ptr %f)
  %d2 = call i64 @enzpy.ckpt.get(ptr %f, i64 56)
  %r2 = urem i64 %k, %d2
  %on2 = icmp eq i64 %r2, 0
  br i1 %on2, label %check, label %no
yes:
  ret i1 true
no:
  ret i1 false
}

define internal ptr @enzpy.ckpt.latest(ptr %f, i64 %t) {
entry:
  %ppos = getelementptr i8, ptr %f, i64 8
  %pos = load ptr, ptr %ppos
  br label %loop
loop:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %last = sub i64 %top, 1
  %pl = getelementptr i64, ptr %pos, i64 %last
  %at = load i64, ptr %pl
  %after = icmp sgt i64 %at, %t
  br i1 %after, label %pop, label %found
pop:
  call void @enzpy.ckpt.set(ptr %f, i64 16, i64 %last)
  br label %loop
found:
  %S = call i64 @enzpy.ckpt.get(ptr %f, i64 40)
  %pbuf = getelementptr i8, ptr %f, i64 0
  %buf = load ptr, ptr %pbuf
  %off = mul i64 %last, %S
  %slot = getelementptr i8, ptr %buf, i64 %off
  ret ptr %slot
}

define internal i64 @enzpy.ckpt.latest_step(ptr %f) {
entry:
  %ppos = getelementptr i8, ptr %f, i64 8
  %pos = load ptr, ptr %ppos
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %last = sub i64 %top, 1
  %pl = getelementptr i64, ptr %pos, i64 %last
  %at = load i64, ptr %pl
  ret i64 %at
}

define internal i64 @enzpy.ckpt.split(i64 %l, i64 %s) {
entry:
  br label %grow
grow:
  %r = phi i64 [ 0, %entry ], [ %r1, %more ]
  %beta = phi i64 [ 1, %entry ], [ %beta1, %more ]
  %prev = phi i64 [ 0, %entry ], [ %beta, %more ]
  %enough = icmp sge i64 %beta, %l
  br i1 %enough, label %done, label %more
more:
  %r1 = add i64 %r, 1
  %sr = add i64 %s, %r1
  %t = mul i64 %beta, %sr
  %beta1 = udiv i64 %t, %r1
  br label %grow
done:
  %right = sub i64 %beta, %prev
  %m0 = sub i64 %l, %right
  %low = icmp slt i64 %m0, 1
  %m1 = select i1 %low, i64 1, i64 %m0
  %lm1 = sub i64 %l, 1
  %high = icmp sgt i64 %m1, %lm1
  %m = select i1 %high, i64 %lm1, i64 %m1
  ret i64 %m
}

define internal i64 @enzpy.ckpt.next(ptr %f, i64 %p, i64 %t) {
entry:
  %top = call i64 @enzpy.ckpt.get(ptr %f, i64 16)
  %c = call i64 @enzpy.ckpt.get(ptr %f, i64 24)
  %free = sub i64 %c, %top
  %t1 = add i64 %t, 1
  %l = sub i64 %t1, %p
  %none = icmp sle i64 %free, 0
  br i1 %none, label %all, label %split
all:
  ret i64 %t
split:
  %held = add i64 %free, 1
  %over = icmp sgt i64 %held, %l
  %s = select i1 %over, i64 %l, i64 %held
  %m = call i64 @enzpy.ckpt.split(i64 %l, i64 %s)
  %at = add i64 %p, %m
  ret i64 %at
}

define internal void @enzpy.ckpt.release(ptr %f, ptr %pool) {
entry:
  %old = {{PUT}}
  %none = icmp eq ptr %old, null
  br i1 %none, label %done, label %drop
drop:
  call void @enzpy.ckpt.drop(ptr %old)
  br label %done
done:
  ret void
}

define internal void @enzpy.ckpt.drop(ptr %f) {
entry:
  %pbuf = getelementptr i8, ptr %f, i64 0
  %buf = load ptr, ptr %pbuf
  call void @free(ptr %buf)
  %ppos = getelementptr i8, ptr %f, i64 8
  %pos = load ptr, ptr %ppos
  call void @free(ptr %pos)
  call void @free(ptr %f)
  ret void
}

declare void @enzpy.ckpt.fail()
declare ptr @malloc(i64)
declare void @free(ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
