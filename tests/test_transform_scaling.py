"""The Python-side AD transformation runs in about linear time (benchmarks/transform_scaling.py).

CPU time of this process (not wall time: the machine may be shared), the best of three runs;
a generous bound, so that only a real quadratic spot fails it."""
import time

from benchmarks.transform_scaling import generate, transform


def per_instruction(target: int) -> float:
    text = generate(target)
    best, n = float("inf"), 1
    for _ in range(3):
        t0 = time.process_time()
        n, _ = transform(text)
        best = min(best, time.process_time() - t0)
    return best / n


def test_thousand_instructions_cost_about_ten_times_a_hundred():
    transform(generate(50))                      # first-use costs
    small, large = per_instruction(100), per_instruction(1000)
    assert large <= 4 * small, (small, large)
