"""Warp shuffles of floats and their adjoints, as LLVM IR helpers (rules/nvptx.py).

`shfl.sync` (PTX ISA) in lane l with member mask m, lane operand b and clamp c: the segment mask
is s = c[12:8]; the lowest and highest lane of l's range are lo = l & s and
max = lo | (c[4:0] & ~s); the source lane j is l + b (down), l - b (up), l ^ b (bfly) or
lo | (b & ~s) (idx), in range when j <= max (j >= max for up). Lane l receives the value of lane
j when j is in range and its own value otherwise.

`@enzpy.shfl.sync.<mode>.f64(mask, double v, b, c)` is one float64 shuffle: two 32-bit shuffles
of v's halves, as CUDA compilers lower it. During AD the calls are declarations (a call of
a defined function would be differentiated into); `define` adds the bodies afterwards.

`@enzpy.shfl.adjoint.<mode>.<T>(mask, T d, b, c)` is the adjoint of the shuffled operand in this
lane, given d, the adjoint of the shuffle's result: every lane whose source was in range sends d
back to its source lane (`send`), a lane whose source was out of range kept its own value and
keeps d (`keep`). For down, up and bfly one shuffle the other way brings it back: lane l reads
`send` of the lane m that read from l (m = l - b for down, l + b for up, l ^ b for bfly), when m
is in l's range, in the member mask and exists (the last warp of a block may be partial). For
idx several lanes may read one lane (a broadcast), so each existing lane of the mask in turn
shares its `send` and its source j, and the lanes add what is meant for them (64 shuffles). A
broadcast from a constant lane to the full warp (mask -1, c 31: every lane reads lane b) is
cheaper: `@enzpy.shfl.adjoint.bcast.<T>(T d, i32 b)` sums d over the existing lanes of the
warp with five butterfly shuffles, and lane b takes the sum.
"""
from __future__ import annotations

from ..ir.parser import parse_module

FLOATS = {"f32": "float", "f64": "double"}

_F64 = """
define internal double @enzpy.shfl.sync.{mode}.f64(i32 %mask, double %v, i32 %b, i32 %c) alwaysinline {{
entry:
  %bits = bitcast double %v to i64
  %lo = trunc i64 %bits to i32
  %hi.w = lshr i64 %bits, 32
  %hi = trunc i64 %hi.w to i32
  %rlo = call i32 @llvm.nvvm.shfl.sync.{mode}.i32(i32 %mask, i32 %lo, i32 %b, i32 %c)
  %rhi = call i32 @llvm.nvvm.shfl.sync.{mode}.i32(i32 %mask, i32 %hi, i32 %b, i32 %c)
  %rlo.w = zext i32 %rlo to i64
  %rhi.w = zext i32 %rhi to i64
  %rhi.s = shl i64 %rhi.w, 32
  %r = or i64 %rhi.s, %rlo.w
  %f = bitcast i64 %r to double
  ret double %f
}}
declare i32 @llvm.nvvm.shfl.sync.{mode}.i32(i32, i32, i32, i32)
"""

# The lanes of this warp that exist: a block whose size is not a multiple of 32 ends in a partial
# warp, and a shuffle that reads a missing lane gets an undefined value. A primal shuffle reads
# only lanes the program makes sure exist (shfl_up, a broadcast); its adjoint reads others.
_LIVE = """
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %tz = call i32 @llvm.nvvm.read.ptx.sreg.tid.z()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %nz = call i32 @llvm.nvvm.read.ptx.sreg.ntid.z()
  %zy = mul i32 %tz, %ny
  %row = add i32 %zy, %ty
  %rowx = mul i32 %row, %nx
  %lin = add i32 %rowx, %tx
  %nxy = mul i32 %nx, %ny
  %count = mul i32 %nxy, %nz
  %base = and i32 %lin, -32
  %left = sub i32 %count, %base
  %full = icmp uge i32 %left, 32
  %left5 = and i32 %left, 31
  %part.s = shl i32 1, %left5
  %part = sub i32 %part.s, 1
  %live = select i1 %full, i32 -1, i32 %part"""
_SREG_DECLS = "".join(f"declare i32 @llvm.nvvm.read.ptx.sreg.{r}.{a}()\n" for r in ("tid", "ntid")
                      for a in "xyz")

# this lane's range (see the module docstring)
_RANGE = _LIVE + """
  %mask.live = and i32 %mask, %live
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  %bv = and i32 %b, 31
  %c.s = lshr i32 %c, 8
  %s = and i32 %c.s, 31
  %ns = xor i32 %s, -1
  %cv = and i32 %c, 31
  %low = and i32 %lane, %s
  %top = and i32 %cv, %ns
  %max = or i32 %low, %top
  %end.top = and i32 %ns, 31
  %end = or i32 %low, %end.top"""

# mode -> (this lane's source j and its test p; the lane m that read from this one, the test ok
# that m is in range; the shuffle that brings m's value here and its clamp)
_MODES = {
    "down": ("%j = add i32 %lane, %bv\n  %p = icmp ule i32 %j, %max",
             "%m = sub i32 %lane, %bv\n  %ok = icmp sge i32 %m, %low", "up", "%crev = and i32 %c, 7936"),
    "up": ("%j = sub i32 %lane, %bv\n  %p = icmp sge i32 %j, %max",
           "%m = add i32 %lane, %bv\n  %ok = icmp ule i32 %m, %end", "down",
           "%crev.s = and i32 %c, 7936\n  %crev = or i32 %crev.s, 31"),
    "bfly": ("%j = xor i32 %lane, %bv\n  %p = icmp ule i32 %j, %max",
             "%m = xor i32 %lane, %bv\n  %ok = icmp ule i32 %m, %end", "bfly",
             "%crev.s = and i32 %c, 7936\n  %crev = or i32 %crev.s, 31"),
}

