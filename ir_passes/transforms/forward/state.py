"""The state of one forward-mode synthesis: the primal, the new function, analyses and maps
from primal values to their copies, tangents and shadows (driver.py describes the function).

Every field is declared here (`__slots__`); the modules of forward mode read and fill them."""
from __future__ import annotations

from ...analysis.activity import check_constant_stores, check_handle_stores
from ...analysis.dominators import dominators
from ...analysis.forward_activity import failing_blocks, forward_activity
from ...analysis.types import kind, type_analysis
from ...errors import InternalError, UnsupportedError
from ...ir import types as T
from ...ir.builder import MathBuilder
from ...ir.instructions import Instruction
from ...ir.module import Function
from ...ir.values import Argument, Constant, ConstFloat, ConstInt, Global
from ...options import Activity, activities
from ...rules.effects import check_refused_calls, is_handle
from ..common import diagnostics
from ..common.stand_in import forward_stand_in
from .allocations import shadow_handles
from .owned_items import counted_handles, destructed_memory

MAX_WIDTH = 16


class ForwardMode:
    __slots__ = ("__weakref__", "module", "primal", "activity", "width", "strong_zero_guards", "noalias_shadows",
                 "dom", "preds", "types", "act", "handles", "maybe_own", "destructed", "counted",
                 "users", "float_pointers",
                 "vmap", "tmap", "smap", "hmap", "rmap", "bmap", "phis", "extents", "stand_ins",
                 "stand_in_buffers", "stand_in_count", "unneeded", "unread", "params", "shadow_params",
                 "tangent_params", "float_ret", "fn", "b")

    def __init__(self, module, fn_name, activity, out_name, width=1, internal=False,
                 strong_zero_guards=False, noalias_shadows=False):
        if fn_name not in module.functions or module.functions[fn_name].is_declaration:
            raise ValueError(f"the module defines no function @{fn_name}")
        primal = module.functions[fn_name]
        if len(activity) != len(primal.params):
            raise ValueError(f"activity has {len(activity)} entries, @{fn_name} has "
                             f"{len(primal.params)} parameters")
        activity = activities(activity)
        for k, mode in enumerate(activity):
            t = primal.params[k].type
            if mode is Activity.DUP and not t.is_ptr:
                raise ValueError(f"activity[{k}] is dup but parameter {k} is {t}, not a pointer")
            if mode is Activity.ACTIVE and not t.is_float:
                raise ValueError(f"activity[{k}] is active but parameter {k} is {t}, not a float")
        self.module, self.primal, self.activity, self.width = module, primal, activity, width
        self.strong_zero_guards = strong_zero_guards
        self.noalias_shadows = noalias_shadows and not internal
        self.dom = dominators(primal)
        self.preds: dict = {}   # reachable block -> its reachable predecessors (driver.run)
        self.types = type_analysis(primal)
        self.act = forward_activity(primal, self.activity, module, self.describe, self.locate)
        check_refused_calls(primal, self.unsupported)
        check_constant_stores(primal, self.act, self.locate)
        check_handle_stores(primal, self.act, self.locate, failing_blocks(primal))
        self.handles = shadow_handles(primal, self.act)
        self.maybe_own = maybe_own_shadows(primal, self.act, self.activity, internal)
        self.destructed = destructed_memory(primal, self.types)   # owned_items.py
        self.counted = counted_handles(primal)
        self.users: dict = {}
        self.float_pointers: set = set()   # ids of pointers floats are loaded from / stored to
        for i in primal.instructions():
            for o in i.ops:
                self.users.setdefault(id(o), []).append(i)
            if i.opcode == "load" and kind(i.type) == "float":
                self.float_pointers.add(id(i.ops[0]))
            elif i.opcode == "store" and kind(i.ops[0].type) == "float":
                self.float_pointers.add(id(i.ops[1]))
        self.vmap: dict = {}    # id(primal value) -> value in the new function
        self.tmap: dict = {}    # id(primal float) -> its tangents (a list of `width` values)
        self.smap: dict = {}    # id(primal pointer) -> its shadows
        self.hmap: dict = {}    # id(primal allocation handle) -> the shadow allocations' handles
        self.rmap: dict = {}    # id(primal integer) -> the raw bits of its shadow (copies of floats)
        self.bmap: dict = {}    # primal block -> new block
        self.phis: list = []    # (new phi, primal phi, what, lane)
        self.extents: dict = {}  # param index -> Extent (stand-in shadows, stand_in.py)
        self.stand_ins: dict = {}
        self.stand_in_buffers: list = []
        self.stand_in_count = 0
        self.unneeded: set = set()   # ids of primal stores the caller does not need (noneed.py)
        self.unread: set = set()     # ids of stores whose tangents the caller does not read
        self._make_function(out_name, internal)
        self.b = MathBuilder(module)

    # --- the new function
    def _make_function(self, out_name, internal) -> None:
        p, w = self.primal, self.width
        params = [Argument(a.type, a.name or f"arg{k}", "", k) for k, a in enumerate(p.params)]
        self.shadow_params, self.tangent_params = {}, {}
        for k, mode in enumerate(self.activity):
            if mode is Activity.DUP:
                lanes = [Argument(T.ptr, lane_name(params[k].name, "shadow", j, w),
                                  "noalias" if self.noalias_shadows else "", len(params) + j)
                         for j in range(w)]
                self.shadow_params[k] = lanes
                params += lanes
        for k, mode in enumerate(self.activity):
            if mode is Activity.ACTIVE:
                lanes = [Argument(params[k].type, lane_name(params[k].name, "tangent", j, w), "",
                                  len(params) + j) for j in range(w)]
                self.tangent_params[k] = lanes
                params += lanes
        used = set()
        for a in params:   # unique names (a primal may already have a `%x.shadow`)
            base, n = a.name, 0
            while a.name in used:
                n += 1
                a.name = f"{base}.{n}"
            used.add(a.name)
        self.params = params
        rt = p.ret_type
        self.float_ret = rt.is_float
        if self.float_ret:
            rt = T.StructType([p.ret_type] * (1 + w))
        self.fn = Function(out_name, rt, params, prefix="define internal" if internal else "define")
        self.fn.generated = True
        self.module.add_function(self.fn)

    def fill_phis(self) -> None:
        """One incoming entry per edge into the phi's block, as LLVM requires: a switch with
        several cases to one block has that many edges (and entries) from its block."""
        for new, phi, what, j in self.phis:
            blk = phi.block
            ops, blocks = [], []
            for v, src in zip(phi.ops, phi.blocks):
                if src not in self.preds[blk] or self.bmap[src] in blocks:
                    continue
                value = self.incoming(v, phi, what, j)
                edges = self.bmap[src].successors().count(self.bmap[blk]) or 1
                ops += [value] * edges
                blocks += [self.bmap[src]] * edges
            new.ops, new.blocks = ops, blocks

    def incoming(self, v, phi, what, j):
        if what == "value":
            return self.val(v)
        if what == "tangent":
            t = self.tan(v)
            return t[j] if t is not None else ConstFloat(phi.type, 0.0)
        if what == "shadow":
            return self.shadow(v, phi)[j]
        if what == "handle":
            h = self.handle_lanes(v, phi)
            return h[j] if h is not None else Constant(T.ptr, "null")
        r = self.rmap.get(id(v))
        return r[j] if r is not None else ConstInt(phi.type, 0)

    # --- values
    def val(self, v):
        if isinstance(v, Argument):
            return self.params[v.index]
        if isinstance(v, (Constant, Global)) or v is None:
            return v
        if id(v) in self.vmap:
            return self.vmap[id(v)]
        if v in self.bmap:
            return self.bmap[v]
        raise InternalError("a value is used before it is defined", self.describe(v))

    def tan(self, v):
        """The tangents of v (a list of `width` values), or None where it is zero."""
        if isinstance(v, Argument):
            return self.tangent_params.get(v.index)
        if isinstance(v, (Constant, Global)):
            return None
        if id(v) in self.tmap:
            return self.tmap[id(v)]
        if id(v) in self.act.varying and kind(v.type) == "float":
            raise InternalError("a varying value has no tangent", self.describe(v))
        return None

    def shadow(self, p, user=None):
        """The shadows of pointer p."""
        if isinstance(p, Argument):
            s = self.shadow_params.get(p.index)
            if s is None:
                s = forward_stand_in(self, p)
            if s is None and self.types.unread(p):
                s = [self.val(p)] * self.width   # a handle: never read, its own shadow
            if s is None:
                raise self.unsupported(f"pointer %{p.name} has no shadow (it is not dup)", user or p)
            return s
        if isinstance(p, (Constant, Global)):
            if isinstance(p, Global):
                raise self.unsupported("a global variable holds differentiable data", user or p)
            return [p] * self.width
        s = self.smap.get(id(p))
        if s is None and is_handle(p):
            # merged with pointers loaded from shadowed memory (a list's items' handles): a handle is
            # never read through; its shadow handles, or itself (memory.store does the same)
            s = self.hmap.get(id(p)) or [self.val(p)] * self.width
        if s is None:
            raise self.unsupported("a pointer mixes differentiable and constant memory", user or p)
        return s

    def handle_lanes(self, v, user):
        """The shadow handles of v merged with allocation handles: its shadow handles, or its
        shadow when it has one (an item's handle loaded from a list), or None (a handle without
        a shadow, which the shadow side never reference counts)."""
        h = self.hmap.get(id(v))
        if h is None and self.has_shadow(v) and not isinstance(v, (Constant, Global)):
            h = self.shadow(v, user)
        return h

    def has_shadow(self, v) -> bool:
        return self.act.has_shadow(v)

    def varying(self, v) -> bool:
        return id(v) in self.act.varying

    def set_tangent(self, v, lanes) -> None:
        """v's tangents (a list of `width` values; None: zero)."""
        self.tmap[id(v)] = lanes

    def zero(self, t):
        return ConstFloat(t, 0.0)

    # --- emission helpers
    def clone(self, inst, ops=None, name=None):
        """Emit a copy of primal `inst` with mapped operands (or `ops`) at the builder."""
        c = inst.copy()
        c.ops = [self.val(o) for o in inst.ops] if ops is None else list(ops)
        c.targets = [self.bmap[t] for t in inst.targets]
        c.cases = [(k, self.bmap[t]) for k, t in inst.cases]
        c.name = inst.name if name is None else name
        c.dbg = ""
        if name is not None:
            c.meta = ""   # a shadow: the primal's alias scopes say nothing about it
        if inst.opcode == "call" and isinstance(inst.callee, Instruction):
            c.callee = self.val(inst.callee)
        return self.b.emit(c)

    def emit_primal(self, inst):
        c = self.clone(inst)
        self.vmap[id(inst)] = c
        return c

    def entry_slot(self, t, name=""):
        """A stack slot of type t at the top of the entry block (not re-allocated in loops)."""
        entry = self.bmap[self.primal.entry]
        slot = Instruction("alloca", T.ptr, [], name=name, source_type=t, align=8)
        return entry.insert(0, slot)

    def lanes(self, make) -> list:
        return [make(j) for j in range(self.width)]

    def suffix(self, v, what: str, j: int) -> str:
        return lane_name(v.name, what, j, self.width) if v.name else ""

    # --- messages (common/diagnostics.py)
    def locate(self, inst):
        return diagnostics.locate(self.module, inst)

    def describe(self, inst) -> str:
        return diagnostics.describe(inst)

    def unsupported(self, what, inst, hint="") -> UnsupportedError:
        return diagnostics.unsupported(self.module, what, inst, hint)


