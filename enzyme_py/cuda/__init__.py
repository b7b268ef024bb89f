"""Gradients of numba-cuda `@cuda.jit` kernels (docs/cuda.md). Needs the `cuda` extra
(`pip install -e '.[cuda]'`); `import enzyme_py` never imports this package or numba-cuda:
`enzyme_py.autodiff` comes here when given `kernel[blocks, threads]`.

    capture.py     the kernel's NVVM IR for a signature and compute capability (no GPU needed)
    cleanup.py     O2 for the NVPTX target
    kernel.py      shared arrays as parameters, ir_passes, the wrapper kernel
    codegen.py     PTX through LLVM's NVPTX backend with libdevice; ptxas
    launch.py      load and launch through numba-cuda's driver API
    harness.py     run a kernel's module on the CPU with threads emulated (tests)
    host_ir.py     the harness's own LLVM IR (harness.ll), in pieces
    api.py         autodiff, compile_kernel, explain (enzyme_py.autodiff and friends call them)

This `__init__` imports nothing, so that the harness and the other parts that need no numba-cuda
import without it.
"""
