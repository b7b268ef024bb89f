"""Helper functions for the BLAS records (rules/blas.py), in LLVM IR, added on demand through
helpers.ensure: scaling a column-major matrix, a rank-1 update, the adjoint and tangent of a 2-norm, and the arena
that keeps inputs a later write may change for the reverse sweep."""
from __future__ import annotations

from .helpers import HELPERS

def grid(name: str, params: str, body: str, rows: str = "%rows", cols: str = "%cols",
         head: str = "", pre: str = "") -> str:
    """A helper `enzpy.<name>.{S}(params)` looping over a column-major rows x cols grid, %j the
    column (`head` runs once per column), %i the row (`body`, straight-line code, once per
    element); `pre` runs once first. {T} and {S} stand for the float type and its suffix
    (`instances`)."""
    return f"""
define internal void @enzpy.{name}.{{S}}({params}) {{
entry:
{pre}
  %norows = icmp sle i64 {rows}, 0
  %nocols = icmp sle i64 {cols}, 0
  %none = or i1 %norows, %nocols
  br i1 %none, label %done, label %col
col:
  %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
{head}
  br label %row
row:
  %i = phi i64 [ 0, %col ], [ %i1, %row ]
{body}
  %i1 = add i64 %i, 1
  %rmore = icmp slt i64 %i1, {rows}
  br i1 %rmore, label %row, label %colnext
colnext:
  %j1 = add i64 %j, 1
  %cmore = icmp slt i64 %j1, {cols}
  br i1 %cmore, label %col, label %done
done:
  ret void
}}
"""


def instances(name: str, text: str) -> None:
    """Registers `text` (with {T}, {S} placeholders) for float64 and float32."""
    for s, t in (("f64", "double"), ("f32", "float")):
        HELPERS[f"enzpy.{name}.{s}"] = text.replace("{S}", s).replace("{T}", t)


# p (rows x cols, leading dimension ld) += alpha x y^T (x, y contiguous): a rank-1 update, a loop
# the compiler vectorizes (a library ger pays a call per column at a gradient's small sizes)
instances("rank1", grid("rank1", "i64 %rows, i64 %cols, {T} %alpha, ptr %x, ptr %y, ptr %p, i64 %ld", """\
  %px = getelementptr {T}, ptr %x, i64 %i
  %xv = load {T}, ptr %px
  %k = add i64 %base, %i
  %q = getelementptr {T}, ptr %p, i64 %k
  %v = load {T}, ptr %q
  %t = fmul {T} %xv, %ay
  %s = fadd {T} %v, %t
  store {T} %s, ptr %q""", head="""\
  %base = mul i64 %j, %ld
  %py = getelementptr {T}, ptr %y, i64 %j
  %yv = load {T}, ptr %py
  %ay = fmul {T} %alpha, %yv"""))

# rows x cols column-major matrix at p with leading dimension ld: p *= beta (beta 0 stores 0)
instances("scale_matrix", grid("scale_matrix", "i64 %rows, i64 %cols, ptr %p, i64 %ld, {T} %beta", """\
  %zero = fcmp oeq {T} %beta, 0.0
  %k = add i64 %base, %i
  %q = getelementptr {T}, ptr %p, i64 %k
  %v = load {T}, ptr %q
  %s = fmul {T} %v, %beta
  %w = select i1 %zero, {T} 0.0, {T} %s
  store {T} %w, ptr %q""", head="  %base = mul i64 %j, %ld"))

# The offset of part %{V} of a vector at stride inc (elements) of {P} parts per element (1 real,
# 2 complex): (%{V} / P) inc P + %{V} % P, into %{K}
def nrm2_at(v: str, k: str) -> str:
    return (f"  %{k}e = udiv i64 %{v}, {{P}}\n  %{k}p = urem i64 %{v}, {{P}}\n"
            f"  %{k}ei = mul i64 %{k}e, %inc\n  %{k}0 = mul i64 %{k}ei, {{P}}\n"
            f"  %{k} = add i64 %{k}0, %{k}p")


# 2-norm of n elements of x at stride inc (BLAS returns 0 for inc <= 0; `cnrm2_*`: complex
# elements, each part a coordinate); with dx null: the norm, else dx[i*inc] += d * x[i*inc] /
# norm (nothing where the norm is 0: a subgradient; nor where d is 0 and the norm inf or NaN: the
# strong zero of rules/partials.py)
NRM2 = """
define internal {T} @enzpy.{C}nrm2_adjoint.{S}(i64 %n, ptr %x, i64 %inc, ptr %dx, {T} %d) {{
entry:
  %parts = mul i64 %n, {P}
  %bad = icmp sle i64 %inc, 0
  %empty = icmp sle i64 %n, 0
  %skip = or i1 %bad, %empty
  br i1 %skip, label %zero, label %sum
sum:
  %i = phi i64 [ 0, %entry ], [ %i1, %sum ]
  %acc = phi {T} [ 0.0, %entry ], [ %acc1, %sum ]
""" + nrm2_at("i", "k") + """
  %q = getelementptr {T}, ptr %x, i64 %k
  %v = load {T}, ptr %q
  %vv = fmul {T} %v, %v
  %acc1 = fadd {T} %acc, %vv
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %parts
  br i1 %more, label %sum, label %root
root:
  %norm = call {T} @llvm.sqrt.{S}({T} %acc1)
  %nodx = icmp eq ptr %dx, null
  %flat = fcmp oeq {T} %norm, 0.0
  %dzero = fcmp oeq {T} %d, 0.0
  %huge = fcmp uge {T} %norm, 0x7FF0000000000000
  %strong = and i1 %dzero, %huge
  %noadd0 = or i1 %nodx, %flat
  %noadd = or i1 %noadd0, %strong
  br i1 %noadd, label %out, label %add
add:
  %scale = fdiv {T} %d, %norm
  br label %addloop
addloop:
  %j = phi i64 [ 0, %add ], [ %j1, %addloop ]
""" + nrm2_at("j", "kj") + """
  %qx = getelementptr {T}, ptr %x, i64 %kj
  %qd = getelementptr {T}, ptr %dx, i64 %kj
  %vx = load {T}, ptr %qx
  %vd = load {T}, ptr %qd
  %t = fmul {T} %scale, %vx
  %nd = fadd {T} %vd, %t
  store {T} %nd, ptr %qd
  %j1 = add i64 %j, 1
  %jmore = icmp slt i64 %j1, %parts
  br i1 %jmore, label %addloop, label %out
out:
  ret {T} %norm
zero:
  ret {T} 0.0
}}

declare {T} @llvm.sqrt.{S}({T})
"""

