; -- SQUARE_PARAMS
i64 %n, ptr %src, i64 %lds, ptr %dst, i64 %ldd

; -- RECT_PARAMS
i64 %rows, i64 %cols, ptr %src, i64 %lds, ptr %dst, i64 %ldd

; -- SQUARE_ADDRESSES
  %js = mul i64 %j, %lds
  %ij = add i64 %js, %i
  %sij = getelementptr {{TYPE}}, ptr %src, i64 %ij
  %is = mul i64 %i, %lds
  %ji = add i64 %is, %j
  %sji = getelementptr {{TYPE}}, ptr %src, i64 %ji
  %jd = mul i64 %j, %ldd
  %ijd = add i64 %jd, %i
  %dij = getelementptr {{TYPE}}, ptr %dst, i64 %ijd
  %up = icmp sle i64 %i, %j
  %diag = icmp eq i64 %i, %j

; -- COMPLEX_SQUARE_ADDRESSES
  %ci = lshr i64 %i, 1
  %part = and i64 %i, 1
  %js = mul i64 %j, %lds
  %ij0 = add i64 %js, %ci
  %ij1 = shl i64 %ij0, 1
  %ij = or i64 %ij1, %part
  %sij = getelementptr {{TYPE}}, ptr %src, i64 %ij
  %is = mul i64 %ci, %lds
  %ji0 = add i64 %is, %j
  %ji1 = shl i64 %ji0, 1
  %ji = or i64 %ji1, %part
  %sji = getelementptr {{TYPE}}, ptr %src, i64 %ji
  %jd = mul i64 %j, %ldd
  %ijd0 = add i64 %jd, %ci
  %ijd1 = shl i64 %ijd0, 1
  %ijd = or i64 %ijd1, %part
  %dij = getelementptr {{TYPE}}, ptr %dst, i64 %ijd
  %up = icmp sle i64 %ci, %j
  %diag = icmp eq i64 %ci, %j
  %re = icmp eq i64 %part, 0
  %one = select i1 %re, {{TYPE}} 1.0, {{TYPE}} 0.0

; -- HERMITIAN_PARTS
  %a = load {{TYPE}}, ptr %sij
  %b = load {{TYPE}}, ptr %sji
  %nb = fneg {{TYPE}} %b
  %cb = select i1 %re, {{TYPE}} %b, {{TYPE}} %nb
  %ad = select i1 %re, {{TYPE}} %a, {{TYPE}} 0.0

; -- LOAD_SRC
  %js = mul i64 %j, %lds
  %ks = add i64 %js, %i
  %ps = getelementptr {{TYPE}}, ptr %src, i64 %ks
  %v = load {{TYPE}}, ptr %ps

; -- DST_AT_IJ
  %jd = mul i64 %j, %ldd
  %kd = add i64 %jd, %i
  %pd = getelementptr {{TYPE}}, ptr %dst, i64 %kd

; -- SVD_MIDDLE_VALUES
  %pa = getelementptr {{TYPE}}, ptr %a, i64 %k
  %pb = getelementptr {{TYPE}}, ptr %b, i64 %k
  %po = getelementptr {{TYPE}}, ptr %out, i64 %k
  %psi = getelementptr {{TYPE}}, ptr %s, i64 {{ROW}}
  %psj = getelementptr {{TYPE}}, ptr %s, i64 %j
  %pdi = getelementptr {{TYPE}}, ptr %d, i64 {{ROW}}
  %va = load {{TYPE}}, ptr %pa
  %vb = load {{TYPE}}, ptr %pb
  %si = load {{TYPE}}, ptr %psi
  %sj = load {{TYPE}}, ptr %psj
  %di = load {{TYPE}}, ptr %pdi
  %as = fmul {{TYPE}} %va, %sj
  %sb = fmul {{TYPE}} %si, %vb
  %num = fadd {{TYPE}} %as, %sb
  %si2 = fmul {{TYPE}} %si, %si
  %sj2 = fmul {{TYPE}} %sj, %sj
  %gap = fsub {{TYPE}} %sj2, %si2
  %q = fdiv {{TYPE}} %num, %gap
  %nonum = fcmp oeq {{TYPE}} %num, 0.0
  %off = select i1 %nonum, {{TYPE}} 0.0, {{TYPE}} %q
  %ond = fmul {{TYPE}} %dscale, %di

