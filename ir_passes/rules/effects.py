"""What calls do besides computing their result, as data: which never carry derivatives, which
write no memory of the program, which allocate, free or reallocate memory, and which are cheap
enough to evaluate again in the reverse sweep.

Everything here is registered by name, so that a host describes its runtime (its allocators, frees
and reference counts: enzyme_py registers them) without ir_passes naming it.

Allocators. An allocator is described by the function that allocates (returning a handle, or the
data pointer itself), which argument is the size in bytes, and the accessor that turns the handle
into the data pointer. For an allocation that receives differentiable data the forward sweep
mallocs a zeroed shadow of the same size right after the data pointer is obtained; the reverse
sweep frees it when it walks back past that point. The primal's own frees stay where they are:
the reverse sweep reads primal memory of an allocation only when the allocator has reference
counting (`retain`, `release`) and the gradient holds a reference until the end
(transforms/reverse/tape/retain.py); otherwise the values it needs are cached.

Forward mode allocates the shadow of memory a function allocates alongside it, and frees or
reallocates it with the primal's: frees (`register_free`), reallocators (`register_realloc`) and
allocators of zeroed memory (`calloc`) are data too.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir.instructions import Instruction
from ..ir.values import Global
from .registry import inactive, lookup

# --- functions that never carry derivatives (the host adds its own: reference counts, frees)

for _name in ("llvm.lifetime.start", "llvm.lifetime.end", "llvm.assume", "llvm.dbg.value",
              "llvm.dbg.declare", "llvm.experimental.noalias.scope.decl", "llvm.invariant.start",
              "llvm.invariant.end"):
    inactive(_name)

# --- calls that write no memory of the program (prefixes of callee names)

WRITES_NOTHING: list[str] = ["llvm.lifetime", "llvm.assume", "llvm.dbg", "llvm.experimental.noalias",
                             "llvm.smax", "llvm.smin", "llvm.umax", "llvm.umin"]


def register_writes_nothing(prefix: str) -> None:
    """Calls to functions whose name starts with `prefix` write no memory the program reads
    (a reference count, a statistics counter)."""
    if prefix not in WRITES_NOTHING:
        WRITES_NOTHING.append(prefix)


def writes_nothing(name: str) -> bool:
    return name.startswith(tuple(WRITES_NOTHING))


def allocator_or_inactive(name: str) -> bool:
    """Allocators return fresh memory and write no existing memory; inactive functions (frees,
    refcounts) only touch memory the reverse sweep never reads back."""
    if any(name in (a.alloc, a.data) for a in ALLOCATORS.values()):
        return True
    rule = lookup(name)
    return rule is not None and rule.inactive


def may_write(call) -> bool:
    """A call writes memory unless it is a pure math function of scalars, or an LLVM intrinsic
    without pointer operands (`llvm.smul.with.overflow`: it reaches no memory of the program)."""
    if any(o.type.is_ptr for o in call.ops):
        return True
    return "memory(none)" not in call.fn_attrs and not is_math(call.callee_name) and \
        not call.callee_name.startswith("llvm.")


def is_math(name: str) -> bool:
    rule = lookup(name)
    return rule is not None and not rule.inactive


# --- pointer getters: calls that return a pointer an object holds (a container's item storage)

POINTER_GETTERS: dict[str, int] = {}   # function -> index of its object argument


def register_pointer_getter(name: str, arg: int = 0) -> None:
    """`name(..., obj, ...)` returns a pointer that the object at argument `arg` holds (the item
    storage of a container), like a load of a pointer field, and writes nothing. When the object
    has a shadow (a container of shadows, laid out as the primal one), the result's shadow is
    the same call on the object's shadow."""
    POINTER_GETTERS[name] = arg
    register_writes_nothing(name)


def getter_object(inst):
    """The object argument of a pointer getter's call, or None when inst is not one."""
    if inst.opcode != "call":
        return None
    k = POINTER_GETTERS.get(inst.callee_name or "")
    return inst.ops[k] if k is not None and k < len(inst.ops) else None