# tangent of the 2-norm: sum x[i*inc] * dx[i*inc] / norm (0 where the norm is 0)
NRM2_TANGENT = """
define internal {T} @enzpy.{C}nrm2_tangent.{S}(i64 %n, ptr %x, i64 %inc, ptr %dx) {{
entry:
  %parts = mul i64 %n, {P}
  %bad = icmp sle i64 %inc, 0
  %empty = icmp sle i64 %n, 0
  %skip = or i1 %bad, %empty
  br i1 %skip, label %zero, label %sum
sum:
  %i = phi i64 [ 0, %entry ], [ %i1, %sum ]
  %acc = phi {T} [ 0.0, %entry ], [ %acc1, %sum ]
  %dot = phi {T} [ 0.0, %entry ], [ %dot1, %sum ]
""" + nrm2_at("i", "k") + """
  %q = getelementptr {T}, ptr %x, i64 %k
  %qd = getelementptr {T}, ptr %dx, i64 %k
  %v = load {T}, ptr %q
  %vd = load {T}, ptr %qd
  %vv = fmul {T} %v, %v
  %acc1 = fadd {T} %acc, %vv
  %xd = fmul {T} %v, %vd
  %dot1 = fadd {T} %dot, %xd
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %parts
  br i1 %more, label %sum, label %root
root:
  %norm = call {T} @llvm.sqrt.{S}({T} %acc1)
  %flat = fcmp oeq {T} %norm, 0.0
  %t = fdiv {T} %dot1, %norm
  %r = select i1 %flat, {T} 0.0, {T} %t
  ret {T} %r
zero:
  ret {T} 0.0
}}

declare {T} @llvm.sqrt.{S}({T})
"""

for _s, _t in (("f64", "double"), ("f32", "float")):
    for _c, _p in (("", 1), ("c", 2)):
        HELPERS[f"enzpy.{_c}nrm2_adjoint.{_s}"] = NRM2.format(S=_s, T=_t, C=_c, P=_p)
        HELPERS[f"enzpy.{_c}nrm2_tangent.{_s}"] = NRM2_TANGENT.format(S=_s, T=_t, C=_c, P=_p)

# The arena: copies of inputs for the reverse sweep, one after another in one buffer (*slot, of
# capacity *capp, *usedp bytes in use). Push copies size bytes from src and returns their offset
# (16-byte aligned); growing keeps the contents. The buffer is parked with the tape between calls,
# so a repeat call with the same shapes allocates nothing.
ARENA = """
define internal i64 @enzpy.arena_push(ptr %slot, ptr %capp, ptr %usedp, ptr %src, i64 %size) {
entry:
  %used = load i64, ptr %usedp
  %cap = load i64, ptr %capp
  %base = load ptr, ptr %slot
  %padded = add i64 %size, 15
  %rounded = and i64 %padded, -16
  %need = add i64 %used, %rounded
  %small = icmp ult i64 %cap, %need
  br i1 %small, label %grow, label %copy
grow:
  %dbl = shl i64 %cap, 1
  %big = icmp ugt i64 %dbl, %need
  %newcap = select i1 %big, i64 %dbl, i64 %need
  %new = call ptr @malloc(i64 %newcap)
  call void @llvm.memcpy.p0.p0.i64(ptr %new, ptr %base, i64 %used, i1 false)
  %had = icmp ne ptr %base, null
  br i1 %had, label %release, label %grown
release:
  call void @free(ptr %base)
  br label %grown
grown:
  store ptr %new, ptr %slot
  store i64 %newcap, ptr %capp
  br label %copy
copy:
  %b = phi ptr [ %base, %entry ], [ %new, %grown ]
  %dst = getelementptr i8, ptr %b, i64 %used
  store i64 %need, ptr %usedp
  %blank = icmp eq ptr %src, null
  br i1 %blank, label %done, label %fill
fill:
  call void @llvm.memcpy.p0.p0.i64(ptr %dst, ptr %src, i64 %size, i1 false)
  br label %done
done:
  ret i64 %used
}

declare ptr @malloc(i64)
declare void @free(ptr)
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
"""
HELPERS["enzpy.arena_push"] = ARENA

# Elementwise maps over an n x n column-major matrix: dst (leading dimension ldd) from src
# (leading dimension lds); %sij, %sji, %dij point at src[i,j], src[j,i], dst[i,j]; %up: i <= j,
# %diag: i == j. Used by the LAPACK records (rules/lapack.py).
SQUARE_ADDRESSES = """\
  %js = mul i64 %j, %lds
  %ij = add i64 %js, %i
  %sij = getelementptr {T}, ptr %src, i64 %ij
  %is = mul i64 %i, %lds
  %ji = add i64 %is, %j
  %sji = getelementptr {T}, ptr %src, i64 %ji
  %jd = mul i64 %j, %ldd
  %ijd = add i64 %jd, %i
  %dij = getelementptr {T}, ptr %dst, i64 %ijd
  %up = icmp sle i64 %i, %j
  %diag = icmp eq i64 %i, %j
"""
SQUARE_PARAMS = "i64 %n, ptr %src, i64 %lds, ptr %dst, i64 %ldd"

