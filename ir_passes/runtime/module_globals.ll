; Globals the transforms add to a module, one a piece: `tape_counts`, where a gradient's forward
; sweep leaves its taped loops' iteration counts and arena sizes (transforms/reverse/sweeps/report.py;
; NAME, LINKAGE `global` or `external global`, COUNT entries, INIT ` zeroinitializer` or nothing
; for a declaration); `compiler_used`, the symbols the optimizer must keep (NAMES, COUNT of them;
; transforms/common/vector_math.py).

; -- tape_counts
@"{{NAME}}" = {{LINKAGE}} [{{COUNT}} x i64]{{INIT}}

; -- compiler_used
@llvm.compiler.used = appending global [{{COUNT}} x ptr] [{{NAMES}}], section "llvm.metadata"
