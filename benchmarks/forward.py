"""Forward mode: cost against the primal, and batched shadows against separate calls.

Run: python -m benchmarks.forward [--quick] [--only NAME ...] [--width 8] [--reverse]

For each workload (benchmarks/workloads), with every Duplicated array and Active scalar given a
random direction, through the compiled @njit entries (no Python-side validation):
- primal: the plain kernel;
- forward: one forward-mode call (one direction); reported as a ratio to the primal;
- k separate: k forward calls, one direction each;
- batched: one call with k directions (BatchDuplicated), and its ratio to k separate calls.
Every timed call starts from the same state (arrays are reset outside the timed region).
The batched tangents are checked against the separate ones before timing.

With --reverse, the same for reverse mode: one gradient (one seed), k separate gradients, and one
batched reverse call with k seeds (enzyme_py/modes/batched.py).
"""
from __future__ import annotations

import argparse
import importlib
import statistics
import time

import numpy as np

from enzyme_py import Active, BatchDuplicated, Const, Duplicated
from enzyme_py.modes.forward import compile_forward

from .workloads import ORDER


def median_time(fn, reset, repeats, budget=2.0):
    times, start = [], time.perf_counter()
    for k in range(repeats + 2):
        reset()
        t0 = time.perf_counter()
        fn()
        t1 = time.perf_counter()
        if k >= 2:
            times.append(t1 - t0)
        if t1 - start > budget and len(times) >= 3:
            break
    return statistics.median(times)


class Setup:
    """Buffers for one workload: primal values, and per direction the shadows/tangents."""

    def __init__(self, inst, width, rng):
        self.inst, self.width = inst, width
        self.init = [np.array(a.init, copy=True) if isinstance(a.init, np.ndarray) else a.init
                     for a in inst.spec]
        self.values = [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in self.init]
        self.dirs = []
        for a in inst.spec:
            if a.kind == "dup":
                self.dirs.append([rng.standard_normal(np.shape(a.init)) for _ in range(width)])
            elif a.kind == "active":
                self.dirs.append([float(rng.standard_normal()) for _ in range(width)])
            else:
                self.dirs.append(None)
        self.shadows = [[d.copy() for d in ds] if ds is not None and isinstance(ds[0], np.ndarray)
                        else None for ds in self.dirs]

    def reset(self):
        for v, i in zip(self.values, self.init):
            if isinstance(v, np.ndarray):
                np.copyto(v, i)
        for s, ds in zip(self.shadows, self.dirs):
            if s is not None:
                for x, d in zip(s, ds):
                    np.copyto(x, d)

    def annotated(self, lanes):
        out = []
        for a, v, s, ds in zip(self.inst.spec, self.values, self.shadows, self.dirs):
            if a.kind == "dup":
                out.append(BatchDuplicated(v, tuple(s[j] for j in lanes)) if len(lanes) > 1
                           else Duplicated(v, s[lanes[0]]))
            elif a.kind == "active":
                out.append(Active(v, tuple(ds[j] for j in lanes)) if len(lanes) > 1
                           else Active(v, ds[lanes[0]]))
            else:
                out.append(Const(v))
        return out

    def call_args(self, lanes):
        shadows = [s[j] for a, s in zip(self.inst.spec, self.shadows) if a.kind == "dup" for j in lanes]
        tangents = [ds[j] for a, ds in zip(self.inst.spec, self.dirs) if a.kind == "active" for j in lanes]
        return [*self.values, *shadows, *tangents]


def run(name, quick, width, repeats):
    mod = importlib.import_module(f"benchmarks.workloads.{name}")
    inst = mod.setup(quick=quick)
    if not getattr(inst, "spec", None):
        return None       # not one kernel with annotated arguments (ba: a Jacobian workload)
    s = Setup(inst, width, np.random.default_rng(0))
    one = compile_forward(inst.kernel, *s.annotated([0])).entry
    many = compile_forward(inst.kernel, *s.annotated(list(range(width)))).entry
    # the batched tangents equal the separate ones
    s.reset()
    separate = []
    for j in range(width):
        s.reset()
        t = one(*s.call_args([j]))[1][0]
        separate.append((t, [np.array(x[j]) for x in s.shadows if x is not None]))
    s.reset()
    tb = many(*s.call_args(list(range(width))))[1]
    worst = 0.0
    for j, (t, arrays) in enumerate(separate):
        worst = max(worst, abs(tb[j] - t) / max(1.0, abs(t)))
        for x, y in zip([x[j] for x in s.shadows if x is not None], arrays):
            worst = max(worst, float(np.max(np.abs(x - y), initial=0.0) / max(1.0, np.max(np.abs(y), initial=0.0))))
    t_primal = median_time(lambda: inst.kernel(*s.values), s.reset, repeats)
    t_one = median_time(lambda: one(*s.call_args([0])), s.reset, repeats)

    def separate_calls():
        for j in range(width):
            one(*s.call_args([j]))
    t_sep = median_time(separate_calls, s.reset, repeats)
    t_batch = median_time(lambda: many(*s.call_args(list(range(width)))), s.reset, repeats)
    return dict(name=name, primal=t_primal, forward=t_one, separate=t_sep, batched=t_batch, worst=worst)


