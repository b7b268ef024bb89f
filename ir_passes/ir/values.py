"""Values: arguments, constants, globals. Instructions live in instructions.py."""
from __future__ import annotations

import math
import struct

from .types import FloatType, IntType, Type


class Value:
    """Anything an instruction can use. `ref()` is how an operand prints (without its type)."""

    __slots__ = ()    # Instruction declares its fields; other values keep a __dict__
    type: Type
    name: str = ""

    def ref(self) -> str:
        return "%" + self.name

    def typed(self) -> str:
        return f"{self.type} {self.ref()}"

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.type} {self.ref()}>"


class Placeholder(Value):
    """A value that stands for one not made yet; replaced with `edit.replace_uses`."""

    def __init__(self, type: Type, name: str = ""):
        self.type, self.name = type, name


class Argument(Value):
    def __init__(self, type: Type, name: str, attrs: str = "", index: int = 0):
        self.type, self.name, self.attrs, self.index = type, name, attrs, index


class Constant(Value):
    """A constant printed from its text: null, poison, zeroinitializer, a constant expression."""

    def __init__(self, type: Type, text: str):
        self.type, self.text = type, text

    def ref(self) -> str:
        return self.text

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other.type == self.type and other.ref() == self.ref()

    def __hash__(self) -> int:
        return hash((str(self.type), self.ref()))


class ConstInt(Constant):
    def __init__(self, type: IntType, value: int):
        self.type, self.value = type, int(value)

    def ref(self) -> str:
        if self.type.bits == 1:
            return "true" if self.value else "false"
        return str(self.value)


class ConstFloat(Constant):
    def __init__(self, type: FloatType, value: float, text: str | None = None):
        self.type, self.value, self.text = type, float(value), text

    def ref(self) -> str:
        if self.text is not None:
            return self.text
        v = self.value
        if self.type.bits == 32:  # LLVM wants the double bits of the float value
            v = struct.unpack("<f", struct.pack("<f", v))[0]
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", v))[0]


class Global(Value):
    """A reference to a module-level symbol, @name."""

    def __init__(self, type: Type, name: str):
        self.type, self.name = type, name

    def ref(self) -> str:
        return "@" + self.name

    def __eq__(self, other) -> bool:
        return isinstance(other, Global) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("@", self.name))


def parse_float_literal(text: str) -> float:
    """The value of an LLVM float literal (decimal or 0x hex of the double bits)."""
    if text.startswith("0x") and len(text) == 18:
        return struct.unpack("<d", struct.pack("<Q", int(text[2:], 16)))[0]
    if text.startswith("0x"):
        return math.nan  # other hex forms (0xK, 0xH...) are not used by float/double code
    return float(text)
