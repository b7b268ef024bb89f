"""`scratch_like(a)`: a 1-D C-contiguous array with as many elements as array `a`, on the
stack of the calling function when it is small, else on the heap.

The strong-zero entries (modes/strong_zero_entry.py) copy a call's shadows and written arrays
before every call: a heap allocation per array costs more than a small gradient. A stack array
has no meminfo (Numba's reference counting skips a null one); it lives until the function
returns (LLVM brackets an inlined dynamic alloca with stacksave/stackrestore).
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import types
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
