"""Checkpointed time loops against the full tape, ratios measured in one run (issue 19).

    python -m benchmarks.checkpointing [--quick] [--rounds 5] [--plot docs/checkpointing.svg]

- heat (benchmarks/workloads/heat.py), 100,000 points x 100 steps: the gradient with the full
  tape, with a budget of a tenth of that tape, and with memory="auto"; then the time against the
  budget, written as an SVG plot with --plot;
- the RNN workload (benchmarks/workloads/rnn.py) over 10,000 steps: full tape against a budget
  of a tenth of its tape.
The full tape's size is explain's figure for these arguments. Each time is the best of
`--rounds` rounds in which every configuration runs once in turn (so that a change in the load
of a shared machine touches them alike), on buffers reset between calls. The load average is
printed before and after. Targets (the issue's): heat at a tenth <= 1.5x, heat "auto" <= 1.0x, RNN at a tenth
<= 2x the full tape's time. On a machine shared with other work the ratios move by 10-20%.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from enzyme_py import Active, Duplicated, autodiff, explain

from .workloads import heat, rnn


def interleaved(runs: dict, rounds: int) -> dict:
    """The best time of each run (name -> (Case, memory)) over `rounds` rounds that call every
    run once in turn, so that a change in the machine's load touches them all alike."""
    for case, memory in runs.values():
        case.reset()
        case.grad(memory)()       # compile
    out = {name: [] for name in runs}
    for _ in range(rounds):
        for name, (case, memory) in runs.items():
            case.reset()
            t = time.perf_counter()
            case.grad(memory)()
            out[name].append(time.perf_counter() - t)
    return {name: min(ts) for name, ts in out.items()}


class Case:
    """A kernel, its arguments' initial values and seeds, and buffers reset before each call."""

    def __init__(self, kernel, make):
        self.kernel, self.make = kernel, make
        self.args = make()

    def reset(self):
        for a, b in zip(self.args, self.make()):
            if isinstance(a, Duplicated):
                np.copyto(a.value, b.value)
                np.copyto(a.shadow, b.shadow)

    def grad(self, memory):
        return lambda: autodiff(self.kernel, *self.args, memory=memory)

    def tape_bytes(self) -> int:
        return explain(self.kernel, *self.make()).tape_bytes


def heat_case(n, steps):
    rng = np.random.default_rng(3)
    u0 = np.sin(np.linspace(0.0, np.pi, n)) + 0.1 * rng.standard_normal(n)
    w = rng.standard_normal(n)
    return Case(heat.kernel, lambda: [Duplicated(u0.copy(), w.copy()), Active(0.8), steps])


def rnn_case(steps, hidden=64, nin=32):
    rng = np.random.default_rng(1)
    W = rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)
    U = rng.standard_normal((hidden, nin)) / np.sqrt(nin)
    b, xs = 0.1 * rng.standard_normal(hidden), rng.standard_normal((steps, nin))
    h0, v = np.zeros(hidden), rng.standard_normal(hidden)
    return Case(rnn.kernel, lambda: [
        Duplicated(W.copy(), np.zeros_like(W)), Duplicated(U.copy(), np.zeros_like(U)), b,
        Duplicated(xs.copy(), np.zeros_like(xs)), Duplicated(h0.copy(), np.zeros(hidden)), v])


