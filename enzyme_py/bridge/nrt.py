"""What ir_passes must know about the code Numba generates, registered through its rule tables:
how kernels allocate memory (Numba's runtime, NRT), and which statuses mean success.

`np.empty` and friends call an NRT allocator that returns a meminfo handle, and
`NRT_MemInfo_data*` turns the handle into the data pointer. ir_passes gives an
allocation that receives differentiable data a zeroed shadow of the same size.

A gradient's own memory (tape, workspace, scratch) comes from NRT_Allocate / NRT_Free
(`void *NRT_Allocate(size_t)`, `void NRT_Free(void *)`, symbols Numba's runtime adds to
LLVM), so NRT's allocation statistics count it. NRT exports no realloc: ir_passes grows by
allocate + copy + free.
"""
import ctypes
from pathlib import Path

from . import host_routines
from ir_passes import (register_alias, register_allocator, register_dot, register_error_report,
                       register_free, register_geev, register_gelsd, register_gemm, register_gemv, register_geqrf,
                       register_gesdd, register_gesv, register_getrf, register_getri,
                       register_handle_realloc, register_heap, register_host_routine,
                       register_inactive, register_nrm2, register_orgqr, register_parallel_for,
                       register_thread_id,
                       register_constructor, register_copy_in, register_copy_out, register_setup,
                       register_pointer_getter,
                       register_potrf, register_real_geev, register_refused, register_success_codes,
                       register_syevd,
                       register_helper, register_writes_nothing)
from llvmlite import binding as _binding
from numba.np.numpy_support import numpy_version
from numba.np.ufunc import parallel

# Numba's calling convention: a function returns a status, 0 (OK) or -2 (OK, returned None);
# any other value is an error or an exception
NUMBA_SUCCESS = (0, -2)
register_success_codes(NUMBA_SUCCESS)

for _alloc in ("NRT_MemInfo_alloc_aligned", "NRT_MemInfo_alloc_safe_aligned",
               "NRT_MemInfo_alloc", "NRT_MemInfo_alloc_safe"):
    for _data in ("NRT_MemInfo_data_fast", "NRT_MemInfo_data"):
        register_allocator(_alloc, size_arg=0, data=_data, retain="NRT_incref",
                           release="NRT_decref")   # NRT_decref(NULL) does nothing

# Numba's lists (a list literal, np.split's and np.broadcast_arrays' results): a payload behind a
# handle whose destructor drops the items' references (the second argument), moved in place by
# NRT_MemInfo_varsize_realloc as the list grows; the accessor is asked for the data at every use
for _data in ("NRT_MemInfo_data_fast", "NRT_MemInfo_data"):
    register_allocator("NRT_MemInfo_new_varsize_dtor", size_arg=0, data=_data, retain="NRT_incref",
                       release="NRT_decref", element_dtor=1)
register_handle_realloc("NRT_MemInfo_varsize_realloc", handle_arg=0, size_arg=1)

# numba.typed.List (numba/cext/listobject.c): the size's address and the item storage of a list
# only read it; a shadow list (a list of the items' shadows) holds its items where the primal does
register_inactive("numba_list_size_address")
register_writes_nothing("numba_list_size_address")
register_pointer_getter("numba_list_base_ptr", arg=0)
# a list built in a kernel: numba_list_new(&lp, item_size, allocated) makes it (released by
# numba_list_free), append copies the item's bytes in; the method table (the items' reference
# counts) is the primal's business; the list's handle is a meminfo holding the list's pointer
register_constructor("numba_list_new", out_arg=0, free="numba_list_free")
register_copy_in("numba_list_append", obj_arg=0, item_arg=1)
register_inactive("numba_list_set_method_table")
# ... but a shadow list of forward mode holds its items' shadows (host allocations, released
# with the primal's) as the primal list holds the items: it gets the same method table
register_setup("numba_list_set_method_table", obj_arg=0)
# numba.typed.Dict: a lookup copies the value found for a key out (its shadow dict holds the
# values' shadows under the same keys)
register_copy_out("numba_dict_lookup", obj_arg=0, out_arg=3)
# the typed containers' other operations have no rules: refused by what the user wrote (their
# functions are Numba's runtime, to which a user cannot give a derivative)
_CONTAINER_REFUSALS = {
    "numba_list_setitem": "assigning an item of a typed List (`lst[i] = a`) is not differentiated: "
                          "build the list with `append`, or write into the item (`lst[i][:] = a`)",
    "numba_dict_insert": "storing into a typed Dict (`d[key] = value`, or a dict the kernel fills) is "
                         "not differentiated: pass the dict filled, look values up by key and write "
                         "into them (`d[key][:] = ...`)",
    "numba_dict_iter": "iterating over a typed Dict (`for k in d`, `d.values()`, `d.items()`) is not "
                       "differentiated: look the values up by key (`d[\"w\"]`)",
}
for _name in ("numba_list_delitem", "numba_list_delete_slice", "numba_list_resize"):
    _CONTAINER_REFUSALS[_name] = ("removing items of a typed List (`pop`, `del`, `clear`) is not "
                                  "differentiated: read the items by index")
