; runtime/module_globals.ll: the globals the transforms add (the tape counts a gradient leaves, the symbols kept from the optimizer).
; RUN: %runtime module_globals:tape_counts NAME=f.grad.tape_counts LINKAGE=global COUNT=3 'INIT= zeroinitializer' | %filecheck %s
; RUN: %runtime module_globals:tape_counts NAME=f.grad.tape_counts 'LINKAGE=external global' COUNT=2 INIT= | %filecheck %s --check-prefix=DECL
; RUN: %runtime module_globals:compiler_used COUNT=2 'NAMES=ptr @a, ptr @b' | %filecheck %s --check-prefix=USED

; CHECK: @"f.grad.tape_counts" = global [3 x i64] zeroinitializer
; DECL: @"f.grad.tape_counts" = external global [2 x i64]{{$}}
; USED: @llvm.compiler.used = appending global [2 x ptr] [ptr @a, ptr @b], section "llvm.metadata"
