; The CPU harness's own IR (harness.py, filled by host_ir.py), in pieces after lines `; -- <key>`.
; Placeholders: T the float type (double, float), S the C library's suffix ("" or "f"), V the
; intrinsic's (f64, f32), PI and M constants in T; REG a special register's name and CODE its
; index in harness.SREGS; the shuffle's MODE, TY, RET, ARG, GET, PUT and its MODE's index CODE.

; -- powi
define internal {{T}} @__nv_powi{{S}}({{T}} %x, i32 %n) {
  %f = sitofp i32 %n to {{T}}
  %r = call {{T}} @pow{{S}}({{T}} %x, {{T}} %f)
  ret {{T}} %r
}
declare {{T}} @pow{{S}}({{T}}, {{T}})

; -- rsqrt
define internal {{T}} @__nv_rsqrt{{S}}({{T}} %x) {
  %s = call {{T}} @llvm.sqrt.{{V}}({{T}} %x)
  %r = fdiv {{T}} 1.0, %s
  ret {{T}} %r
}

; -- rcbrt
define internal {{T}} @__nv_rcbrt{{S}}({{T}} %x) {
  %s = call {{T}} @cbrt{{S}}({{T}} %x)
  %r = fdiv {{T}} 1.0, %s
  ret {{T}} %r
}
declare {{T}} @cbrt{{S}}({{T}})

; -- sinpi
define internal {{T}} @__nv_sinpi{{S}}({{T}} %x) {
  %a = fmul {{T}} %x, {{PI}}
  %r = call {{T}} @sin{{S}}({{T}} %a)
  ret {{T}} %r
}
declare {{T}} @sin{{S}}({{T}})

; -- cospi
define internal {{T}} @__nv_cospi{{S}}({{T}} %x) {
  %a = fmul {{T}} %x, {{PI}}
  %r = call {{T}} @cos{{S}}({{T}} %a)
  ret {{T}} %r
}
declare {{T}} @cos{{S}}({{T}})

; -- normcdf
; M is -sqrt(1/2): normcdf(x) = erfc(-x / sqrt(2)) / 2
define internal {{T}} @__nv_normcdf{{S}}({{T}} %x) {
  %a = fmul {{T}} %x, {{M}}
  %e = call {{T}} @erfc{{S}}({{T}} %a)
  %r = fmul {{T}} %e, 0.5
  ret {{T}} %r
}
declare {{T}} @erfc{{S}}({{T}})

; -- fast_fdividef
define internal float @__nv_fast_fdividef(float %a, float %b) {
  %r = fdiv float %a, %b
  ret float %r
}

; -- barrier
; a block barrier: the harness's threading.Barrier
declare i32 @enzpy_host_sreg(i32)
declare void @enzpy_host_barrier()
define internal void @enzpy.host.barrier(i32 %id) {
  call void @enzpy_host_barrier()
  ret void
}

; -- sreg
define internal i32 @enzpy.host.sreg.{{REG}}() {
  %v = call i32 @enzpy_host_sreg(i32 {{CODE}})
  ret i32 %v
}

; -- activemask
; the harness does not know which lanes are converged: no warp is ever full
define internal i32 @enzpy.host.activemask() {
  ret i32 0
}

; -- match
define internal i32 @enzpy.host.match(i32 %m, i64 %v) {
  ret i32 0
}

; -- warpsync
declare i32 @enzpy_host_shfl(i32, i32, i32, i32, i32, ptr)
define internal void @enzpy.host.warpsync(i32 %m) {
  %r = call i32 @enzpy_host_shfl(i32 4, i32 %m, i32 0, i32 0, i32 31, ptr null)
  ret void
}

; -- shuffle
; the lanes meet in the harness (harness.Warp); %p receives whether the source lane was in range
define internal {{RET}} @enzpy.host.shfl.{{MODE}}.{{TY}}(i32 %m, {{ARG}} %v, i32 %b, i32 %c) {
  %p = alloca i8
{{GET}}
  %r = call i32 @enzpy_host_shfl(i32 {{CODE}}, i32 %m, i32 %bits, i32 %b, i32 %c, ptr %p)
{{PUT}}
}

; -- get_i32
  %bits = add i32 %v, 0
; -- put_i32
  ret i32 %r
; -- get_f32
  %bits = bitcast float %v to i32
; -- put_f32
  %f = bitcast i32 %r to float
  ret float %f
; -- get_i32p
  %bits = add i32 %v, 0
; -- put_i32p
  %pb = load i8, ptr %p
  %pi = trunc i8 %pb to i1
  %s0 = insertvalue { i32, i1 } undef, i32 %r, 0
  %s1 = insertvalue { i32, i1 } %s0, i1 %pi, 1
  ret { i32, i1 } %s1