SQUARE_BODIES = {
    # the upper triangle, zeros below
    "upper_of": """  %v = load {T}, ptr %sij
  %w = select i1 %up, {T} %v, {T} 0.0
  store {T} %w, ptr %dij""",
    # the lower triangle with its diagonal halved, zeros above (Phi of the Cholesky adjoint)
    "half_lower": """  %v = load {T}, ptr %sij
  %h = fmul {T} %v, 0.5
  %o = select i1 %up, {T} 0.0, {T} %v
  %w = select i1 %diag, {T} %h, {T} %o
  store {T} %w, ptr %dij""",
    # the upper triangle with its diagonal halved, zeros below
    "half_upper": """  %v = load {T}, ptr %sij
  %h = fmul {T} %v, 0.5
  %o = select i1 %up, {T} %v, {T} 0.0
  %w = select i1 %diag, {T} %h, {T} %o
  store {T} %w, ptr %dij""",
    # upper triangle of dst = s_ij + s_ji (s_ii on the diagonal); dst's lower triangle kept
    "fold_upper": """  %a = load {T}, ptr %sij
  %b = load {T}, ptr %sji
  %ab = fadd {T} %a, %b
  %s = select i1 %diag, {T} %a, {T} %ab
  %old = load {T}, ptr %dij
  %w = select i1 %up, {T} %s, {T} %old
  store {T} %w, ptr %dij""",
    # the symmetric matrix whose upper triangle src holds
    "mirror_upper": """  %a = load {T}, ptr %sij
  %b = load {T}, ptr %sji
  %w = select i1 %up, {T} %a, {T} %b
  store {T} %w, ptr %dij""",
    # src's upper triangle into dst's; dst's lower triangle kept
    "put_upper": """  %a = load {T}, ptr %sij
  %old = load {T}, ptr %dij
  %w = select i1 %up, {T} %a, {T} %old
  store {T} %w, ptr %dij""",
    # the transpose
    "transposed": """  %a = load {T}, ptr %sji
  store {T} %a, ptr %dij""",
    # dst = s_ij + s_ji below the diagonal, s_ii on it, zero above (a lower triangle read as a
    # symmetric matrix); "fold_upper_zero" the same above
    "fold_lower_zero": """  %a = load {T}, ptr %sij
  %b = load {T}, ptr %sji
  %ab = fadd {T} %a, %b
  %s = select i1 %up, {T} 0.0, {T} %ab
  %w = select i1 %diag, {T} %a, {T} %s
  store {T} %w, ptr %dij""",
    "fold_upper_zero": """  %a = load {T}, ptr %sij
  %b = load {T}, ptr %sji
  %ab = fadd {T} %a, %b
  %s = select i1 %up, {T} %ab, {T} 0.0
  %w = select i1 %diag, {T} %a, {T} %s
  store {T} %w, ptr %dij""",
    # the symmetric matrix whose lower triangle src holds
    "mirror_lower": """  %a = load {T}, ptr %sij
  %b = load {T}, ptr %sji
  %w = select i1 %up, {T} %b, {T} %a
  store {T} %w, ptr %dij""",
    # a copy
    "copied": """  %a = load {T}, ptr %sij
  store {T} %a, ptr %dij""",
    # the strictly lower triangle with ones on the diagonal (L of packed LU factors)
    "unit_lower_of": """  %v = load {T}, ptr %sij
  %o = select i1 %up, {T} 0.0, {T} %v
  %w = select i1 %diag, {T} 1.0, {T} %o
  store {T} %w, ptr %dij""",
    # the strictly lower triangle, zeros elsewhere
    "strict_lower_of": """  %v = load {T}, ptr %sij
  %w = select i1 %up, {T} 0.0, {T} %v
  store {T} %w, ptr %dij""",
    # s_ij - s_ji (twice the antisymmetric part)
    "antisym": """  %a = load {T}, ptr %sij
  %b = load {T}, ptr %sji
  %w = fsub {T} %a, %b
  store {T} %w, ptr %dij""",
    # the antisymmetric matrix whose strictly lower triangle is src's (QR's Omega)
    "skew_lower": """  %a = load {T}, ptr %sij
  %b = load {T}, ptr %sji
  %nb = fneg {T} %b
  %o = select i1 %up, {T} %nb, {T} %a
  %w = select i1 %diag, {T} 0.0, {T} %o
  store {T} %w, ptr %dij""",
}

for _name, _body in SQUARE_BODIES.items():
    instances(_name, grid(_name, SQUARE_PARAMS, SQUARE_ADDRESSES + _body, "%n", "%n"))

# The same maps on complex matrices, `enzpy.c<name>.{S}`: each is linear in each part but for
# unit_lower_of's diagonal (1 + 0i), so the grid runs over 2n rows of parts (%i / 2 the complex
# row, %i & 1 the part) and the bodies are the real ones with %one for their constant 1.
COMPLEX_SQUARE_ADDRESSES = """\
  %ci = lshr i64 %i, 1
  %part = and i64 %i, 1
  %js = mul i64 %j, %lds
  %ij0 = add i64 %js, %ci
  %ij1 = shl i64 %ij0, 1
  %ij = or i64 %ij1, %part
  %sij = getelementptr {T}, ptr %src, i64 %ij
  %is = mul i64 %ci, %lds
  %ji0 = add i64 %is, %j
  %ji1 = shl i64 %ji0, 1
  %ji = or i64 %ji1, %part
  %sji = getelementptr {T}, ptr %src, i64 %ji
  %jd = mul i64 %j, %ldd
  %ijd0 = add i64 %jd, %ci
  %ijd1 = shl i64 %ijd0, 1
  %ijd = or i64 %ijd1, %part
  %dij = getelementptr {T}, ptr %dst, i64 %ijd
  %up = icmp sle i64 %ci, %j
  %diag = icmp eq i64 %ci, %j
  %re = icmp eq i64 %part, 0
  %one = select i1 %re, {T} 1.0, {T} 0.0
"""
for _name, _body in SQUARE_BODIES.items():
    instances("c" + _name, grid("c" + _name, SQUARE_PARAMS,
                                COMPLEX_SQUARE_ADDRESSES + _body.replace("{T} 1.0", "{T} %one"),
                                "%n2", "%n", pre="  %n2 = shl i64 %n, 1"))

# Maps of complex matrices alone, for a Hermitian matrix that one triangle stands for (LAPACK
# reads the real part of its diagonal): %cb is conj(s_ji)'s part, %ad s_ii's real part (0 for
# the imaginary one). "hfold_upper": dst's upper triangle = s_ij + conj(s_ji), Re s_ii on the
# diagonal (the adjoint of the upper triangle's entries), dst's lower triangle kept;
# "hfold_lower_zero" / "hfold_upper_zero" the same on the lower / upper triangle, zero on the
# other; "hmirror_upper" / "hmirror_lower": the Hermitian matrix whose upper / lower triangle
# src holds.
HERMITIAN_PARTS = """\
  %a = load {T}, ptr %sij
  %b = load {T}, ptr %sji
  %nb = fneg {T} %b
  %cb = select i1 %re, {T} %b, {T} %nb
  %ad = select i1 %re, {T} %a, {T} 0.0
"""
HERMITIAN_BODIES = {
    "hfold_upper": """  %ab = fadd {T} %a, %cb
  %s = select i1 %diag, {T} %ad, {T} %ab
  %old = load {T}, ptr %dij
  %w = select i1 %up, {T} %s, {T} %old
  store {T} %w, ptr %dij""",
    "hfold_lower_zero": """  %ab = fadd {T} %a, %cb
  %s = select i1 %up, {T} 0.0, {T} %ab
  %w = select i1 %diag, {T} %ad, {T} %s
  store {T} %w, ptr %dij""",
    "hfold_upper_zero": """  %ab = fadd {T} %a, %cb
  %s = select i1 %up, {T} %ab, {T} 0.0
  %w = select i1 %diag, {T} %ad, {T} %s
  store {T} %w, ptr %dij""",
    "hmirror_upper": """  %o = select i1 %up, {T} %a, {T} %cb
  %w = select i1 %diag, {T} %ad, {T} %o
  store {T} %w, ptr %dij""",
    "hmirror_lower": """  %o = select i1 %up, {T} %cb, {T} %a
  %w = select i1 %diag, {T} %ad, {T} %o
  store {T} %w, ptr %dij""",
    # s_ij - conj(s_ji) (twice the skew-Hermitian part)
    "hantisym": """  %w = fsub {T} %a, %cb
  store {T} %w, ptr %dij""",
    # the conjugate transpose
    "htransposed": """  store {T} %cb, ptr %dij""",
}
for _name, _body in HERMITIAN_BODIES.items():
    instances(_name, grid(_name, SQUARE_PARAMS, COMPLEX_SQUARE_ADDRESSES + HERMITIAN_PARTS + _body,
                          "%n2", "%n", pre="  %n2 = shl i64 %n, 1"))

