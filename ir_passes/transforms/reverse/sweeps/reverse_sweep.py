"""The reverse sweep: the primal's blocks walked backwards, each with its instructions reversed.

Control flow is reversed edge by edge. Leaving the reverse of block S, control goes to the reverse
of the predecessor the forward sweep came from:
- a loop header with one entry edge and one latch compares the loop counter with its value at
  loop entry: equal means this was the first iteration;
- a block where an if/else (or if-then) joins asks the branch condition again: it is often
  recomputable, and otherwise one byte on the tape;
- any other block with several predecessors reads which one it was (an i32 the forward sweep
  recorded, on the tape when inside a loop).
Each reversed edge P -> S moves the adjoints of S's phis to their incoming values from P and
steps back the counters of the loops the edge left or looped back to. The reverse of a gated
loop's exit edge (gated.py) skips the loop when no gate holds.
"""
from __future__ import annotations

from ....analysis.branches import branch_join
from ....ir import types as T
from ....ir.builder import MathBuilder
from ....ir.instructions import Instruction
from ....ir.values import ConstInt
from ....runtime import heap
from ..shadows import deferred, deferred_rank1
from ..tape import recurrence
from ..loops.gated import run_test
from .gradient import Sweep
from .instructions import reverse_instruction
from ..tape.tape_keys import Branch


