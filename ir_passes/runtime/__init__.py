"""What the generated code calls: helper functions written in LLVM IR, and the heap."""
