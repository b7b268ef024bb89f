"""Helper functions the generated code calls, written in LLVM IR and added on demand.

Those that allocate are written for libc (malloc / realloc / free); heap.rewrite retargets them
to the module's heap. A `%oldbytes` beside each realloc is for heaps without one."""
from __future__ import annotations

from ..ir.parser import parse_module
from .heap import rewrite

# digamma by the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 6, then the asymptotic series.
DIGAMMA = """
define internal double @enzpy.digamma(double %x) {
entry:
  br label %loop
loop:
  %v = phi double [ %x, %entry ], [ %v1, %body ]
  %acc = phi double [ 0.0, %entry ], [ %acc1, %body ]
  %small = fcmp olt double %v, 6.0
  br i1 %small, label %body, label %tail
body:
  %r = fdiv double 1.0, %v
  %acc1 = fsub double %acc, %r
  %v1 = fadd double %v, 1.0
  br label %loop
tail:
  %lg = call double @llvm.log.f64(double %v)
  %inv = fdiv double 1.0, %v
  %inv2 = fmul double %inv, %inv
  %h = fmul double %inv, 0.5
  %p1 = fmul double %inv2, 0xBF95995995995996
  %p2 = fadd double %p1, 0x3F7F07C1F07C1F08
  %p3 = fmul double %p2, %inv2
  %p4 = fadd double %p3, 0xBF71111111111111
  %p5 = fmul double %p4, %inv2
  %p6 = fadd double %p5, 0x3F70410410410410
  %p7 = fmul double %p6, %inv2
  %p8 = fadd double %p7, 0xBF81111111111111
  %p9 = fmul double %p8, %inv2
  %p10 = fadd double %p9, 0x3FB5555555555555
  %ser = fmul double %p10, %inv2
  %a = fsub double %lg, %h
  %b = fsub double %a, %ser
  %res = fadd double %b, %acc
  ret double %res
}
declare double @llvm.log.f64(double)
"""

# reverse of memcpy(dst, src, bytes) over float elements: src_shadow += dst_shadow; dst_shadow = 0
COPY_ADJOINT = """
define internal void @enzpy.copy_adjoint.{S}(ptr %dst, ptr %src, i64 %bytes) {{
entry:
  %n = udiv i64 %bytes, {W}
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %pd = getelementptr {T}, ptr %dst, i64 %i
  %ps = getelementptr {T}, ptr %src, i64 %i
  %d = load {T}, ptr %pd
  %s = load {T}, ptr %ps
  %t = fadd {T} %s, %d
  store {T} %t, ptr %ps
  store {T} 0.0, ptr %pd
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""

# The shadow allocations of one call, so that every one is freed at the end or on an error path.
# A list is {ptr data, i64 count, i64 capacity} in the frame.
ALLOCATION_LIST = """
define internal void @enzpy.push_allocation(ptr %list, ptr %p) {
entry:
  %cntp = getelementptr i8, ptr %list, i64 8
  %capp = getelementptr i8, ptr %list, i64 16
  %cnt = load i64, ptr %cntp
  %cap = load i64, ptr %capp
  %full = icmp sge i64 %cnt, %cap
  br i1 %full, label %grow, label %put
grow:
  %old = load ptr, ptr %list
  %c2 = mul i64 %cap, 2
  %c3 = add i64 %c2, 8
  %bytes = mul i64 %c3, 8
  %oldbytes = mul i64 %cap, 8
  %new = call ptr @realloc(ptr %old, i64 %bytes)
  store ptr %new, ptr %list
  store i64 %c3, ptr %capp
  br label %put
put:
  %data = load ptr, ptr %list
  %slot = getelementptr ptr, ptr %data, i64 %cnt
  store ptr %p, ptr %slot
  %c1 = add i64 %cnt, 1
  store i64 %c1, ptr %cntp
  ret void
}

