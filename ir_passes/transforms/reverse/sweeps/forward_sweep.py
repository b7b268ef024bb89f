"""The augmented forward sweep: the primal, cloned, plus what the reverse sweep needs.

- every instruction is cloned; pointers into shadowed memory get a shadow twin;
- loop counters move on the edges that end an iteration, and the tape is reserved on the edges
  that start one (tape.py);
- values the reverse sweep reads from the tape are stored where they are defined;
- a successful `ret` jumps to the reverse sweep; an error `ret` frees the tape and returns.
"""
from __future__ import annotations

from ....analysis.activity import differentiated
from ....errors import UnsupportedError
from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.edit import emit_at
from ....ir.instructions import Instruction
from ....ir.values import Argument, Constant, ConstInt, Global
from ....rules.effects import (CONSTRUCTORS, COPIES_OUT, POINTER_GETTERS, allocation_size,
                              constructor_out, copy_in_operands, copy_out_operands, getter_object, handle_groups,
                              handle_of, handle_realloc_size, handle_size, is_handle)
from ....runtime import heap
from ....runtime.helpers import ensure
from ...common.markers import is_marker
from ...common.stand_in import stand_in_shadow
from ..calls.calls import forward_call, fwd_field_address
from ..parallel.parallel_launch import forward_launch, launches, parallel_status
from ..tape.retain import retain
from ..calls.success import success_test
from ..loops.trips import NONE, ROOM, bound_steps, grows

SHADOW_POSITIONS = {"getelementptr": (0,), "bitcast": (0,), "addrspacecast": (0,), "select": (1, 2),
                    "load": (0,)}


def shadow_positions(inst) -> tuple:
    """The operands of a shadowed pointer's twin that are shadows (the rest are primal)."""
    if inst.opcode == "phi":
        return tuple(range(len(inst.ops)))
    if inst.opcode == "call":     # a pointer getter's call on the shadow object
        return (POINTER_GETTERS[inst.callee_name],)
    return SHADOW_POSITIONS[inst.opcode]


def clone(inst, name_suffix=""):
    """A copy of primal `inst` (its !dbg kept: a generated function prints it only on a
    subprogram of its own, ir/debug_scopes.py)."""
    c = inst.copy()
    c.name = inst.name + name_suffix if inst.name else ""
    return c


def cell_store(cell, data, size) -> list:
    """Stores of {data, size} into a shadow cell (ForwardSweep.shadow_cell)."""
    at = Instruction("getelementptr", T.ptr, [cell, ConstInt(T.i64, 8)], source_type=T.i8, flags=["inbounds"])
    return [Instruction("store", T.void, [data, cell], align=8), at,
            Instruction("store", T.void, [size, at], align=8)]