# rows x cols matrices (column-major, leading dimensions lds, ldd): a copy, its upper trapezoid
# (zeros below), its transpose (cols x rows); p_ij /= s_i (along rows, %along 1) or s_j (%along
# 0), 0 where p_ij is 0 (no seed, no contribution, even where s is 0); out_j += column j of a
# times column j of b (summed); dst[:, j] += src[:, j] num_j / den_j (0 where den_j is 0);
# *out += the sum of |p_ij|
# src_ij into %v, and %pd at dst_ij: the two addressings the rectangular helpers share
LOAD_SRC = """\
  %js = mul i64 %j, %lds
  %ks = add i64 %js, %i
  %ps = getelementptr {T}, ptr %src, i64 %ks
  %v = load {T}, ptr %ps
"""
DST_AT_IJ = """\
  %jd = mul i64 %j, %ldd
  %kd = add i64 %jd, %i
  %pd = getelementptr {T}, ptr %dst, i64 %kd
"""
RECT_PARAMS = "i64 %rows, i64 %cols, ptr %src, i64 %lds, ptr %dst, i64 %ldd"
instances("copy_rect", grid("copy_rect", RECT_PARAMS, LOAD_SRC + DST_AT_IJ + """\
  store {T} %v, ptr %pd"""))
instances("upper_rect", grid("upper_rect", RECT_PARAMS, LOAD_SRC + """\
  %up = icmp sle i64 %i, %j
  %w = select i1 %up, {T} %v, {T} 0.0
  %jd = mul i64 %j, %ldd
  %kd = add i64 %jd, %i
  %pd = getelementptr {T}, ptr %dst, i64 %kd
  store {T} %w, ptr %pd"""))
# the upper trapezoid of a complex matrix (the grid over 2 rows parts)
instances("cupper_rect", grid("cupper_rect", RECT_PARAMS, """\
  %ci = lshr i64 %i, 1
  %js = mul i64 %j, %lds
  %js2 = shl i64 %js, 1
  %ks = add i64 %js2, %i
  %ps = getelementptr {T}, ptr %src, i64 %ks
  %v = load {T}, ptr %ps
  %up = icmp sle i64 %ci, %j
  %w = select i1 %up, {T} %v, {T} 0.0
  %jd = mul i64 %j, %ldd
  %jd2 = shl i64 %jd, 1
  %kd = add i64 %jd2, %i
  %pd = getelementptr {T}, ptr %dst, i64 %kd
  store {T} %w, ptr %pd""", "%r2", pre="  %r2 = shl i64 %rows, 1"))
instances("transpose_rect", grid("transpose_rect", RECT_PARAMS, LOAD_SRC + """\
  %id = mul i64 %i, %ldd
  %kd = add i64 %id, %j
  %pd = getelementptr {T}, ptr %dst, i64 %kd
  store {T} %v, ptr %pd"""))
instances("divide_by", grid("divide_by", "i64 %rows, i64 %cols, ptr %p, i64 %ld, ptr %s, i64 %along", """\
  %jl = mul i64 %j, %ld
  %k = add i64 %jl, %i
  %q = getelementptr {T}, ptr %p, i64 %k
  %v = load {T}, ptr %q
  %rowwise = icmp ne i64 %along, 0
  %at = select i1 %rowwise, i64 %i, i64 %j
  %ps = getelementptr {T}, ptr %s, i64 %at
  %d = load {T}, ptr %ps
  %r = fdiv {T} %v, %d
  %nothing = fcmp oeq {T} %v, 0.0
  %w = select i1 %nothing, {T} 0.0, {T} %r
  store {T} %w, ptr %q"""))
instances("col_dots", grid("col_dots", "i64 %rows, i64 %cols, ptr %a, i64 %lda, ptr %b, i64 %ldb, ptr %out", """\
  %ja = mul i64 %j, %lda
  %ka = add i64 %ja, %i
  %pa = getelementptr {T}, ptr %a, i64 %ka
  %jb = mul i64 %j, %ldb
  %kb = add i64 %jb, %i
  %pb = getelementptr {T}, ptr %b, i64 %kb
  %va = load {T}, ptr %pa
  %vb = load {T}, ptr %pb
  %ab = fmul {T} %va, %vb
  %po = getelementptr {T}, ptr %out, i64 %j
  %o = load {T}, ptr %po
  %w = fadd {T} %o, %ab
  store {T} %w, ptr %po"""))
instances("add_scaled_cols", grid("add_scaled_cols", RECT_PARAMS + ", ptr %num, ptr %den", """\
  %pn = getelementptr {T}, ptr %num, i64 %j
  %pq = getelementptr {T}, ptr %den, i64 %j
  %vn = load {T}, ptr %pn
  %vq = load {T}, ptr %pq
  %ratio = fdiv {T} %vn, %vq
  %flat = fcmp oeq {T} %vq, 0.0
  %f = select i1 %flat, {T} 0.0, {T} %ratio
  %js = mul i64 %j, %lds
  %ks = add i64 %js, %i
  %ps = getelementptr {T}, ptr %src, i64 %ks
  %v = load {T}, ptr %ps
  %jd = mul i64 %j, %ldd
  %kd = add i64 %jd, %i
  %pd = getelementptr {T}, ptr %dst, i64 %kd
  %o = load {T}, ptr %pd
  %sv = fmul {T} %v, %f
  %w = fadd {T} %o, %sv
  store {T} %w, ptr %pd"""))
instances("sum_abs", grid("sum_abs", "i64 %rows, i64 %cols, ptr %p, i64 %ld, ptr %out", """\
  %jl = mul i64 %j, %ld
  %k = add i64 %jl, %i
  %q = getelementptr {T}, ptr %p, i64 %k
  %v = load {T}, ptr %q
  %a = call {T} @llvm.fabs.{S}({T} %v)
  %o = load {T}, ptr %out
  %w = fadd {T} %o, %a
  store {T} %w, ptr %out""") + "\ndeclare {T} @llvm.fabs.{S}({T})\n")