; -- COMPLEX_ROWS
  %n2 = shl i64 %n, 1

; -- family.square
; the elementwise maps of an n x n matrix (MAP: a section square.<name>)
params: {{SQUARE_PARAMS}}
grid: %n x %n
body:
{{SQUARE_ADDRESSES}}
{{MAP}}

; -- family.complex_square
; the same maps on a complex matrix, `c<name>`: each is linear in each part but for
; unit_lower_of's diagonal (1 + 0i, ONE is %one), so the grid runs over 2n rows of parts
params: {{SQUARE_PARAMS}}
grid: %n2 x %n
pre:
{{COMPLEX_ROWS}}
body:
{{COMPLEX_SQUARE_ADDRESSES}}
{{MAP}}

; -- family.hermitian
; the maps of a complex matrix alone (MAP: a section hermitian.<name>)
params: {{SQUARE_PARAMS}}
grid: %n2 x %n
pre:
{{COMPLEX_ROWS}}
body:
{{COMPLEX_SQUARE_ADDRESSES}}
{{HERMITIAN_PARTS}}
{{MAP}}

; -- square.upper_of
  %v = load {{TYPE}}, ptr %sij
  %w = select i1 %up, {{TYPE}} %v, {{TYPE}} 0.0
  store {{TYPE}} %w, ptr %dij

; -- square.half_lower
  %v = load {{TYPE}}, ptr %sij
  %h = fmul {{TYPE}} %v, 0.5
  %o = select i1 %up, {{TYPE}} 0.0, {{TYPE}} %v
  %w = select i1 %diag, {{TYPE}} %h, {{TYPE}} %o
  store {{TYPE}} %w, ptr %dij

; -- square.half_upper
  %v = load {{TYPE}}, ptr %sij
  %h = fmul {{TYPE}} %v, 0.5
  %o = select i1 %up, {{TYPE}} %v, {{TYPE}} 0.0
  %w = select i1 %diag, {{TYPE}} %h, {{TYPE}} %o
  store {{TYPE}} %w, ptr %dij

; -- square.fold_upper
  %a = load {{TYPE}}, ptr %sij
  %b = load {{TYPE}}, ptr %sji
  %ab = fadd {{TYPE}} %a, %b
  %s = select i1 %diag, {{TYPE}} %a, {{TYPE}} %ab
  %old = load {{TYPE}}, ptr %dij
  %w = select i1 %up, {{TYPE}} %s, {{TYPE}} %old
  store {{TYPE}} %w, ptr %dij

; -- square.mirror_upper
  %a = load {{TYPE}}, ptr %sij
  %b = load {{TYPE}}, ptr %sji
  %w = select i1 %up, {{TYPE}} %a, {{TYPE}} %b
  store {{TYPE}} %w, ptr %dij

; -- square.put_upper
  %a = load {{TYPE}}, ptr %sij
  %old = load {{TYPE}}, ptr %dij
  %w = select i1 %up, {{TYPE}} %a, {{TYPE}} %old
  store {{TYPE}} %w, ptr %dij

; -- square.transposed
  %a = load {{TYPE}}, ptr %sji
  store {{TYPE}} %a, ptr %dij

; -- square.fold_lower_zero
  %a = load {{TYPE}}, ptr %sij
  %b = load {{TYPE}}, ptr %sji
  %ab = fadd {{TYPE}} %a, %b
  %s = select i1 %up, {{TYPE}} 0.0, {{TYPE}} %ab
  %w = select i1 %diag, {{TYPE}} %a, {{TYPE}} %s
  store {{TYPE}} %w, ptr %dij

; -- square.fold_upper_zero
  %a = load {{TYPE}}, ptr %sij
  %b = load {{TYPE}}, ptr %sji
  %ab = fadd {{TYPE}} %a, %b
  %s = select i1 %up, {{TYPE}} %ab, {{TYPE}} 0.0
  %w = select i1 %diag, {{TYPE}} %a, {{TYPE}} %s
  store {{TYPE}} %w, ptr %dij