# --- containers a function builds: a constructor, and calls that copy an item into one

@dataclass(frozen=True)
class Constructor:
    name: str       # `name(..., out, ...)` stores a new object's pointer into *out
    out_arg: int
    free: str       # `free(obj)` releases an object


CONSTRUCTORS: dict[str, Constructor] = {}
COPIES_IN: dict[str, tuple[int, int]] = {}   # function -> (object arg, item arg)


def register_constructor(name: str, out_arg: int, free: str) -> None:
    """`name` makes a new object (a container) and stores its pointer into its argument `out_arg`;
    `free(obj)` releases one. When differentiable data goes into the object, reverse mode makes a
    shadow object with the same call into out's shadow, and frees it when the gradient ends."""
    CONSTRUCTORS[name] = Constructor(name, out_arg, free)


def register_copy_in(name: str, obj_arg: int = 0, item_arg: int = 1) -> None:
    """`name(obj, item)` copies the item that its argument `item_arg` points to into the object
    (a container's append). An item holding pointers with shadows makes the object shadowed: the
    same call copies the item's shadow into the shadow object. Items holding floats themselves
    are refused (their adjoints would have to move back out of the container)."""
    COPIES_IN[name] = (obj_arg, item_arg)


SETUPS: dict[str, int] = {}   # function -> object arg


def register_setup(name: str, obj_arg: int = 0) -> None:
    """`name(obj, ...)` configures an object the host made (a container's reference counting
    of its items). Forward mode makes the same call on the shadow object: the items' shadows
    there are host allocations that must live as long as the shadow object holds them, as the
    primal items live in the primal object. (Reverse mode's shadows are its own memory, freed
    when the gradient ends: the call stays on the primal only.)"""
    SETUPS[name] = obj_arg


def setup_object(inst):
    """The object a setup call configures, or None."""
    if inst.opcode != "call":
        return None
    k = SETUPS.get(inst.callee_name or "")
    return inst.ops[k] if k is not None else None


COPIES_OUT: dict[str, tuple[int, int]] = {}  # function -> (object arg, out arg)


def register_copy_out(name: str, obj_arg: int = 0, out_arg: int = 1) -> None:
    """`name(obj, ..., out)` copies one of the object's items into the memory its argument
    `out_arg` points to (a container's lookup by key; the other arguments choose the item). From
    a shadowed object, the same call copies the shadow object's item at that place into out's
    shadow. Items holding floats themselves are refused in reverse mode."""
    COPIES_OUT[name] = (obj_arg, out_arg)


def copy_out_operands(inst):
    """(object, out) of a copy-out call, or None."""
    if inst.opcode != "call":
        return None
    k = COPIES_OUT.get(inst.callee_name or "")
    return (inst.ops[k[0]], inst.ops[k[1]]) if k is not None else None


def copy_in_operands(inst):
    """(object, item) of a copy-in call, or None."""
    if inst.opcode != "call":
        return None
    k = COPIES_IN.get(inst.callee_name or "")
    return (inst.ops[k[0]], inst.ops[k[1]]) if k is not None else None


def constructor_out(inst):
    """The out operand of a constructor's call, or None."""
    c = CONSTRUCTORS.get(inst.callee_name or "") if inst.opcode == "call" else None
    return inst.ops[c.out_arg] if c is not None else None


# --- calls refused with a reason the host gives (a library routine without a derivative rule)

REFUSED: dict[str, str] = {}
ALWAYS_REFUSED: dict[str, str] = {}   # refused whatever data they touch (a grid-wide barrier)


def register_refused(name: str, reason: str, always: bool = False) -> None:
    """Calls to `name` that touch differentiable data are refused with `reason` (which names
    what the user wrote: `np.linalg.eig` of a real matrix). `always`: any call to it in
    a function being differentiated is refused, before anything is built (a synchronisation
    whose reverse ir_passes cannot mirror)."""
    (ALWAYS_REFUSED if always else REFUSED)[name] = reason


