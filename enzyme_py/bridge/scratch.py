"""`scratch_like(a)`: a 1-D C-contiguous array with as many elements as array `a`, on the
stack of the calling function when it is small, else on the heap; `to_flat` / `from_flat` copy
an array into it and back, `all_finite` tests an array for inf and NaN, all emitted in place
(intrinsics: a checked entry compiles no helper function per array type).

The strong-zero entries (modes/strong_zero_entry.py) copy a call's shadows and written arrays
before every call: a heap allocation per array costs more than a small gradient. A stack array
has no meminfo (Numba's reference counting skips a null one); it lives until the function
returns (LLVM brackets an inlined dynamic alloca with stacksave/stackrestore).
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import _empty_nd_impl, make_array, populate_array

STACK_BYTES = 4096      # the largest array copied onto the stack


@intrinsic
def scratch_like(typingctx, a):
    """A 1-D C array of `a`'s dtype and size (uninitialised)."""
    if not isinstance(a, types.Array):
        return None
    out_type = types.Array(a.dtype, 1, "C")

    def codegen(context, builder, sig, args):
        src = make_array(a)(context, builder, args[0])
        nitems = src.nitems
        elem = context.get_data_type(a.dtype)
        itemsize = context.get_abi_sizeof(elem)
        intp = context.get_value_type(types.intp)
        small = builder.icmp_unsigned("<=", nitems, ir.Constant(intp, STACK_BYTES // itemsize))
        with builder.if_else(small) as (on_stack, on_heap):
            with on_stack:
                data = builder.alloca(elem, size=nitems)
                arr = make_array(out_type)(context, builder)
                populate_array(arr, data=data, shape=[nitems],
                               strides=[ir.Constant(intp, itemsize)],
                               itemsize=ir.Constant(intp, itemsize), meminfo=None)
                stack_value, stack_block = arr._getvalue(), builder.block
            with on_heap:
                heap_value = _empty_nd_impl(context, builder, out_type, [nitems])._getvalue()
                heap_block = builder.block
        value = builder.phi(stack_value.type)
        value.add_incoming(stack_value, stack_block)
        value.add_incoming(heap_value, heap_block)
        return value

    return out_type(a), codegen


def _each_item(context, builder, aryty, value, body) -> None:
    """`body(pointer, k)` for every item of array `value` (Numba type `aryty`), in C order;
    `k` counts them from 0."""
    ary = make_array(aryty)(context, builder, value)
    intp = context.get_value_type(types.intp)
    shape = cgutils.unpack_tuple(builder, ary.shape, aryty.ndim)
    k = cgutils.alloca_once_value(builder, ir.Constant(intp, 0))
    with cgutils.loop_nest(builder, shape, intp) as indices:
        n = builder.load(k)
        body(cgutils.get_item_pointer(context, builder, aryty, ary, indices), n)
        builder.store(builder.add(n, ir.Constant(intp, 1)), k)


def _flat_copy(flat, a, flat_first: bool):
    """Typing and codegen of to_flat (flat_first) and from_flat."""
    if not (isinstance(a, types.Array) and isinstance(flat, types.Array) and flat.ndim == 1):
        return None

    def codegen(context, builder, sig, args):
        flat_value, a_value = args if flat_first else args[::-1]
        flat_ary = make_array(flat)(context, builder, flat_value)

        def body(ptr, k):
            at = builder.gep(flat_ary.data, [k])
            src, dst = (ptr, at) if flat_first else (at, ptr)
            builder.store(builder.load(src), dst)
        _each_item(context, builder, a, a_value, body)
        return context.get_dummy_value()
    args = (flat, a) if flat_first else (a, flat)
    return types.none(*args), codegen


@intrinsic
def to_flat(typingctx, flat, a):
    """Copy array `a` into the 1-D C array `flat` (scratch_like(a)), in C order."""
    return _flat_copy(flat, a, True)


@intrinsic
def from_flat(typingctx, a, flat):
    """Copy `flat` back into array `a` (to_flat's inverse)."""
    return _flat_copy(flat, a, False)


@intrinsic
def all_finite(typingctx, a):
    """Whether every item of float or complex array `a` is finite (neither inf nor NaN)."""
    if not isinstance(a, types.Array) or not isinstance(a.dtype, (types.Float, types.Complex)):
        return None

    def codegen(context, builder, sig, args):
        ok = cgutils.alloca_once_value(builder, cgutils.true_bit)
        elem = context.get_data_type(a.dtype)
        part = elem.elements[0] if isinstance(a.dtype, types.Complex) else elem
        inf = ir.Constant(part, float("inf"))

        def body(ptr, k):
            v = builder.load(ptr)
            parts = [builder.extract_value(v, i) for i in range(2)] \
                if isinstance(a.dtype, types.Complex) else [v]
            fine = builder.load(ok)
            for x in parts:     # |x| < inf is false for inf and NaN
                absx = builder.call(builder.module.declare_intrinsic("llvm.fabs", [part]), [x])
                fine = builder.and_(fine, builder.fcmp_ordered("<", absx, inf))
            builder.store(fine, ok)
        _each_item(context, builder, a, args[0], body)
        return builder.load(ok)
    return types.boolean(a), codegen


@intrinsic
def arrays_apart(typingctx, arrays):
    """Whether no two arrays of the tuple `arrays` share a byte: each touches [lowest address,
    highest address + itemsize) by its data pointer, shape and strides (an empty one nothing).
    Emitted in place: `autodiff` inside @njit tests its arrays with it at every call."""
    if not isinstance(arrays, types.BaseTuple) or \
            not all(isinstance(t, types.Array) for t in arrays):
        return None

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        zero, one = ir.Constant(i64, 0), ir.Constant(i64, 1)
        spans = []
        for k, ty in enumerate(arrays):
            ary = make_array(ty)(context, builder, builder.extract_value(args[0], k))
            lo = hi = builder.ptrtoint(ary.data, i64)
            empty = cgutils.false_bit
            for n, st in zip(cgutils.unpack_tuple(builder, ary.shape, ty.ndim),
                             cgutils.unpack_tuple(builder, ary.strides, ty.ndim)):
                reach = builder.mul(builder.sub(n, one), st)
                down = builder.icmp_signed("<", reach, zero)
                lo = builder.select(down, builder.add(lo, reach), lo)
                hi = builder.select(down, hi, builder.add(hi, reach))
                empty = builder.or_(empty, builder.icmp_signed("==", n, zero))
            hi = builder.add(hi, ary.itemsize)
            spans.append((builder.select(empty, zero, lo), builder.select(empty, zero, hi)))
        overlap = cgutils.false_bit
        for k, (lo_k, hi_k) in enumerate(spans):
            for lo_m, hi_m in spans[k + 1:]:
                both = builder.and_(builder.icmp_unsigned("<", lo_k, hi_m),
                                    builder.icmp_unsigned("<", lo_m, hi_k))
                overlap = builder.or_(overlap, both)
        return builder.not_(overlap)
    return types.boolean(arrays), codegen