; -- square.mirror_lower
  %a = load {{TYPE}}, ptr %sij
  %b = load {{TYPE}}, ptr %sji
  %w = select i1 %up, {{TYPE}} %b, {{TYPE}} %a
  store {{TYPE}} %w, ptr %dij

; -- square.copied
  %a = load {{TYPE}}, ptr %sij
  store {{TYPE}} %a, ptr %dij

; -- square.unit_lower_of
  %v = load {{TYPE}}, ptr %sij
  %o = select i1 %up, {{TYPE}} 0.0, {{TYPE}} %v
  %w = select i1 %diag, {{TYPE}} {{ONE}}, {{TYPE}} %o
  store {{TYPE}} %w, ptr %dij

; -- square.strict_lower_of
  %v = load {{TYPE}}, ptr %sij
  %w = select i1 %up, {{TYPE}} 0.0, {{TYPE}} %v
  store {{TYPE}} %w, ptr %dij

; -- square.antisym
  %a = load {{TYPE}}, ptr %sij
  %b = load {{TYPE}}, ptr %sji
  %w = fsub {{TYPE}} %a, %b
  store {{TYPE}} %w, ptr %dij

; -- square.skew_lower
  %a = load {{TYPE}}, ptr %sij
  %b = load {{TYPE}}, ptr %sji
  %nb = fneg {{TYPE}} %b
  %o = select i1 %up, {{TYPE}} %nb, {{TYPE}} %a
  %w = select i1 %diag, {{TYPE}} 0.0, {{TYPE}} %o
  store {{TYPE}} %w, ptr %dij

; -- hermitian.hfold_upper
  %ab = fadd {{TYPE}} %a, %cb
  %s = select i1 %diag, {{TYPE}} %ad, {{TYPE}} %ab
  %old = load {{TYPE}}, ptr %dij
  %w = select i1 %up, {{TYPE}} %s, {{TYPE}} %old
  store {{TYPE}} %w, ptr %dij

; -- hermitian.hfold_lower_zero
  %ab = fadd {{TYPE}} %a, %cb
  %s = select i1 %up, {{TYPE}} 0.0, {{TYPE}} %ab
  %w = select i1 %diag, {{TYPE}} %ad, {{TYPE}} %s
  store {{TYPE}} %w, ptr %dij

; -- hermitian.hfold_upper_zero
  %ab = fadd {{TYPE}} %a, %cb
  %s = select i1 %up, {{TYPE}} %ab, {{TYPE}} 0.0
  %w = select i1 %diag, {{TYPE}} %ad, {{TYPE}} %s
  store {{TYPE}} %w, ptr %dij

; -- hermitian.hmirror_upper
  %o = select i1 %up, {{TYPE}} %a, {{TYPE}} %cb
  %w = select i1 %diag, {{TYPE}} %ad, {{TYPE}} %o
  store {{TYPE}} %w, ptr %dij

; -- hermitian.hmirror_lower
  %o = select i1 %up, {{TYPE}} %cb, {{TYPE}} %a
  %w = select i1 %diag, {{TYPE}} %ad, {{TYPE}} %o
  store {{TYPE}} %w, ptr %dij

; -- hermitian.hantisym
  %w = fsub {{TYPE}} %a, %cb
  store {{TYPE}} %w, ptr %dij

; -- hermitian.htransposed
  store {{TYPE}} %cb, ptr %dij

; -- rank1
params: i64 %rows, i64 %cols, {{TYPE}} %alpha, ptr %x, ptr %y, ptr %p, i64 %ld
head:
  %base = mul i64 %j, %ld
  %py = getelementptr {{TYPE}}, ptr %y, i64 %j
  %yv = load {{TYPE}}, ptr %py
  %ay = fmul {{TYPE}} %alpha, %yv
body:
  %px = getelementptr {{TYPE}}, ptr %x, i64 %i
  %xv = load {{TYPE}}, ptr %px
  %k = add i64 %base, %i
  %q = getelementptr {{TYPE}}, ptr %p, i64 %k
  %v = load {{TYPE}}, ptr %q
  %t = fmul {{TYPE}} %xv, %ay
  %s = fadd {{TYPE}} %v, %t
  store {{TYPE}} %s, ptr %q

; -- scale_matrix
params: i64 %rows, i64 %cols, ptr %p, i64 %ld, {{TYPE}} %beta
head:
  %base = mul i64 %j, %ld
