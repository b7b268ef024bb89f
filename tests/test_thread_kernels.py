"""ir_passes for functions that run as many threads (transforms/reverse/shadows/shadow_updates.py), on
hand-written NVPTX-style IR: no numba-cuda needed."""
from ir_passes import LIBC_HEAP, parse_module, print_module, reverse_mode
from ir_passes.analysis.dominators import dominators
from ir_passes.analysis.loops import loop_info
from ir_passes.analysis.sharing import nvptx_iterations
from ir_passes.analysis.tripcount import constant_trip_bound
from ir_passes.transforms.reverse.shadows.shadow_updates import Threads

# s[t] = x[i]; barrier; tree sum of s over halving strides with a barrier per step; y[i] = s[t]
REDUCE = """
define void @k(ptr %x, ptr %y, ptr noalias %s) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %t = zext i32 %tid to i64
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nt = zext i32 %ntid to i64
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %c = zext i32 %ctaid to i64
  %m = mul i64 %nt, %c
  %i = add i64 %m, %t
  %px = getelementptr double, ptr %x, i64 %i
  %xi = load double, ptr %px
  %ps = getelementptr double, ptr %s, i64 %t
  store double %xi, ptr %ps
  call void @llvm.nvvm.barrier0()
  %half = lshr i64 %nt, 1
  br label %loop
loop:
  %stride = phi i64 [ %half, %entry ], [ %next, %step ]
  %low = icmp ult i64 %t, %stride
  br i1 %low, label %add, label %step
add:
  %a = load double, ptr %ps
  %po = getelementptr double, ptr %ps, i64 %stride
  %b = load double, ptr %po
  %ab = fadd double %a, %b
  store double %ab, ptr %ps
  br label %step
step:
  call void @llvm.nvvm.barrier0()
  %next = lshr i64 %stride, 1
  %done = icmp eq i64 %next, 0
  br i1 %done, label %exit, label %loop
exit:
  %r = load double, ptr %ps
  %py = getelementptr double, ptr %y, i64 %i
  store double %r, ptr %py
  ret void
}
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare void @llvm.nvvm.barrier0()
"""


def gradient(text=REDUCE, threads=True):
    module = parse_module(text)
    options = {}
    if threads:
        options = dict(threads=Threads(lambda f: nvptx_iterations(f, True, True,
                                                                  lambda r: r.name == "s"),
                                       block_sum="nvptx"), park=False)
    g = reverse_mode(module, "k", ["dup", "dup", "dup"], "grad", counts=None, noalias=True,
                     heap=LIBC_HEAP, **options)
    return g, print_module(module)


def test_halving_loop_has_a_constant_trip_bound():
    fn = parse_module(REDUCE).functions["k"]
    (loop,) = loop_info(fn).loops
    assert constant_trip_bound(loop, dominators(fn)) == 66     # 64 halvings of an i64, + 2


def test_barriers_are_mirrored():
    _, text = gradient()
    body = text[text.index("define void @grad"):]
    body = body[:body.index("\n}\n")]
    assert body.count("call void @llvm.nvvm.barrier0()") == 4   # two forward, two reverse


def test_thread_tape_is_in_the_frame():
    """The loop's stride and branch are taped per iteration: in the frame (66 slots), where the
    sequential gradient grows them on the heap."""
    _, text = gradient()
    assert "@malloc" not in text and "@realloc" not in text
    _, sequential = gradient(threads=False)
    assert "@realloc" in sequential or "@malloc" in sequential


def test_shadow_updates_by_kind():
    """x[i] and y[i] are the thread's own; s[t] and s[t + stride] are one shared-memory object
    indexed two ways: atomic."""
    g, text = gradient()
    how = {u.instruction.split("=")[0].strip() if "=" in u.instruction else u.instruction.strip():
           u.how for u in g.updates.report}
    assert how["%xi"] == "private"
    assert how["%b"] == "atomic"
    assert "atomicrmw fadd" in text
