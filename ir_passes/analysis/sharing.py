"""Which memory accesses are private to one iteration of a parallel loop or one GPU thread?

The function runs as many iterations at once (the threads of a GPU kernel, the iterations of a
`prange` body). The caller names the values that index an iteration (`Iterations.index`: values
injective in the iteration, such as the global thread index `ctaid * ntid + tid` or the induction
variable) and every other source of per-iteration variation (`varying`: `tid`, `ctaid`). Each
access (load, store, atomic, memory intrinsic) gets one of three kinds:

- "private": no other iteration touches the bytes it touches. Its address is
  `c * index + u` with a constant c != 0 and u the same in every iteration (built from parameters,
  constants, read-only memory and uniform calls), and every access to the same memory object has
  that form with the same index, the same c and the same u up to a constant, all within one
  |c|-byte window (`x[2 * i]` and `x[2 * i + 1]` are both private). A row of a C-contiguous
  2-D array, `c * (index * S) + k` with S the array's row length (`Iterations.row_extent`: the
  caller vouches that S is the row length and indexing stays in bounds, so k stays below
  c * S), is the iteration's own when c is the item size and 0 <= k (`force[i, 0]`, `force[i, 2]`);
- "uniform": every iteration touches the same address (`w[0]`);
- "shared": anything else (a gather `x[idx[i]]`, `x[j]` in a loop over j, `x[i + 1]` beside
  `x[i]`, memory reached through a loaded pointer).

Addresses are linear forms over atoms (values the analysis does not look through); a form with
a varying atom, or with a loop phi that is not an index, is not linear in the iteration. Memory
objects are the roots of pointers (parameters, globals, allocations); roots that may alias
(`alias.may_alias`, or all parameters when no alias facts are given) count as one object.
Memory local to a group of iterations (a GPU block's shared memory, `Iterations.is_local`) uses
`local_index` (the thread index within the block) instead of `index`.

The reverse sweep uses this to add into shadows: a private shadow update is a plain
load/add/store, a uniform one may be privatised (summed per group, then added once), a shared
one is atomic (transforms/reverse/shadows/shadow_updates.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..ir import types as T
from ..ir.instructions import Instruction
from ..ir.printer import format_instruction
from ..ir.values import Argument, Constant, ConstInt, Global
from ..rules.registry import lookup
from .alias import alias_analysis, is_allocation
from .loops import loop_info
from .types import roots

PRIVATE, UNIFORM, SHARED = "private", "uniform", "shared"
LINEAR_CASTS = ("sext", "zext", "bitcast", "addrspacecast", "ptrtoint", "inttoptr")


@dataclass(frozen=True)
class Iterations:
    """What distinguishes the iterations that run at once (see the module docstring)."""
    index: tuple = ()
    varying: tuple = ()
    local_index: tuple = ()
    is_local: Callable | None = None     # root -> is it memory shared by one group only?
    row_extent: Callable | None = None   # (root, value) -> is value the row length of root's rows?


@dataclass(frozen=True)
class Form:
    """sum(coeff * atom) + const, in bytes for pointers; `varying`: not linear in the iteration.
    An atom is a value's id, or (id(index), id(uniform)) for their product."""
    terms: tuple = ()        # ((atom, coeff), ...) sorted
    const: int = 0
    varying: bool = False

    def plus(self, other: "Form", scale: int = 1) -> "Form":
        if self.varying or other.varying:
            return VARYING
        terms = dict(self.terms)
        for k, c in other.terms:
            terms[k] = terms.get(k, 0) + scale * c
        return Form(tuple(sorted(((k, c) for k, c in terms.items() if c), key=repr)),
                    self.const + scale * other.const)

    def times(self, k: int) -> "Form":
        if self.varying:
            return VARYING
        return Form(tuple((a, c * k) for a, c in self.terms if c * k), self.const * k)


VARYING = Form(varying=True)


@dataclass
class Access:
    inst: Instruction
    pointer: object
    kind: str
    reason: str


@dataclass
class Sharing:
    accesses: dict = field(default_factory=dict)   # id(inst) -> Access
    pointer_kinds: dict = field(default_factory=dict)

    def kind(self, inst) -> str:
        a = self.accesses.get(id(inst))
        return a.kind if a is not None else SHARED

    def pointer_kind(self, p) -> str:
        """The kind of an access through pointer p (SHARED when p is not the address of any)."""
        return self.pointer_kinds.get(id(p), SHARED)


