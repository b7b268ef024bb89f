"""Tangents of memory instructions. Forward mode overwrites shadows where the primal writes.

- a pointer getter's call (rules/effects.py): the same call on the object's shadow; a
  container's constructor and copy-in calls: the same calls on the shadows;
- `v = load p`: tangent(v) = load shadow(p) (a pointer loaded from memory holding shadowed
  pointers: its shadow is loaded from the shadow memory);
- `store v, p` into shadowed memory: store tangent(v) into shadow(p) (zero when v has none; the
  shadow pointer of a pointer v, the shadow handles of an allocation handle v, or v itself when
  it points to memory without a shadow; into memory whose element destructor releases its items,
  integers are stored too and a handle that is its own shadow is stored as null: owned_items.py);
- `memset p`: the shadow is zeroed; `memcpy dst, src`: the shadow is copied (zeroed when src has
  no shadow);
- a local alloca with a shadow: a second alloca beside it, zeroed;
- allocations: see allocations.py.
"""
from __future__ import annotations

from ...analysis.types import kind
from ...ir import types as T
from ...ir.instructions import Instruction
from ...ir.values import Constant, ConstInt
from ...rules.effects import COPIES_IN, COPIES_OUT, CONSTRUCTORS, POINTER_GETTERS, constructor_out, setup_object
from .owned_items import in_destructed, item_shadows


def memset_zero(fm, p, size) -> None:
    fm.b.call(f"llvm.memset.p0.{size.type}", T.void, [p, ConstInt(T.i8, 0), size, ConstInt(T.i1, 0)])


def alloca(fm, inst) -> None:
    c = fm.emit_primal(inst)
    if not fm.has_shadow(inst):
        return
    b = fm.b
    size = ConstInt(T.i64, T.size_of(inst.source_type))
    if inst.ops:
        n = b.cast("sext", c.ops[0], T.i64) if c.ops[0].type != T.i64 else c.ops[0]
        size = b.mul(size, n)
    lanes = []
    for j in range(fm.width):
        s = b.emit(Instruction("alloca", T.ptr, list(c.ops), name=fm.suffix(inst, "shadow", j),
                               source_type=inst.source_type, align=inst.align))
        memset_zero(fm, s, size)
        lanes.append(s)
    fm.smap[id(inst)] = lanes


def pointer_op(fm, inst) -> None:
    """getelementptr / bitcast / addrspacecast: the same offsets from each shadow."""
    c = fm.emit_primal(inst)
    if not fm.has_shadow(inst):
        return
    base = fm.shadow(inst.ops[0], inst)
    fm.smap[id(inst)] = [fm.clone(inst, [base[j]] + c.ops[1:], fm.suffix(inst, "shadow", j))
                         for j in range(fm.width)]


def pointer_getter(fm, inst) -> None:
    """A pointer a shadowed object holds (rules/effects.py): the same call on each shadow object."""
    c = fm.emit_primal(inst)
    k = POINTER_GETTERS[inst.callee_name]
    obj = fm.shadow(inst.ops[k], inst)
    fm.smap[id(inst)] = [fm.clone(inst, c.ops[:k] + [obj[j]] + c.ops[k + 1:],
                                  fm.suffix(inst, "shadow", j)) for j in range(fm.width)]


def container_call(fm, inst) -> None:
    """A constructor whose object receives differentiable items, or an item copied into such an
    object (rules/effects.py): the same call on the shadows (a shadow object made in out's
    shadow; the item's shadow, tangents included, copied into the shadow object). The shadow
    object lives as the primal does: the host's handle holding it has a shadow handle, released
    with the primal's."""
    c = fm.emit_primal(inst)
    if constructor_out(inst) is not None:
        positions = (CONSTRUCTORS[inst.callee_name].out_arg,)
    elif inst.callee_name in COPIES_OUT:
        positions = COPIES_OUT[inst.callee_name]
    else:
        positions = COPIES_IN[inst.callee_name]
        if not fm.has_shadow(inst.ops[positions[1]]):
            raise fm.unsupported("a container holding differentiable data receives an item "
                                 "without derivatives (pass that array as Duplicated too)", inst)
    shadows = {k: fm.shadow(inst.ops[k], inst) for k in positions}
    for j in range(fm.width):
        ops = [shadows[k][j] if k in shadows else o for k, o in enumerate(c.ops)]
        fm.clone(inst, ops, fm.suffix(inst, "shadow", j))


def setup_call(fm, inst) -> None:
    """A call configuring a shadowed object (rules/effects.py, register_setup): the same call on
    each shadow object, so that it holds its items' shadows as the primal holds the items (a
    temporary's shadow appended to a shadow list outlives the temporary's release)."""
    c = fm.emit_primal(inst)
    k = inst.ops.index(setup_object(inst))
    shadows = fm.shadow(inst.ops[k], inst)
    for j in range(fm.width):
        fm.clone(inst, [shadows[j] if m == k else o for m, o in enumerate(c.ops)],
                 fm.suffix(inst, "shadow", j))