for _name in ("numba_dict_delitem", "numba_dict_popitem"):
    _CONTAINER_REFUSALS[_name] = ("removing entries of a typed Dict (`pop`, `del`, `popitem`) is not "
                                  "differentiated: look the values up by key")
_CONTAINER_REFUSALS["numba_dict_insert_ez"] = _CONTAINER_REFUSALS["numba_dict_insert"]
_CONTAINER_REFUSALS["numba_dict_iter_next"] = _CONTAINER_REFUSALS["numba_dict_iter"]
for _name, _reason in _CONTAINER_REFUSALS.items():
    register_refused(_name, _reason)
register_allocator("NRT_MemInfo_alloc_dtor", size_arg=0, data="NRT_MemInfo_data_fast",
                   retain="NRT_incref", release="NRT_decref")

# raw buffers (array copies that may overlap use one): the call returns the data pointer
register_allocator("NRT_Allocate", size_arg=0)
register_allocator("NRT_Allocate_External", size_arg=0)
register_free("NRT_Free")        # forward mode frees a buffer's shadow with it
# frees and refcounts never carry derivatives; the reverse sweep never reads freed primal memory
# numba_attempt_nocopy_reshape computes integer shapes and strides only
for _name in ("NRT_Free", "NRT_MemInfo_call_dtor", "NRT_decref", "NRT_incref",
              "numba_attempt_nocopy_reshape"):
    register_inactive(_name)
# reference counts write no memory the program reads; a BLAS or LAPACK wrapper's error path takes
# the GIL and aborts the process (Py_FatalError); a parallel launch that finds no threads prints
# the count (printf) before it raises
for _name in ("NRT_incref", "NRT_decref", "numba_gil_ensure", "Py_FatalError", "printf"):
    register_writes_nothing(_name)
for _name in ("numba_gil_ensure", "Py_FatalError"):
    register_inactive(_name)

# np.dot (np.vdot: conjugate 1) of two 1-D arrays: numba_xxdot(kind, conjugate, n, x, y, &out),
# kind 'd', 's', 'z' or 'c'
register_dot("numba_xxdot", n=2, x=3, y=4, out=5, kind=0, conj=1)
# matrix products and 2-norms: Numba's wrappers take BLAS's arguments after a type char
register_gemm("numba_xxgemm")    # (kind, transa, transb, m, n, k, alpha*, a, lda, b, ldb, beta*, c, ldc)
register_gemv("numba_xxgemv")    # (kind, trans, m, n, alpha*, a, lda, x, beta*, y)
register_nrm2("numba_xxnrm2")    # (kind, n, x, incx, out*)
# np.linalg.solve: (kind, n, nrhs, a, lda, ipiv, b, ldb)
register_gesv("numba_xgesv")
# the triangular solve, LU solve and rank-1 update the matrix-level adjoints call, from SciPy
for _routine in host_routines.define():
    register_host_routine(_routine)
