"""The split gradient of an outlined time loop, from snapshots instead of a tape.

`N.aug` runs the steps and keeps snapshots (schedule.py: Revolve's placement when the carry
brings the step count, else the online schedule); its frame is the schedule. A step here is
one call of `N.step`: k iterations of a segmented loop (outline.py), the count of calls the
carry's bound over k. `N.rev` keeps the
state it was handed, then for each step t from the last: takes the latest snapshot, runs the
plain step forward from it up to t (placing binomial snapshots), and runs the step's gradient
(`N.step.grad.*`, driver.step_gradient: forward and reverse of that step, the tape of one step
only). When the snapshot is t's own and TimeLoop.in_place, the step's gradient runs on the
snapshot's memory (state.py's N.view) instead of a copy. Every step run again must leave the
loop as it did in the forward (the carry's flag: continue, or the forward's last exit); one
that does not (a failed allocation) stops the reverse: schedule.py's enzpy.ckpt.fail reports
the error to the host and the gradient returns an error status (or aborts, without a host's
report: rules/convention.py). At the
end `N.rev` puts the state back as it found it. The recomputed steps are the same function on
the same state, so the gradient equals the full tape's to the last bit.
"""
from __future__ import annotations

from .....ir.parser import parse_module
from .....options import Activity
from .....runtime.helpers import rewrite
from .....runtime.source import fill, sections
from ...calls.calls import free_name
from .schedule import ensure_schedule
from .state import add_state_functions

# the pieces of the split gradient (runtime/checkpoint_split.ll)
PIECES = sections("checkpoint_split")
# the frame's fields the reverse leaves in the stats global (version.py's STAT_FIELDS, in order)
FRAME_STATS = (("n", 32), ("c", 24), ("S", 40), ("recomputed", 64), ("peak", 72))


def emit_split(module, tl, act, aug: str, rev: str, step_grad: str) -> None:
    """Define `aug`, `rev` and their free function for time loop `tl` with activity `act`;
    `step_grad` is the step's gradient (driver.step_gradient: forward and reverse of one step)."""
    ensure_schedule(module)
    types = [p.type for p in module.functions[tl.name].params]
    add_state_functions(module, tl, types)
    dup = [k for k, a in enumerate(act) if a is Activity.DUP]
    active = [k for k, a in enumerate(act) if a is Activity.ACTIVE]
    ops = ", ".join(f"{t} %a{k}" for k, t in enumerate(types))
    shadows = "".join(f", ptr %s{k}" for k in dup)
    douts = "".join(f", ptr %d{k}" for k in active)
    module.items.append(fill(PIECES["pool"], N=tl.name))
    stats = "\n".join(fill(PIECES["stats"], K=k, FIELD=fld, G=tl.stats, J=j)
                      for j, (k, fld) in enumerate(FRAME_STATS)) if tl.stats else ""
    view = _view(tl, types, step_grad, shadows, douts) if tl.in_place else ""
    text = fill(PIECES["split"], SRET="i32" if tl.status else "void",
        STEP_GRADIENT=_step_gradient(tl, "", ops, step_grad, shadows, douts),
        IN_PLACE=PIECES["in_place"] if view else "", VIEW_BLOCK=view,
        FROM_VIEW=fill(PIECES["from_view"], VIEW_END="vsg.ok" if tl.status else "view") if view else "",
        ADJOINT_END="sg.ok" if tl.status else "adjoint",
        VIEWS=fill(PIECES["views"], SLOTS=len(tl.regions) + 1) if view else "",
        AUG=aug, REV=rev, FREE=free_name(aug), N=tl.name, STEP=tl.step, STEP_GRAD=step_grad,
        BUDGET=tl.budget, OPS=ops, SHADOWS=shadows, DOUTS=douts, STATS=stats,
        CARRY=f"%a{len(types) - 1}", TRIPS_AT=tl.carry_bytes - 8,
        SEG_AT=tl.carry_bytes - 16, SIG_AUG=f"{ops}{shadows}, ptr %fo",
        SIG_REV=f"{ops}{shadows}{douts}, ptr %f", TYPES=", ".join(str(t) for t in types),
        SHADOW_TYPES=", ptr" * len(dup), DOUT_TYPES=", ptr" * len(active))
    for fn in parse_module(rewrite(module, text + "\n")).functions.values():
        if fn.name not in module.functions or fn.name in (aug, rev, free_name(aug)):
            fn.generated = True
            module.add_function(fn)


def _step_gradient(tl, p: str, ops: str, step_grad: str, shadows: str, douts: str) -> str:
    """The call of the step's gradient on `ops` (with a parallel launch: and the test of its
    status; `p` prefixes the names)."""
    piece = PIECES["step_gradient_status" if tl.status else "step_gradient"]
    return fill(piece, P=p, CALL_OPS=ops, STEP_GRAD=step_grad, SHADOWS=shadows, DOUTS=douts)


def _view(tl, types, step_grad, shadows, douts) -> str:
    """The block that runs the step's gradient on a snapshot in place (state.py's N.view)."""
    ops = [f"{t} %a{k}" for k, t in enumerate(types)]
    loads = []
    for j, k in enumerate([k for k, _ in tl.regions] + [len(types) - 1]):
        loads.append(fill(PIECES["view_load"], J=j))
        ops[k] = f"ptr %v{j}"
    return fill(PIECES["view"], VC=f"%v{len(tl.regions)}", N=tl.name, LOADS="\n".join(loads),
                OPS=", ".join(f"{t} %a{k}" for k, t in enumerate(types)),
                VIEW_GRADIENT=_step_gradient(tl, "v", ", ".join(ops), step_grad, shadows, douts))