# The middle of the SVD's derivatives (n x n, leading dimension n): off the diagonal
# out_ij = (a_ij s_j + s_i b_ij) / (s_j^2 - s_i^2), 0 where the numerator is 0 (so that repeated
# singular values without a seed that tells them apart give finite values); on it dscale * d_i
# %k the element, %ROW its row: the loads and the two values (off the diagonal, on it), shared
# with csvd_middle
SVD_MIDDLE_VALUES = """\
  %pa = getelementptr {T}, ptr %a, i64 %k
  %pb = getelementptr {T}, ptr %b, i64 %k
  %po = getelementptr {T}, ptr %out, i64 %k
  %psi = getelementptr {T}, ptr %s, i64 %ROW
  %psj = getelementptr {T}, ptr %s, i64 %j
  %pdi = getelementptr {T}, ptr %d, i64 %ROW
  %va = load {T}, ptr %pa
  %vb = load {T}, ptr %pb
  %si = load {T}, ptr %psi
  %sj = load {T}, ptr %psj
  %di = load {T}, ptr %pdi
  %as = fmul {T} %va, %sj
  %sb = fmul {T} %si, %vb
  %num = fadd {T} %as, %sb
  %si2 = fmul {T} %si, %si
  %sj2 = fmul {T} %sj, %sj
  %gap = fsub {T} %sj2, %si2
  %q = fdiv {T} %num, %gap
  %nonum = fcmp oeq {T} %num, 0.0
  %off = select i1 %nonum, {T} 0.0, {T} %q
  %ond = fmul {T} %dscale, %di
"""
instances("svd_middle", grid("svd_middle", "i64 %n, ptr %a, ptr %b, ptr %s, ptr %d, {T} %dscale, ptr %out", """\
  %jn = mul i64 %j, %n
  %k = add i64 %jn, %i
""" + SVD_MIDDLE_VALUES.replace("%ROW", "%i") + """\
  %diag = icmp eq i64 %i, %j
  %w = select i1 %diag, {T} %ond, {T} %off
  store {T} %w, ptr %po""", "%n", "%n"))

# The same on complex matrices, the grid over 2 rows of parts (%ci the complex row): divide_by
# with real s; svd_middle with complex a, b, out and real s, d, whose diagonal's imaginary part is
# iscale Im(a_ii) / s_i (0 where Im a_ii is 0): the phase the complex SVD's derivatives give U
instances("cdivide_by", grid("cdivide_by", "i64 %rows, i64 %cols, ptr %p, i64 %ld, ptr %s, i64 %along", """\
  %ci = lshr i64 %i, 1
  %jl = mul i64 %j, %ld
  %jl2 = shl i64 %jl, 1
  %k = add i64 %jl2, %i
  %q = getelementptr {T}, ptr %p, i64 %k
  %v = load {T}, ptr %q
  %rowwise = icmp ne i64 %along, 0
  %at = select i1 %rowwise, i64 %ci, i64 %j
  %ps = getelementptr {T}, ptr %s, i64 %at
  %d = load {T}, ptr %ps
  %r = fdiv {T} %v, %d
  %nothing = fcmp oeq {T} %v, 0.0
  %w = select i1 %nothing, {T} 0.0, {T} %r
  store {T} %w, ptr %q""", "%r2", pre="  %r2 = shl i64 %rows, 1"))
instances("csvd_middle", grid("csvd_middle", "i64 %n, ptr %a, ptr %b, ptr %s, ptr %d, {T} %dscale, "
                              "{T} %iscale, ptr %out", """\
  %ci = lshr i64 %i, 1
  %part = and i64 %i, 1
  %jn = mul i64 %j, %n
  %k0 = add i64 %jn, %ci
  %k1 = shl i64 %k0, 1
  %k = or i64 %k1, %part
""" + SVD_MIDDLE_VALUES.replace("%ROW", "%ci") + """\
  %ia = fmul {T} %iscale, %va
  %iq = fdiv {T} %ia, %si
  %noia = fcmp oeq {T} %ia, 0.0
  %oni = select i1 %noia, {T} 0.0, {T} %iq
  %re = icmp eq i64 %part, 0
  %on = select i1 %re, {T} %ond, {T} %oni
  %diag = icmp eq i64 %ci, %j
  %w = select i1 %diag, {T} %on, {T} %off
  store {T} %w, ptr %po""", "%n2", "%n", pre="  %n2 = shl i64 %n, 1"))

# LAPACK's row interchanges (ipiv: n 1-based i32 row numbers) on the `cols` columns of p (leading
# dimension ld): applied in order (P^T p) when %back is 0, in reverse order (P p) when it is 1
SWAP_ROWS = """
define internal void @enzpy.swap_rows.{S}(i64 %n, i64 %cols, ptr %ipiv, ptr %p, i64 %ld, i64 %back) {{
entry:
  %norows = icmp sle i64 %n, 0
  %nocols = icmp sle i64 %cols, 0
  %empty = or i1 %norows, %nocols
  br i1 %empty, label %done, label %step
step:
  %k = phi i64 [ 0, %entry ], [ %k1, %stepnext ]
  %rev = sub i64 %n, 1
  %revk = sub i64 %rev, %k
  %isback = icmp ne i64 %back, 0
  %i = select i1 %isback, i64 %revk, i64 %k
  %pp = getelementptr i32, ptr %ipiv, i64 %i
  %p32 = load i32, ptr %pp
  %p1 = sext i32 %p32 to i64
  %r = sub i64 %p1, 1
  %same = icmp eq i64 %r, %i
  br i1 %same, label %stepnext, label %col
col:
  %j = phi i64 [ 0, %step ], [ %j1, %col ]
  %jo = mul i64 %j, %ld
  %ai = add i64 %jo, %i
  %ar = add i64 %jo, %r
  %qi = getelementptr {T}, ptr %p, i64 %ai
  %qr = getelementptr {T}, ptr %p, i64 %ar
  %vi = load {T}, ptr %qi
  %vr = load {T}, ptr %qr
  store {T} %vr, ptr %qi
  store {T} %vi, ptr %qr
  %j1 = add i64 %j, 1
  %cmore = icmp slt i64 %j1, %cols
  br i1 %cmore, label %col, label %stepnext
stepnext:
  %k1 = add i64 %k, 1
  %more = icmp slt i64 %k1, %n
  br i1 %more, label %step, label %done
done:
  ret void
}}
"""
# the same on complex p, `enzpy.cswap_rows.{S}`: both parts of each element swapped
CSWAP_ROWS = SWAP_ROWS.replace("@enzpy.swap_rows.", "@enzpy.cswap_rows.").replace("""\
  %ai = add i64 %jo, %i
  %ar = add i64 %jo, %r
""", """\
  %ai0 = add i64 %jo, %i
  %ar0 = add i64 %jo, %r
  %ai = shl i64 %ai0, 1
  %ar = shl i64 %ar0, 1
""").replace("""\
  store {T} %vi, ptr %qr
""", """\
  store {T} %vi, ptr %qr
  %qii = getelementptr {T}, ptr %qi, i64 1
  %qri = getelementptr {T}, ptr %qr, i64 1
  %wi = load {T}, ptr %qii
  %wr = load {T}, ptr %qri
  store {T} %wr, ptr %qii
  store {T} %wi, ptr %qri
""")
for _s, _t in (("f64", "double"), ("f32", "float")):
    HELPERS[f"enzpy.swap_rows.{_s}"] = SWAP_ROWS.format(S=_s, T=_t)
    HELPERS[f"enzpy.cswap_rows.{_s}"] = CSWAP_ROWS.format(S=_s, T=_t)