def check_refused_calls(fn, unsupported) -> None:
    """Raise `unsupported(message, inst)` at the first call in `fn` to an always-refused
    function."""
    if not ALWAYS_REFUSED:
        return
    for inst in fn.instructions():
        if inst.opcode == "call" and (inst.callee_name or "") in ALWAYS_REFUSED:
            raise unsupported(f"call to `{inst.callee_name}`: {ALWAYS_REFUSED[inst.callee_name]}",
                              inst)


def refusal(name: str) -> str:
    """`: <reason>` for a refused function, else ''."""
    return f": {REFUSED[name]}" if name in REFUSED else ""


def call_hint(name: str) -> str:
    """The advice for an external call touching differentiable memory: none for a refused
    function (its reason says what to write instead; the host's runtime cannot be given a
    derivative by the user)."""
    return "" if name in REFUSED else "Register a derivative for it, or make it an @njit function."


# --- allocators

@dataclass(frozen=True)
class Allocator:
    alloc: str                 # allocating function
    size_arg: int              # index of its size-in-bytes argument
    data: str | None = None    # accessor handle -> data pointer; None: alloc returns the data
    retain: str | None = None  # handle -> void: one more reference (a reference count)
    release: str | None = None  # handle -> void: drop one; must accept null
    element_dtor: int | None = None  # argument naming a destructor of the elements (a list's
    #   items' references); forward mode's shadow allocation gets it too and holds references of
    #   its own to the items' shadows (transforms/forward/owned_items.py)


ALLOCATORS: dict[tuple, Allocator] = {}


def register_allocator(alloc: str, size_arg: int = 0, data: str | None = None,
                       retain: str | None = None, release: str | None = None,
                       element_dtor: int | None = None) -> Allocator:
    """`retain`/`release`: reference counting of the handle, when the allocator has it. The
    gradient then keeps memory allocated outside loops alive until its reverse sweep ends, and
    reads it again there instead of taping what it held. `element_dtor`: the argument that
    names a destructor of the elements, which forward mode's shadow allocations get too."""
    a = Allocator(alloc, size_arg, data, retain, release, element_dtor)
    ALLOCATORS[(alloc, data)] = a
    return a


register_allocator("malloc", 0)


def allocation_size(inst):
    """When `inst` yields the data pointer of an allocation: the size operand; else None."""
    if inst.opcode != "call":
        return None
    name = inst.callee_name
    a = ALLOCATORS.get((name, None))
    if a is not None:
        return inst.ops[a.size_arg]
    r = HANDLE_REALLOCS.get(name)
    if r is not None:
        return inst.ops[r[1]] if handle_of(inst) is not None else None
    for a in ALLOCATORS.values():
        if a.data == name and inst.ops:
            handle = inst.ops[0]
            if isinstance(handle, Instruction) and handle.opcode == "call" and handle.callee_name == a.alloc:
                return handle.ops[a.size_arg]
            size = _merged_size(handle, a)
            if size is not None:
                return size
    return None


def _merged_size(handle, a):
    """The size of the allocations a phi or select of handles merges, when they all come from
    allocator `a` with the same size (an `np.empty` reassigned in a loop: LLVM's loop rotation
    allocates in the preheader and in the latch); else None."""
    calls = merged_handles(handle, a)
    sizes = [h.ops[a.size_arg] for h in calls or ()]
    first = sizes[0] if sizes else None
    for z in sizes[1:]:
        if z is not first and not (getattr(z, "value", None) is not None
                                   and getattr(z, "value", None) == getattr(first, "value", None)
                                   and str(z.type) == str(first.type)):
            return None
    return first


