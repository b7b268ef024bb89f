"""The message loop and the timing of one `evaluate`, split as GradBench's Python tools split it."""
import json
import sys
import time
import traceback
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Callable

MODULES = ("hello", "lse", "llsq", "gmm", "ode", "kmeans", "lstm", "ba", "ht", "det",
           "particle", "saddle")


@dataclass
class Function:
    """prepare(input) -> args (untimed); compute(*args) -> result (timed); post(result) -> JSON."""
    prepare: Callable[[Any], tuple]
    compute: Callable[..., Any]
    post: Callable[[Any], Any] = float


def evaluate(function: Function, raw: Any) -> dict:
    """One warm-up call (Numba and enzyme_py compile on first use) is reported as "prepare" with
    the input conversion; then `compute` runs min_runs times and at least min_seconds, each run
    one "evaluate" timing (GradBench's wrap.multiple_runs)."""
    start = time.perf_counter_ns()
    args = function.prepare(raw)
    output = function.compute(*args)
    timings = [{"name": "prepare", "nanoseconds": time.perf_counter_ns() - start}]
    min_runs = raw.get("min_runs", 1) if isinstance(raw, dict) else 1
    min_seconds = raw.get("min_seconds", 0) if isinstance(raw, dict) else 0
    runs, elapsed = 0, 0
    while runs < min_runs or elapsed < min_seconds * 1e9:
        t0 = time.perf_counter_ns()
        output = function.compute(*args)
        took = time.perf_counter_ns() - t0
        timings.append({"name": "evaluate", "nanoseconds": took})
        runs, elapsed = runs + 1, elapsed + took
    return {"success": True, "output": function.post(output), "timings": timings}


def respond(message: dict) -> dict:
    kind = message["kind"]
    if kind == "start":
        return {"tool": "enzyme_py"}
    if kind not in ("define", "evaluate"):
        return {}
    try:
        module = import_module(f"{__package__}.{message['module']}")
        if kind == "define":
            return {"success": True}
        return evaluate(module.FUNCTIONS[message["function"]], message["input"])
    except Exception as error:  # the eval reports it; the tool goes on with the next message
        return {"success": False, "error": "".join(traceback.format_exception(error))}


def main(stdin=sys.stdin, stdout=sys.stdout) -> None:
    for line in stdin:
        message = json.loads(line)
        if message["kind"] == "end":
            break
        print(json.dumps({"id": message["id"]} | respond(message)), file=stdout, flush=True)