# np.linalg.cholesky: (kind, uplo, n, a, lda)
register_potrf("numba_xxpotrf")
# np.linalg.slogdet, det (and inv, before getri): (kind, m, n, a, lda, ipiv)
register_getrf("numba_xxgetrf")
# np.linalg.inv, after getrf: (kind, n, a, lda, ipiv)
register_getri("numba_ez_xxgetri")
# np.linalg.eigh, eigvalsh: (kind, jobz, uplo, n, a, lda, w)
register_syevd("numba_ez_xxxevd")
# np.linalg.svd, pinv, cond, matrix 2-norms: (kind, jobz, m, n, a, lda, s, u, ldu, vt, ldvt)
register_gesdd("numba_ez_gesdd")
# np.linalg.qr: geqrf (kind, m, n, a, lda, tau), then orgqr forms Q (kind, m, n, k, a, lda, tau)
register_geqrf("numba_ez_geqrf")
register_orgqr("numba_ez_xxgqr")
# np.linalg.lstsq: (kind, m, n, nrhs, a, lda, b, ldb, s, rcond, rank)
register_gelsd("numba_ez_gelsd")
# np.linalg.eigvals (and roots) of complex matrices: (kind, jobvl, jobvr, n, a, lda, w, vl, ldvl,
# vr, ldvr); eig (eigenvectors) is refused by the record
register_geev("numba_ez_cgeev")
# real matrices: (kind, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl, vr, ldvr). With NumPy < 2.5
# Numba's eig, eigvals and roots return wr (and vr) and raise when an eigenvalue is complex; from
# NumPy 2.5 on they unpack wr, wi and vr into complex arrays, whose derivative is not computed
if numpy_version < (2, 5):
    register_real_geev("numba_ez_rgeev")
else:
    register_refused("numba_ez_rgeev", "np.linalg.eig, eigvals and roots of a real matrix with "
                     "NumPy >= 2.5 (complex results unpacked from LAPACK's real and imaginary "
                     "parts): their derivative is not computed (pass a complex array to eigvals)")

# math.gamma: Numba's own wrappers of libm's tgamma
register_alias("numba_gamma", "tgamma")
register_alias("numba_gammaf", "tgamma")
# np.ldexp, np.nextafter and np.spacing (nextafter(x, copysign(inf, x)) - x)
for _name, _key in (("numba_ldexp", "ldexp"), ("numba_ldexpf", "ldexp"),
                    ("numba_nextafter", "nextafter"), ("numba_nextafterf", "nextafter")):
    register_alias(_name, _key)

register_heap("NRT_Allocate", "NRT_Free")

# Numba's parallel-for launcher (numba/np/ufunc/parallel.py registers its symbols): prange loops.
# A failing body takes the GIL and raises through numba_do_raise (the Python error is set); -1 is
# Numba's status for "an exception is set".
register_parallel_for("numba_parallel_for", thread_id="get_thread_id",
                      raise_calls=("numba_gil_ensure", "numba_do_raise"), error_status=-1,
                      schedulers=("do_scheduling_signed", "do_scheduling_unsigned"),
                      handles=("allocate_sched", "PyEval_SaveThread"))


def note_thread_id_pointer() -> None:
    """`numba.np.ufunc.parallel._get_thread_id()` in a kernel is a ctypes call of the threading
    layer's `get_thread_id` (through `numba.dynamic.globals.<address>`, returning i32): a thread
    id too. Known once the threading layer is up (Numba starts it to compile a prange)."""
    fn = getattr(parallel, "_get_thread_id", None)
    if fn is not None:
        address = ctypes.cast(fn, ctypes.c_void_p).value
        register_thread_id("numba_parallel_for", f"numba.dynamic.globals.{address:x}")

# An error found while a gradient runs: host_error.ll (a Python RuntimeError, and Numba's status
# for "an exception is set")
HOST_ERROR = (Path(__file__).parent / "host_error.ll").read_text()
register_helper(("enzpy.host_error", "enzpy.host_error_pending"), HOST_ERROR)
# the JIT resolves Python's functions but not its data: name the exception type's variable
_binding.add_symbol("PyExc_RuntimeError",
                    ctypes.addressof(ctypes.c_void_p.in_dll(ctypes.pythonapi, "PyExc_RuntimeError")))
register_error_report("enzpy.host_error", -1, "enzpy.host_error_pending")
for _name in ("enzpy.host_error", "enzpy.host_error_pending"):
    register_inactive(_name)