def merged_handles(handle, a) -> list | None:
    """The calls of allocator `a` that a phi or select of handles merges (through other phis and
    selects), when every source is one; else None."""
    if getattr(handle, "opcode", None) not in ("phi", "select"):
        return None
    calls, seen, work = [], set(), [handle]
    while work:
        h = work.pop()
        if id(h) in seen:
            continue
        seen.add(id(h))
        op = getattr(h, "opcode", None)
        if op == "phi":
            work.extend(h.ops)
        elif op == "select":
            work.extend(h.ops[1:])
        elif op == "call" and h.callee_name == a.alloc:
            calls.append(h)
        else:
            return None
    return calls


def accessed_handles(inst) -> list:
    """For the data accessor of a handle allocator: the allocator calls whose data it may
    return (the handle operand, or the calls a phi or select of handles merges); else []."""
    h = handle_allocator(inst)
    if h is not None:
        return [h]
    if inst.opcode != "call" or not inst.ops:
        return []
    for a in ALLOCATORS.values():
        if a.data is not None and a.data == inst.callee_name:
            calls = merged_handles(inst.ops[0], a)
            if calls:
                return calls
    return []


def is_allocation(v) -> bool:
    """Is v the data pointer of an allocation of known size?"""
    return isinstance(v, Instruction) and v.opcode == "call" and allocation_size(v) is not None


# --- frees, reallocations and zeroed allocations (forward mode mirrors them on the shadows)

FREES: dict[str, int] = {"free": 0}            # function -> index of its pointer argument
REALLOCS: dict[str, tuple[int, int]] = {"realloc": (0, 1)}   # function -> (pointer arg, size arg)
ZEROED: set[str] = {"calloc"}   # allocators whose memory comes zeroed (LLVM turns malloc+memset into calloc)


def register_free(name: str, arg: int = 0) -> None:
    FREES[name] = arg


def register_realloc(name: str, ptr_arg: int = 0, size_arg: int = 1) -> None:
    REALLOCS[name] = (ptr_arg, size_arg)


HANDLE_REALLOCS: dict[str, tuple[int, int]] = {}   # function -> (handle arg, size arg)


def register_handle_realloc(name: str, handle_arg: int = 0, size_arg: int = 1) -> None:
    """`name(handle, n)` moves the data of a handle allocation to n bytes in place (a growing
    list): the handle stays, its accessor returns the moved data afterwards, and the call returns
    it too (null when it fails). The first min(old, n) bytes are kept."""
    HANDLE_REALLOCS[name] = (handle_arg, size_arg)


def realloc_operand(inst):
    """The old pointer of a reallocation, or None when inst is not one."""
    if inst.opcode != "call":
        return None
    r = REALLOCS.get(inst.callee_name)
    return inst.ops[r[0]] if r is not None and len(inst.ops) > r[0] else None


def is_zeroed(inst) -> bool:
    return inst.opcode == "call" and inst.callee_name in ZEROED


def returns_new_memory(inst) -> bool:
    """An allocation, a reallocation or a zeroed allocation: memory forward mode gives a shadow of
    its own."""
    return allocation_size(inst) is not None or realloc_operand(inst) is not None or is_zeroed(inst)


def handle_allocator(inst):
    """For the data accessor of a handle allocator (`data(h)` with `h = alloc(...)`): h; else None."""
    if inst.opcode != "call" or not inst.ops:
        return None
    name = inst.callee_name
    for a in ALLOCATORS.values():
        if a.data == name:
            h = inst.ops[0]
            if isinstance(h, Instruction) and h.opcode == "call" and h.callee_name == a.alloc:
                return h
    return None


def is_handle(v) -> bool:
    """Is v a handle allocator's call (the handle, which the program never reads through)?"""
    return isinstance(v, Instruction) and v.opcode == "call" and \
        any(a.alloc == v.callee_name and a.data is not None for a in ALLOCATORS.values())


def handle_of(inst):
    """The allocation handle whose data `inst` yields: an accessor call or a handle reallocation
    given a handle allocator's call; else None."""
    if inst.opcode != "call" or not inst.ops:
        return None
    r = HANDLE_REALLOCS.get(inst.callee_name)
    if r is None:
        return handle_allocator(inst)
    h = inst.ops[r[0]]
    return h if is_handle(h) else None


