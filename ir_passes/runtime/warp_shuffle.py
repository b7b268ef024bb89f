"""Warp shuffles of floats and their adjoints, as LLVM IR helpers (rules/nvptx.py).

`shfl.sync` (PTX ISA) in lane l with member mask m, lane operand b and clamp c: the segment mask
is s = c[12:8]; the lowest and highest lane of l's range are lo = l & s and
max = lo | (c[4:0] & ~s); the source lane j is l + b (down), l - b (up), l ^ b (bfly) or
lo | (b & ~s) (idx), in range when j <= max (j >= max for up). Lane l receives the value of lane
j when j is in range and its own value otherwise.

`@enzpy.shfl.sync.<mode>.f64(mask, double v, b, c)` is one float64 shuffle: two 32-bit shuffles
of v's halves, as CUDA compilers lower it. During AD the calls are declarations (a call of
a defined function would be differentiated into); `define` adds the bodies afterwards.

`@enzpy.shfl.adjoint.<mode>.<T>(mask, T d, b, c)` is the adjoint of the shuffled operand in this
lane, given d, the adjoint of the shuffle's result: every lane whose source was in range sends d
back to its source lane (`send`), a lane whose source was out of range kept its own value and
keeps d (`keep`). For down, up and bfly one shuffle the other way brings it back: lane l reads
`send` of the lane m that read from l (m = l - b for down, l + b for up, l ^ b for bfly), when m
is in l's range, in the member mask and exists (the last warp of a block may be partial). For
idx several lanes may read one lane (a broadcast), so each existing lane of the mask in turn
shares its `send` and its source j, and the lanes add what is meant for them (64 shuffles). A
broadcast from a constant lane to the full warp (mask -1, c 31: every lane reads lane b) is
cheaper: `@enzpy.shfl.adjoint.bcast.<T>(T d, i32 b)` sums d over the existing lanes of the
warp with five butterfly shuffles, and lane b takes the sum.
"""
from __future__ import annotations

from ..ir.parser import parse_module
from .source import fill, sections

FLOATS = {"f32": "float", "f64": "double"}

# the helpers in pieces (runtime/warp_shuffle.ll)
PIECES = sections("warp_shuffle")
# the shuffle that brings back the adjoint of a shuffle of this mode
BACK = {"down": "up", "up": "down", "bfly": "bfly"}


def _broadcast(t: str, suffix: str) -> str:
    shuffle = shuffle_name("bfly", suffix)
    steps = "\n".join(fill(PIECES["broadcast_step"], K=k, N=k + 1, OFF=off, TYPE=t, SHUFFLE=shuffle)
                      for k, off in enumerate((16, 8, 4, 2, 1)))
    return fill(PIECES["broadcast"], TYPE=t, SUFFIX=suffix, STEPS=steps, SHUFFLE=shuffle,
                LIVE=PIECES["live"]) + "\n" + PIECES["sreg_decls"] + "\n"


def shuffle_name(mode: str, suffix: str) -> str:
    """The float shuffle of this mode: LLVM's intrinsic for float32, the helper for float64."""
    if suffix == "f32":
        return f"llvm.nvvm.shfl.sync.{mode}.f32"
    return f"enzpy.shfl.sync.{mode}.f64"


def adjoint_name(mode: str, suffix: str) -> str:
    return f"enzpy.shfl.adjoint.{mode}.{suffix}"


def _text(name: str) -> str:
    parts = name.split(".")
    mode, suffix = parts[-2], parts[-1]
    t = FLOATS[suffix]
    if name == shuffle_name(mode, "f64"):
        return fill(PIECES["f64"], MODE=mode) + "\n"
    if mode == "bcast":
        return _broadcast(t, suffix)
    shuffle = shuffle_name("idx" if mode == "idx" else BACK[mode], suffix)
    values = dict(TYPE=t, SUFFIX=suffix, MODE=mode, SHUFFLE=shuffle, RANGE=PIECES["range"], LIVE=PIECES["live"])
    if mode == "idx":
        text = fill(PIECES["adjoint_idx"], **values)
    else:
        text = fill(PIECES["adjoint"], SOURCE=PIECES["source." + mode], BACK=PIECES["back." + mode],
                    CLAMP=PIECES["clamp." + mode], **values)
    return "\n".join([text, fill(PIECES["shuffle_decl"], **values), PIECES["sreg_decls"]]) + "\n"


def define(module) -> None:
    """Give every declared `enzpy.shfl.*` helper of the module its body (and the helpers those
    call theirs)."""
    while True:
        todo = [f.name for f in module.functions.values()
                if f.is_declaration and f.name.startswith("enzpy.shfl.")]
        if not todo:
            return
        for name in todo:
            helper = parse_module(_text(name))
            for fn in helper.functions.values():
                if fn.name == name or fn.name not in module.functions:
                    module.add_function(fn)