define internal void @enzpy.free_allocations(ptr %list) {
entry:
  %data = load ptr, ptr %list
  %cntp = getelementptr i8, ptr %list, i64 8
  %cnt = load i64, ptr %cntp
  %none = icmp sle i64 %cnt, 0
  br i1 %none, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %slot = getelementptr ptr, ptr %data, i64 %i
  %p = load ptr, ptr %slot
  call void @free(ptr %p)
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %cnt
  br i1 %more, label %loop, label %done
done:
  call void @free(ptr %data)
  ret void
}

declare ptr @realloc(ptr, i64)
declare void @free(ptr)
"""

# The shadow objects of one call that a host's function releases (rules/effects.py, constructors):
# a list like the allocations', each object released with @{F} (null: the constructor failed).
OBJECT_LIST = """
define internal void @enzpy.release_objects.{F}(ptr %list) {{
entry:
  %data = load ptr, ptr %list
  %cntp = getelementptr i8, ptr %list, i64 8
  %cnt = load i64, ptr %cntp
  %none = icmp sle i64 %cnt, 0
  br i1 %none, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %slot = getelementptr ptr, ptr %data, i64 %i
  %p = load ptr, ptr %slot
  %made = icmp ne ptr %p, null
  br i1 %made, label %release, label %next
release:
  call void @{F}(ptr %p)
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %cnt
  br i1 %more, label %loop, label %done
done:
  call void @free(ptr %data)
  store ptr null, ptr %list
  store i64 0, ptr %cntp
  ret void
}}

declare void @{F}(ptr)
declare void @free(ptr)
"""


def release_objects(module, free: str) -> str:
    """The name of the helper releasing a list of objects with `free`, added to the module."""
    name = f"enzpy.release_objects.{free}"
    HELPERS.setdefault(name, OBJECT_LIST.format(F=free))
    ensure(module, name)
    return name


HELPERS = {
    "enzpy.push_allocation": ALLOCATION_LIST,
    "enzpy.free_allocations": ALLOCATION_LIST,
    "enzpy.digamma": DIGAMMA,
    "enzpy.copy_adjoint.f64": COPY_ADJOINT.format(S="f64", W=8, T="double"),
    "enzpy.copy_adjoint.f32": COPY_ADJOINT.format(S="f32", W=4, T="float"),
}


def register_helper(names, text: str) -> None:
    """A host's runtime helper: `text` (LLVM IR defining each of `names`) is merged into a module
    that calls one of them."""
    for name in ([names] if isinstance(names, str) else names):
        HELPERS[name] = text


def merge(module, text: str) -> None:
    """Add what module text `text` defines and declares (functions, globals) to `module`, each
    once: the runtime's helpers with globals of their own (block_sum.py, warp_add.py)."""
    helper = parse_module(text)
    for item in helper.items:
        if isinstance(item, str):
            if item.strip() and item not in module.items:
                module.items.append(item)
        elif item.name not in module.functions:
            module.add_function(item)


def ensure(module, name: str) -> None:
    """Add helper `name` (and what it declares) to the module once."""
    if name in module.functions:
        return
    helper = parse_module(rewrite(module, HELPERS[name]))
    for fn in helper.functions.values():
        if fn.name not in module.functions:
            module.add_function(fn)