class ForwardSweep:
    def __init__(self, g):
        self.g = g
        self.fb: dict = {}            # primal block -> forward block
        self.vmap: dict = {}          # primal value -> forward value
        self.smap: dict = {}          # primal pointer -> forward shadow pointer
        self.clones: list = []        # (clone, original, shadow positions)
        self.pred_block: dict = {}    # (primal P, primal S) -> forward block that jumps into S
        self.call_frames: dict = {}   # primal call -> forward load of the callee's frame pointer
        self.success_exits: list = [] # (forward block, primal return block) of the returns
                                      # that may succeed (not those sure to fail)
        self.groups: dict = {}        # rules/effects.handle_groups of the primal
        self.cells: dict = {}         # id(handle) -> the forward sweep's cell of its shadow
        self.moves: dict = {}         # id(handle reallocation) -> (old shadow, bytes kept)
        self.counted = None           # loops whose headers reach a success (None: every loop)
        self.error_block = None       # the shared error exit (error_exit)
        self.error_status = None      # its phi of the returned status

    # --- step 1: clone every reachable block
    def clone_blocks(self) -> None:
        g = self.g
        for a in g.primal.params:
            self.vmap[a] = g.params[a.index]
        for blk in g.dom.order:
            self.fb[blk] = g.new_block("fwd." + blk.name)
        self.groups = handle_groups(list(g.primal.instructions()))
        celled = {id(handle_of(m)) for grp in self.groups.values() for m in grp if g.act.has_shadow(m)}
        for blk in g.dom.order:
            for inst in blk.instructions:
                if inst.opcode == "call" and launches(g, inst):
                    self.vmap[inst] = forward_launch(self, inst, blk)
                    continue
                if inst.opcode == "call" and differentiated(g.act, inst):
                    self.vmap[inst] = forward_call(self, inst, blk)
                    continue
                if is_marker(inst):
                    continue  # only hints; they must name an alloca, which a clone may not keep
                c = self.fb[blk].append(clone(inst))
                self.vmap[inst] = c
                self.clones.append((c, inst, ()))
                if id(inst) in celled:
                    self.cells[id(inst)] = self.shadow_cell(inst, blk)
                if id(inst) in g.retained:
                    retain(g, MathBuilder(g.module, self.fb[blk]), inst, c)
                if inst.opcode == "store" and inst.ops[0].type.is_ptr and g.act.has_shadow(inst.ops[1]):
                    self.shadow_pointer_store(inst, blk)
                if constructor_out(inst) is not None and g.act.has_shadow(constructor_out(inst)):
                    self.shadow_object(inst, blk)
                pair = copy_in_operands(inst)
                if pair is not None and g.act.has_shadow(pair[0]):
                    self.shadow_copy_in(inst, pair, blk)
                pair = copy_out_operands(inst)
                if pair is not None and g.act.has_shadow(pair[0]):
                    self.shadow_copy_out(inst, blk)
                if inst.opcode == "alloca" and g.act.has_shadow(inst):
                    self.smap[inst] = self.shadow_alloca(inst, blk)
                elif inst.opcode == "call" and g.act.has_shadow(inst) and getter_object(inst) is None:
                    self.smap[inst] = self.shadow_allocation(inst, blk)
                elif g.act.has_shadow(inst):
                    s = self.fb[blk].append(clone(inst, ".shadow"))
                    pos = shadow_positions(inst)
                    self.smap[inst] = s
                    self.clones.append((s, inst, pos))
        # shadow twins of phis must sit with the phis
        for blk in self.fb.values():
            phis = [i for i in blk.instructions if i.opcode == "phi"]
            rest = [i for i in blk.instructions if i.opcode != "phi"]
            blk.instructions = phis + rest

    def shadow_pointer_store(self, inst, blk) -> None:
        """A pointer stored into shadowed memory: its shadow goes to the same place in the shadow
        memory (an inactive pointer stands for itself there), so loading it back finds it."""
        s = clone(inst)
        pos = (0, 1) if self.g.act.has_shadow(inst.ops[0]) else (1,)
        self.fb[blk].append(s)
        self.clones.append((s, inst, pos))

    def shadow_object(self, inst, blk) -> None:
        """A constructor whose object receives differentiable items: the same call makes the
        shadow object in out's shadow, which is listed for release when the gradient ends."""
        c = CONSTRUCTORS[inst.callee_name]
        twin = clone(inst, ".shadow")
        self.fb[blk].append(twin)
        self.clones.append((twin, inst, (c.out_arg,)))
        # an object the constructor failed to make is null: the release function must take it
        obj = Instruction("load", T.ptr, [inst.ops[c.out_arg]], name=f"{inst.name or 'new'}.object",
                          align=8)
        self.fb[blk].append(obj)
        self.clones.append((obj, None, (0,)))
        ensure(self.g.module, "enzpy.push_allocation")
        lst = fwd_field_address(self, blk, self.g.tape.object_list(c.free))
        self.emit(blk, Instruction("call", T.void, [lst, obj], callee=Global(T.ptr, "enzpy.push_allocation"),
                                   arg_attrs=["", ""]))

    def shadow_copy_in(self, inst, pair, blk) -> None:
        """An item copied into a shadowed object: its shadow goes into the shadow object."""
        obj, item = pair
        if not self.g.act.has_shadow(item):
            raise UnsupportedError("a container holding differentiable data receives an item "
                                   "without derivatives (pass that array as Duplicated too)",
                                   self.g.describe(inst), self.g.locate(inst))
        twin = clone(inst, ".shadow")
        self.fb[blk].append(twin)
        self.clones.append((twin, inst, (inst.ops.index(obj), inst.ops.index(item))))

    def shadow_copy_out(self, inst, blk) -> None:
        """An item copied out of a shadowed object: the shadow object's item goes to out's
        shadow (the same call, on the shadows)."""
        twin = clone(inst, ".shadow")
        self.fb[blk].append(twin)
        self.clones.append((twin, inst, COPIES_OUT[inst.callee_name]))

    def shadow_alloca(self, inst, blk):
        """The shadow of a local alloca: a zeroed field of the frame, alive in both sweeps."""
        g = self.g
        if inst.ops:
            raise UnsupportedError("a variable-size stack allocation holds differentiable data",
                                   g.describe(inst), g.locate(inst))
        size = T.size_of(inst.source_type)
        f = g.tape.frame.field(T.ArrayType(size, T.i8))
        g.alloca_shadows[inst] = f
        ib = g.init_builder
        ib.call("llvm.memset.p0.i64", T.void, [g.tape.frame.address(ib, f), ConstInt(T.i8, 0),
                                               ConstInt(T.i64, size), ConstInt(T.i1, 0)])
        return fwd_field_address(self, blk, f)

    def shadow_allocation(self, inst, blk):
        """A zeroed allocation (from the module's heap) of the same size as the allocation whose
        data pointer `inst` is; for a call among several yielding one handle's data, the shadow
        its handle's cell holds (shadow_cell)."""
        if id(inst) in self.groups:
            return self.celled_shadow(inst, blk)
        size = allocation_size(inst)
        if size is None:
            raise UnsupportedError(f"differentiable memory comes from a call to `{inst.callee_name}`",
                                   self.g.describe(inst), self.g.locate(inst))
        return self.zeroed(size, blk, f"{inst.name or 'alloc'}.shadow")

    def zeroed(self, size, blk, name=""):
        """A zeroed allocation from the module's heap, freed when the gradient ends."""
        allocate = heap.of(self.g.module).allocate
        self.g.module.declare(allocate, T.ptr, [T.i64])
        self.g.module.declare("llvm.memset.p0.i64", T.void, [T.ptr, T.i8, T.i64, T.i1])
        s = Instruction("call", T.ptr, [size], name=name, callee=Global(T.ptr, allocate), arg_attrs=[""])
        z = Instruction("call", T.void, [s, ConstInt(T.i8, 0), size, ConstInt(T.i1, 0)],
                        callee=Global(T.ptr, "llvm.memset.p0.i64"), arg_attrs=["", "", "", ""])
        ensure(self.g.module, "enzpy.push_allocation")
        lst = fwd_field_address(self, blk, self.g.tape.allocation_list())
        push = Instruction("call", T.void, [lst, s], callee=Global(T.ptr, "enzpy.push_allocation"),
                           arg_attrs=["", ""])
        self.emit(blk, s, z, push)
        return s

    def emit(self, blk, *insts) -> None:
        for i in insts:
            self.fb[blk].append(i)
            self.clones.append((i, None, ()))

    def shadow_cell(self, h, blk):
        """The shadow of an allocation handle whose data is asked for many times or moved (a
        list's payload): a cell {shadow data, its size} made beside the handle; every call
        yielding the data gets the shadow the cell holds then."""
        size = handle_size(h)
        cell = self.zeroed(ConstInt(T.i64, 16), blk, f"{h.name or 'handle'}.shadow.cell")
        data = self.zeroed(size, blk, f"{h.name or 'handle'}.shadow")
        self.emit(blk, *cell_store(cell, data, size))
        return cell

    def celled_shadow(self, inst, blk):
        """The shadow of a call yielding a celled handle's data. A reallocation moves the shadow
        too: a zeroed allocation of the new size receives the old shadow's kept bytes (the old
        one stays until the gradient ends: the pointers taped from it stay valid). The reverse
        sweep moves the kept bytes' adjoints back there (growing.reverse_move)."""
        g = self.g
        cell = self.cells.get(id(handle_of(inst)))
        if cell is None:
            raise UnsupportedError("differentiable memory comes from an allocation whose handle "
                                   "is not the allocator's call", g.describe(inst), g.locate(inst))
        n = handle_realloc_size(inst)
        if n is None:
            return self.emit_one(blk, Instruction("load", T.ptr, [cell], name=f"{inst.name or 'data'}.shadow",
                                                  align=8))
        old = self.emit_one(blk, Instruction("load", T.ptr, [cell], align=8))
        at = self.emit_one(blk, Instruction("getelementptr", T.ptr, [cell, ConstInt(T.i64, 8)],
                                            source_type=T.i8, flags=["inbounds"]))
        old_n = self.emit_one(blk, Instruction("load", T.i64, [at], align=8))
        new = self.zeroed(n, blk, f"{inst.name or 'realloc'}.shadow")
        less = self.emit_one(blk, Instruction("icmp", T.i1, [old_n, n], pred="ult"))
        kept = self.emit_one(blk, Instruction("select", T.i64, [less, old_n, n]))
        self.g.module.declare("llvm.memcpy.p0.p0.i64", T.void, [T.ptr, T.ptr, T.i64, T.i1])
        copy = Instruction("call", T.void, [new, old, kept, ConstInt(T.i1, 0)],
                           callee=Global(T.ptr, "llvm.memcpy.p0.p0.i64"), arg_attrs=["", "", "", ""])
        self.emit(blk, copy, *cell_store(cell, new, n))
        self.moves[id(inst)] = (old, kept)
        return new

    def emit_one(self, blk, inst):
        self.emit(blk, inst)
        return inst

    def forward_shadow(self, p):
        if isinstance(p, Argument):
            s = self.g.shadow_params.get(p.index)
            if s is None:
                s = stand_in_shadow(self.g, p)
            if s is not None:
                return s
        if isinstance(p, Constant):
            return p
        if p in self.smap:
            return self.smap[p]
        if is_handle(p) or isinstance(p, Argument) and self.g.types.unread(p):
            # merged with pointers loaded from shadowed memory (a list's items' handles, whose
            # releases LLVM sank into one call): nothing reads through a handle, its own shadow
            return self.vmap[p]
        if isinstance(p, Instruction) and p.opcode in ("getelementptr", "bitcast", "addrspacecast") \
                and p in self.vmap and _const_param_root(p) is not None:
            # an address into a Const array that meets shadowed memory: into its stand-in
            s = clone(p, ".stand_in")
            s.ops = [self.forward_shadow(p.ops[0])] + [self.vmap.get(o, o) for o in p.ops[1:]]
            at = self.vmap[p]
            at.block.insert(at.block.instructions.index(at) + 1, s)
            self.smap[p] = s
            return s
        if isinstance(p, Instruction):
            raise self.g.unsupported("a pointer mixes differentiable and constant memory", p)
        raise UnsupportedError("a pointer mixes differentiable and constant memory", p.ref())

    def which_pred(self, blk):
        """An i32 phi in the forward block saying which predecessor control came from."""
        preds = self.g.preds[blk]
        phi = self.fb[blk].insert(0, clone_phi(preds, blk))
        phi.name = f"from.{blk.name}"
        self.clones.append((phi, None, ()))
        return phi

    # --- step 2, after the reverse sweep: operands, edges, tape writes, returns
    def finish(self, rev) -> None:
        self.remap_operands()
        self.write_tape()
        self.link_edges()
        self.fuse(rev)
        self.fix_phis()
        self.returns(rev)

    def remap_operands(self) -> None:
        for c, orig, shadow_pos in self.clones:
            for k, o in enumerate(c.ops):
                c.ops[k] = self.forward_shadow(o) if k in shadow_pos else self.vmap.get(o, o)
            if c.opcode == "call" and c.callee is not None:
                c.callee = self.vmap.get(c.callee, c.callee)

    def write_tape(self) -> None:
        """Put each tape entry's value on the tape where the forward sweep defines it (each key
        knows how: tape_keys.py)."""
        for e in list(self.g.tape.entries.values()):
            e.key.save(self, e)

    def save_overwritten(self, store, e) -> None:
        """Before a store the reverse sweep undoes: put the value it overwrites on the tape."""
        fstore = self.vmap[store]
        blk = fstore.block

        def save(b):
            old = b.load(store.ops[0].type, fstore.ops[1], align=store.align)
            self.g.tape.write(b, e, old)
        emit_at(self.g.module, blk, blk.instructions.index(fstore), save, "save")

    def insert_after(self, inst, emit) -> None:
        blk = inst.block
        k = blk.instructions.index(inst) + 1
        while k < len(blk.instructions) and blk.instructions[k].opcode == "phi":
            k += 1
        emit_at(self.g.module, blk, k, emit)

    def link_edges(self) -> None:
        g = self.g
        for blk in g.dom.order:
            term = self.fb[blk].terminator
            for succ in dict.fromkeys(blk.successors()):
                end = self.edge(blk, succ)
                if end is None:
                    term.replace_successor(succ, self.fb[succ])
                    self.pred_block[(blk, succ)] = self.fb[blk]
                else:
                    first, last = end
                    term.replace_successor(succ, first)
                    self.pred_block[(blk, succ)] = last

    def fuse(self, rev) -> None:
        """Fused loops (fusion.py): the latch enters the reverse of its iteration, whose end
        (the resume block) takes the latch's branch."""
        for loop in self.g.fused:
            latch = loop.latches[0]
            f = self.fb[latch]
            term = f.instructions.pop()
            resume = rev.resume_block(loop)
            resume.append(term)
            MathBuilder(self.g.module, f).br(rev.rb[latch])
            for key, blk in list(self.pred_block.items()):
                if key[0] is latch and blk is f:
                    self.pred_block[key] = resume

    def edge(self, src, dst):
        """Emit the counter and tape work of edge src -> dst; None when there is none."""
        g = self.g
        exited = [lp for lp in g.loops.loops_exited(src, dst) if self.counts(lp)]
        header = g.loops.header_loop(dst)
        if header is not None and not self.counts(header):
            header = None     # a loop on a raise path: the reverse sweep never runs it
        back = header if header is not None and src in header.blocks else None
        entered = header if header is not None and src not in header.blocks else None
        if not (exited or back or entered):
            return None
        first = g.new_block(f"edge.{src.name}.{dst.name}")
        b = MathBuilder(g.module, first)
        for lp in exited:
            g.tape.step(b, lp, +1)
        if back is not None:
            g.tape.step(b, back, +1)
            if grows(g.trip_bounds.get(back)):
                g.tape.reserve(b, back)
        if entered is not None:
            if entered in g.starts:
                g.tape.write(b, g.starts[entered], g.tape.load(b, g.tape.counter(entered)))
            g.tape.reserve(b, entered, self.trip_count(b, entered))
        b.br(self.fb[dst])
        return first, b.block

    def counts(self, loop) -> bool:
        """Does the forward sweep count `loop`'s iterations and reserve its tape? Not when
        no success is reached from its header (a loop that builds a raise's message)."""
        return self.counted is None or loop in self.counted

    def trip_count(self, b, loop):
        """An upper bound on the iterations of this entry of `loop` (trips.py), or None when
        unknown. A loop that grows its tape on the way reserves its bound here only when it
        is at most ROOM iterations (a loose bound must not allocate much), else room for one
        iteration, as a loop entered with no exit sure to fire (it never leaves) does."""
        tb = self.g.trip_bounds.get(loop)
        if tb is None:
            return None
        steps = bound_steps(b, tb, lambda v: self.vmap.get(v, v))
        wide = b.icmp("ugt", steps, ConstInt(T.i64, ROOM)) if grows(tb) else \
            b.icmp("eq", steps, ConstInt(T.i64, NONE))
        return b.select(wide, ConstInt(T.i64, 1), steps)      # the first iteration's room

    def fix_phis(self) -> None:
        for c, orig, _ in self.clones:
            if c.opcode == "phi":
                dst = self.primal_block_of(c)
                c.blocks = [self.pred_block[(p, dst)] for p in c.blocks]

    def primal_block_of(self, fwd_inst):
        for blk, f in self.fb.items():
            if f is fwd_inst.block:
                return blk
        raise KeyError(fwd_inst)

    def returns(self, rev) -> None:
        g = self.g
        for blk in g.dom.order:
            f = self.fb[blk]
            term = f.terminator
            if term is None or term.opcode != "ret":
                continue
            f.instructions.pop()
            b = MathBuilder(g.module, f)
            status = term.ops[0] if term.ops else None
            if status is not None:
                g.tape.store(b, status, rev.status_slot)
            ok, status = parallel_status(g, b, success_test(b, status, g.success_codes), status)
            if ok is True:
                b.br(rev.rb[blk])
            else:
                err = self.error_exit(status, b.block)
                if ok is False:
                    b.br(err)
                else:
                    b.cbr(ok, rev.rb[blk], err)
            if ok is not False:
                self.success_exits.append((b.block, blk))

    def error_exit(self, status, pred):
        """The one block every error return jumps to: it frees the tape and returns the
        status (a phi over the returns). Its code reads only the frame, so one copy serves
        every exit (a copy per exit made a Kalman filter's gradient half teardown)."""
        g = self.g
        if self.error_block is None:
            self.error_block = g.new_block("error")
            eb = MathBuilder(g.module, self.error_block)
            self.error_status = None if status is None else eb.phi(status.type, [], "status")
            g.tape.free_all(eb, failed=True)
            if g.split and not g.keep_frame:
                heap.free(eb, g.tape.frame.pointer)
            eb.ret(self.error_status)
        if self.error_status is not None:
            self.error_status.ops.append(status)
            self.error_status.blocks.append(pred)
        return self.error_block


def clone_phi(preds, blk):
    """An i32 phi in `blk`: predecessor k's index, once per edge from it (a switch with two
    cases to `blk` is two edges, and LLVM wants an entry for each)."""
    ops, blocks = [], []
    for k, p in enumerate(preds):
        edges = p.successors().count(blk) or 1
        ops += [ConstInt(T.i32, k)] * edges
        blocks += [p] * edges
    return Instruction("phi", T.i32, ops, blocks=blocks)


def _const_param_root(p):
    """The parameter that p addresses through geps and casts only, or None."""
    while getattr(p, "opcode", None) in ("getelementptr", "bitcast", "addrspacecast"):
        p = p.ops[0]
    return p if isinstance(p, Argument) else None
