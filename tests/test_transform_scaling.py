"""benchmarks/transform_scaling.py times the Python-side AD on functions of about 100, 1,000 and
10,000 instructions and prints each size's cost per instruction against the smallest's (issue
7: linear time). Here only that its generator and transform work and make valid IR: a time bound
would fail on a loaded machine, so the scaling is read in the benchmark's output."""
import llvmlite.binding as llvm

from benchmarks.transform_scaling import generate, transform


def test_generated_functions_differentiate_to_valid_ir():
    for target in (100, 1000):
        n, text = transform(generate(target))
        assert target <= n <= 1.25 * target, (target, n)      # "about" target instructions
        llvm.parse_assembly(text).verify()