def maybe_own_shadows(fn, act, activity, internal) -> set:
    """Pointers whose shadow may be the primal memory itself: a pointer without a shadow stored
    into shadowed memory is its own shadow (forward_memory.store), so a shadow loaded from memory
    may be one, and so may a callee's shadow parameter. Tangents read through them are guarded
    (zero when the shadow is the primal) and stores through them never reach the primal."""
    out = set()
    if internal:
        out |= {id(a) for a, m in zip(fn.params, activity) if m is Activity.DUP}
    insts = list(fn.instructions())
    changed = True
    while changed:
        changed = False
        for i in insts:
            if id(i) in out or not i.type.is_ptr or not act.has_shadow(i):
                continue
            op = i.opcode
            if op == "load":
                hit = True
            elif op in ("getelementptr", "bitcast", "addrspacecast"):
                hit = id(i.ops[0]) in out
            elif op == "phi":
                hit = any(id(o) in out for o in i.ops)
            elif op == "select":
                hit = any(id(o) in out for o in i.ops[1:])
            else:
                hit = False
            if hit:
                out.add(id(i))
                changed = True
    return out


def lane_name(base: str, tag: str, j: int, width: int) -> str:
    """`x.shadow` for one lane, `x.shadow0`, `x.shadow1`, ... for several."""
    return f"{base}.{tag}" if width == 1 else f"{base}.{tag}{j}"


__all__ = ["ForwardMode", "MAX_WIDTH"]