def svg_plot(points, tape_time, path) -> None:
    """Gradient time against the memory budget (log scale), the full tape's time as a line."""
    W, H, m = 520, 320, 50
    xs = [np.log10(b) for b, _ in points]
    top = max([t for _, t in points] + [tape_time]) * 1.1
    x0, x1 = min(xs), max(xs)

    def px(x, t):
        return (m + (x - x0) / max(x1 - x0, 1e-9) * (W - 2 * m), H - m - t / top * (H - 2 * m))
    line = " ".join(f"{a:.1f},{c:.1f}" for a, c in (px(x, t) for x, (_, t) in zip(xs, points)))
    ty = px(x0, tape_time)[1]
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-size="11">',
             f'<rect width="{W}" height="{H}" fill="white"/>',
             f'<line x1="{m}" y1="{H - m}" x2="{W - m}" y2="{H - m}" stroke="black"/>',
             f'<line x1="{m}" y1="{m}" x2="{m}" y2="{H - m}" stroke="black"/>',
             f'<polyline points="{line}" fill="none" stroke="steelblue" stroke-width="2"/>',
             f'<line x1="{m}" y1="{ty:.1f}" x2="{W - m}" y2="{ty:.1f}" stroke="gray" '
             'stroke-dasharray="4"/>',
             f'<text x="{W - m}" y="{ty - 4:.1f}" text-anchor="end">full tape {tape_time * 1e3:.0f} ms</text>',
             f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle">memory budget (MB, log scale)</text>',
             f'<text x="14" y="{H / 2}" transform="rotate(-90 14 {H / 2})" text-anchor="middle">'
             'gradient time (ms)</text>',
             '<text x="{0}" y="20" text-anchor="middle">heat, 100,000 points x 100 steps</text>'.format(W / 2)]
    for x, (b, t) in zip(xs, points):
        a, c = px(x, t)
        parts.append(f'<circle cx="{a:.1f}" cy="{c:.1f}" r="3" fill="steelblue"/>')
        parts.append(f'<text x="{a:.1f}" y="{H - m + 14}" text-anchor="middle">{b / 1e6:.3g}</text>')
        parts.append(f'<text x="{a:.1f}" y="{c - 6:.1f}" text-anchor="middle">{t * 1e3:.0f}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")


def load() -> str:
    return "load average %.1f %.1f %.1f" % os.getloadavg()


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--plot", default="", help="write the time-against-budget plot (SVG) here")
    a = p.parse_args(argv)
    n, steps, rnn_steps = (10_000, 20, 500) if a.quick else (100_000, 100, 10_000)
    print(f"{os.cpu_count()} cores; {load()}")

    h = heat_case(n, steps)
    tape = h.tape_bytes()
    fracs = (0.01, 0.03, 0.1, 0.3, 1.0)
    runs = {"tape": (h, "tape"), "auto": (h, "auto")}
    runs.update({f: (h, max(int(tape * f), 1)) for f in fracs})
    t = interleaved(runs, a.rounds)
    print(f"heat {n} x {steps}: full tape {tape / 1e6:.1f} MB, {t['tape'] * 1e3:.1f} ms")
    print(f"  budget {tape // 10 / 1e6:.1f} MB (a tenth): {t[0.1] * 1e3:.1f} ms, "
          f"ratio {t[0.1] / t['tape']:.2f} (target <= 1.5)")
    print(f"  auto: {t['auto'] * 1e3:.1f} ms, ratio {t['auto'] / t['tape']:.2f} (target <= 1.0)")
    points = [(max(int(tape * f), 1), t[f]) for f in fracs]
    for b, tb in points:
        print(f"  budget {b / 1e6:8.2f} MB: {tb * 1e3:.1f} ms, ratio {tb / t['tape']:.2f}")
    if a.plot:
        svg_plot(points, t["tape"], a.plot)
        print(f"  plot: {a.plot}")

    r = rnn_case(rnn_steps)
    tape = r.tape_bytes()
    t = interleaved({"tape": (r, "tape"), "tenth": (r, max(tape // 10, 1))}, a.rounds)
    print(f"rnn 64 x {rnn_steps} steps: full tape {tape / 1e6:.1f} MB, {t['tape'] * 1e3:.1f} ms")
    print(f"  budget {tape // 10 / 1e6:.2f} MB (a tenth): {t['tenth'] * 1e3:.1f} ms, "
          f"ratio {t['tenth'] / t['tape']:.2f} (target <= 2)")
    print(load())


if __name__ == "__main__":
    main()
