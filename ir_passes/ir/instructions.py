"""Instructions. One class; the opcode says which fields matter.

Operand conventions (`ops`):
  binary ops, icmp/fcmp: [a, b]           fneg, casts, freeze: [a]
  select: [cond, a, b]                    phi: ops[k] comes from blocks[k]
  load: [ptr]                             store: [value, ptr]
  getelementptr: [base, idx...]           alloca: [] or [count]
  call: the arguments (callee separate)   ret: [] or [value]
  br: [] or [cond], targets [t] / [t, f]  switch: [cond], cases [(const, block)], targets [default]
  extractvalue: [agg]                     insertvalue: [agg, value]
  marker: none (a place a transform fills in later; never printed)

The fields are declared (`__slots__`): setting one that does not exist fails.
"""
from __future__ import annotations

from .opcodes import BINARY, CASTS, TERMINATORS
from .printer import format_instruction
from .types import Type, void
from .values import Value

__all__ = ["BINARY", "CASTS", "TERMINATORS", "Instruction"]

class Instruction(Value):
    __slots__ = ("opcode", "type", "ops", "name", "block", "flags", "pred", "blocks", "targets",
                 "cases", "source_type", "align", "indices", "callee", "fnty_text", "tail", "cconv",
                 "ret_attrs", "arg_attrs", "fn_attrs", "adjoint_only", "volatile", "meta", "dbg", "raw")

    def __init__(self, opcode: str, type: Type = void, ops: list[Value] | None = None, name: str = "",
                 **fields):
        self.opcode = opcode
        self.type = type
        self.ops: list[Value] = list(ops or [])
        self.name = name
        self.block = None            # the Block holding it
        self.flags: list[str] = []   # nsw, nuw, exact, inbounds, fast-math flags, ...
        self.pred = ""               # icmp/fcmp predicate
        self.blocks: list = []       # phi incoming blocks
        self.targets: list = []      # br/switch successors
        self.cases: list = []        # switch: [(ConstInt, Block)]
        self.source_type: Type | None = None  # gep source element type, alloca type
        self.align: int | None = None
        self.indices: list[int] = []  # extractvalue/insertvalue
        self.callee: Value | None = None
        self.fnty_text = ""          # call: explicit function type, for varargs callees
        self.tail = ""               # call: tail / musttail / notail
        self.cconv = ""              # call: calling convention
        self.ret_attrs = ""          # call: return attributes
        self.arg_attrs: list[str] = []  # call: attributes per argument
        self.fn_attrs = ""           # call: function attributes (#0, nounwind...)
        self.adjoint_only = False    # call: a derivative rule's own call (transforms/common/vector_math.py)
        self.volatile = False
        self.meta = ""               # trailing metadata other than !dbg, as text
        self.dbg = ""                # the !dbg attachment id, e.g. "!47"
        self.raw = ""                # opaque: the text, with {0} {1} ... for operands
        for k, v in fields.items():
            setattr(self, k, v)

    # --- queries
    @property
    def is_terminator(self) -> bool:
        return self.opcode in TERMINATORS

    @property
    def callee_name(self) -> str:
        """The called function's name; for a call through a pointer loaded from a named global
        (how JIT hosts call C function pointers), that global's name."""
        c = self.callee
        if c is None:
            return ""
        if c.ref().startswith("@"):
            return c.name
        if isinstance(c, Instruction) and c.opcode == "load" and c.ops[0].ref().startswith("@"):
            return c.ops[0].name
        return ""

    LIST_FIELDS = ("ops", "flags", "blocks", "targets", "cases", "arg_attrs", "indices")

    def copy(self) -> Instruction:
        """A copy with lists of its own (same name, attributes, metadata and block field)."""
        c = Instruction.__new__(Instruction)
        for f in self.__slots__:
            setattr(c, f, getattr(self, f))
        for f in self.LIST_FIELDS:
            setattr(c, f, list(getattr(self, f)))
        return c

    def sibling_call(self, callee_name: str):
        """Another call in this block to `callee_name` on the same operands (the cos(x) beside a
        sin(x)), or None."""
        for i in self.block.instructions:
            if i is not self and i.opcode == "call" and i.callee_name == callee_name and \
                    len(i.ops) == len(self.ops) and all(a is b for a, b in zip(i.ops, self.ops)):
                return i
        return None

    def successors(self) -> list:
        if self.opcode == "switch":
            return [self.targets[0]] + [b for _, b in self.cases]
        return list(self.targets)

    def replace_successor(self, old, new) -> None:
        self.targets = [new if t is old else t for t in self.targets]
        self.cases = [(c, new if b is old else b) for c, b in self.cases]

    def incoming(self, block) -> Value:
        """The phi's value coming from `block`."""
        for v, b in zip(self.ops, self.blocks):
            if b is block:
                return v
        raise KeyError(f"phi {self.ref()} has no incoming value from %{block.name}")

    def __repr__(self) -> str:
        try:
            return f"<Instruction {format_instruction(self)}>"
        except Exception:  # noqa: BLE001 - repr must never fail
            return f"<Instruction {self.opcode} {self.name}>"
