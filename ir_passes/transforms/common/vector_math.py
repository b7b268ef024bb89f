"""Vector math for the calls derivative rules add.

The gradient must leave primal arrays exactly as a plain call does, so the primal's own math calls
stay the scalar libm calls the kernel makes. The calls a rule adds (the cos in sin's adjoint,
marked `adjoint_only` by RuleBuilder) feed derivatives only: a vector math library a few ulp off
libm serves them as well. LLVM's loop vectorizer calls a vector variant of a scalar call when the
call site names one in the `vector-function-abi-variant` attribute (the VFABI mangling), so this
pass names them. Nothing changes outside loops LLVM vectorizes.

The library is data: which functions it has, at which widths, under which symbols. `libmvec`
describes glibc's; the caller says which instruction sets the target has and loads the library.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from ...ir import types as T
from ...ir.module import Module
from ...rules.registry import intrinsic_key
from ...runtime.source import fill, sections

# glibc's libmvec (x86_64): _ZGV<isa>N<lanes><v per argument>_<name>, isa b/c/d/e =
# SSE4, AVX, AVX2, AVX-512, registers of 128, 256, 256 and 512 bits.
LIBMVEC_ISA_BITS = {"b": 128, "c": 256, "d": 256, "e": 512}
LIBMVEC_FUNCTIONS = {
    "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1, "sinh": 1, "cosh": 1,
    "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1, "exp": 1, "exp2": 1, "exp10": 1,
    "expm1": 1, "log": 1, "log2": 1, "log10": 1, "log1p": 1, "cbrt": 1, "erf": 1, "erfc": 1,
    "pow": 2, "atan2": 2, "hypot": 2,
}


@dataclass(frozen=True)
class VectorLibrary:
    """`variants[(function, float bits)]`: ((lanes, symbol), ...) of vector variants."""
    name: str
    variants: dict = field(default_factory=dict)

    def lookup(self, callee: str, t) -> tuple:
        if not isinstance(t, T.FloatType):
            return ()
        base = intrinsic_key(callee)
        base = base[len("llvm."):] if base.startswith("llvm.") else base
        if t.bits == 32 and not callee.startswith("llvm."):
            base = base[:-1] if base.endswith("f") else base     # cosf -> cos
        return self.variants.get((base, t.bits), ())


def libmvec(isas: Iterable[str], exported: Callable[[str], bool] | None = None) -> VectorLibrary:
    """glibc's libmvec for the instruction sets `isas` (letters of LIBMVEC_ISA_BITS) the target
    has; `exported(symbol) -> bool` drops what this glibc lacks. The widest ISA of each width."""
    variants = {}
    for fn, arity in LIBMVEC_FUNCTIONS.items():
        for bits, suffix in ((64, ""), (32, "f")):
            by_lanes = {}
            for isa in sorted(isas, key="bcde".index):
                lanes = LIBMVEC_ISA_BITS[isa] // bits
                symbol = f"_ZGV{isa}N{lanes}{'v' * arity}_{fn}{suffix}"
                if exported is None or exported(symbol):
                    by_lanes[lanes] = symbol
            if by_lanes:
                variants[(fn, bits)] = tuple(sorted(by_lanes.items()))
    return VectorLibrary("libmvec-" + "".join(sorted(isas)), variants)


ATTRIBUTE = "vector-function-abi-variant"


def use_vector_variants(module: Module, library: VectorLibrary | None) -> int:
    """Name `library`'s variants on every adjoint-only call that has one; return how many calls.
    The variants are declared and kept in @llvm.compiler.used until the vectorizer runs."""
    if library is None:
        return 0
    used, count = [], 0
    for fn in list(module.functions.values()):
        if fn.is_declaration:
            continue
        for inst in fn.instructions():
            if inst.opcode != "call" or not inst.adjoint_only or ATTRIBUTE in inst.fn_attrs:
                continue
            variants = library.lookup(inst.callee_name, inst.type)
            if not variants:
                continue
            arity = len(inst.ops)
            mangled = []
            for lanes, symbol in variants:
                vt = T.VectorType(lanes, inst.type)
                module.declare(symbol, vt, [vt] * arity)
                used.append(symbol)
                mangled.append(f"_ZGV_LLVM_N{lanes}{'v' * arity}_{inst.callee_name}({symbol})")
            attrs = [inst.fn_attrs] if inst.fn_attrs else []
            if not inst.callee_name.startswith("llvm."):
                attrs.append("memory(none)")   # libm's errno is not observable in derivative code
            attrs.append(f'"{ATTRIBUTE}"="{",".join(mangled)}"')
            inst.fn_attrs = " ".join(attrs)
            count += 1
    if used:
        keep_declared(module, used)
    return count


def keep_declared(module, symbols) -> None:
    """Add `symbols` to @llvm.compiler.used: O3 deletes unused declarations before the vectorizer
    looks for a call's variants."""
    prefix = "@llvm.compiler.used = "
    old = [i for i, item in enumerate(module.items)
           if isinstance(item, str) and item.startswith(prefix)]
    names = []
    if old:
        text = module.items[old[0]]
        names = [p.strip()[len("ptr "):] for p in text[text.index("[", text.index("]")) + 1:
                                                        text.rindex("]")].split(",") if p.strip()]
    names += [f"@{s}" for s in symbols if f"@{s}" not in names]
    names = list(dict.fromkeys(names))
    line = fill(sections("module_globals")["compiler_used"], COUNT=len(names),
                NAMES=", ".join("ptr " + n for n in names))
    if old:
        module.items[old[0]] = line
    else:
        module.items.append(line)
