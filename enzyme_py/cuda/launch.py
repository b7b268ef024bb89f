"""Load a generated kernel's PTX with numba-cuda's driver API and launch it.

Arguments become kernel parameters the way numba-cuda's own launch makes them
(`_Kernel._prepare_args`): a host array is copied to the device and back after the launch
(`retr` write-backs), a device array is passed as is; shadows pass their data pointer, and each
Active scalar a pointer to a one-element device array that receives its derivative; a
deterministic gradient takes its scratch memory last (`scratch`).
"""
from __future__ import annotations

import threading

import numpy as np
from cuda.core import LaunchConfig, launch
from numba import cuda
from numba.cuda._compat import CUDA_CORE_GE_1_0
from numba.cuda.args import wrap_arg
from numba.cuda.cudadrv.devices import get_context
from numba.cuda.cudadrv.driver import device_memset
from numba.cuda.dispatcher import _Kernel
from ir_passes import Activity, deterministic_scratch_bytes


class _Args:
    """numba-cuda's argument packing (`_Kernel._prepare_args`), without a compiled kernel."""
    extensions = ()

    def __init__(self):
        self._prepare = _Kernel._prepare_args

    def _prepare_args(self, ty, val, stream, retr, kernelargs):
        return self._prepare(self, ty, val, stream, retr, kernelargs)


def device_pointer(value, stream, retr) -> int:
    """The device address of array `value`: a device array's own, a host array's copy (copied
    back after the launch through `retr`), any `__cuda_array_interface__` object's."""
    view = wrap_arg(value).to_device(retr, stream)
    ptr = getattr(view, "ptr", None)           # numba-cuda's StridedMemoryView
    if ptr is None:                            # a DeviceNDArray
        ptr = view.device_ctypes_pointer.value
    return int(ptr or 0)


class LoadedKernel:
    """A kernel of a PTX module, loaded into the current CUDA context."""

    def __init__(self, ptx: str, name: str):
        ctx = get_context()
        self.module = ctx.create_module_ptx(ptx)
        self.function = self.module.get_function(name)

    def launch(self, griddim, blockdim, stream, sharedmem, params) -> None:
        if CUDA_CORE_GE_1_0:
            config = LaunchConfig(grid=griddim, block=blockdim, shmem_size=sharedmem,
                                  is_cooperative=False)
        else:
            config = LaunchConfig(grid=griddim, block=blockdim, shmem_size=sharedmem,
                                  cooperative_launch=False)
        launch(stream, config, self.function.kernel, *params)


def parameters(argtypes, annotated, kinds, stream, retr, wide=False) -> list:
    """The kernel parameters of the annotated arguments, then the shadow pointers of each
    Duplicated argument (k for a BatchDuplicated; `wide`: a float32 shadow's float64 copy, wide_shadow)."""
    params, packer = [], _Args()
    for ty, a in zip(argtypes, annotated):
        packer._prepare_args(ty, a.value, stream, retr, params)
    for a, kind in zip(annotated, kinds):
        if kind != Activity.DUP:
            continue
        for shadow in lanes(a):
            widen = wide and np.dtype(shadow.dtype) == np.float32
            params.append(wide_shadow(shadow, stream, retr) if widen else
                          device_pointer(shadow, stream, retr))
    return params


def lanes(a) -> tuple:
    """The shadows of a Duplicated (one) or BatchDuplicated (one per direction) argument."""
    shadows = getattr(a, "shadows", None)
    return tuple(shadows) if shadows is not None else (a.shadow,)


@cuda.jit
def _convert(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def wide_shadow(shadow, stream, retr) -> int:
    """The device address of a float64 copy of the contiguous float32 `shadow` (same shape and
    order); after the launch (`retr`) it is rounded once back into the shadow."""
    order = "F" if _is_f_order(shadow) else "C"
    if isinstance(shadow, np.ndarray):
        wide = cuda.to_device(np.asarray(shadow, dtype=np.float64, order=order), stream=stream)

        def back():
            host = wide.copy_to_host(stream=stream)
            if stream:
                stream.synchronize()
            shadow[...] = host.astype(np.float32)
        retr.append(back)
        return int(wide.device_ctypes_pointer.value or 0)
    narrow = cuda.as_cuda_array(shadow).ravel(order=order)
    wide = cuda.device_array(narrow.size, dtype=np.float64, stream=stream)
    grid = max(1, (narrow.size + 255) // 256)
    _convert[grid, 256, stream](narrow, wide)
    retr.append(lambda: _convert[grid, 256, stream](wide, narrow))
    return int(wide.device_ctypes_pointer.value or 0)


def _is_f_order(a) -> bool:
    if isinstance(a, np.ndarray):
        return a.flags.f_contiguous and not a.flags.c_contiguous
    d = cuda.as_cuda_array(a)
    return d.is_f_contiguous() and not d.is_c_contiguous()


def derivative_slots(argtypes, kinds, cache: dict, stream, wide=False):
    """A zeroed one-element device array per Active argument, of its type (float64 with `wide`):
    (their pointers, the arrays). The arrays are made once per device and thread (`cache`, the
    compiled kernel's) and zeroed on `stream` at each call: an allocation per call would cost
    more than the kernel."""
    key = (cuda.get_current_device().id, threading.get_ident())
    arrays = cache.get(key)
    if arrays is None:
        arrays = cache[key] = [
            cuda.to_device(np.zeros(1, dtype=np.float32 if str(ty) == "float32" and not wide
                                    else np.float64))
            for ty, k in zip(argtypes, kinds) if k == Activity.ACTIVE]
    for d in arrays:
        device_memset(d, 0, d.nbytes, stream=stream)
    return [device_pointer(d, 0, []) for d in arrays], arrays


def scratch(sites, griddim, cache: dict, stream) -> int:
    """The device address of the scratch memory of deterministic=True's fixed-order sums (a
    ticket counter, then a slot per block for each of `sites` sums: block_sum.scratch_bytes). It
    is made once per device and thread (`cache`, the compiled kernel's), grown for a launch with
    more blocks, and its counter zeroed on `stream` at each call (the last block resets it too,
    but a launch that failed may have left it)."""
    dims = (griddim,) if isinstance(griddim, int) else tuple(griddim)
    nbytes = deterministic_scratch_bytes(sites, int(np.prod(dims)))
    key = ("scratch", cuda.get_current_device().id, threading.get_ident())
    buf = cache.get(key)
    if buf is None or buf.nbytes < nbytes:
        buf = cache[key] = cuda.device_array(nbytes, dtype=np.uint8)
    device_memset(buf, 0, 16, stream=stream)
    return device_pointer(buf, 0, [])
