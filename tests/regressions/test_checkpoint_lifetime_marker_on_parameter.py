"""Fixed: a time loop checkpointed under a memory budget, whose body passes a stack block made
before the loop to an opaque (inactive) call between lifetime markers, gave a gradient module
that LLVM's verifier rejects ("llvm.lifetime.start/end can only be used on alloca"), and the
process aborted ("LLVM ERROR: Broken module found").

Root cause: the checkpoint transform outlines one step into `K.ckpt.N.step`; a block the body
reads before writing (the opaque call writes it, but an inactive call counts as a read) is not
step-local, so the step takes it as a parameter, and its lifetime markers were cloned onto that
parameter. The step now drops markers that do not name one of its own allocas
(transforms/common/markers.py). The abort itself: llvmlite's parse_assembly runs LLVM's
debug-info upgrade, which verifies a module carrying the "Debug Info Version" flag and treats a
failure as fatal; enzyme_py now parses generated IR with that upgrade off and verifies it
(bridge/verify.py), so a broken module is an InternalError.
"""
import ctypes
import os
import subprocess
import sys

import llvmlite.binding as llvm
import numpy as np

from enzyme_py.bridge.verify import parse_checked
from ir_passes import LIBC_HEAP, Extent, Memory, parse_module, print_module, reverse_mode
from ir_passes.rules.registry import RULES, inactive

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FILL = "enzpy_test_fill_half"     # stores 0.5 into its argument; inactive while differentiated

# u[0] <- 0.5 * u[0]^2, `steps` times; the 0.5 comes back through %tmp from the opaque call
KERNEL = f"""
declare void @llvm.lifetime.start.p0(ptr)
declare void @llvm.lifetime.end.p0(ptr)

define void @{FILL}(ptr %p) {{
  store double 5.000000e-01, ptr %p
  ret void
}}

define void @f(ptr %u, i64 %n, i64 %stride, i64 %item, i64 %steps) {{
entry:
  %tmp = alloca double, align 8
  %go = icmp sgt i64 %steps, 0
  br i1 %go, label %loop, label %done
loop:
  %s = phi i64 [ 0, %entry ], [ %s1, %loop ]
  call void @llvm.lifetime.start.p0(ptr %tmp)
  call void @{FILL}(ptr %tmp)
  %c = load double, ptr %tmp
  call void @llvm.lifetime.end.p0(ptr %tmp)
  %x = load double, ptr %u
  %xx = fmul double %x, %x
  %y = fmul double %xx, %c
  store double %y, ptr %u
  %s1 = add i64 %s, 1
  %more = icmp slt i64 %s1, %steps
  br i1 %more, label %loop, label %done
done:
  ret void
}}
"""
DEBUG_FLAG = '!llvm.module.flags = !{!0}\n!0 = !{i32 2, !"Debug Info Version", i32 3}\n'


def gradient_module() -> str:
    """The gradient, with FILL's rule registered only meanwhile: a rule left in the process's
    tables changes every disk-cache key here, and spawned workers without it miss the cache."""
    inactive(FILL)
    try:
        m = parse_module(KERNEL)
        reverse_mode(m, "f", ["dup", "const", "const", "const", "const"], "grad_f", counts=None,
                     extents={0: Extent([(1, 2)], 3)}, memory=Memory(64), heap=LIBC_HEAP)
        return print_module(m)
    finally:
        RULES.pop(FILL, None)


def test_checkpointed_step_verifies_and_matches_finite_differences():
    text = gradient_module()
    assert "@f.ckpt.0.step(" in text            # the loop is checkpointed
    module = parse_checked(text + DEBUG_FLAG)
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    engine = llvm.create_mcjit_compiler(module, llvm.Target.from_default_triple().create_target_machine())
    engine.finalize_object()
    i64, ptr = ctypes.c_int64, ctypes.c_void_p
    f = ctypes.CFUNCTYPE(None, ptr, i64, i64, i64, i64)(engine.get_function_address("f"))
    grad = ctypes.CFUNCTYPE(None, ptr, i64, i64, i64, i64, ptr)(engine.get_function_address("grad_f"))

    def run(x0, steps):
        u = np.array([x0])
        f(u.ctypes.data, 1, 8, 8, steps)
        return u[0]

    x0, steps, h = 0.9, 4, 1e-6
    u, du = np.array([x0]), np.array([1.0])
    grad(u.ctypes.data, 1, 8, 8, steps, du.ctypes.data)
    assert u[0] == run(x0, steps)               # the primal ends as a plain call leaves it
    fd = (run(x0 + h, steps) - run(x0 - h, steps)) / (2 * h)
    analytic = 16 * 0.5 ** 15 * x0 ** 15        # d/dx of 0.5^15 x^16
    assert np.isclose(du[0], analytic, rtol=1e-12)
    assert np.isclose(du[0], fd, rtol=1e-7)
    del engine


BROKEN = """
import enzyme_py
from enzyme_py.bridge.link import prepare_module
text = '''define void @g(ptr %p) {
  call void @llvm.lifetime.start.p0(ptr %p)
  ret void
}
declare void @llvm.lifetime.start.p0(ptr)
''' + FLAG
try:
    prepare_module(text, "g")
except enzyme_py.InternalError as e:
    print("raised:", e)
"""


def test_broken_module_raises_instead_of_aborting():
    """In a subprocess: before the fix, LLVM's parse ended the process."""
    code = BROKEN.replace("FLAG", repr(DEBUG_FLAG))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "raised:" in out.stdout and "can only be used on alloca" in out.stdout
