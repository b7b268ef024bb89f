"""ir_passes/transforms/common/early_loads.py: loads of `noalias` parameters move up to where the
thread's path starts, and never past a write that may alias them, a barrier, a loop, or onto a
path where they did not run."""
from ir_passes import parse_module, print_module
from ir_passes.transforms.common.early_loads import issue_loads_early

HEAD = """
declare double @llvm.sin.f64(double)
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
declare double @pure(double) #0
declare void @unknown()
attributes #0 = { nounwind memory(none) }
"""


def run(body: str, params="ptr noalias %x, ptr noalias %y, ptr noalias %dy, i64 %i, i64 %n"):
    m = parse_module(HEAD + f"define void @k({params}) {{\n{body}\n}}\n")
    moved = issue_loads_early(m, m.functions["k"])
    return moved, print_module(m)


def order(text, *needles):
    return [text.index(n) for n in needles]


def test_shadow_load_moves_above_math_and_other_stores():
    moved, out = run("""
entry:
  %ok = icmp slt i64 %i, %n
  br i1 %ok, label %body, label %done
body:
  %px = getelementptr double, ptr %x, i64 %i
  %v = load double, ptr %px
  %big = fcmp ogt double %v, 1.0
  br i1 %big, label %slow, label %join
slow:
  %s = call double @pure(double %v)
  br label %join
join:
  %r = phi double [ %s, %slow ], [ %v, %body ]
  %py = getelementptr double, ptr %y, i64 %i
  store double %r, ptr %py
  %pdy = getelementptr double, ptr %dy, i64 %i
  %g = load double, ptr %pdy
  store double 0.0, ptr %pdy
  %d = fmul double %g, %r
  store double %d, ptr %px
  br label %done
done:
  ret void""")
    assert moved == 1
    body = out[out.index("body:"):out.index("slow:")]
    assert "%g = load double, ptr %pdy" in body and "%pdy = getelementptr" in body
    # after its own block's start, before the branch; the stores stay in join, in order
    a, b, c = order(out, "%g = load", "store double %r", "store double 0.0")
    assert a < b < c


def test_no_move_past_a_store_to_the_same_array():
    moved, out = run("""
entry:
  %ok = icmp slt i64 %i, %n
  br label %mid
mid:
  %p = getelementptr double, ptr %y, i64 %i
  store double 1.0, ptr %p
  br label %next
next:
  %q = getelementptr double, ptr %y, i64 %n
  %v = load double, ptr %q
  store double %v, ptr %x
  ret void""")
    # it may rise to just after the store, never above it
    assert out.index("store double 1.0") < out.index("%v = load") < out.index("next:")
    assert moved == 1


def test_no_move_past_a_barrier_when_threads_write_that_array_or_an_unknown_call():
    """A barrier publishes other threads' writes: the kernel writes dy (at another index), so a
    load of dy stays below it. Without such a write no thread writes dy, and it may move."""
    for between, moves in (("call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)", False),
                           ("call void @unknown()", False)):
        moved, out = run(f"""
entry:
  br label %next
next:
  {between}
  %q = getelementptr double, ptr %dy, i64 %i
  %v = load double, ptr %q
  %r = getelementptr double, ptr %dy, i64 %n
  store double %v, ptr %r
  ret void""")
        assert moved == int(moves), between
        assert out.index(between.split("(")[0]) < out.index("%v = load")


def test_no_speculation_onto_paths_that_skipped_the_load():
    moved, out = run("""
entry:
  %ok = icmp slt i64 %i, %n
  br i1 %ok, label %body, label %done
body:
  %q = getelementptr double, ptr %dy, i64 %i
  %v = load double, ptr %q
  store double %v, ptr %x
  br label %done
done:
  ret void""")
    assert moved == 0
    assert out.index("%v = load") > out.index("body:")


def test_no_move_out_of_a_loop_or_for_memory_without_noalias():
    moved, _ = run("""
entry:
  br label %loop
loop:
  %j = phi i64 [ 0, %entry ], [ %j1, %loop ]
  %q = getelementptr double, ptr %dy, i64 %j
  %v = load double, ptr %q
  %j1 = add i64 %j, 1
  %more = icmp slt i64 %j1, %n
  br i1 %more, label %loop, label %done
done:
  ret void""")
    assert moved == 0
    moved, _ = run("""
entry:
  br label %next
next:
  %q = getelementptr double, ptr %dy, i64 %i
  %v = load double, ptr %q
  store double %v, ptr %x
  ret void""", params="ptr %x, ptr %y, ptr %dy, i64 %i, i64 %n")
    assert moved == 0
