"""Forward mode: add the tangent function of a function to its module.

The generated function runs the primal once, instruction by instruction, and beside each
instruction computes the tangents of its result, from the same rule table as reverse mode:
the tangent of y = op(x_0, ..., x_n) is sum_k partial_k(d = tangent of x_k) (registry.py), with
the strong-zero guard of reverse mode (a zero tangent contributes zero even where the partial is
inf or NaN) unless the rule is `linear`. Tangents of SSA values are SSA values (a phi gets tangent
phis); there is no tape and no second sweep.

    <ret> @out(<primal params>,
               <per "dup" param, in order: `width` shadow pointers>,
               <per "active" param, in order: `width` tangents, as values>)

Shadows enter holding the tangents of the initial memory and leave holding the tangents of the
final memory: where the primal stores, the tangent of the stored value is stored into the shadow.
`<ret>` is the primal's return type, except that a float return becomes `{T, T x width}`: the
value and its tangents (a Numba kernel returns its float through %retptr, whose shadow receives
the tangent like any other memory).

With width k > 1 every varying value has k tangents and every shadowed pointer k shadows, so one
call differentiates k directions and shares the primal work.

Calls into functions of the module that take varying values or shadowed memory call a forward
version of the callee made for that call's activity (forward_calls.py); a worklist makes each
version once, so recursion works. See forward_memory.py for memory and allocations,
forward_values.py for arithmetic.
"""
from __future__ import annotations


from ..analysis.activity import check_constant_stores
from ..analysis.dominators import dominators
from ..analysis.types import kind, type_analysis
from ..errors import UnsupportedError
from ..ir import types as T
from ..ir.builder import MathBuilder
from ..ir.instructions import Instruction
from ..ir.module import Function
from ..ir.printer import format_instruction
from ..ir.values import Argument, Constant, ConstFloat, ConstInt, Global
from .forward_activity import forward_activity
from .forward_alloc import shadow_handles
from .vector_math import use_vector_variants

MAX_WIDTH = 16


def forward_mode(module, fn_name, activity, out_name, width=1, strong_zero_guards=False,
                 noalias_shadows=False, extents=None, no_need=(), vector_library=None):
    """Add `out_name`, the forward-mode tangent function of `fn_name` (see the module docstring).

    activity: "const", "dup" or "active" per parameter of the primal. width: tangents per value.
    strong_zero_guards: differentiate `select (x == 0), 0, y` lane by lane as the guard it is in
    an adjoint sweep (forward_instructions.guarded_tangents): for running a reverse-mode gradient
    with zero seeds and k seeds as tangents (batched reverse mode).
    noalias_shadows: the caller promises every shadow pointer parameter is memory no other
    parameter reaches (`noalias`), which lets LLVM keep tangents in registers.
    extents: {param index: restore.Extent}: a Const pointer parameter with a known extent that
    meets shadowed memory in a phi or select gets a zeroed stand-in shadow (dummy.py).
    no_need: indices of "dup" parameters whose final primal contents the caller does not need
    (DuplicatedNoNeed): their stores are skipped when nothing reads them back (noneed.py);
    noalias_shadows also tells that analysis the arrays are disjoint.
    vector_library: as in reverse_mode, for the rules' own math calls (vector_math.py).
    Returns the generated Function.
    """
    if not isinstance(width, int) or not 1 <= width <= MAX_WIDTH:
        raise ValueError(f"width must be an integer from 1 to {MAX_WIDTH}, not {width!r}")
    if extents:
        from .nonneg import fold_sign_tests
        fold_sign_tests(module.functions[fn_name], [n for e in extents.values() for n, _ in e.dims])
    fm = ForwardMode(module, fn_name, activity, out_name, width, strong_zero_guards=strong_zero_guards,
                     noalias_shadows=noalias_shadows)
    fm.extents = dict(extents or {})
    if no_need:
        from ..analysis.alias import alias_analysis
        from .noneed import unneeded_stores
        if any(activity[i] != "dup" for i in no_need):
            raise ValueError("no_need names parameters that are not 'dup'")
        alias = alias_analysis(fm.primal, noalias_params=noalias_shadows)
        fm.unneeded = {id(s) for s in unneeded_stores(fm.primal, alias, no_need)}
    fm.run()
    worklist = module.__dict__.setdefault("forward_worklist", [])
    while worklist:
        callee, act, name, w = worklist.pop()
        ForwardMode(module, callee, list(act), name, w, internal=True,
                    strong_zero_guards=strong_zero_guards).run()
    use_vector_variants(module, vector_library)
    return fm.fn