# reverse of out = dot(x, y) over n elements: dx += d * y; dy += d * x (either shadow may be null),
# each product under the strong-zero guard of rules/partials.py: (d != 0 or y finite) ? d * y : 0
DOT_ADJOINT = """
define internal void @enzpy.dot_adjoint.{S}(i64 %n, ptr %x, ptr %y, ptr %dx, ptr %dy, {T} %d) {{
entry:
  %empty = icmp sle i64 %n, 0
  %dnz = fcmp une {T} %d, 0.0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %px = getelementptr {T}, ptr %x, i64 %i
  %py = getelementptr {T}, ptr %y, i64 %i
  %vx = load {T}, ptr %px
  %vy = load {T}, ptr %py
  %hasdx = icmp ne ptr %dx, null
  br i1 %hasdx, label %adx, label %checky
adx:
  %pdx = getelementptr {T}, ptr %dx, i64 %i
  %odx = load {T}, ptr %pdx
  %ay = call {T} @llvm.fabs.{S}({T} %vy)
  %fy = fcmp olt {T} %ay, 0x7FF0000000000000
  %ky = or i1 %dnz, %fy
  %py = fmul {T} %d, %vy
  %tdx = select i1 %ky, {T} %py, {T} 0.0
  %ndx = fadd {T} %odx, %tdx
  store {T} %ndx, ptr %pdx
  br label %checky
checky:
  %hasdy = icmp ne ptr %dy, null
  br i1 %hasdy, label %ady, label %next
ady:
  %pdy = getelementptr {T}, ptr %dy, i64 %i
  %ody = load {T}, ptr %pdy
  %ax = call {T} @llvm.fabs.{S}({T} %vx)
  %fx = fcmp olt {T} %ax, 0x7FF0000000000000
  %kx = or i1 %dnz, %fx
  %qx = fmul {T} %d, %vx
  %tdy = select i1 %kx, {T} %qx, {T} 0.0
  %ndy = fadd {T} %ody, %tdy
  store {T} %ndy, ptr %pdy
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
declare {T} @llvm.fabs.{S}({T})
"""
HELPERS["enzpy.dot_adjoint.f64"] = DOT_ADJOINT.format(S="f64", T="double")
HELPERS["enzpy.dot_adjoint.f32"] = DOT_ADJOINT.format(S="f32", T="float")

# Tape arrays kept between calls of one gradient. A workspace is n 8-byte fields (capacities and
# array pointers); a global slot holds the parked one. `take` empties the slot (another thread
# then starts fresh) and copies the fields out; `park` stores them back, reusing the workspace
# block, and frees whatever another call parked meanwhile (its first `pointers` fields are pointers).
# `release` empties the slot and frees what was parked (the gradient's `<name>.release`).
WORKSPACE = """
define internal ptr @enzpy.take(ptr %slot, ptr %dst, i64 %n) {
entry:
  %ws = atomicrmw xchg ptr %slot, ptr null acq_rel, align 8
  %none = icmp eq ptr %ws, null
  %bytes = mul i64 %n, 8
  br i1 %none, label %zero, label %copy
zero:
  call void @llvm.memset.p0.i64(ptr %dst, i8 0, i64 %bytes, i1 false)
  ret ptr null
copy:
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %ws, i64 %bytes, i1 false)
  ret ptr %ws
}

define internal void @enzpy.park(ptr %slot, ptr %ws, ptr %src, i64 %n, i64 %pointers) {
entry:
  %bytes = mul i64 %n, 8
  %none = icmp eq ptr %ws, null
  br i1 %none, label %fresh, label %fill
fresh:
  %new = call ptr @malloc(i64 %bytes)
  br label %fill
fill:
  %w = phi ptr [ %ws, %entry ], [ %new, %fresh ]
  call void @llvm.memcpy.p0.p0.i64(ptr %w, ptr %src, i64 %bytes, i1 false)
  %old = atomicrmw xchg ptr %slot, ptr %w acq_rel, align 8
  call void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers)
  ret void
}

define internal void @enzpy.release(ptr %slot, i64 %n, i64 %pointers) {
entry:
  %old = atomicrmw xchg ptr %slot, ptr null acq_rel, align 8
  call void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers)
  ret void
}

; A workspace taken out of its slot: its pointer fields (the first `pointers`), then itself.
define internal void @enzpy.free_workspace(ptr %old, i64 %n, i64 %pointers) {
entry:
  %empty = icmp eq ptr %old, null
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %isptr = icmp slt i64 %i, %pointers
  br i1 %isptr, label %drop, label %next
drop:
  %p = getelementptr ptr, ptr %old, i64 %i
  %v = load ptr, ptr %p
  call void @free(ptr %v)
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %last
last:
  call void @free(ptr %old)
  br label %done
done:
  ret void
}

declare ptr @malloc(i64)
declare void @free(ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
"""
HELPERS["enzpy.take"] = WORKSPACE
HELPERS["enzpy.park"] = WORKSPACE
HELPERS["enzpy.release"] = WORKSPACE

