"""Builder: appends instructions to a block. Methods carry the LLVM opcode's name."""
from __future__ import annotations

from . import types as T
from .instructions import Instruction
from .values import Constant, ConstFloat, ConstInt, Global, Value


def const(t: T.Type, v) -> Value:
    if isinstance(t, T.FloatType):
        return ConstFloat(t, v)
    if isinstance(t, T.IntType):
        return ConstInt(t, v)
    raise TypeError(f"no numeric constant of type {t}")


class Builder:
    def __init__(self, module, block=None, fmf: tuple[str, ...] = ()):
        self.module = module
        self.block = block
        self.fmf = list(fmf)  # fast-math flags put on float arithmetic the builder creates
        self.dbg = ""         # the !dbg given to what it emits without one (the primal's being differentiated)

    def position(self, block) -> "Builder":
        self.block = block
        return self

    def emit(self, inst: Instruction, name: str = "") -> Instruction:
        """Append inst; operands that are still lazy primal values are fetched first."""
        inst.ops = [o.resolve() if hasattr(o, "resolve") else o for o in inst.ops]
        if name:
            inst.name = name
        inst.dbg = inst.dbg or self.dbg
        return self.block.append(inst)

    # --- float arithmetic (constants folded where it is free)
    def _fbin(self, op, a, b, name=""):
        return self.emit(Instruction(op, a.type, [a, b], flags=list(self.fmf)), name)

    def fadd(self, a, b, name=""):
        if _is_zero(a):
            return b
        if _is_zero(b):
            return a
        return self._fbin("fadd", a, b, name)

    def accumulate(self, a, b, name=""):
        """a + b for adjoint accumulation: order and the sign of zero are not part of the contract."""
        if _is_zero(a):
            return b
        return self.emit(Instruction("fadd", a.type, [a, b], flags=["reassoc", "nsz"]), name)

    def fsub(self, a, b, name=""):
        if _is_zero(b):
            return a
        return self._fbin("fsub", a, b, name)

    def fmul(self, a, b, name=""):
        if _is_one(a):
            return b
        if _is_one(b):
            return a
        return self._fbin("fmul", a, b, name)

    def fdiv(self, a, b, name=""):
        if _is_one(b):
            return a
        return self._fbin("fdiv", a, b, name)

    def fneg(self, a, name=""):
        return self.emit(Instruction("fneg", a.type, [a], flags=list(self.fmf)), name)

    def fconst(self, t, v) -> Value:
        return ConstFloat(t, v)

    # --- integer arithmetic
    def _ibin(self, op, a, b, name="", flags=()):
        return self.emit(Instruction(op, a.type, [a, b], flags=list(flags)), name)

    def add(self, a, b, name="", flags=()):
        return self._ibin("add", a, b, name, flags)

    def sub(self, a, b, name="", flags=()):
        return self._ibin("sub", a, b, name, flags)

    def mul(self, a, b, name="", flags=()):
        return self._ibin("mul", a, b, name, flags)

    def binop(self, op, a, b, name="", flags=()):
        return self.emit(Instruction(op, a.type, [a, b], flags=list(flags)), name)

    # --- comparisons, select, casts
    def icmp(self, pred, a, b, name=""):
        return self.emit(Instruction("icmp", T.i1, [a, b], pred=pred), name)

    def fcmp(self, pred, a, b, name=""):
        return self.emit(Instruction("fcmp", T.i1, [a, b], pred=pred), name)

    def select(self, c, a, b, name=""):
        return self.emit(Instruction("select", a.type, [c, a, b]), name)

    def cast(self, op, v, t, name=""):
        if v.type == t:
            return v
        return self.emit(Instruction(op, t, [v]), name)

    # --- memory
    def alloca(self, t, name="", count=None):
        ops = [count] if count is not None else []
        return self.emit(Instruction("alloca", T.ptr, ops, source_type=t, align=8), name)

    def load(self, t, p, name="", align=None):
        return self.emit(Instruction("load", t, [p], align=align), name)

    def store(self, v, p, align=None):
        return self.emit(Instruction("store", T.void, [v, p], align=align))

    def gep(self, source_type, base, indices, name="", flags=()):
        return self.emit(Instruction("getelementptr", T.ptr, [base, *indices], source_type=source_type,
                                     flags=list(flags)), name)

    # --- calls
    def call(self, name: str, ret: T.Type, args: list, result_name="", attrs: str = "") -> Value:
        fn = self.module.declare(name, ret, [a.type for a in args], attrs)
        return self.emit(Instruction("call", ret, args, callee=Global(T.ptr, fn.name),
                                     arg_attrs=["" for _ in args], flags=[]), result_name)

    def call_address(self, address: int, ret: T.Type, args: list, name="") -> Value:
        """Call the function at a fixed address (a C function pointer)."""
        callee = Constant(T.ptr, f"inttoptr (i64 {int(address)} to ptr)")
        return self.emit(Instruction("call", ret, args, callee=callee, arg_attrs=["" for _ in args],
                                     flags=[]), name)

    def intrinsic(self, base: str, args: list, name="") -> Value:
        """Call a float intrinsic such as llvm.cos overloaded on its first argument's type (or
        the target's own function for it: `math_name`)."""
        t = args[0].type
        return self.call(math_name(self.module, base, t) or f"llvm.{base}.{t.suffix}", t, args, name)

    # --- control flow
    def br(self, target):
        return self.emit(Instruction("br", targets=[target]))

    def cbr(self, cond, a, b):
        return self.emit(Instruction("br", T.void, [cond], targets=[a, b]))

    def switch(self, v, default, cases):
        return self.emit(Instruction("switch", T.void, [v], targets=[default], cases=cases))

    def ret(self, v=None):
        return self.emit(Instruction("ret", T.void, [v] if v is not None else []))

    def phi(self, t, incoming, name=""):
        inst = Instruction("phi", t, [v for v, _ in incoming], blocks=[b for _, b in incoming])
        return self.emit(inst, name)

    def unreachable(self):
        return self.emit(Instruction("unreachable"))


