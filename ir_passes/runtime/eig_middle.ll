; The middle of the symmetric eigendecomposition's derivatives: x = F o t with
; F_ij = 1 / (w_j - w_i) off the diagonal (0 where t_ij is 0, so that repeated eigenvalues with no
; seed on their eigenvectors give finite values), and dw (or 0 where dw is null) on it.

define internal void @enzpy.eig_middle.{{SUFFIX}}(i64 %n, ptr %t, ptr %w, ptr %dw, ptr %x) {
entry:
  %empty = icmp sle i64 %n, 0
  %nodw = icmp eq ptr %dw, null
  br i1 %empty, label %done, label %col
col:
  %j = phi i64 [ 0, %entry ], [ %j1, %colnext ]
  %pwj = getelementptr {{TYPE}}, ptr %w, i64 %j
  %wj = load {{TYPE}}, ptr %pwj
  br label %row
row:
  %i = phi i64 [ 0, %col ], [ %i1, %rownext ]
  %jo = mul i64 %j, %n
  %k = add i64 %jo, %i
  %pt = getelementptr {{TYPE}}, ptr %t, i64 %k
  %px = getelementptr {{TYPE}}, ptr %x, i64 %k
  %diag = icmp eq i64 %i, %j
  br i1 %diag, label %ondiag, label %off
ondiag:
  br i1 %nodw, label %zero, label %fromdw
zero:
  store {{TYPE}} 0.0, ptr %px
  br label %rownext
fromdw:
  %pdw = getelementptr {{TYPE}}, ptr %dw, i64 %i
  %vdw = load {{TYPE}}, ptr %pdw
  store {{TYPE}} %vdw, ptr %px
  br label %rownext
off:
  %pwi = getelementptr {{TYPE}}, ptr %w, i64 %i
  %wi = load {{TYPE}}, ptr %pwi
  %gap = fsub {{TYPE}} %wj, %wi
  %vt = load {{TYPE}}, ptr %pt
  %q = fdiv {{TYPE}} %vt, %gap
  %none = fcmp oeq {{TYPE}} %vt, 0.0
  %r = select i1 %none, {{TYPE}} 0.0, {{TYPE}} %q
  store {{TYPE}} %r, ptr %px
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
}
