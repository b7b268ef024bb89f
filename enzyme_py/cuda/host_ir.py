"""The CPU harness's own LLVM IR (harness.ll, read once): the C library standing in for the
libdevice functions not named like it, the special-register and barrier calls into the harness,
and the warp intrinsics. Each function fills one piece.

`python -m enzyme_py.cuda.host_ir` prints every piece filled for float64 and float32 (the
golden test tests/filecheck/host/cuda_harness.ll).
"""
from __future__ import annotations

import math
import struct
from pathlib import Path

from ir_passes import fill_template as fill, read_pieces

PIECES = read_pieces(Path(__file__).parent / "harness.ll")

LIBDEVICE = ("powi", "rsqrt", "rcbrt", "sinpi", "cospi", "normcdf")
SHUFFLE_TYPES = {"i32": ("i32", "i32"), "f32": ("float", "float"), "i32p": ("{ i32, i1 }", "i32")}


def _hex(value, t) -> str:
    """An LLVM float literal for value in type t (double, float)."""
    if t == "float":
        value = struct.unpack("f", struct.pack("f", value))[0]
    return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]


def libdevice(name, t, suffix) -> str:
    """`__nv_<name><suffix>` in float type t through the C library (LIBDEVICE)."""
    return fill(PIECES[name], T=t, S=suffix, V="f32" if t == "float" else "f64",
                PI=_hex(math.pi, t), M=_hex(-math.sqrt(0.5), t)) + "\n"


def sreg(reg, code) -> str:
    return fill(PIECES["sreg"], REG=reg, CODE=code)


def shuffle(mode, ty, code) -> str:
    """`enzpy.host.shfl.<mode>.<ty>` (ty: SHUFFLE_TYPES) calling the harness with mode `code`."""
    ret, arg = SHUFFLE_TYPES[ty]
    return fill(PIECES["shuffle"], RET=ret, ARG=arg, MODE=mode, TY=ty, CODE=code,
                GET=PIECES[f"get_{ty}"], PUT=PIECES[f"put_{ty}"])


def everything() -> str:
    """Every piece, filled for both float types: one module."""
    out = [libdevice(n, t, s) for n in LIBDEVICE for t, s in (("double", ""), ("float", "f"))]
    out += [PIECES[k] for k in ("fast_fdividef", "barrier", "activemask", "match", "warpsync")]
    out += [sreg("tid.x", 0)] + [shuffle("down", ty, 2) for ty in SHUFFLE_TYPES]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(everything())