class _Forms:
    """Linear forms of integer and pointer values."""

    def __init__(self, fn, it: Iterations, alias):
        self.it, self.alias = it, alias
        self.index = {id(v) for v in it.index} | {id(v) for v in it.local_index}
        self.varying = {id(v) for v in it.varying}
        self.memo: dict = {}
        self.values: dict = {}           # atom id -> the value
        self.loop_phis = _loop_phis(fn)

    def atom(self, v) -> Form:
        self.values[id(v)] = v
        return Form(((id(v), 1),))

    def of(self, v) -> Form:
        key = id(v)
        if key not in self.memo:
            self.memo[key] = VARYING      # a cycle through phis is not linear
            self.memo[key] = self._form(v)
        return self.memo[key]

    def _form(self, v) -> Form:
        if isinstance(v, ConstInt):
            return Form((), v.value)
        if id(v) in self.index:
            return self.atom(v)
        if id(v) in self.varying:
            return VARYING
        if isinstance(v, (Argument, Global, Constant)):
            return self.atom(v)
        if not isinstance(v, Instruction):
            return VARYING
        op = v.opcode
        if op in LINEAR_CASTS:
            return self.of(v.ops[0])
        if op in ("add", "sub"):
            return self.of(v.ops[0]).plus(self.of(v.ops[1]), 1 if op == "add" else -1)
        if op in ("mul", "shl"):
            k = _scale(v)
            if k is not None:
                return self.of(v.ops[0] if _const(v.ops[1]) is not None else v.ops[1]).times(k)
            if op == "mul":
                return self._product(self.of(v.ops[0]), self.of(v.ops[1]), v)
        if op == "getelementptr":
            return self._gep(v)
        return self.atom(v) if self.uniform(v) else VARYING

    def _product(self, a: Form, b: Form, v) -> Form:
        """index * uniform (a row of a 2-D array): one product atom; else v is an atom or not
        linear."""
        for x, y in ((a, b), (b, a)):
            if not x.varying and not y.varying and len(x.terms) == 1 and not x.const and \
                    x.terms[0][0] in self.index and len(y.terms) == 1 and not y.const and \
                    y.terms[0][1] == 1 and self.uniform_form(y):
                return Form((((x.terms[0][0], y.terms[0][0]), x.terms[0][1]),))
        return self.atom(v) if self.uniform(v) else VARYING

    def is_index(self, atom) -> bool:
        return (atom[0] if isinstance(atom, tuple) else atom) in self.index

    def uniform_form(self, f: Form) -> bool:
        return not f.varying and not any(self.is_index(a) for a, _ in f.terms)

    def _gep(self, v) -> Form:
        form, t = self.of(v.ops[0]), v.source_type
        for k, idx in enumerate(v.ops[1:]):
            if k == 0:
                size = T.size_of(t)
            elif isinstance(t, T.StructType):
                j = _const(idx)
                if j is None:
                    return VARYING
                form = form.plus(Form((), sum(T.size_of(e) for e in t.elements[:j])))
                t = t.elements[j]
                continue
            else:
                t = t.element
                size = T.size_of(t)
            form = form.plus(self.of(idx).times(size))
        return form

    def uniform(self, v) -> bool:
        """Is v the same in every iteration and wherever it runs (an atom of a linear form)?"""
        if id(v) in self.index or id(v) in self.varying:
            return False
        if not isinstance(v, Instruction):
            return True
        op = v.opcode
        if op == "phi":
            return False if id(v) in self.loop_phis or len({id(x) for x in v.ops}) > 1 \
                else self.uniform(v.ops[0])
        if op == "load":
            return self.alias is not None and not v.volatile and self._read_only(v.ops[0]) \
                and self.uniform_value(v.ops[0])
        if op == "call":
            return _pure(v) and all(self.uniform_value(o) for o in v.ops)
        if op in ("alloca", "store", "opaque") or v.is_terminator:
            return False
        return all(self.uniform_value(o) for o in v.ops)

    def uniform_value(self, v) -> bool:
        return self.uniform_form(self.of(v))

    def _read_only(self, p) -> bool:
        return not self.alias.writes_to(p)