body:
  %zero = fcmp oeq {{TYPE}} %beta, 0.0
  %k = add i64 %base, %i
  %q = getelementptr {{TYPE}}, ptr %p, i64 %k
  %v = load {{TYPE}}, ptr %q
  %s = fmul {{TYPE}} %v, %beta
  %w = select i1 %zero, {{TYPE}} 0.0, {{TYPE}} %s
  store {{TYPE}} %w, ptr %q

; -- copy_rect
params: {{RECT_PARAMS}}
body:
{{LOAD_SRC}}
{{DST_AT_IJ}}
  store {{TYPE}} %v, ptr %pd

; -- upper_rect
params: {{RECT_PARAMS}}
body:
{{LOAD_SRC}}
  %up = icmp sle i64 %i, %j
  %w = select i1 %up, {{TYPE}} %v, {{TYPE}} 0.0
{{DST_AT_IJ}}
  store {{TYPE}} %w, ptr %pd

; -- cupper_rect
params: {{RECT_PARAMS}}
grid: %r2 x %cols
pre:
  %r2 = shl i64 %rows, 1
body:
  %ci = lshr i64 %i, 1
  %js = mul i64 %j, %lds
  %js2 = shl i64 %js, 1
  %ks = add i64 %js2, %i
  %ps = getelementptr {{TYPE}}, ptr %src, i64 %ks
  %v = load {{TYPE}}, ptr %ps
  %up = icmp sle i64 %ci, %j
  %w = select i1 %up, {{TYPE}} %v, {{TYPE}} 0.0
  %jd = mul i64 %j, %ldd
  %jd2 = shl i64 %jd, 1
  %kd = add i64 %jd2, %i
  %pd = getelementptr {{TYPE}}, ptr %dst, i64 %kd
  store {{TYPE}} %w, ptr %pd

; -- transpose_rect
params: {{RECT_PARAMS}}
body:
{{LOAD_SRC}}
  %id = mul i64 %i, %ldd
  %kd = add i64 %id, %j
  %pd = getelementptr {{TYPE}}, ptr %dst, i64 %kd
  store {{TYPE}} %v, ptr %pd

; -- divide_by
params: i64 %rows, i64 %cols, ptr %p, i64 %ld, ptr %s, i64 %along
body:
  %jl = mul i64 %j, %ld
  %k = add i64 %jl, %i
  %q = getelementptr {{TYPE}}, ptr %p, i64 %k
  %v = load {{TYPE}}, ptr %q
  %rowwise = icmp ne i64 %along, 0
  %at = select i1 %rowwise, i64 %i, i64 %j
  %ps = getelementptr {{TYPE}}, ptr %s, i64 %at
  %d = load {{TYPE}}, ptr %ps
  %r = fdiv {{TYPE}} %v, %d
  %nothing = fcmp oeq {{TYPE}} %v, 0.0
  %w = select i1 %nothing, {{TYPE}} 0.0, {{TYPE}} %r
  store {{TYPE}} %w, ptr %q

; -- col_dots
params: i64 %rows, i64 %cols, ptr %a, i64 %lda, ptr %b, i64 %ldb, ptr %out
body:
  %ja = mul i64 %j, %lda
  %ka = add i64 %ja, %i
  %pa = getelementptr {{TYPE}}, ptr %a, i64 %ka
  %jb = mul i64 %j, %ldb
  %kb = add i64 %jb, %i
  %pb = getelementptr {{TYPE}}, ptr %b, i64 %kb
  %va = load {{TYPE}}, ptr %pa
  %vb = load {{TYPE}}, ptr %pb
  %ab = fmul {{TYPE}} %va, %vb
  %po = getelementptr {{TYPE}}, ptr %out, i64 %j
  %o = load {{TYPE}}, ptr %po
  %w = fadd {{TYPE}} %o, %ab
  store {{TYPE}} %w, ptr %po

