"""LLVM types. Each type prints as valid LLVM and compares by its text."""
from __future__ import annotations


class Type:
    text: str = "?"

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"<type {self.text}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, Type) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)

    @property
    def is_float(self) -> bool:
        return isinstance(self, FloatType)

    @property
    def is_int(self) -> bool:
        return isinstance(self, IntType)

    @property
    def is_ptr(self) -> bool:
        return isinstance(self, PtrType)


class VoidType(Type):
    text = "void"


class LabelType(Type):
    text = "label"


class MetadataType(Type):
    text = "metadata"


class IntType(Type):
    def __init__(self, bits: int):
        self.bits = bits
        self.text = f"i{bits}"


class FloatType(Type):
    BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "x86_fp80": 80, "fp128": 128}

    def __init__(self, name: str):
        self.name = name
        self.bits = self.BITS[name]
        self.text = name

    @property
    def suffix(self) -> str:
        """The overload suffix of intrinsics: f32, f64."""
        return f"f{self.bits}"


class PtrType(Type):
    def __init__(self, addrspace: int = 0):
        self.addrspace = addrspace
        self.text = "ptr" if addrspace == 0 else f"ptr addrspace({addrspace})"


class ArrayType(Type):
    def __init__(self, count: int, element: Type):
        self.count, self.element = count, element
        self.text = f"[{count} x {element}]"


class VectorType(Type):
    def __init__(self, count: int, element: Type, scalable: bool = False):
        self.count, self.element = count, element
        self.text = f"<{'vscale x ' if scalable else ''}{count} x {element}>"


class StructType(Type):
    def __init__(self, elements: list[Type], packed: bool = False):
        self.elements, self.packed = elements, packed
        body = "{ " + ", ".join(map(str, elements)) + " }" if elements else "{}"
        self.text = f"<{body}>" if packed else body


class NamedType(Type):
    """A reference to a named struct type (%T); its body stays in the module's raw text."""

    def __init__(self, name: str):
        self.text = name


class FunctionType(Type):
    def __init__(self, ret: Type, params: list[Type], vararg: bool = False):
        self.ret, self.params, self.vararg = ret, params, vararg
        ps = [str(p) for p in params] + (["..."] if vararg else [])
        self.text = f"{ret} ({', '.join(ps)})"


void = VoidType()
label = LabelType()
i1, i8, i32, i64 = IntType(1), IntType(8), IntType(32), IntType(64)
f32, f64 = FloatType("float"), FloatType("double")
ptr = PtrType()


def size_of(t: Type) -> int:
    """Store size in bytes under the x86-64 data layout (enough for tape sizing)."""
    if isinstance(t, IntType):
        return max(1, (t.bits + 7) // 8) if t.bits != 1 else 1
    if isinstance(t, FloatType):
        return t.bits // 8
    if isinstance(t, PtrType):
        return 8
    if isinstance(t, (ArrayType, VectorType)):
        return t.count * size_of(t.element)
    if isinstance(t, StructType):
        return sum(size_of(e) for e in t.elements)
    raise ValueError(f"no size for type {t}")
