"""The Numba CPU target: capture a kernel's LLVM IR, clean it, describe its calling convention
and runtime to ir_passes, compile the result, and build the @njit entries that call it.

Parts that are not specific to the CPU target import nothing CPU-specific, so a sibling target
(enzyme_py/cuda/) can use them: layout.py (where a Numba argument's fields are among the LLVM
parameters, for any target context) and entry.py (the @intrinsic + @njit entry boilerplate).
This package's __init__ imports nothing, so importing one of them imports only what it needs.
"""
