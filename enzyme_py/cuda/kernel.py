"""Differentiate a cleaned CUDA kernel: ir_passes' GPU kernel transform
(ir_passes/transforms/gpu_kernel.py), given the activity, extents and row lengths of the
kernel's parameters read off numba-cuda's calling convention (convention.py)."""
from __future__ import annotations

from ir_passes import (GpuKernel, GpuLaunch, gpu_forward_kernel, gpu_reverse_kernel,
                       register_refused)

from ..timings import stage
from .convention import array_extents, build_activity, float32_arrays, row_lengths

# Grid-wide synchronisation (cooperative groups: `cuda.cg.this_grid().sync()`) goes through the
# CUDA device runtime. Its reverse would need a mirrored grid barrier and a cooperative launch,
# and the PTX path here does not link the device runtime: refused in both modes.
register_refused("cudaCGSynchronize", "grid-wide synchronisation (`cuda.cg.this_grid().sync()`) "
                 "is not differentiated", always=True)


@stage("AD")
def reverse_kernel(cleaned, fn_name, argtypes, kinds, name, launch=GpuLaunch(), cache="minimal",
                   noalias=False, warp_add=False, wide=False, deterministic=False) -> GpuKernel:
    """Add kernel `name`, the reverse-mode gradient of kernel `fn_name` (module text `cleaned`).
    `wide`: float32 adjoints are summed in float64 (the float32 arrays' shadows are float64).
    `deterministic`: fixed-order sums, no float atomics (a last scratch parameter)."""
    return gpu_reverse_kernel(cleaned, fn_name, build_activity(argtypes, kinds), name,
                              array_extents(argtypes), row_lengths(argtypes), launch, cache=cache,
                              noalias=noalias, warp_add=warp_add,
                              wide=float32_arrays(argtypes) if wide else None,
                              deterministic=deterministic)


@stage("AD")
def forward_kernel(cleaned, fn_name, argtypes, kinds, name, noalias=False, width=1) -> GpuKernel:
    """Add kernel `name`, the forward-mode tangent kernel of `fn_name` (`width` directions)."""
    return gpu_forward_kernel(cleaned, fn_name, build_activity(argtypes, kinds), name,
                              array_extents(argtypes), noalias=noalias, width=width)