_ADJOINT = """
define internal {T} @enzpy.shfl.adjoint.{mode}.{S}(i32 %mask, {T} %d, i32 %b, i32 %c) alwaysinline {{
entry:{range}
  {source}
  %send = select i1 %p, {T} %d, {T} 0.0
  %keep = select i1 %p, {T} 0.0, {T} %d
  {back}
  {clamp}
  %got = call {T} {shuffle}(i32 %mask, {T} %send, i32 %bv, i32 %crev)
  %m5 = and i32 %m, 31
  %bit.w = lshr i32 %mask.live, %m5
  %bit = trunc i32 %bit.w to i1
  %in = and i1 %ok, %bit
  %from = select i1 %in, {T} %got, {T} 0.0
  %r = fadd {T} %keep, %from
  ret {T} %r
}}
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
"""

_ADJOINT_IDX = """
define internal {T} @enzpy.shfl.adjoint.idx.{S}(i32 %mask, {T} %d, i32 %b, i32 %c) alwaysinline {{
entry:{range}
  %notb = and i32 %bv, %ns
  %j = or i32 %low, %notb
  %p = icmp ule i32 %j, %max
  %send = select i1 %p, {T} %d, {T} 0.0
  %keep = select i1 %p, {T} 0.0, {T} %d
  %target = select i1 %p, i32 %j, i32 -1
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %next ]
  %acc = phi {T} [ %keep, %entry ], [ %acc2, %next ]
  %bit.w = lshr i32 %mask.live, %k
  %bit = trunc i32 %bit.w to i1
  br i1 %bit, label %share, label %next
share:
  %got = call {T} {shuffle}(i32 %mask, {T} %send, i32 %k, i32 31)
  %to = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 %mask, i32 %target, i32 %k, i32 31)
  %mine = icmp eq i32 %to, %lane
  %add = select i1 %mine, {T} %got, {T} 0.0
  %acc1 = fadd {T} %acc, %add
  br label %next
next:
  %acc2 = phi {T} [ %acc, %loop ], [ %acc1, %share ]
  %k1 = add i32 %k, 1
  %more = icmp ult i32 %k1, 32
  br i1 %more, label %loop, label %done
done:
  ret {T} %acc2
}}
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
"""

_BROADCAST = """
define internal {T} @enzpy.shfl.adjoint.bcast.{S}({T} %d, i32 %b) alwaysinline {{
entry:{live}
  %lane = call i32 @llvm.nvvm.read.ptx.sreg.laneid()
  {steps}
  %bv = and i32 %b, 31
  %mine = icmp eq i32 %lane, %bv
  %r = select i1 %mine, {T} %s5, {T} 0.0
  ret {T} %r
}}
declare i32 @llvm.nvvm.read.ptx.sreg.laneid()
declare {T} @{shuffle}(i32, {T}, i32, i32)
"""


def _broadcast(t: str, suffix: str) -> str:
    steps = "\n  ".join(f"%o{k} = call {t} @{shuffle_name('bfly', suffix)}(i32 -1, {t} %s{k}, "
                        f"i32 {off}, i32 31)\n  %p{k} = xor i32 %lane, {off}\n"
                        f"  %q{k}.w = lshr i32 %live, %p{k}\n  %q{k} = trunc i32 %q{k}.w to i1\n"
                        f"  %g{k} = select i1 %q{k}, {t} %o{k}, {t} 0.0\n"
                        f"  %s{k + 1} = fadd {t} %s{k}, %g{k}"
                        for k, off in enumerate((16, 8, 4, 2, 1)))
    return _BROADCAST.format(T=t, S=suffix, steps="%s0 = fadd {} %d, -0.0\n  ".format(t) + steps,
                             shuffle=shuffle_name("bfly", suffix), live=_LIVE) + _SREG_DECLS


def shuffle_name(mode: str, suffix: str) -> str:
    """The float shuffle of this mode: LLVM's intrinsic for float32, the helper for float64."""
    if suffix == "f32":
        return f"llvm.nvvm.shfl.sync.{mode}.f32"
    return f"enzpy.shfl.sync.{mode}.f64"


def adjoint_name(mode: str, suffix: str) -> str:
    return f"enzpy.shfl.adjoint.{mode}.{suffix}"


def _text(name: str) -> str:
    parts = name.split(".")
    mode, suffix = parts[-2], parts[-1]
    t = FLOATS[suffix]
    if name == shuffle_name(mode, "f64"):
        return _F64.format(mode=mode)
    if mode == "bcast":
        return _broadcast(t, suffix)
    extra = f"\ndeclare {t} @{shuffle_name('idx' if mode == 'idx' else _MODES[mode][2], suffix)}" \
            f"(i32, {t}, i32, i32)\n"
    if mode == "idx":
        return _ADJOINT_IDX.format(T=t, S=suffix, range=_RANGE,
                                   shuffle="@" + shuffle_name("idx", suffix)) + extra + _SREG_DECLS
    source, back, rev, clamp = _MODES[mode]
    return _ADJOINT.format(T=t, S=suffix, mode=mode, range=_RANGE, source=source, back=back,
                           clamp=clamp, shuffle="@" + shuffle_name(rev, suffix)) + extra + _SREG_DECLS


def define(module) -> None:
    """Give every declared `enzpy.shfl.*` helper of the module its body (and the helpers those
    call theirs)."""
    while True:
        todo = [f.name for f in module.functions.values()
                if f.is_declaration and f.name.startswith("enzpy.shfl.")]
        if not todo:
            return
        for name in todo:
            helper = parse_module(_text(name))
            for fn in helper.functions.values():
                if fn.name == name or fn.name not in module.functions:
                    module.add_function(fn)
