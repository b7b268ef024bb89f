"""Module, Function and Block. Top-level text we do not model stays as raw lines."""
from __future__ import annotations

from .instructions import Instruction
from .types import Type, label
from .values import Argument, Value


class Block(Value):
    def __init__(self, name: str, function=None):
        self.type = label
        self.name = name
        self.function = function
        self.instructions: list[Instruction] = []

    @property
    def terminator(self) -> Instruction | None:
        if self.instructions and self.instructions[-1].is_terminator:
            return self.instructions[-1]
        return None

    def successors(self) -> list["Block"]:
        t = self.terminator
        return t.successors() if t else []

    def phis(self) -> list[Instruction]:
        out = []
        for i in self.instructions:
            if i.opcode != "phi":
                break
            out.append(i)
        return out

    def append(self, inst: Instruction) -> Instruction:
        inst.block = self
        self.instructions.append(inst)
        return inst

    def insert(self, index: int, inst: Instruction) -> Instruction:
        inst.block = self
        self.instructions.insert(index, inst)
        return inst

    def __repr__(self) -> str:
        return f"<Block %{self.name}>"


class Function:
    def __init__(self, name: str, ret_type: Type, params: list[Argument], *, prefix: str = "",
                 suffix: str = "", vararg: bool = False, is_declaration: bool = False):
        self.name = name
        self.ret_type = ret_type
        self.params = params
        self.prefix = prefix        # e.g. "define internal" / "declare", with return attributes
        self.suffix = suffix        # function attributes after the parameter list
        self.vararg = vararg
        self.is_declaration = is_declaration
        self.blocks: list[Block] = []
        self.raw = ""               # a declaration's line as parsed, printed back unchanged
        self.generated = False      # made by a transform: printed without !dbg (see print_module)

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def instructions(self):
        for b in self.blocks:
            yield from b.instructions

    def add_block(self, name: str) -> Block:
        b = Block(name, self)
        self.blocks.append(b)
        return b

    def predecessors(self) -> dict[Block, list[Block]]:
        preds: dict[Block, list[Block]] = {b: [] for b in self.blocks}
        for b in self.blocks:
            for s in b.successors():
                if b not in preds[s]:
                    preds[s].append(b)
        return preds

    def __repr__(self) -> str:
        return f"<Function @{self.name}>"


class Module:
    """Ordered top-level items: raw text lines and Function objects."""

    def __init__(self):
        self.items: list = []
        self.functions: dict[str, Function] = {}
        self.locations: dict[str, list[tuple[str, int]]] = {}  # "!47" -> [(file, line), ...]
        self.heap = None    # where code generated into it allocates (runtime.heap.Heap); None: libc
        # Functions transforms derive from the module's own (a callee's split gradient, its
        # forward version), per transform: {key: names}, each made once; `pending`: those still
        # to generate; `facts`: memos of what an analysis learned about the module's functions.
        self.derived: dict[str, dict] = {}
        self.pending: dict[str, list] = {}
        self.facts: dict[str, object] = {}
        self.math_names = None   # (base, bits) -> the target's name of a rule's math call (builder.py)

    def add_function(self, fn: Function) -> Function:
        if fn.name in self.functions:
            old = self.functions[fn.name]
            self.items[self.items.index(old)] = fn
        else:
            self.items.append(fn)
        self.functions[fn.name] = fn
        return fn

    def declare(self, name: str, ret: Type, params: list[Type], attrs: str = "") -> Function:
        """Declare an external function unless the module already has it."""
        if name in self.functions:
            return self.functions[name]
        args = [Argument(t, "", index=i) for i, t in enumerate(params)]
        fn = Function(name, ret, args, prefix="declare", suffix=attrs, is_declaration=True)
        return self.add_function(fn)

    def location(self, inst: Instruction) -> list[tuple[str, int]]:
        """The instruction's source (file, line), innermost first then the inlined-at callers."""
        return self.locations.get(inst.dbg, []) if inst.dbg else []
