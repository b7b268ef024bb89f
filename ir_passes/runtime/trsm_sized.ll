; The triangular solve of small problems in own loops; above WORK (triangular.py says how) the
; host's trsm, except when the host's BLAS runs several threads (enzpy.host.blas_threads.<s>:
; OpenBLAS's get_num_threads, null for another BLAS) and the problem is at most THREADED_WORK:
; then b scaled by alpha and the host's trsv once per right-hand side (a column of b for side
; 'L', a row for 'R', which solves with op(a) transposed). OpenBLAS threads trsm from 8 x 8 on,
; never trsv. TYPE: the float type, SUFFIX its name.

define internal void @enzpy.trsm_sized.{{SUFFIX}}(i8 %side, i8 %uplo, i8 %trans, i8 %diag, i64 %m, i64 %n, {{TYPE}} %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb) {
entry:
  %left = icmp eq i8 %side, 76
  %k = select i1 %left, i64 %m, i64 %n
  %nc = select i1 %left, i64 %n, i64 %m
  %kk = mul i64 %k, %k
  %work = mul i64 %kk, %nc
  %small = icmp sle i64 %work, {{WORK}}
  br i1 %small, label %setup, label %library
library:
  %large = icmp sgt i64 %work, {{THREADED_WORK}}
  br i1 %large, label %host, label %threads
threads:
  %threads.fn = load ptr, ptr @enzpy.host.blas_threads.{{SUFFIX}}
  %threads.known = icmp ne ptr %threads.fn, null
  br i1 %threads.known, label %ask, label %host
ask:
  %threads.n = call i32 %threads.fn()
  %threads.many = icmp sgt i32 %threads.n, 1
  br i1 %threads.many, label %unthreaded, label %host
host:
  call void @enzpy.trsm.{{SUFFIX}}(i8 %side, i8 %uplo, i8 %trans, i8 %diag, i64 %m, i64 %n, {{TYPE}} %alpha, ptr %a, i64 %lda, ptr %b, i64 %ldb)
  ret void
unthreaded:
  %one = fcmp oeq {{TYPE}} %alpha, 1.0
  br i1 %one, label %vectors, label %scale
scale:
  %sc = phi i64 [ 0, %unthreaded ], [ %sc1, %scalenext ]
  %sccol = mul i64 %sc, %ldb
  br label %scalerow
scalerow:
  %sr = phi i64 [ 0, %scale ], [ %sr1, %scalerow ]
  %s.o = add i64 %sccol, %sr
  %s.p = getelementptr {{TYPE}}, ptr %b, i64 %s.o
  %s.v = load {{TYPE}}, ptr %s.p
  %s.a = fmul {{TYPE}} %alpha, %s.v
  store {{TYPE}} %s.a, ptr %s.p
  %sr1 = add i64 %sr, 1
  %srmore = icmp slt i64 %sr1, %m
  br i1 %srmore, label %scalerow, label %scalenext
scalenext:
  %sc1 = add i64 %sc, 1
  %scmore = icmp slt i64 %sc1, %n
  br i1 %scmore, label %scale, label %vectors
vectors:
  %vt = icmp eq i8 %trans, 78
  %vtr = select i1 %vt, i8 84, i8 78
  %vtrans = select i1 %left, i8 %trans, i8 %vtr
  %vstep = select i1 %left, i64 %ldb, i64 1
  %vinc = select i1 %left, i64 1, i64 %ldb
  br label %vector
vector:
  %v = phi i64 [ 0, %vectors ], [ %v1, %vector ]
  %v.o = mul i64 %v, %vstep
  %v.p = getelementptr {{TYPE}}, ptr %b, i64 %v.o
  call void @enzpy.trsv.{{SUFFIX}}(i8 %uplo, i8 %vtrans, i8 %diag, i64 %k, ptr %a, i64 %lda, ptr %v.p, i64 %vinc)
  %v1 = add i64 %v, 1
  %vmore = icmp slt i64 %v1, %nc
  br i1 %vmore, label %vector, label %done
setup:
  %isn = icmp eq i8 %trans, 78
  %transposed = xor i1 %isn, true
  %right = xor i1 %left, true
  %flip = xor i1 %transposed, %right
  %ars = select i1 %flip, i64 %lda, i64 1
  %acs = select i1 %flip, i64 1, i64 %lda
  %isl = icmp eq i8 %uplo, 76
  %lower = xor i1 %isl, %flip
  %brs = select i1 %left, i64 1, i64 %ldb
  %bcs = select i1 %left, i64 %ldb, i64 1
  %unit = icmp eq i8 %diag, 85
  %nok = icmp sle i64 %k, 0
  %nonc = icmp sle i64 %nc, 0
  %none = or i1 %nok, %nonc
  %klast = sub i64 %k, 1
  br i1 %none, label %done, label %col
col:
  %c = phi i64 [ 0, %setup ], [ %c1, %colnext ]
  %bcol = mul i64 %c, %bcs
  br label %row
row:
  %ii = phi i64 [ 0, %col ], [ %ii1, %rownext ]
  %up = sub i64 %klast, %ii
  %i = select i1 %lower, i64 %ii, i64 %up
  %ip1 = add i64 %i, 1
  %jlo = select i1 %lower, i64 0, i64 %ip1
  %jhi = select i1 %lower, i64 %i, i64 %k
  %irow = mul i64 %i, %brs
  %bi.o = add i64 %irow, %bcol
  %bi.p = getelementptr {{TYPE}}, ptr %b, i64 %bi.o
  %bi = load {{TYPE}}, ptr %bi.p
  %s0 = fmul {{TYPE}} %alpha, %bi
  %tirow = mul i64 %i, %ars
  %empty = icmp sge i64 %jlo, %jhi
  br i1 %empty, label %divide, label %inner
inner:
  %j = phi i64 [ %jlo, %row ], [ %j1, %inner ]
  %s = phi {{TYPE}} [ %s0, %row ], [ %s1, %inner ]
  %tjcol = mul i64 %j, %acs
  %t.o = add i64 %tirow, %tjcol
  %t.p = getelementptr {{TYPE}}, ptr %a, i64 %t.o
  %t = load {{TYPE}}, ptr %t.p
  %jrow = mul i64 %j, %brs
  %x.o = add i64 %jrow, %bcol
  %x.p = getelementptr {{TYPE}}, ptr %b, i64 %x.o
  %x = load {{TYPE}}, ptr %x.p
  %tx = fmul {{TYPE}} %t, %x
  %s1 = fsub {{TYPE}} %s, %tx
  %j1 = add i64 %j, 1
  %jmore = icmp slt i64 %j1, %jhi
  br i1 %jmore, label %inner, label %divide
divide:
  %sum = phi {{TYPE}} [ %s0, %row ], [ %s1, %inner ]
  %ticol = mul i64 %i, %acs
  %d.o = add i64 %tirow, %ticol
  %d.p = getelementptr {{TYPE}}, ptr %a, i64 %d.o
  %d = load {{TYPE}}, ptr %d.p
  %q = fdiv {{TYPE}} %sum, %d
  %xi = select i1 %unit, {{TYPE}} %sum, {{TYPE}} %q
  store {{TYPE}} %xi, ptr %bi.p
  br label %rownext
rownext:
  %ii1 = add i64 %ii, 1
  %rmore = icmp slt i64 %ii1, %k
  br i1 %rmore, label %row, label %colnext
colnext:
  %c1 = add i64 %c, 1
  %cmore = icmp slt i64 %c1, %nc
  br i1 %cmore, label %col, label %done
done:
  ret void
}

@enzpy.host.blas_threads.{{SUFFIX}} = external global ptr