# The frames of differentiated callees that returned, as (free function, frame) pairs. If this
# call fails later, their reverse never runs: `free_children` releases them through their free
# functions. After a reverse sweep each child has freed itself: `drop_children` frees the list.
# The list starts with room for two (a recursive kernel's frames have few children each).
CHILDREN = """
define internal void @enzpy.push_child(ptr %list, ptr %fn, ptr %frame) {
entry:
  %isnull = icmp eq ptr %frame, null
  br i1 %isnull, label %done, label %push
push:
  %cntp = getelementptr i8, ptr %list, i64 8
  %capp = getelementptr i8, ptr %list, i64 16
  %cnt = load i64, ptr %cntp
  %cap = load i64, ptr %capp
  %full = icmp sge i64 %cnt, %cap
  br i1 %full, label %grow, label %put
grow:
  %old = load ptr, ptr %list
  %c2 = mul i64 %cap, 2
  %c3 = add i64 %c2, 2
  %bytes = mul i64 %c3, 16
  %oldbytes = mul i64 %cap, 16
  %new = call ptr @realloc(ptr %old, i64 %bytes)
  store ptr %new, ptr %list
  store i64 %c3, ptr %capp
  br label %put
put:
  %data = load ptr, ptr %list
  %slot = getelementptr [2 x ptr], ptr %data, i64 %cnt
  store ptr %fn, ptr %slot
  %slot2 = getelementptr i8, ptr %slot, i64 8
  store ptr %frame, ptr %slot2
  %c1 = add i64 %cnt, 1
  store i64 %c1, ptr %cntp
  br label %done
done:
  ret void
}

define internal void @enzpy.free_children(ptr %list) {
entry:
  %data = load ptr, ptr %list
  %cntp = getelementptr i8, ptr %list, i64 8
  %cnt = load i64, ptr %cntp
  %none = icmp sle i64 %cnt, 0
  br i1 %none, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %slot = getelementptr [2 x ptr], ptr %data, i64 %i
  %fn = load ptr, ptr %slot
  %slot2 = getelementptr i8, ptr %slot, i64 8
  %frame = load ptr, ptr %slot2
  call void %fn(ptr %frame)
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %cnt
  br i1 %more, label %loop, label %done
done:
  call void @free(ptr %data)
  ret void
}

define internal void @enzpy.drop_children(ptr %list) {
entry:
  %data = load ptr, ptr %list
  call void @free(ptr %data)
  ret void
}

declare ptr @realloc(ptr, i64)
declare void @free(ptr)
"""
for _name in ("enzpy.push_child", "enzpy.free_children", "enzpy.drop_children"):
    HELPERS[_name] = CHILDREN

# A scratch buffer parked with the tape (restore.py's snapshots): at least `size` bytes at *slot,
# whose capacity is *capp; grown without keeping the contents.
BUFFER = """
define internal ptr @enzpy.buffer(ptr %slot, ptr %capp, i64 %size) {
entry:
  %cap = load i64, ptr %capp
  %p = load ptr, ptr %slot
  %small = icmp ult i64 %cap, %size
  br i1 %small, label %grow, label %done
grow:
  call void @free(ptr %p)
  %new = call ptr @malloc(i64 %size)
  store ptr %new, ptr %slot
  store i64 %size, ptr %capp
  ret ptr %new
done:
  ret ptr %p
}

declare ptr @malloc(i64)
declare void @free(ptr)
"""
HELPERS["enzpy.buffer"] = BUFFER