def sharing_analysis(fn, it: Iterations, alias=None) -> Sharing:
    """Classify every memory access of `fn` (see the module docstring). `alias`: the function's
    alias.AliasInfo; without it every pair of parameters may alias and loads are never uniform."""
    forms = _Forms(fn, it, alias)
    accesses = [(i, p) for i in fn.instructions() for p in _addresses(i)]
    objects = _objects([p for _, p in accesses], alias)
    by_object: dict = {}
    for i, p in accesses:
        by_object.setdefault(objects(p), []).append((i, p))
    result = Sharing()
    for key, group in by_object.items():
        private = _private_object(group, forms, it)
        for i, p in group:
            f = forms.of(p)
            if forms.uniform_form(f):
                kind, why = UNIFORM, "the same address in every iteration"
            elif private is True:
                kind, why = PRIVATE, "the iteration's own slot"
            else:
                kind, why = SHARED, private or "not linear in the iteration index"
            result.accesses[id(i)] = Access(i, p, kind, why)
            old = result.pointer_kinds.get(id(p))
            result.pointer_kinds[id(p)] = kind if old in (None, kind) else SHARED
    return result


def _private_object(group, forms, it):
    """True when every access of one memory object stays in its iteration's own window; else
    the reason it does not."""
    local = it.is_local is not None and all(
        it.is_local(r) for _, p in group for r in roots(p))
    index = {id(v) for v in (it.local_index if local else it.index)}
    rs = [r for _, p in group for r in roots(p)]
    if all(getattr(r, "opcode", "") == "alloca" or _is_allocation(r) for r in rs):
        return True        # the iteration's own stack or allocation
    if any(not isinstance(r, (Argument, Global, Constant)) for r in rs):
        return "memory reached through a pointer whose object is unknown"
    shape = None
    windows = []
    for i, p in group:
        if i.opcode == "call" or i.opcode == "opaque" and i.flags[0] not in ("atomicrmw",):
            return "a memory intrinsic or call writes it"
        f = forms.of(p)
        idx = [(a, c) for a, c in f.terms if forms.is_index(a)]
        if f.varying or len(idx) != 1 or _index_of(idx[0][0]) not in index:
            return "an access to this memory is not linear in one iteration index"
        rest = tuple((a, c) for a, c in f.terms if not forms.is_index(a))
        if shape is None:
            shape = (idx[0], rest)
        elif shape != (idx[0], rest):
            return "accesses to this memory use different index forms"
        windows.append((f.const, _size(i)))
    (atom, step), rest = shape
    if isinstance(atom, tuple):      # c * (index * S) + k: a row of S items of c bytes
        row = forms.values.get(atom[1])
        if it.row_extent is None or len(set(map(id, rs))) != 1 or \
                not it.row_extent(rs[0], row) or any(n != step for _, n in windows):
            return "an access to this memory is not linear in one iteration index"
        if any(k < 0 for k, _ in windows):
            return "accesses of one iteration overlap another iteration's"
        return True
    low = min(c for c, _ in windows)
    if any(c + n > low + abs(step) for c, n in windows):
        return "accesses of one iteration overlap another iteration's"
    return True


def _index_of(atom):
    return atom[0] if isinstance(atom, tuple) else atom


def _is_allocation(v) -> bool:
    return is_allocation(v)


def _pure(call) -> bool:
    """A call that reads no memory: no pointer operand, and a math function, an LLVM intrinsic
    (`llvm.nvvm.read.ptx.sreg.ntid.x`) or marked `memory(none)`."""
    if any(o.type.is_ptr for o in call.ops):
        return False
    name = call.callee_name or ""
    rule = lookup(name) if name else None
    return "memory(none)" in call.fn_attrs or name.startswith("llvm.") or \
        (rule is not None and not rule.inactive)


def _objects(pointers, alias):
    """pointer -> the key of its memory object (roots that may alias share one key)."""
    parent: dict = {}

    def find(k):
        while parent.setdefault(k, k) != k:
            k = parent[k]
        return k

    all_roots = {}
    for p in pointers:
        rs = roots(p)
        for r in rs:
            all_roots[id(r)] = r
        for r in rs[1:]:
            parent[find(id(r))] = find(id(rs[0]))
    items = list(all_roots.values())
    for n, a in enumerate(items):
        for b in items[n + 1:]:
            if _may_alias(a, b, alias):
                parent[find(id(b))] = find(id(a))
    return lambda p: find(id(roots(p)[0]))


def _may_alias(a, b, alias) -> bool:
    if alias is not None:
        return alias.may_alias(a, b)
    return isinstance(a, Argument) and isinstance(b, Argument)


