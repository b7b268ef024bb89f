"""memory="auto" against the full tape on the workloads with time loops, ratios in one run.

    python -m benchmarks.memory_auto [--repeats 15] [--only heat] [--quick]

For every workload (benchmarks/workloads/) whose kernel has a loop that "auto" may checkpoint
(explain's `checkpointed` is not empty), prints what "auto" chose and why, then times the
gradient's compiled entry with the full tape and under "auto" in rotating order within each
repeat (each the best of as many calls as take about 10 ms, at most 20, on buffers reset
before each call) and prints the per-repeat ratios auto / full tape and
their median. With --segments also "auto" as a machine with a slow memory (0.1 GB/s) would
choose it: segments wherever the full tape exceeds half the last-level cache, to show what the
choice avoids. The gradients are compared first (equal to 1e-12). The load average is printed
before and after: on a shared machine the absolute times move, the ratios less.
"""
from __future__ import annotations

import argparse
import importlib
import os
import time

import numpy as np

from enzyme_py import compile_gradient, explain
from enzyme_py.modes.memory import auto_budget, cache_size, memory_bandwidth
from ir_passes import memory_option

from .workloads import ORDER


def entry(inst, memory):
    grad = compile_gradient(inst.kernel, *inst.annotated(), memory=memory).entry
    shadows = [s for s in inst.shadows if s is not None]

    def call():
        inst.derivs = grad(*inst.values, *shadows, inst.seed)
    return call


def timed(inst, call, inner: int) -> float:
    """The best of `inner` calls, each on reset buffers."""
    best = float("inf")
    for _ in range(inner):
        inst.reset()
        t = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t)
    return best


def measure(name: str, repeats: int, quick: bool, segments: bool) -> None:
    mod = importlib.import_module(f".workloads.{name}", __package__)
    inst = mod.setup(quick=quick)
    loops = explain(inst.kernel, *inst.annotated(), memory="auto").checkpointed
    if not loops:
        print(f"{name}: no loop that memory='auto' may checkpoint")
        return
    inst.reset()
    configs = {"tape": "tape", "auto": "auto"}
    if segments:
        configs["segments"] = memory_option("auto", auto_budget(), cache_size(), 10**8)
    calls = {m: entry(inst, v) for m, v in configs.items()}
    out = {}
    for m, call in calls.items():
        inst.reset()
        call()
        out[m] = inst.grad_vector().copy()
    same = all(np.allclose(v, out["tape"], rtol=1e-12, atol=1e-300) for v in out.values())
    print(f"{name} ({inst.note}): gradients equal: {same}")
    for c in loops:
        print(f"  {c}")
    if segments:
        print(f"  segments: {explain(inst.kernel, *inst.annotated(), memory=configs['segments']).checkpointed[0]}")
    times = {m: [] for m in list(calls) + ["primal"]}
    order = list(calls)
    inner = max(1, min(20, int(0.01 / max(timed(inst, calls["tape"], 3), 1e-6))))
    for r in range(repeats):
        for m in order[r % len(order):] + order[:r % len(order)]:
            times[m].append(timed(inst, calls[m], inner))
        times["primal"].append(timed(inst, inst.primal, inner))
    ms = {m: 1e3 * np.median(v) for m, v in times.items()}
    print(f"  median ms: primal {ms['primal']:.3g}; " + ", ".join(
        f"{m} {ms[m]:.3g} (grad/primal {ms[m] / ms['primal']:.2f})" for m in calls))
    for m in order[1:]:
        ratios = np.array(times[m]) / np.array(times["tape"])
        print(f"  {m} / full tape per repeat: {' '.join(f'{x:.2f}' for x in ratios)}; "
              f"median {np.median(ratios):.2f}")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--only", action="append")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--segments", action="store_true")
    a = p.parse_args(argv)
    print(f"last-level cache {cache_size()} B, memory bandwidth {memory_bandwidth() / 1e9:.1f} GB/s; "
          f"load average {os.getloadavg()[0]:.2f}")
    for name in a.only or ORDER:
        try:
            measure(name, a.repeats, a.quick, a.segments)
        except Exception as e:      # a workload that cannot run here (data missing) is named
            print(f"{name}: not measured: {type(e).__name__}: {e}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    for var in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    main()