# The middle of the symmetric eigendecomposition's derivatives: x = F o t with
# F_ij = 1 / (w_j - w_i) off the diagonal (0 where t_ij is 0, so that repeated eigenvalues with no
# seed on their eigenvectors give finite values), and dw (or 0 where dw is null) on it
EIG_MIDDLE = """
define internal void @enzpy.eig_middle.{S}(i64 %n, ptr %t, ptr %w, ptr %dw, ptr %x) {{
entry:
  %empty = icmp sle i64 %n, 0
  %nodw = icmp eq ptr %dw, null
  br i1 %empty, label %done, label %col
col:
  %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
  %pwj = getelementptr {T}, ptr %w, i64 %j
  %wj = load {T}, ptr %pwj
  br label %row
row:
  %i = phi i64 [ 0, %col ], [ %i1, %rownext ]
  %jo = mul i64 %j, %n
  %k = add i64 %jo, %i
  %pt = getelementptr {T}, ptr %t, i64 %k
  %px = getelementptr {T}, ptr %x, i64 %k
  %diag = icmp eq i64 %i, %j
  br i1 %diag, label %ondiag, label %off
ondiag:
  br i1 %nodw, label %zero, label %fromdw
zero:
  store {T} 0.0, ptr %px
  br label %rownext
fromdw:
  %pdw = getelementptr {T}, ptr %dw, i64 %i
  %vdw = load {T}, ptr %pdw
  store {T} %vdw, ptr %px
  br label %rownext
off:
  %pwi = getelementptr {T}, ptr %w, i64 %i
  %wi = load {T}, ptr %pwi
  %gap = fsub {T} %wj, %wi
  %vt = load {T}, ptr %pt
  %q = fdiv {T} %vt, %gap
  %none = fcmp oeq {T} %vt, 0.0
  %r = select i1 %none, {T} 0.0, {T} %q
  store {T} %r, ptr %px
  br label %rownext
rownext:
  %i1 = add i64 %i, 1
  %rmore = icmp slt i64 %i1, %n
  br i1 %rmore, label %row, label %colnext
colnext:
  %j1 = add i64 %j, 1
  %cmore = icmp slt i64 %j1, %n
  br i1 %cmore, label %col, label %done
done:
  ret void
}}
"""

# dst[i] = src[i, i] (n x n, leading dimension lds)
DIAGONAL = """
define internal void @enzpy.diagonal.{S}(i64 %n, ptr %src, i64 %lds, ptr %dst) {{
entry:
  %empty = icmp sle i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %step = add i64 %lds, 1
  %k = mul i64 %i, %step
  %ps = getelementptr {T}, ptr %src, i64 %k
  %v = load {T}, ptr %ps
  %pd = getelementptr {T}, ptr %dst, i64 %i
  store {T} %v, ptr %pd
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""
for _s, _t in (("f64", "double"), ("f32", "float")):
    HELPERS[f"enzpy.eig_middle.{_s}"] = EIG_MIDDLE.format(S=_s, T=_t)
    HELPERS[f"enzpy.diagonal.{_s}"] = DIAGONAL.format(S=_s, T=_t)

# eig_middle of a complex t and x with real w, dw (the Hermitian eigendecomposition): each part
# of t_ij over w_j - w_i, dw_i + 0i on the diagonal
instances("ceig_middle", grid("ceig_middle", "i64 %n, ptr %t, ptr %w, ptr %dw, ptr %x", """\
  %ci = lshr i64 %i, 1
  %part = and i64 %i, 1
  %jn = mul i64 %j, %n
  %k0 = add i64 %jn, %ci
  %k1 = shl i64 %k0, 1
  %k = or i64 %k1, %part
  %pt = getelementptr {T}, ptr %t, i64 %k
  %px = getelementptr {T}, ptr %x, i64 %k
  %vt = load {T}, ptr %pt
  %pwi = getelementptr {T}, ptr %w, i64 %ci
  %pwj = getelementptr {T}, ptr %w, i64 %j
  %wi = load {T}, ptr %pwi
  %wj = load {T}, ptr %pwj
  %gap = fsub {T} %wj, %wi
  %q = fdiv {T} %vt, %gap
  %none = fcmp oeq {T} %vt, 0.0
  %r = select i1 %none, {T} 0.0, {T} %q
  %nodw = icmp eq ptr %dw, null
  %dwp = select i1 %nodw, ptr %w, ptr %dw
  %pdw = getelementptr {T}, ptr %dwp, i64 %ci
  %vdw = load {T}, ptr %pdw
  %dv0 = select i1 %nodw, {T} 0.0, {T} %vdw
  %re = icmp eq i64 %part, 0
  %dv = select i1 %re, {T} %dv0, {T} 0.0
  %diag = icmp eq i64 %ci, %j
  %v = select i1 %diag, {T} %dv, {T} %r
  store {T} %v, ptr %px""", "%n2", "%n", pre="  %n2 = shl i64 %n, 1"))

# Does a zero of the adjoint operand meet an inf or NaN of the primal one in the product op(A)
# op(B) (op(A) m x k, op(B) k x n, transposed where ta, tb)? The terms are op(A)_il op(B)_lj, so
# for each l: count the zeros of the adjoint's slice l ({W} = a: column l of op(A), b: row l of
# op(B)), and only where there is one, test the primal's slice l for inf or NaN (x * 0 is NaN
# just there; the sum of them vectorizes). A dense adjoint costs one pass over it.
ZERO_MEETS_NONFINITE = ("\ndefine internal i1 @enzpy.zero_meets_nonfinite_{W}.{S}(i1 %ta, i1 %tb, i64 %m, "
                        "i64 %n, i64 %k, ptr %a, i64 %lda, ptr %b, i64 %ldb) {{") + """
