; enzyme_py/cuda/cleanup.ll: the declaration of LLVM's NVPTX shuffle that cleanup.py adds for each mode its renamed libNVVM shuffles use.
; RUN: %runtime %S/../../../enzyme_py/cuda/cleanup.ll:shuffle MODE=bfly | %filecheck %s
; RUN: %runtime %S/../../../enzyme_py/cuda/cleanup.ll:shuffle MODE=idx | %filecheck %s --check-prefix=IDX

; CHECK: declare { i32, i1 } @llvm.nvvm.shfl.sync.bfly.i32p(i32, i32, i32, i32)
; IDX: declare { i32, i1 } @llvm.nvvm.shfl.sync.idx.i32p(i32, i32, i32, i32)
