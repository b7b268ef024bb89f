"""The GradBench tool answers hello and lse through the runner's relay, with a stand-in eval that
checks the outputs (GradBench's own evals need a checkout and the C++ `manual` tool)."""
import io
import subprocess
import sys
import textwrap
from pathlib import Path

from benchmarks.gradbench.runner import relay

REPO = Path(__file__).resolve().parents[1]

STAND_IN = textwrap.dedent("""
    import json, math, sys
    def send(m):
        print(json.dumps(m), flush=True)
        return json.loads(sys.stdin.readline()) if m["kind"] != "end" else None
    def check(i, r, ok):
        send({"id": i + 1, "kind": "analysis", "of": i, "valid": bool(r["success"] and ok(r["output"]))})
    send({"id": 0, "kind": "start", "eval": "hello"})
    send({"id": 1, "kind": "define", "module": "hello"})
    r = send({"id": 2, "kind": "evaluate", "module": "hello", "function": "double", "input": 3.0})
    check(2, r, lambda y: y == 6.0)
    x = [0.5, -1.0, 2.0]
    s = sum(math.exp(v) for v in x)
    inp = {"x": x, "min_runs": 2, "min_seconds": 0}
    r = send({"id": 4, "kind": "evaluate", "module": "lse", "function": "primal", "input": inp})
    check(4, r, lambda y: abs(y - math.log(s)) < 1e-12)
    r = send({"id": 6, "kind": "evaluate", "module": "lse", "function": "gradient", "input": inp})
    check(6, r, lambda g: all(abs(a - math.exp(v) / s) < 1e-12 for a, v in zip(g, x)))
    send({"id": 8, "kind": "end"})
""")


def test_hello_and_lse_through_the_relay():
    tool = subprocess.Popen([sys.executable, "-m", "benchmarks.gradbench.tool"], cwd=REPO,
                            text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    stand_in = subprocess.Popen([sys.executable, "-c", STAND_IN], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    log = io.StringIO()
    try:
        records = relay(stand_in, tool, log, echo=None)
    finally:
        for proc in (stand_in, tool):
            proc.stdin.close()
            proc.wait(timeout=30)
    evaluated = [r for r in records if r["kind"] == "evaluate"]
    assert [r["function"] for r in evaluated] == ["double", "primal", "gradient"]
    assert all(r["success"] and r["valid"] for r in evaluated)
    assert log.getvalue().count('"response"') == 8


def test_saddle_and_particle_nested_ad_give_the_evals_values():
    """GradBench's saddle and particle evals (nested AD: a gradient inside the objective a
    gradient descent differentiates) expect these values from every tool and every mode pair."""
    import numpy as np

    from benchmarks.gradbench.tool import particle, saddle
    out = saddle.SOLVERS["rf"](np.array([1.0, 1.0]))
    np.testing.assert_allclose(out, [8.246324826140356e-06] * 4, rtol=1e-4)
    w = particle.SOLVERS["rr"](np.array([0.0]))
    np.testing.assert_allclose(w, 0.2071918746486116, rtol=1e-10)
