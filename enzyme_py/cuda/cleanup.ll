; The declarations cleanup.py gives a module whose libNVVM shuffles it renames to LLVM's, in
; pieces: `shuffle`, LLVM's NVPTX shuffle of an i32 with its validity bit, in mode MODE (idx, up,
; down, bfly).

; -- shuffle
declare { i32, i1 } @llvm.nvvm.shfl.sync.{{MODE}}.i32p(i32, i32, i32, i32)
