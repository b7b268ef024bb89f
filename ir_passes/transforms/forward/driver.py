"""Forward mode: add the tangent function of a function to its module.

The generated function runs the primal once, instruction by instruction, and beside each
instruction computes the tangents of its result, from the same rule table as reverse mode:
the tangent of y = op(x_0, ..., x_n) is sum_k partial_k(d = tangent of x_k) (rules/registry.py),
with the strong-zero guard of reverse mode (rules/partials.py: a zero tangent contributes
exactly zero even where the partial is inf or NaN). Tangents of SSA values are SSA
values (a phi gets tangent phis); there is no tape and no second sweep.

    <ret> @out(<primal params>,
               <per "dup" param, in order: `width` shadow pointers>,
               <per "active" param, in order: `width` tangents, as values>)

Shadows enter holding the tangents of the initial memory and leave holding the tangents of the
final memory: where the primal stores, the tangent of the stored value is stored into the shadow.
`<ret>` is the primal's return type, except that a float return becomes `{T, T x width}`: the
value and its tangents (a host that returns its float through a pointer parameter gives that
parameter a shadow, which receives the tangent like any other memory).

With width k > 1 every varying value has k tangents and every shadowed pointer k shadows, so one
call differentiates k directions and shares the primal work.

Calls into functions of the module that take varying values or shadowed memory call a forward
version of the callee made for that call's activity (calls.py); a worklist makes each version
once, so recursion works. See memory.py and allocations.py for memory, instructions.py for
arithmetic.
"""
from __future__ import annotations

from typing import Sequence

from ...analysis.alias import alias_analysis
from ...ir.module import Function, Module
from ...options import Activity
from ...rules.finite import NAN_TESTS, tests_nan
from ...runtime.shared import place_helpers, set_runtime
from ..common.noneed import unneeded_stores
from ..common.extent import Extent
from ..common.stand_in import free_forward_stand_ins
from ..common.vector_math import VectorLibrary, use_vector_variants
from ..prepare.pipeline import FORWARD as FORWARD_PREPARE, prepare
from .calls import DERIVED
from .instructions import visit, visit_phi
from .state import MAX_WIDTH, ForwardMode


def forward_mode(module: Module, fn_name: str, activity: Sequence[Activity | str], out_name: str,
                 width: int = 1, strong_zero_guards: bool = False, noalias_shadows: bool = False,
                 nan_tests: bool | None = None,
                 extents: dict[int, Extent] | None = None, no_need: Sequence[int] = (),
                 unread_tangents: Sequence[int] = (),
                 vector_library: VectorLibrary | None = None, runtime: str = "define") -> Function:
    """Add `out_name`, the forward-mode tangent function of `fn_name` (see the module docstring).

    activity: an Activity (or its string "const", "dup", "active") per parameter of the primal.
    width: tangents per value.
    strong_zero_guards: differentiate reverse mode's guard `select (d != 0 or F), c, 0` lane by
    lane (instructions.guarded_tangents): for running a reverse-mode gradient
    with zero seeds and k seeds as tangents (batched reverse mode).
    nan_tests: whether the code differentiated tests a float for NaN or infinity (products are
    guarded only then: rules/finite.tests_nan); None reads it from the module. Forward mode over
    a reverse gradient passes the primal's, which the gradient's own guards would change.
    noalias_shadows: the caller promises every shadow pointer parameter is memory no other
    parameter reaches (`noalias`), which lets LLVM keep tangents in registers.
    extents: {param index: Extent}: a Const pointer parameter with a known extent that
    meets shadowed memory in a phi or select gets a zeroed stand-in shadow (stand_in.py).
    no_need: indices of "dup" parameters whose final primal contents the caller does not need
    (DuplicatedNoNeed): their stores are skipped when nothing reads them back (common/noneed.py);
    noalias_shadows also tells that analysis the arrays are disjoint.
    unread_tangents: indices of "dup" parameters whose tangents the caller does not read (as
    Enzyme's unused shadow return): their tangent stores are skipped when nothing reads the
    memory back, and LLVM deletes the tangent arithmetic that only fed them (a Hessian-vector
    product wants H v, not the directional derivative of the value f(x) it writes).
    vector_library: as in reverse_mode, for the rules' own math calls (common/vector_math.py).
    runtime: as in reverse_mode ("declare": the shareable runtime helpers declared only).
    Returns the generated Function.
    """
    if nan_tests is not None:
        module.facts[NAN_TESTS] = nan_tests
    tests_nan(module)     # on the input module, before any guard is emitted (rules/finite.py)
    set_runtime(module, runtime)
    if not isinstance(width, int) or not 1 <= width <= MAX_WIDTH:
        raise ValueError(f"width must be an integer from 1 to {MAX_WIDTH}, not {width!r}")
    prepare(FORWARD_PREPARE, module.functions[fn_name], extents=extents)
    fm = ForwardMode(module, fn_name, activity, out_name, width, strong_zero_guards=strong_zero_guards,
                     noalias_shadows=noalias_shadows)
    fm.extents = dict(extents or {})
    if no_need:
        if any(fm.activity[i] is not Activity.DUP for i in no_need):
            raise ValueError("no_need names parameters that are not 'dup'")
        alias = alias_analysis(fm.primal, noalias_params=noalias_shadows)
        fm.unneeded = {id(s) for s in unneeded_stores(fm.primal, alias, no_need)}
    if unread_tangents:
        if any(fm.activity[i] is not Activity.DUP for i in unread_tangents):
            raise ValueError("unread_tangents names parameters that are not 'dup'")
        alias = alias_analysis(fm.primal, noalias_params=noalias_shadows)
        fm.unread = {id(s) for s in unneeded_stores(fm.primal, alias, unread_tangents)}
    run(fm)
    worklist = module.pending.setdefault(DERIVED, [])
    while worklist:
        callee, act, name, w = worklist.pop()
        run(ForwardMode(module, callee, list(act), name, w, internal=True,
                        strong_zero_guards=strong_zero_guards))
    use_vector_variants(module, vector_library)
    place_helpers(module)
    return fm.fn


def run(fm) -> Function:
    """Build the body of fm's function: the blocks, phis first, every instruction, then the
    phis' incoming values."""
    order = fm.dom.order
    for blk in order:
        fm.bmap[blk] = fm.fn.add_block(blk.name)
    reachable = set(order)
    fm.preds = {blk: [q for q in preds if q in reachable] for blk, preds in
                fm.primal.predecessors().items() if blk in reachable}
    for blk in order:
        fm.b.position(fm.bmap[blk])
        for phi in blk.phis():
            visit_phi(fm, phi)
    for blk in order:
        fm.b.position(fm.bmap[blk])
        for inst in blk.instructions:
            if inst.opcode != "phi":
                visit(fm, inst)
    fm.fill_phis()
    free_forward_stand_ins(fm)
    return fm.fn
