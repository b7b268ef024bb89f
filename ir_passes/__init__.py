"""ir_passes: a small compiler from LLVM IR to LLVM IR that synthesizes derivatives.

It knows nothing about the host that produced the IR: it reads LLVM assembly, analyses it, and
adds gradient functions. What it must know of a host's runtime (allocators, frees, reference
counts, status codes) the host registers here. See docs/internals.md for the interface and
docs/architecture.md for the layout.
"""
from .errors import InternalError, UnsupportedError
from .ir.parser import parse_module
from .ir.printer import print_module
from .ir.types import f32 as FLOAT32, f64 as FLOAT64   # an Extent's element types
from .options import Activity, CacheMode
from .rules.blas import (register_dot, register_gemm, register_gemv, register_host_routine,
                         register_nrm2)
from .rules.convention import register_error_report, register_success_codes
from .rules.parallel import ParallelUpdates, register_parallel_for, register_thread_id
from .rules.finite import tests_nan
from .rules.effects import (register_allocator, register_constructor, register_copy_in, register_setup,
                            register_copy_out, register_free, register_handle_realloc,
                            register_pointer_getter, register_realloc, register_refused,
                            register_writes_nothing)
from .rules.lapack import register_gesv
from .rules.lapack_eig import register_geev
from .rules.lapack_eig_real import register_real_geev
from .rules.lapack_lstsq import register_gelsd
from .rules.lapack_lu import register_getrf, register_getri, register_potrf
from .rules.lapack_qr import register_geqrf, register_orgqr
from .rules.lapack_spectral import register_gesdd, register_syevd
from .rules.registry import alias as register_alias
from .rules.registry import external as register_external
from .rules.registry import inactive as register_inactive
from .runtime.heap import LIBC as LIBC_HEAP
from .transforms.reverse.loops.checkpoint.version import WHY as MEMORY_CHOICES
from .runtime.heap import Heap, register_heap
from .transforms.common.extent import Extent
from .transforms.common.vector_math import VectorLibrary, libmvec
from .transforms.forward.driver import forward_mode
from .transforms.reverse.loops.checkpoint.budget import TAPE, Memory, memory_option
from .transforms.reverse.loops.checkpoint.schedule import unpooled as unpool_checkpoints
from .transforms.reverse.sweeps.driver import reverse_mode
from .analysis.activity import ConstantMemoryError
from .analysis.decisions import Decisions, decisions
from .analysis.loops import reducible
from .ir.parser import ParseError
from .rules.fingerprint import rules_fingerprint
from .rules.libdevice import SELECTED as LIBDEVICE_SELECTED
from .runtime.fresh_workspace import fresh_tapes, fresh_tapes_text
from .runtime.helpers import register_helper
from .runtime.source import fill as fill_template, read_pieces
from .runtime.shared import declared as declared_runtime
from .runtime.shared import library_text as runtime_library_text
from .transforms.common.early_loads import issue_loads_early
from .transforms.gpu_kernel import (GpuKernel, GpuLaunch, dynamic_shared_bytes, gpu_forward_kernel,
                                     gpu_reverse_kernel)
from .transforms.pattern_union import pattern_text, union_arms
from .runtime.block_sum import scratch_bytes as deterministic_scratch_bytes

__all__ = ["Decisions", "decisions", "pattern_text", "union_arms", "fresh_tapes", "fresh_tapes_text",
           "tests_nan", "ConstantMemoryError", "LIBDEVICE_SELECTED", "ParseError", "issue_loads_early",
           "reducible", "register_helper", "fill_template", "read_pieces", "rules_fingerprint",
           "GpuKernel", "GpuLaunch", "gpu_forward_kernel", "gpu_reverse_kernel", "dynamic_shared_bytes",
           "deterministic_scratch_bytes", "declared_runtime", "runtime_library_text",
           "Activity", "CacheMode", "Extent", "FLOAT32", "FLOAT64", "Heap", "InternalError",
           "LIBC_HEAP", "MEMORY_CHOICES", "Memory",
           "ParallelUpdates", "TAPE", "UnsupportedError", "VectorLibrary", "forward_mode",
           "libmvec", "memory_option", "parse_module", "print_module", "register_alias",
           "register_allocator", "register_constructor", "register_copy_in", "register_setup", "register_copy_out",
           "register_dot",
           "register_external", "register_free",
           "register_geev", "register_gelsd", "register_gemm", "register_gemv", "register_geqrf", "register_gesdd",
           "register_gesv", "register_getrf", "register_getri", "register_handle_realloc",
           "register_heap", "register_host_routine", "unpool_checkpoints",
           "register_inactive", "register_nrm2", "register_orgqr", "register_parallel_for",
           "register_thread_id",
           "register_pointer_getter", "register_potrf", "register_real_geev", "register_realloc",
           "register_refused",
           "register_success_codes",
           "register_error_report",
           "register_syevd", "register_writes_nothing", "reverse_mode"]