def _addresses(inst) -> list:
    op = inst.opcode
    if op == "load":
        return [inst.ops[0]]
    if op == "store":
        return [inst.ops[1]]
    if op == "opaque" and inst.flags and inst.flags[0] in ("atomicrmw", "cmpxchg") and inst.ops:
        return [inst.ops[0]]
    if op == "call" and (inst.callee_name or "").startswith(("llvm.memcpy", "llvm.memmove")):
        return [inst.ops[0], inst.ops[1]]
    if op == "call" and (inst.callee_name or "").startswith("llvm.memset"):
        return [inst.ops[0]]
    return []


def _size(inst) -> int:
    if inst.opcode == "load":
        return T.size_of(inst.type)
    if inst.opcode == "store":
        return T.size_of(inst.ops[0].type)
    if inst.opcode == "opaque" and len(inst.ops) > 1:
        return T.size_of(inst.ops[1].type)
    return 1 << 62


def _scale(inst):
    """The constant factor of `mul x, k` / `mul k, x` / `shl x, k`, or None."""
    if inst.opcode == "shl":
        k = _const(inst.ops[1])
        return None if k is None else 1 << k
    k = _const(inst.ops[1])
    return k if k is not None else _const(inst.ops[0])


def _const(v):
    return v.value if isinstance(v, ConstInt) else None


def _loop_phis(fn) -> set:
    info = loop_info(fn)
    return {id(p) for lp in info.loops for p in lp.header.phis()}


def print_sharing(fn, it: Iterations, noalias: bool = False) -> str:
    """One line per memory access: its kind and why (for golden tests); `noalias`: distinct
    pointer parameters never overlap."""
    result = sharing_analysis(fn, it, alias_analysis(fn, noalias_params=noalias))
    lines = [f"sharing of @{fn.name}"]
    for inst in fn.instructions():
        a = result.accesses.get(id(inst))
        if a is not None:
            lines.append(f"  {a.kind:8} {format_instruction(inst).strip()}  ; {a.reason}")
    return "\n".join(lines)


# ---- GPU threads (NVPTX) ---------------------------------------------------------------------

SREG = "llvm.nvvm.read.ptx.sreg."
UNIFORM_SREGS = ("ntid.", "nctaid.", "warpsize", "nwarpid", "nsmid")


def nvptx_iterations(fn, grid_1d: bool, block_1d: bool, is_local=None, row_extent=None) -> Iterations:
    """The iterations of an NVPTX kernel: its threads. `index`: the global thread index
    `ctaid.x * ntid.x + tid.x` (`cuda.grid(1)`) when the launch is one-dimensional (grid and
    block), for which it is injective; `local_index`: `tid.x` when the block is one-dimensional
    (for block-local shared memory, `is_local`); `varying`: every other thread-dependent register
    read (`tid`, `ctaid`, `laneid`, ...)."""
    reads = {}
    for i in fn.instructions():
        name = i.callee_name if i.opcode == "call" else ""
        if name and name.startswith(SREG):
            reads.setdefault(name[len(SREG):], []).append(i)
    varying = tuple(i for reg, insts in reads.items() if not reg.startswith(UNIFORM_SREGS)
                    for i in insts)
    index = tuple(i for i in fn.instructions() if grid_1d and block_1d and _global_index(i))
    local = tuple(reads.get("tid.x", ())) if block_1d else ()
    return Iterations(index=index, varying=varying, local_index=local, is_local=is_local,
                      row_extent=row_extent)


def _global_index(inst) -> bool:
    """`add (mul ntid.x, ctaid.x), tid.x` in any operand order, through integer extensions."""
    if inst.opcode != "add":
        return False
    for a, b in (inst.ops, inst.ops[::-1]):
        m = _strip(a)
        if _reads(b, "tid.x") and getattr(m, "opcode", "") == "mul" and \
                {_sreg(m.ops[0]), _sreg(m.ops[1])} == {"ntid.x", "ctaid.x"}:
            return True
    return False


def _strip(v):
    while getattr(v, "opcode", "") in ("zext", "sext"):
        v = v.ops[0]
    return v


def _sreg(v) -> str:
    v = _strip(v)
    name = v.callee_name if getattr(v, "opcode", "") == "call" else ""
    return name[len(SREG):] if name and name.startswith(SREG) else ""


def _reads(v, reg) -> bool:
    return _sreg(v) == reg