; -- add_scaled_cols
params: {{RECT_PARAMS}}, ptr %num, ptr %den
body:
  %pn = getelementptr {{TYPE}}, ptr %num, i64 %j
  %pq = getelementptr {{TYPE}}, ptr %den, i64 %j
  %vn = load {{TYPE}}, ptr %pn
  %vq = load {{TYPE}}, ptr %pq
  %ratio = fdiv {{TYPE}} %vn, %vq
  %flat = fcmp oeq {{TYPE}} %vq, 0.0
  %f = select i1 %flat, {{TYPE}} 0.0, {{TYPE}} %ratio
{{LOAD_SRC}}
{{DST_AT_IJ}}
  %o = load {{TYPE}}, ptr %pd
  %sv = fmul {{TYPE}} %v, %f
  %w = fadd {{TYPE}} %o, %sv
  store {{TYPE}} %w, ptr %pd

; -- sum_abs
params: i64 %rows, i64 %cols, ptr %p, i64 %ld, ptr %out
body:
  %jl = mul i64 %j, %ld
  %k = add i64 %jl, %i
  %q = getelementptr {{TYPE}}, ptr %p, i64 %k
  %v = load {{TYPE}}, ptr %q
  %a = call {{TYPE}} @llvm.fabs.{{SUFFIX}}({{TYPE}} %v)
  %o = load {{TYPE}}, ptr %out
  %w = fadd {{TYPE}} %o, %a
  store {{TYPE}} %w, ptr %out
tail:

declare {{TYPE}} @llvm.fabs.{{SUFFIX}}({{TYPE}})

; -- svd_middle
params: i64 %n, ptr %a, ptr %b, ptr %s, ptr %d, {{TYPE}} %dscale, ptr %out
grid: %n x %n
ROW: %i
body:
  %jn = mul i64 %j, %n
  %k = add i64 %jn, %i
{{SVD_MIDDLE_VALUES}}
  %diag = icmp eq i64 %i, %j
  %w = select i1 %diag, {{TYPE}} %ond, {{TYPE}} %off
  store {{TYPE}} %w, ptr %po

; -- cdivide_by
params: i64 %rows, i64 %cols, ptr %p, i64 %ld, ptr %s, i64 %along
grid: %r2 x %cols
pre:
  %r2 = shl i64 %rows, 1
body:
  %ci = lshr i64 %i, 1
  %jl = mul i64 %j, %ld
  %jl2 = shl i64 %jl, 1
  %k = add i64 %jl2, %i
  %q = getelementptr {{TYPE}}, ptr %p, i64 %k
  %v = load {{TYPE}}, ptr %q
  %rowwise = icmp ne i64 %along, 0
  %at = select i1 %rowwise, i64 %ci, i64 %j
  %ps = getelementptr {{TYPE}}, ptr %s, i64 %at
  %d = load {{TYPE}}, ptr %ps
  %r = fdiv {{TYPE}} %v, %d
  %nothing = fcmp oeq {{TYPE}} %v, 0.0
  %w = select i1 %nothing, {{TYPE}} 0.0, {{TYPE}} %r
  store {{TYPE}} %w, ptr %q

; -- csvd_middle
params: i64 %n, ptr %a, ptr %b, ptr %s, ptr %d, {{TYPE}} %dscale, {{TYPE}} %iscale, ptr %out
grid: %n2 x %n
ROW: %ci
pre:
  %n2 = shl i64 %n, 1
body:
  %ci = lshr i64 %i, 1
  %part = and i64 %i, 1
  %jn = mul i64 %j, %n
  %k0 = add i64 %jn, %ci
  %k1 = shl i64 %k0, 1
  %k = or i64 %k1, %part
{{SVD_MIDDLE_VALUES}}
  %ia = fmul {{TYPE}} %iscale, %va
  %iq = fdiv {{TYPE}} %ia, %si
  %noia = fcmp oeq {{TYPE}} %ia, 0.0
  %oni = select i1 %noia, {{TYPE}} 0.0, {{TYPE}} %iq
  %re = icmp eq i64 %part, 0
  %on = select i1 %re, {{TYPE}} %ond, {{TYPE}} %oni
  %diag = icmp eq i64 %ci, %j
  %w = select i1 %diag, {{TYPE}} %on, {{TYPE}} %off
  store {{TYPE}} %w, ptr %po

; -- ceig_middle
params: i64 %n, ptr %t, ptr %w, ptr %dw, ptr %x
grid: %n2 x %n
pre:
  %n2 = shl i64 %n, 1