def load(fm, inst) -> None:
    c = fm.emit_primal(inst)
    p = inst.ops[0]
    if not fm.has_shadow(p):
        return
    sp = fm.shadow(p, inst)
    b, w = fm.b, fm.width

    def shadow_loads(what):
        out = [b.emit(Instruction("load", inst.type, [sp[j]], name=fm.suffix(inst, what, j),
                                  align=inst.align, volatile=inst.volatile)) for j in range(w)]
        if id(p) in fm.maybe_own and what != "shadow":
            # memory that is its own shadow holds no tangents: they are zero
            zero = fm.zero(inst.type) if what == "t" else ConstInt(inst.type, 0)
            pp = fm.val(p)
            out = [b.select(b.icmp("eq", sp[j], pp), zero, out[j]) for j in range(w)]
        return out

    k = kind(inst.type)
    if k == "float" and fm.varying(inst):
        if not isinstance(inst.type, T.FloatType):
            raise fm.unsupported(f"a load of {inst.type} from differentiable memory", inst)
        fm.tmap[id(inst)] = shadow_loads("t")
    elif k == "ptr" and fm.has_shadow(inst):
        fm.smap[id(inst)] = shadow_loads("shadow")
    elif k == "int":
        users = fm.users.get(id(inst), ())
        if id(p) in fm.float_pointers and not all(_copies_to_shadow(fm, u, inst) for u in users):
            # the bits of a differentiable float read as an integer and computed with
            raise fm.unsupported("differentiable float data is reinterpreted as an integer", inst)
        if any(_copies_to_shadow(fm, u, inst) for u in users):
            fm.rmap[id(inst)] = shadow_loads("raw")
    del c


def _copies_to_shadow(fm, user, v) -> bool:
    """Does `user` move the integer bits of v into shadowed memory or back into floats?"""
    if user.opcode == "store":
        return user.ops[0] is v and fm.has_shadow(user.ops[1])
    if user.opcode == "select":
        return user.ops[0] is not v
    return user.opcode in ("bitcast", "phi", "freeze")


def store(fm, inst) -> None:
    if id(inst) not in fm.unneeded:
        fm.emit_primal(inst)
    if id(inst) in fm.unread:
        return
    v, p = inst.ops
    k = kind(v.type)
    if not fm.has_shadow(p):
        if fm.varying(v) and k != "float":
            raise fm.unsupported("differentiable data is stored into memory that has no shadow", inst)
        return
    sp = fm.shadow(p, inst)
    if k == "float":
        if not isinstance(v.type, T.FloatType):
            if fm.varying(v):
                raise fm.unsupported(f"a store of {v.type} differentiable data", inst)
            lanes = [Constant(v.type, "zeroinitializer")] * fm.width
        else:
            lanes = fm.tan(v) or [fm.zero(v.type)] * fm.width
    elif k == "ptr":
        if id(v) in fm.hmap:
            # an allocation handle kept beside its data (an array struct's meminfo): the shadow
            # keeps the shadow handle, so the reference counts taken through the loaded copies
            # move the shadow allocation's too (with the primal's, it was released early)
            lanes = fm.hmap[id(v)]
        elif fm.has_shadow(v) or isinstance(v, Constant):
            lanes = fm.shadow(v, inst)
        else:   # a pointer to memory without a shadow is its own shadow (as in Enzyme)
            lanes = [fm.val(v)] * fm.width
        if in_destructed(fm, p):
            lanes = item_shadows(fm, v, lanes)
    elif k == "int":
        if id(v) in fm.rmap:
            lanes = fm.rmap[id(v)]
        elif in_destructed(fm, p, no_floats=True):
            lanes = [fm.val(v)] * fm.width   # an item count the element destructor reads
        elif any(t.is_float for t in fm.types.memory_types(p)):
            lanes = [ConstInt(v.type, 0)] * fm.width
        else:
            return
    else:
        if fm.varying(v):
            raise fm.unsupported(f"a store of {v.type} differentiable data", inst)
        lanes = [Constant(v.type, "zeroinitializer")] * fm.width
    sp = guard_own(fm, p, sp, v.type)
    for j in range(fm.width):
        fm.b.emit(Instruction("store", T.void, [lanes[j], sp[j]], align=inst.align, volatile=inst.volatile))


def guard_own(fm, p, sp, t):
    """Shadows that may be the primal memory itself (pointers loaded from memory, callee
    parameters: state.maybe_own_shadows): a store goes to a scratch slot instead of the primal."""
    if id(p) not in fm.maybe_own:
        return sp
    b, pp = fm.b, fm.val(p)
    scratch = fm.entry_slot(t, "own.scratch")
    return [b.select(b.icmp("eq", s, pp), scratch, s) for s in sp]


def memory_intrinsic(fm, inst) -> None:
    """memset / memcpy / memmove: the same on the shadows."""
    c = fm.emit_primal(inst)
    name = inst.callee_name
    dst = inst.ops[0]
    is_set = name.startswith("llvm.memset")
    if not fm.has_shadow(dst):
        if not is_set and fm.has_shadow(inst.ops[1]) and fm.types.float_type_behind(inst.ops[1]) is not None:
            raise fm.unsupported("differentiable memory is copied into memory that has no shadow", inst,
                                 "Pass the destination as Duplicated(array, shadow).")
        return
    sdst = fm.shadow(dst, inst)
    size = c.ops[2]
    for j in range(fm.width):
        n = size
        if id(dst) in fm.maybe_own:   # never write the primal memory through its own shadow
            n = fm.b.select(fm.b.icmp("eq", sdst[j], c.ops[0]), ConstInt(size.type, 0), size)
        if is_set or not fm.has_shadow(inst.ops[1]):
            memset_zero(fm, sdst[j], n)
        else:
            ssrc = fm.shadow(inst.ops[1], inst)
            fm.clone(inst, [sdst[j], ssrc[j], n] + c.ops[3:], "")