entry:
  %e0 = icmp sle i64 %m, 0
  %e1 = icmp sle i64 %n, 0
  %e2 = icmp sle i64 %k, 0
  %e01 = or i1 %e0, %e1
  %e = or i1 %e01, %e2
  br i1 %e, label %no, label %slice
slice:
  %l = phi i64 [ 0, %entry ], [ %l1, %next ]
  %llda = mul i64 %l, %lda
  %astart = select i1 %ta, i64 %l, i64 %llda
  %astride = select i1 %ta, i64 %lda, i64 1
  %lldb = mul i64 %l, %ldb
  %bstart = select i1 %tb, i64 %lldb, i64 %l
  %bstride = select i1 %tb, i64 1, i64 %ldb
  br label %zeros
zeros:
  %zi = phi i64 [ 0, %slice ], [ %zi1, %zeros ]
  %zc = phi i64 [ 0, %slice ], [ %zc1, %zeros ]
  %zo0 = mul i64 %zi, %{D}stride
  %zo = add i64 %{D}start, %zo0
  %zq = getelementptr {T}, ptr %{D}, i64 %zo
  %zv = load {T}, ptr %zq
  %isz = fcmp oeq {T} %zv, 0.0
  %zx = zext i1 %isz to i64
  %zc1 = add i64 %zc, %zx
  %zi1 = add i64 %zi, 1
  %zmore = icmp slt i64 %zi1, %{DLEN}
  br i1 %zmore, label %zeros, label %counted
counted:
  %anyz = icmp ne i64 %zc1, 0
  br i1 %anyz, label %finite, label %next
finite:
  %fi = phi i64 [ 0, %counted ], [ %fi1, %finite ]
  %fs = phi {T} [ 0.0, %counted ], [ %fs1, %finite ]
  %fo0 = mul i64 %fi, %{P}stride
  %fo = add i64 %{P}start, %fo0
  %fq = getelementptr {T}, ptr %{P}, i64 %fo
  %fv = load {T}, ptr %fq
  %fz = fmul {T} %fv, 0.0
  %fs1 = fadd reassoc {T} %fs, %fz
  %fi1 = add i64 %fi, 1
  %fmore = icmp slt i64 %fi1, %{PLEN}
  br i1 %fmore, label %finite, label %tested
tested:
  %bad = fcmp uno {T} %fs1, 0.0
  br i1 %bad, label %yes, label %next
next:
  %l1 = add i64 %l, 1
  %lmore = icmp slt i64 %l1, %k
  br i1 %lmore, label %slice, label %no
yes:
  ret i1 true
no:
  ret i1 false
}}
"""

# C (m x n, leading dimension ldc) += alpha op(A) op(B), op(A) m x k, op(B) k x n (transposed
# where ta, tb), one product at a time under the strong zero of rules/partials.py: the operand
# {D} is an adjoint (or tangent), {P} a primal value, and a zero {D} times an inf or NaN {P}
# contributes 0. The slow path of a BLAS record's reverse, taken only where zero_meets_nonfinite holds.
GEMM_GUARDED = ("\ndefine internal void @enzpy.gemm_guarded_{W}.{S}(i1 %ta, i1 %tb, i64 %m, i64 %n, "
                "i64 %k, {T} %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb, ptr %c, i64 %ldc) {{") + """
entry:
  %e0 = icmp sle i64 %m, 0
  %e1 = icmp sle i64 %n, 0
  %e2 = icmp sle i64 %k, 0
  %e01 = or i1 %e0, %e1
  %e = or i1 %e01, %e2
  br i1 %e, label %done, label %col
col:
  %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
  br label %row
row:
  %i = phi i64 [ 0, %col ], [ %i1, %rownext ]
  br label %inner
inner:
  %l = phi i64 [ 0, %row ], [ %l1, %inner ]
  %acc = phi {T} [ 0.0, %row ], [ %acc1, %inner ]
  %ai0 = mul i64 %i, %lda
  %ai1 = add i64 %ai0, %l
  %al0 = mul i64 %l, %lda
  %al1 = add i64 %al0, %i
  %ak = select i1 %ta, i64 %ai1, i64 %al1
  %pa = getelementptr {T}, ptr %a, i64 %ak
  %va = load {T}, ptr %pa
  %bl0 = mul i64 %l, %ldb
  %bl1 = add i64 %bl0, %j
  %bj0 = mul i64 %j, %ldb
  %bj1 = add i64 %bj0, %l
  %bk = select i1 %tb, i64 %bl1, i64 %bj1
  %pb = getelementptr {T}, ptr %b, i64 %bk
  %vb = load {T}, ptr %pb
  %t = fmul {T} %va, %vb
  %nz = fcmp une {T} {D}, 0.0
  %ab = call {T} @llvm.fabs.{S}({T} {P})
  %fin = fcmp olt {T} %ab, 0x7FF0000000000000
  %keep = or i1 %nz, %fin
  %g = select i1 %keep, {T} %t, {T} 0.0
  %acc1 = fadd {T} %acc, %g
  %l1 = add i64 %l, 1
  %lmore = icmp slt i64 %l1, %k
  br i1 %lmore, label %inner, label %rownext
rownext:
  %ci0 = mul i64 %j, %ldc
  %ci = add i64 %ci0, %i
  %pc = getelementptr {T}, ptr %c, i64 %ci
  %vc = load {T}, ptr %pc
  %s = fmul {T} %alpha, %acc1
  %vc1 = fadd {T} %vc, %s
  store {T} %vc1, ptr %pc
  %i1 = add i64 %i, 1
  %rmore = icmp slt i64 %i1, %m
  br i1 %rmore, label %row, label %colnext
colnext:
  %j1 = add i64 %j, 1
  %cmore = icmp slt i64 %j1, %n
  br i1 %cmore, label %col, label %done
