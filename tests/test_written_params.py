"""ir_passes/analysis/written.py: the parameters a function may write through (None: unknown)."""
from ir_passes import parse_module
from ir_passes.analysis.written import written_params

IR = """
declare void @ext(ptr)

define void @f(ptr %a, ptr %b, ptr %c, double %x) {
entry:
  %p = getelementptr double, ptr %a, i64 2
  store double %x, ptr %p
  %v = load double, ptr %b
  %s = alloca double
  store double %v, ptr %s
  BODY
  ret void
}
"""


def written(body=""):
    return written_params(parse_module(IR.replace("BODY", body)).functions["f"])


def test_stores_into_parameters_and_locals():
    assert written() == frozenset({0})


def test_a_call_given_a_parameter_writes_it():
    assert written("call void @ext(ptr %c)") == frozenset({0, 2})


def test_a_pointer_loaded_from_memory_is_unknown():
    assert written("%q = load ptr, ptr %b\n  store double %x, ptr %q") is None


def test_a_call_given_local_memory_is_unknown():
    assert written("call void @ext(ptr %s)") is None


def test_memcpy_writes_its_destination_only():
    body = "call void @llvm.memcpy.p0.p0.i64(ptr %c, ptr %s, i64 8, i1 false)"
    text = IR.replace("BODY", body) + "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)\n"
    assert written_params(parse_module(text).functions["f"]) == frozenset({0, 2})