body:
  %ci = lshr i64 %i, 1
  %part = and i64 %i, 1
  %jn = mul i64 %j, %n
  %k0 = add i64 %jn, %ci
  %k1 = shl i64 %k0, 1
  %k = or i64 %k1, %part
  %pt = getelementptr {{TYPE}}, ptr %t, i64 %k
  %px = getelementptr {{TYPE}}, ptr %x, i64 %k
  %vt = load {{TYPE}}, ptr %pt
  %pwi = getelementptr {{TYPE}}, ptr %w, i64 %ci
  %pwj = getelementptr {{TYPE}}, ptr %w, i64 %j
  %wi = load {{TYPE}}, ptr %pwi
  %wj = load {{TYPE}}, ptr %pwj
  %gap = fsub {{TYPE}} %wj, %wi
  %q = fdiv {{TYPE}} %vt, %gap
  %none = fcmp oeq {{TYPE}} %vt, 0.0
  %r = select i1 %none, {{TYPE}} 0.0, {{TYPE}} %q
  %nodw = icmp eq ptr %dw, null
  %dwp = select i1 %nodw, ptr %w, ptr %dw
  %pdw = getelementptr {{TYPE}}, ptr %dwp, i64 %ci
  %vdw = load {{TYPE}}, ptr %pdw
  %dv0 = select i1 %nodw, {{TYPE}} 0.0, {{TYPE}} %vdw
  %re = icmp eq i64 %part, 0
  %dv = select i1 %re, {{TYPE}} %dv0, {{TYPE}} 0.0
  %diag = icmp eq i64 %ci, %j
  %v = select i1 %diag, {{TYPE}} %dv, {{TYPE}} %r
  store {{TYPE}} %v, ptr %px

; -- conj_matrix
params: i64 %rows, i64 %cols, ptr %p, i64 %ld
head:
  %base = mul i64 %j, %ld
body:
  %k = add i64 %base, %i
  %k2 = shl i64 %k, 1
  %k2i = or i64 %k2, 1
  %q = getelementptr {{TYPE}}, ptr %p, i64 %k2i
  %v = load {{TYPE}}, ptr %q
  %w = fneg {{TYPE}} %v
  store {{TYPE}} %w, ptr %q

; -- crank1
params: i64 %rows, i64 %cols, {{TYPE}} %alpha, ptr %x, ptr %y, ptr %p, i64 %ld
head:
  %base = mul i64 %j, %ld
  %yk = shl i64 %j, 1
  %yki = or i64 %yk, 1
  %pyr = getelementptr {{TYPE}}, ptr %y, i64 %yk
  %pyi = getelementptr {{TYPE}}, ptr %y, i64 %yki
  %yr = load {{TYPE}}, ptr %pyr
  %yi = load {{TYPE}}, ptr %pyi
  %ayr = fmul {{TYPE}} %alpha, %yr
  %ayi = fmul {{TYPE}} %alpha, %yi
body:
  %xk = shl i64 %i, 1
  %xki = or i64 %xk, 1
  %pxr = getelementptr {{TYPE}}, ptr %x, i64 %xk
  %pxi = getelementptr {{TYPE}}, ptr %x, i64 %xki
  %xr = load {{TYPE}}, ptr %pxr
  %xi = load {{TYPE}}, ptr %pxi
  %k = add i64 %base, %i
  %k2 = shl i64 %k, 1
  %k2i = or i64 %k2, 1
  %qr = getelementptr {{TYPE}}, ptr %p, i64 %k2
  %qi = getelementptr {{TYPE}}, ptr %p, i64 %k2i
  %vr = load {{TYPE}}, ptr %qr
  %vi = load {{TYPE}}, ptr %qi
  %t1 = fmul {{TYPE}} %xr, %ayr
  %t2 = fmul {{TYPE}} %xi, %ayi
  %tr = fsub {{TYPE}} %t1, %t2
  %t3 = fmul {{TYPE}} %xr, %ayi
  %t4 = fmul {{TYPE}} %xi, %ayr
  %ti = fadd {{TYPE}} %t3, %t4
  %sr = fadd {{TYPE}} %vr, %tr
  %si = fadd {{TYPE}} %vi, %ti
  store {{TYPE}} %sr, ptr %qr
  store {{TYPE}} %si, ptr %qi