done:
  ret void
}}
declare {T} @llvm.fabs.{S}({T})
"""

for _s, _t in (("f64", "double"), ("f32", "float")):
    for _w, _d, _p in (("a", "%va", "%vb"), ("b", "%vb", "%va")):
        HELPERS[f"enzpy.gemm_guarded_{_w}.{_s}"] = GEMM_GUARDED.format(S=_s, T=_t, W=_w, D=_d, P=_p)
    for _w, _d, _p, _dl, _pl in (("a", "a", "b", "m", "n"), ("b", "b", "a", "n", "m")):
        HELPERS[f"enzpy.zero_meets_nonfinite_{_w}.{_s}"] = ZERO_MEETS_NONFINITE.format(
            S=_s, T=_t, W=_w, D=_d, P=_p, DLEN=_dl, PLEN=_pl)


# ---- complex data ({T} pairs: real, imaginary) --------------------------------------------------
# A complex adjoint holds dL/dRe + i dL/dIm. For a complex-linear product P the reverse is
# conj(P^T conj(adjoint)): rules/blas.py conjugates the shadows in place around the real
# formulas (conj_matrix), and the complex dot's adjoint is its own loop (cdot_adjoint).

# rows x cols complex column-major matrix at p (leading dimension ld, in elements): p = conj(p)
instances("conj_matrix", grid("conj_matrix", "i64 %rows, i64 %cols, ptr %p, i64 %ld", """\
  %k = add i64 %base, %i
  %k2 = shl i64 %k, 1
  %k2i = or i64 %k2, 1
  %q = getelementptr {T}, ptr %p, i64 %k2i
  %v = load {T}, ptr %q
  %w = fneg {T} %v
  store {T} %w, ptr %q""", head="  %base = mul i64 %j, %ld"))

# reverse of out = sum x y (dotu) or sum conj(x) y (dotc, %c true) over n complex elements, with
# the adjoint d = dre + i dim: dx += d conj(y) (dotc: conj(d) y), dy += d conj(x) (dotc: d x);
# either shadow may be null; nothing when d is 0 (the strong zero, rules/partials.py)
CDOT_ADJOINT = """
define internal void @enzpy.cdot_adjoint.{S}(i64 %n, ptr %x, ptr %y, ptr %dx, ptr %dy, {T} %dre, {T} %dim, i1 %c) {{
entry:
  %empty = icmp sle i64 %n, 0
  %rz = fcmp oeq {T} %dre, 0.0
  %iz = fcmp oeq {T} %dim, 0.0
  %dz = and i1 %rz, %iz
  %skip = or i1 %empty, %dz
  %ndim = fneg {T} %dim
  %axi = select i1 %c, {T} %ndim, {T} %dim
  %sgn = select i1 %c, {T} 1.0, {T} -1.0
  br i1 %skip, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %k = shl i64 %i, 1
  %ki = or i64 %k, 1
  %pxr = getelementptr {T}, ptr %x, i64 %k
  %pxi = getelementptr {T}, ptr %x, i64 %ki
  %pyr = getelementptr {T}, ptr %y, i64 %k
  %pyi = getelementptr {T}, ptr %y, i64 %ki
  %xr = load {T}, ptr %pxr
  %xi0 = load {T}, ptr %pxi
  %yr = load {T}, ptr %pyr
  %yi0 = load {T}, ptr %pyi
  %xi = fmul {T} %xi0, %sgn
  %yi = fmul {T} %yi0, %sgn
  %hasdx = icmp ne ptr %dx, null
  br i1 %hasdx, label %adx, label %checky
adx:
  %a1 = fmul {T} %dre, %yr
  %a2 = fmul {T} %axi, %yi
  %ar = fsub {T} %a1, %a2
  %a3 = fmul {T} %dre, %yi
  %a4 = fmul {T} %axi, %yr
  %ai = fadd {T} %a3, %a4
  %pdxr = getelementptr {T}, ptr %dx, i64 %k
  %pdxi = getelementptr {T}, ptr %dx, i64 %ki
  %odxr = load {T}, ptr %pdxr
  %odxi = load {T}, ptr %pdxi
  %ndxr = fadd {T} %odxr, %ar
  %ndxi = fadd {T} %odxi, %ai
  store {T} %ndxr, ptr %pdxr
  store {T} %ndxi, ptr %pdxi
  br label %checky
checky:
  %hasdy = icmp ne ptr %dy, null
  br i1 %hasdy, label %ady, label %next
ady:
  %b1 = fmul {T} %dre, %xr
  %b2 = fmul {T} %dim, %xi
  %br = fsub {T} %b1, %b2
  %b3 = fmul {T} %dre, %xi
  %b4 = fmul {T} %dim, %xr
  %bi = fadd {T} %b3, %b4
  %pdyr = getelementptr {T}, ptr %dy, i64 %k
  %pdyi = getelementptr {T}, ptr %dy, i64 %ki
  %odyr = load {T}, ptr %pdyr
  %odyi = load {T}, ptr %pdyi
  %ndyr = fadd {T} %odyr, %br
  %ndyi = fadd {T} %odyi, %bi
  store {T} %ndyr, ptr %pdyr
  store {T} %ndyi, ptr %pdyi
  br label %next
next:
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""
for _s, _t in (("f64", "double"), ("f32", "float")):
    HELPERS[f"enzpy.cdot_adjoint.{_s}"] = CDOT_ADJOINT.format(S=_s, T=_t)

# complex p (rows x cols, leading dimension ld) += alpha x y^T (x, y contiguous complex, alpha real)
instances("crank1", grid("crank1", "i64 %rows, i64 %cols, {T} %alpha, ptr %x, ptr %y, ptr %p, i64 %ld", """\
  %xk = shl i64 %i, 1
  %xki = or i64 %xk, 1
  %pxr = getelementptr {T}, ptr %x, i64 %xk
  %pxi = getelementptr {T}, ptr %x, i64 %xki
  %xr = load {T}, ptr %pxr
  %xi = load {T}, ptr %pxi
  %k = add i64 %base, %i
  %k2 = shl i64 %k, 1
  %k2i = or i64 %k2, 1
  %qr = getelementptr {T}, ptr %p, i64 %k2
  %qi = getelementptr {T}, ptr %p, i64 %k2i
  %vr = load {T}, ptr %qr
  %vi = load {T}, ptr %qi
  %t1 = fmul {T} %xr, %ayr
  %t2 = fmul {T} %xi, %ayi
  %tr = fsub {T} %t1, %t2
  %t3 = fmul {T} %xr, %ayi
  %t4 = fmul {T} %xi, %ayr
  %ti = fadd {T} %t3, %t4
  %sr = fadd {T} %vr, %tr
  %si = fadd {T} %vi, %ti
  store {T} %sr, ptr %qr
  store {T} %si, ptr %qi""", head="""\
  %base = mul i64 %j, %ld
  %yk = shl i64 %j, 1
  %yki = or i64 %yk, 1
  %pyr = getelementptr {T}, ptr %y, i64 %yk
  %pyi = getelementptr {T}, ptr %y, i64 %yki
  %yr = load {T}, ptr %pyr
  %yi = load {T}, ptr %pyi
  %ayr = fmul {T} %alpha, %yr
  %ayi = fmul {T} %alpha, %yi"""))
