"""Getting primal values and shadow pointers in the reverse sweep.

A primal value the reverse sweep needs is, in order of preference:
- a constant or a parameter: used as it is;
- defined outside every loop: kept in a stack slot (free after SROA);
- cheap and pure with operands that are themselves available (integer and pointer arithmetic,
  comparisons, casts, an induction variable rebuilt from the loop counter) or defined outside its
  loop (cached once per iteration of the enclosing loop if need be): recomputed;
- expensive (a division, a square root, a transcendental call) inside an unfused loop: read back
  from the tape, which streams at a few cycles per value where these take tens (an N-body pair's
  sqrt and 1/r^3 made its gradient 3.2x the primal recomputed, 2.6x taped); values computed from
  it are still recomputed;
- a load whose memory alias analysis proves unchanged until the reverse sweep: loaded again;
  in split mode, a load from a parameter the caller keeps (`kept`) that the function never
  writes: loaded again;
- a load clobbered only by stores the reverse sweep undoes (restore.py): loaded again;
- an integer loop recurrence whose step the reverse sweep can compute: run backwards
  (recurrence.py);
- otherwise: cached on the tape, indexed by the loop iteration.
"""
from __future__ import annotations

from ....errors import UnsupportedError
from ....ir import types as T
from ....ir.instructions import Instruction
from ....ir.values import Argument, Constant, ConstInt, Global
from ....options import CacheMode
from ....rules.effects import CHEAP, expensive, pure_math
from ...common.stand_in import stand_in_shadow
from . import restore
from .plan import AVAILABLE, Plan
from .recurrence import field as recurrence_field
from .recurrence import recurrence_loop
from .tape_keys import LastValue, Shadow, Value


def common_loop(loop, block):
    """The innermost of `loop` and its parents that contains `block`: the loop whose iterations
    index a cached value read from `block` (a value only read after its loop needs one slot per
    iteration of the enclosing loop, not one per iteration of its own)."""
    while loop is not None and block not in loop.blocks:
        loop = loop.parent
    return loop


class Lazy:
    """A primal value fetched only when generated code uses it (see Builder.emit)."""

    def __init__(self, type, thunk):
        self.type, self._thunk, self._value = type, thunk, None

    def resolve(self):
        if self._value is None:
            self._value = self._thunk()
        return self._value