def math_name(module, base: str, t) -> str | None:
    """The callee a rule's math function `base` (`cos`, `cosh`) on type t has in this module when
    its target names it differently (`module.math_names(base, bits)`, set by the caller; the
    NVPTX target uses libdevice: rules/libdevice.py); None: the LLVM intrinsic or libm name."""
    names = getattr(module, "math_names", None)
    return names(base, t.bits) if names is not None else None


def _is_zero(v) -> bool:
    return isinstance(v, ConstFloat) and v.value == 0.0 and str(v.value)[0] != "-"


def _is_one(v) -> bool:
    return isinstance(v, ConstFloat) and v.value == 1.0


class MathBuilder(Builder):
    """A Builder with the helpers derivative rules use."""

    def iconst(self, t, v):
        return ConstInt(t, v)

    def powi(self, x, n):
        return self.call(f"llvm.powi.{x.type.suffix}.{n.type}", x.type, [x, n])

    def libm(self, name, args):
        t = args[0].type
        return self.call(math_name(self.module, name, t) or name + ("f" if t.bits == 32 else ""),
                         t, args)


class RuleBuilder(MathBuilder):
    """The builder a derivative rule writes with, at the position of `b`.

    Calls it emits are marked `adjoint_only`: their results feed derivatives only, never a primal
    value, a branch or an address, so they may use a vector math library
    (transforms/common/vector_math.py).
    Primal operands the rule reads are fetched through `b` and stay unmarked."""

    def __init__(self, b):
        super().__init__(b.module, b.block, tuple(b.fmf))
        self.dbg = b.dbg

    def call(self, name, ret, args, result_name="", attrs=""):
        v = super().call(name, ret, args, result_name, attrs)
        v.adjoint_only = True
        return v