def handle_realloc_size(inst):
    """The new size of a handle reallocation (register_handle_realloc), or None."""
    r = HANDLE_REALLOCS.get(inst.callee_name) if inst.opcode == "call" else None
    return inst.ops[r[1]] if r is not None and handle_of(inst) is not None else None


def handle_groups(insts) -> dict:
    """The calls that yield the data of one handle allocation, grouped: {id(call): [calls]} for
    every handle whose data is asked for more than once or moved by a reallocation. They name
    one memory, which has one shadow."""
    by_handle: dict = {}
    for i in insts:
        h = handle_of(i)
        if h is not None:
            by_handle.setdefault(id(h), []).append(i)
    return {id(i): g for g in by_handle.values()
            if len(g) > 1 or any(handle_realloc_size(i) is not None for i in g) for i in g}


def same_allocation(a, b) -> bool:
    """Do roots a and b name one allocation: a handle and the calls that yield its data?"""
    ka = handle_of(a) if isinstance(a, Instruction) else None
    kb = handle_of(b) if isinstance(b, Instruction) else None
    return (ka if ka is not None else a) is (kb if kb is not None else b)


def is_reference_count(name: str) -> bool:
    """Is `name` an allocator's retain or release function (its arguments are handles)?"""
    return any(name in (a.retain, a.release) for a in ALLOCATORS.values() if a.retain or a.release)


def element_dtor_arg(h):
    """The element destructor's argument index of handle allocation h, or None."""
    for a in ALLOCATORS.values():
        if a.alloc == h.callee_name and a.data is not None and a.element_dtor is not None:
            return a.element_dtor
    return None


def handle_size(h):
    """The size operand of allocation handle h (a call to a handle allocator)."""
    for a in ALLOCATORS.values():
        if a.alloc == h.callee_name and a.data is not None:
            return h.ops[a.size_arg]
    raise KeyError(h.callee_name)


# --- cost: what the reverse sweep may evaluate again rather than tape

CHEAP = {"add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor", "icmp", "fcmp", "select",
         "getelementptr", "trunc", "zext", "sext", "sitofp", "uitofp", "fptosi", "fptoui", "fpext",
         "fptrunc", "bitcast", "ptrtoint", "inttoptr", "fneg", "fadd", "fsub", "fmul", "fdiv",
         "freeze", "extractvalue"}

PURE_INTEGER_INTRINSICS = ("llvm.umin.", "llvm.umax.", "llvm.smin.", "llvm.smax.", "llvm.abs.",
                           "llvm.ctpop.", "llvm.ctlz.", "llvm.cttz.")

CHEAP_MATH = ("llvm.fabs.", "llvm.copysign.", "llvm.minnum.", "llvm.maxnum.", "llvm.minimum.",
              "llvm.maximum.", "llvm.floor.", "llvm.ceil.", "llvm.trunc.", "llvm.rint.",
              "llvm.nearbyint.", "llvm.round.", "llvm.roundeven.", "llvm.fma.", "llvm.fmuladd.",
              "fabs", "copysign", "floor", "ceil", "trunc")


def pure_math(v) -> bool:
    """A call to a math function of the rule table: no memory effects, safe to call again."""
    if v.opcode != "call" or not v.callee_name or not isinstance(v.callee, Global):
        return False  # only direct calls: a loaded function pointer is not an operand to refetch
    if v.callee_name.startswith(PURE_INTEGER_INTRINSICS):
        return True
    rule = lookup(v.callee_name)
    return rule is not None and not rule.inactive and rule.lanes is None and \
        all(not o.type.is_ptr for o in v.ops)


def expensive(v) -> bool:
    """Costlier to evaluate again than to read from the tape: a division or a math call."""
    if v.opcode in ("fdiv", "frem"):
        return True
    return v.opcode == "call" and pure_math(v) and \
        not v.callee_name.startswith(PURE_INTEGER_INTRINSICS + CHEAP_MATH)