class ForwardMode:
    def __init__(self, module, fn_name, activity, out_name, width=1, internal=False,
                 strong_zero_guards=False, noalias_shadows=False):
        if fn_name not in module.functions or module.functions[fn_name].is_declaration:
            raise ValueError(f"the module defines no function @{fn_name}")
        primal = module.functions[fn_name]
        if len(activity) != len(primal.params):
            raise ValueError(f"activity has {len(activity)} entries, @{fn_name} has "
                             f"{len(primal.params)} parameters")
        for k, mode in enumerate(activity):
            if mode not in ("const", "dup", "active"):
                raise ValueError(f"activity[{k}] must be const, dup or active, not {mode!r}")
            t = primal.params[k].type
            if mode == "dup" and not t.is_ptr:
                raise ValueError(f"activity[{k}] is dup but parameter {k} is {t}, not a pointer")
            if mode == "active" and not t.is_float:
                raise ValueError(f"activity[{k}] is active but parameter {k} is {t}, not a float")
        self.module, self.primal, self.activity, self.width = module, primal, list(activity), width
        self.strong_zero_guards = strong_zero_guards
        self.noalias_shadows = noalias_shadows and not internal
        self.dom = dominators(primal)
        self.types = type_analysis(primal)
        self.act = forward_activity(primal, self.activity, module, self.describe)
        check_constant_stores(primal, self.act, self.locate)
        self.handles = shadow_handles(primal, self.act)
        self.maybe_own = maybe_own_shadows(primal, self.act, self.activity, internal)
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
        self.extents: dict = {}  # param index -> restore.Extent (stand-in shadows, dummy.py)
        self.stand_ins: dict = {}
        self.stand_in_buffers: list = []
        self.stand_in_count = 0
        self.unneeded: set = set()   # ids of primal stores the caller does not need (noneed.py)
        self._make_function(out_name, internal)
        self.b = MathBuilder(module)

    # --- the new function
    def _make_function(self, out_name, internal) -> None:
        p, w = self.primal, self.width
        params = [Argument(a.type, a.name or f"arg{k}", "", k) for k, a in enumerate(p.params)]
        self.shadow_params, self.tangent_params = {}, {}
        for k, mode in enumerate(self.activity):
            if mode == "dup":
                lanes = [Argument(T.ptr, lane_name(params[k].name, "shadow", j, w),
                                  "noalias" if self.noalias_shadows else "", len(params) + j)
                         for j in range(w)]
                self.shadow_params[k] = lanes
                params += lanes
        for k, mode in enumerate(self.activity):
            if mode == "active":
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
        self.fn.generated = True  # type: ignore[attr-defined]
        self.module.add_function(self.fn)

    def run(self) -> Function:
        from .forward_instructions import visit, visit_phi
        order = self.dom.order
        for blk in order:
            self.bmap[blk] = self.fn.add_block(blk.name)
        reachable = set(order)
        self.preds = {blk: [q for q in preds if q in reachable] for blk, preds in
                      self.primal.predecessors().items() if blk in reachable}
        for blk in order:
            self.b.position(self.bmap[blk])
            for phi in blk.phis():
                visit_phi(self, phi)
        for blk in order:
            self.b.position(self.bmap[blk])
            for inst in blk.instructions:
                if inst.opcode != "phi":
                    visit(self, inst)
        self.fill_phis()
        from .dummy import free_forward_stand_ins
        free_forward_stand_ins(self)
        return self.fn

    def fill_phis(self) -> None:
        for new, phi, what, j in self.phis:
            blk = phi.block
            ops, blocks = [], []
            for v, src in zip(phi.ops, phi.blocks):
                if src not in self.preds[blk] or self.bmap[src] in blocks:
                    continue
                ops.append(self.incoming(v, phi, what, j))
                blocks.append(self.bmap[src])
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
            h = self.hmap.get(id(v))
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
        raise UnsupportedError("internal: a value is used before it is defined", self.describe(v))

    def tan(self, v):
        """The tangents of v (a list of `width` values), or None where it is zero."""
        if isinstance(v, Argument):
            return self.tangent_params.get(v.index)
        if isinstance(v, (Constant, Global)):
            return None
        if id(v) in self.tmap:
            return self.tmap[id(v)]
        if id(v) in self.act.varying and kind(v.type) == "float":
            raise UnsupportedError("internal: a varying value has no tangent", self.describe(v))
        return None

    def shadow(self, p, user=None):
        """The shadows of pointer p."""
        if isinstance(p, Argument):
            s = self.shadow_params.get(p.index)
            if s is None:
                from .dummy import forward_stand_in
                s = forward_stand_in(self, p)
            if s is None:
                raise self.unsupported(f"pointer %{p.name} has no shadow (it is not dup)", user or p)
            return s
        if isinstance(p, (Constant, Global)):
            if isinstance(p, Global):
                raise self.unsupported("a global variable holds differentiable data", user or p)
            return [p] * self.width
        s = self.smap.get(id(p))
        if s is None:
            raise self.unsupported("a pointer mixes differentiable and constant memory", user or p)
        return s

    def has_shadow(self, v) -> bool:
        return self.act.has_shadow(v)

    def varying(self, v) -> bool:
        return id(v) in self.act.varying

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

    # --- messages
    def locate(self, inst):
        chain = self.module.location(inst) if hasattr(inst, "dbg") else []
        return chain[0] if chain else None

    def describe(self, inst) -> str:
        try:
            return format_instruction(inst)
        except Exception:  # noqa: BLE001 - a message must never fail
            return getattr(inst, "opcode", repr(inst))

    def unsupported(self, what, inst, hint="") -> UnsupportedError:
        if isinstance(inst, Instruction):
            return UnsupportedError(what, self.describe(inst), self.locate(inst), hint)
        return UnsupportedError(what, getattr(inst, "name", ""), None, hint)


def maybe_own_shadows(fn, act, activity, internal) -> set:
    """Pointers whose shadow may be the primal memory itself: a pointer without a shadow stored
    into shadowed memory is its own shadow (forward_memory.store), so a shadow loaded from memory
    may be one, and so may a callee's shadow parameter. Tangents read through them are guarded
    (zero when the shadow is the primal) and stores through them never reach the primal."""
    out = set()
    if internal:
        out |= {id(a) for a, m in zip(fn.params, activity) if m == "dup"}
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


__all__ = ["forward_mode", "ForwardMode", "MAX_WIDTH"]