class ReverseSweep:
    def __init__(self, g, fwd):
        self.g, self.fwd = g, fwd
        self.rb = {blk: g.new_block("rev." + blk.name) for blk in g.dom.order}
        self.finish_block = None
        self.resumes = {}      # fused loop -> the block that resumes its forward iteration
        self.loop_exits = []   # (loop, entry edge's source, block): deferred.flush goes there
        self.edges = {}        # (src, dst) -> the block reversing that edge
        rt = g.fn.ret_type
        self.status_slot = None if isinstance(rt, T.VoidType) else g.tape.new_field(rt)

    def build(self, reaches_success) -> None:
        g = self.g
        for blk in g.dom.order:
            b = MathBuilder(g.module, self.rb[blk])
            if blk not in reaches_success:
                b.unreachable()
                continue
            for inst in reversed(blk.instructions):
                b.dbg = inst.dbg
                reverse_instruction(g, inst, blk, b)
            b.dbg = ""
            self.dispatch(blk, b)
        for loop, src, blk in self.loop_exits:   # every deferred slot is known now
            b = MathBuilder(g.module, blk)
            deferred.flush(g, loop, src, b)
            deferred_rank1.flush(g, loop, src, b)
            b.br(self.rb[src])
        self.finish()

    def dispatch(self, blk, b) -> None:
        g = self.g
        preds = g.preds[blk]
        if g.loops.header_loop(blk) in g.fused:   # the iteration is reversed: resume the forward
            b.br(self.resume_block(g.loops.header_loop(blk)))
            return
        if blk is g.primal.entry or not preds:
            b.br(self.finish_target())
            return
        loop = g.loops.header_loop(blk)
        if loop is not None:
            outside = [p for p in preds if p not in loop.blocks]
            latches = [p for p in preds if p in loop.blocks]
            if len(outside) == 1 and len(latches) == 1:
                c = g.tape.load(b, g.tape.counter(loop))
                first = b.icmp("eq", c, g.loop_start(loop, blk, b))
                b.cbr(first, self.edge(outside[0], blk), self.edge(latches[0], blk))
                return
        if len(preds) == 1:
            b.br(self.edge(preds[0], blk))
            return
        joined = branch_join(g.dom, g.preds, blk)
        if joined is not None:
            cond, when_true, when_false = joined
            c = g.avail.primal(cond, blk, b)
            b.cbr(c, self.edge(when_true, blk), self.edge(when_false, blk))
            return
        phi = self.fwd.which_pred(blk)
        home = g.loops.loop_of(blk)
        e = g.tape.entry(Branch(blk, phi), T.i32, home, "the reverse sweep retraces the branch taken here")
        w = g.tape.read(b, e, blk)
        targets = [self.edge(p, blk) for p in preds]
        b.switch(w, targets[0], [(ConstInt(T.i32, k), t) for k, t in enumerate(targets) if k])

    def resume_block(self, loop):
        """Where the reverse of one iteration of a fused loop ends: the forward latch's branch
        goes here (ForwardSweep.fuse)."""
        if loop not in self.resumes:
            self.resumes[loop] = self.g.new_block(f"resume.{loop.header.name}")
            self.g.sweep_of[self.resumes[loop]] = Sweep.FORWARD
        return self.resumes[loop]

    def edge(self, src, dst):
        """The reverse of edge src -> dst: phi adjoints and counters, then the reverse of src."""
        if (src, dst) not in self.edges:
            self.edges[(src, dst)] = self._edge(src, dst)
        return self.edges[(src, dst)]

    def _edge(self, src, dst):
        g = self.g
        blk = g.new_block(f"rev.edge.{dst.name}.{src.name}")
        b = MathBuilder(g.module, blk)
        gated, run = self.gate(src, dst, b)
        moved = [(phi, g.take_adjoint(b, phi)) for phi in dst.phis() if g.act.is_active(phi)]
        for phi, d in moved:
            g.add_adjoint(b, phi.incoming(src), d)
        fused = g.loops.loop_of(src)
        if fused in g.fused and dst not in fused.blocks:
            # Its iterations are reversed already: go on as the reverse of the loop's entry edge
            # (which skips the loop before it too, when that one is fused as well).
            entry = [p for p in g.preds[fused.header] if p not in fused.blocks][0]
            b.br(self.edge(entry, fused.header))
            return blk
        exited = g.loops.loops_exited(src, dst)
        for lp in exited:
            g.tape.step(b, lp, -1)
        if any(g.exact_trips.get(lp) is not None for lp in exited):
            nxt = g.new_block(f"rev.starts.{dst.name}.{src.name}")   # a fresh memo for them
            b.br(nxt)
            b = MathBuilder(g.module, nxt)
        for lp in reversed(exited):  # entering lp backwards: its start, for the reverse loop's
            # test; outer loops first, since an inner loop's bounds may use an outer counter
            g.tape.store(b, g.entry_start(lp, src, b), g.current_start(lp))
        for lp in exited:
            b = recurrence.mark(g, "enter", lp, src, b)
        header = g.loops.header_loop(dst)
        if header is not None and src in header.blocks:
            g.tape.step(b, header, -1)
            b = recurrence.mark(g, "back", header, src, b)
        if header is not None and src not in header.blocks:   # the reverse sweep leaves a loop
            leave = g.new_block(f"rev.leave.{dst.name}.{src.name}")
            self.loop_exits.append((header, src, leave))
            b.br(leave)
            return blk
        if run is None:
            b.br(self.rb[src])
            return blk
        skip = g.new_block(f"rev.skip.{gated.header.name}")
        sb = MathBuilder(g.module, skip)    # nothing to reverse: L's counter back to its start,
        g.tape.store(sb, g.tape.load(sb, g.current_start(gated)), g.tape.counter(gated))
        for phi in dst.phis():              # the zeros the edge moved into L consumed
            v = phi.incoming(src)
            if g.act.is_active(v) and isinstance(v, Instruction) and v.block in gated.blocks:
                g.take_adjoint(sb, v)
        entry = [p for p in g.preds[gated.header] if p not in gated.blocks][0]
        sb.br(self.edge(entry, gated.header))
        b.cbr(run, self.rb[src], skip)
        return blk

    def gate(self, src, dst, b) -> tuple:
        """(loop, run test) when src -> dst leaves a gated loop (gated.py) for the block its
        gates are in, and the edge goes on to the reverse of src; else (None, None)."""
        g = self.g
        lp = g.loops.loop_of(src)
        header = g.loops.header_loop(dst)
        if lp is None or dst in lp.blocks or lp not in g.gated or g.gated[lp][0] is not dst or \
                header is not None and src not in header.blocks:
            return None, None
        return lp, run_test(g, g.gated[lp][1], dst, b)

    def finish_target(self):
        if self.finish_block is None:
            self.finish_block = self.g.new_block("finish")
        return self.finish_block

    def finish(self) -> None:
        g = self.g
        b = MathBuilder(g.module, self.finish_target())
        self.put_back_marker = b.emit(Instruction("marker"))
        for k, out in g.dout_params.items():
            a = g.primal.params[k]
            if not g.act.is_active(a):
                continue
            g.updates.add_out(b, out, b.load(g.updates.adjoint_type(a.type), g.adjoint_slot(a)), a)
        g.updates.finish(b)
        g.tape.free_all(b)
        if g.split:
            if not g.keep_frame:
                heap.free(b, g.tape.frame.pointer)
            b.ret()
            return
        self.final_ret = b.ret(g.tape.load(b, self.status_slot) if self.status_slot is not None else None)