class Availability:
    def __init__(self, gradient):
        self.g = gradient
        self.memo: dict = {}
        self.strategy: dict = {}

    # --- primal values
    def primal(self, v, block, b):
        """The value v had at the forward point matching reverse code for primal block `block`."""
        if isinstance(v, (Constant, Global)):
            return v
        if isinstance(v, Argument):
            return self.g.params[v.index]
        fused = self._fused_here(v, block)
        if fused is not None:
            return fused
        key = (id(b.block), id(v))
        if key not in self.memo:
            self.memo[key] = self._fetch(v, block, b)
        return self.memo[key]

    def _fused_here(self, v, block):
        """In the reverse of a fused loop's iteration, a value of that iteration whose block
        dominates the latch is the forward code's value itself (fusion.py)."""
        lp = self.g.loops.loop_of(v.block) if isinstance(v, Instruction) else None
        if lp is None or lp not in self.g.fused or block not in lp.blocks:
            return None
        if not self.g.dom.dominates(v.block, lp.latches[0]):
            return None
        return self.g.fwd.vmap[v]

    def _fetch(self, v, block, b):
        how = self.plan(v)
        if how is Plan.RECOMPUTE:
            return self._recompute(v, block, b)
        if how is Plan.INDUCTION:
            return self._induction(v, block, b)
        if how is Plan.RECURRENCE and block in self.g.recurrences[v].blocks:
            return self.g.tape.load(b, recurrence_field(self.g, v))
        if how is Plan.RELOAD or (how is Plan.RESTORE and block is v.block):
            if how is Plan.RESTORE:
                restore.mark(self.g, v)
            return b.load(v.type, self.primal(v.ops[0], block, b), align=v.align)
        home = common_loop(self.g.loops.loop_of(v.block), block)
        key = Value(v) if home is self.g.loops.loop_of(v.block) else LastValue(v, home)
        e = self.g.tape.entry(key, v.type, home, self.reason(v) if home else "", source=v)
        self.g.cache_sites.setdefault(e, v)
        return self.g.tape.read(b, e, block)

    def plan(self, v) -> Plan:
        """How the reverse sweep gets v (see Plan)."""
        if v in self.strategy:
            return self.strategy[v]
        self.strategy[v] = Plan.CACHE  # breaks cycles through phis
        home = self.g.loops.loop_of(v.block)
        how = Plan.CACHE
        if home is not None and self.g.cache_mode is not CacheMode.ALWAYS and home not in self.g.fused:
            if self.induction_parts(v) is not None:
                how = Plan.INDUCTION
            elif expensive(v) and self.g.cache_mode is CacheMode.AUTO:
                how = Plan.TAPE
            elif (v.opcode in CHEAP or pure_math(v)) and all(self._operand(o, home) for o in v.ops):
                how = Plan.RECOMPUTE
            elif v.opcode == "load" and (self._kept(v.ops[0]) if self.g.split else
                                         self.g.alias.unchanged(v)) and self._free(v.ops[0]):
                how = Plan.RELOAD
            elif v.opcode == "load" and restore.restorable(self.g, v) and self._free(v.ops[0]):
                how = Plan.RESTORE
            elif v.opcode == "phi":
                lp = recurrence_loop(self.g, v)
                if lp is not None:
                    how = Plan.RECURRENCE
                    self.g.recurrences[v] = lp
        self.strategy[v] = how
        return how

    def reason(self, v) -> str:
        """Why v goes on the tape, in words for `explain`."""
        if self.g.cache_mode is CacheMode.ALWAYS:
            return "cache='always' caches every value the reverse sweep needs"
        if self.strategy.get(v) is Plan.TAPE:
            return "a division or math call: reading it back costs less than computing it again"
        if v.opcode == "load":
            if self.g.split:
                return "the caller may overwrite it before this function's reverse sweep"
            writes = self.g.alias.clobbers(v)
            if not writes:
                return "it is read from local memory that is gone in the reverse sweep"
            return f"a later {self.g.describe_write(writes[0])} may overwrite it"
        if v.opcode == "phi":
            return "it is carried from one loop iteration to the next"
        if v.opcode == "call":
            return f"`{v.callee_name}` is not recomputed"
        lost = next((o for o in v.ops if not self._free(o)), None)
        if lost is not None and lost.opcode == "load" and self.g.alias.clobbers(lost):
            return (f"its operand `%{lost.name}` is read from memory that a later "
                    f"{self.g.describe_write(self.g.alias.clobbers(lost)[0])} may overwrite")
        if lost is not None and lost.name:
            return f"its operand `%{lost.name}` is not available in the reverse sweep"
        return "its operands are not all available in the reverse sweep"

    def _kept(self, p) -> bool:
        """Split mode: does pointer p point only into parameters the caller keeps unchanged for
        the reverse sweep (driver.reverse_mode's `kept`, none of them written by the function)?"""
        rs = self.g.alias.roots(p) if self.g.kept else ()
        return bool(rs) and all(isinstance(r, Argument) and r.index in self.g.kept for r in rs)

    def _operand(self, o, home) -> bool:
        """Can a value recomputed in loop `home` have its operand o? A value defined outside
        `home` is had once per iteration of an enclosing loop (cached there if it must be), which
        costs less than caching what is computed from it on every iteration of `home`."""
        if self._free(o):
            return True
        return o.block not in home.blocks and (o.type.is_int or o.type.is_float or o.type.is_ptr)

    def _free(self, v) -> bool:
        """Can v be had in reverse without taping values computed from it? (An expensive value's
        own tape slot counts as available: what is computed from it is still recomputed.)"""
        if isinstance(v, (Constant, Global, Argument)):
            return True
        home = self.g.loops.loop_of(v.block)
        if home is None:
            return True
        if home in self.g.fused and self.g.dom.dominates(v.block, home.latches[0]):
            return True
        return self.plan(v) in AVAILABLE

    def _recompute(self, v, block, b):
        c = v.copy()
        c.ops = [self.primal(o, block, b) for o in v.ops]
        c.name, c.dbg, c.meta = v.name + ".re" if v.name else "", "", ""
        return b.emit(c)

    # --- induction variables: phi [init, outside], [phi + step, latch]
    def induction_parts(self, v):
        """(loop, init, step) when v is an induction variable of its loop's header that the
        reverse sweep rebuilds from the loop counter, else None."""
        if v.opcode != "phi" or not isinstance(v.type, T.IntType):
            return None
        loop = self.g.loops.header_loop(v.block)
        if loop is None or len(v.ops) != 2:
            return None
        outside = [k for k, blk in enumerate(v.blocks) if blk not in loop.blocks]
        if len(outside) != 1:
            return None
        init, nxt = v.ops[outside[0]], v.ops[1 - outside[0]]
        if not (isinstance(nxt, Instruction) and nxt.opcode == "add" and v in nxt.ops):
            return None
        step = nxt.ops[1] if nxt.ops[0] is v else nxt.ops[0]
        if not isinstance(step, ConstInt):
            return None
        if not self._free_outside(init, loop):
            return None
        return loop, init, step

    def _free_outside(self, v, loop) -> bool:
        if isinstance(v, (Constant, Global, Argument)):
            return True
        return v.block not in loop.blocks

    def _induction(self, v, block, b):
        loop, init, step = self.induction_parts(v)
        k = b.sub(self.g.tape.index(b, loop, block in loop.blocks), self.g.loop_start(loop, block, b))
        k = b.cast("trunc", k, v.type) if v.type.bits < 64 else k
        return b.add(self.primal(init, block, b), b.mul(k, ConstInt(v.type, step.value)))

    # --- shadow pointers
    def shadow(self, p, block, b):
        """The shadow of pointer p, built in reverse code with the primal's offsets."""
        if isinstance(p, Argument):
            s = self.g.shadow_params.get(p.index)
            if s is None:
                s = stand_in_shadow(self.g, p)
            if s is None:
                raise UnsupportedError(f"pointer %{p.name} has no shadow")
            return s
        if isinstance(p, Constant):
            return p
        key = (id(b.block), "shadow", id(p))
        if key in self.memo:
            return self.memo[key]
        op = p.opcode
        if op == "getelementptr":
            ops = [self.shadow(p.ops[0], block, b)] + [self.primal(o, block, b) for o in p.ops[1:]]
            out = b.gep(p.source_type, ops[0], ops[1:], flags=p.flags)
        elif op in ("bitcast", "addrspacecast"):
            out = b.cast(op, self.shadow(p.ops[0], block, b), p.type)
        elif op == "select":
            out = b.select(self.primal(p.ops[0], block, b), self.shadow(p.ops[1], block, b),
                           self.shadow(p.ops[2], block, b))
        elif op == "alloca" and p in self.g.alloca_shadows:
            out = self.g.tape.frame.address(b, self.g.alloca_shadows[p])
        elif op in ("phi", "load") or (op == "call" and self.g.act.has_shadow(p)):
            home = self.g.loops.loop_of(p.block)
            e = self.g.tape.entry(Shadow(p), T.ptr, home,
                                  "it says which differentiable array the pointer points into", source=p)
            self.g.shadow_cache_sites.setdefault(e, p)
            out = self.g.tape.read(b, e, block)
        else:
            raise UnsupportedError(f"a pointer into differentiable memory comes from `{op}`",
                                   self.g.describe(p), self.g.locate(p))
        self.memo[key] = out
        return out