def run_reverse(name, quick, width, repeats):
    from enzyme_py import compile_gradient
    from enzyme_py.arguments import zeros_like_layout
    from enzyme_py.modes.batched import autodiff as batched_autodiff
    from enzyme_py.modes.batched import compile_batched
    mod = importlib.import_module(f"benchmarks.workloads.{name}")
    inst = mod.setup(quick=quick)
    if not getattr(inst, "spec", None):
        return None
    s = Setup(inst, width, np.random.default_rng(0))
    rets = tuple(float(t) for t in np.random.default_rng(1).standard_normal(width))
    plain = []
    for a, v in zip(inst.spec, s.values):
        plain.append(Duplicated(v, np.zeros_like(v)) if a.kind == "dup" else
                     Active(v) if a.kind == "active" else Const(v))
    one = compile_gradient(inst.kernel, *plain).entry
    batched = [BatchDuplicated(v, tuple(x)) if a.kind == "dup" else
               (Active(v) if a.kind == "active" else Const(v))
               for a, v, x in zip(inst.spec, s.values, s.shadows)]
    s.reset()
    batched_autodiff(inst.kernel, *batched, seed=rets)          # builds it
    c = compile_batched(inst.kernel, *batched)                  # the one just built
    scratch = [zeros_like_layout(v) for a, v in zip(inst.spec, s.values) if a.kind == "dup"]

    def one_call(j):
        one(*s.values, *[x[j] for a, x in zip(inst.spec, s.shadows) if a.kind == "dup"], rets[j])

    def many():
        for x in scratch:
            x.fill(0.0)
        c.entry(*s.values, *scratch, *[x[j] for a, x in zip(inst.spec, s.shadows) if a.kind == "dup"
                                       for j in range(width)], *rets)
    dups = [x for a, x in zip(inst.spec, s.shadows) if a.kind == "dup"]
    separate = []
    for j in range(width):
        s.reset()
        one_call(j)
        separate.append([np.array(x[j]) for x in dups])
    s.reset()
    many()
    worst = max(float(np.max(np.abs(x[j] - e), initial=0.0) / max(1.0, np.max(np.abs(e), initial=0.0)))
                for j in range(width) for x, e in zip(dups, separate[j]))
    t_primal = median_time(lambda: inst.kernel(*s.values), s.reset, repeats)
    t_one = median_time(lambda: one_call(0), s.reset, repeats)

    def separate_calls():
        for j in range(width):
            one_call(j)
    t_sep = median_time(separate_calls, s.reset, repeats)
    t_batch = median_time(many, s.reset, repeats)
    return dict(name=name, primal=t_primal, forward=t_one, separate=t_sep, batched=t_batch, worst=worst)


def fmt(t):
    return f"{t * 1e6:10.1f} us" if t < 1e-3 else f"{t * 1e3:10.3f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.forward")
    ap.add_argument("--quick", action="store_true", help="small sizes")
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--reverse", action="store_true", help="batched reverse mode instead")
    args = ap.parse_args(argv)
    names = args.only or ORDER
    k = args.width
    one = "gradient" if args.reverse else "forward"
    print(f"{'workload':12} {'primal':>13} {one:>13} {one[:4] + '/primal':>10} "
          f"{f'{k} separate':>13} {f'width {k}':>13} {'batch/sep':>9}  max |batched - separate|")
    for name in names:
        try:
            r = (run_reverse if args.reverse else run)(name, args.quick, k, args.repeats)
        except Exception as exc:  # noqa: BLE001 - report and go on
            print(f"{name:12} failed: {type(exc).__name__}: {str(exc).splitlines()[0][:100]}")
            continue
        if r is None:
            print(f"{name:12} skipped: not a single annotated kernel")
            continue
        print(f"{name:12} {fmt(r['primal'])} {fmt(r['forward'])} {r['forward'] / r['primal']:10.2f} "
              f"{fmt(r['separate'])} {fmt(r['batched'])} {r['batched'] / r['separate']:9.2f}  "
              f"{r['worst']:.1e}")


if __name__ == "__main__":
    main()
