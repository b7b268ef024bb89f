"""How the Python-side AD transformation scales with the IR size (issue 7: linear time).

    python -m benchmarks.transform_scaling [--sizes 100,1000,10000] [--repeats 3] [--profile N]

Generates LLVM IR functions of about 100, 1,000 and 10,000 instructions (a chain of units:
counted loops that overwrite an array in place, which needs a tape; straight-line float code;
if/else diamonds), and times ir_passes' parse + analyses + reverse_mode synthesis + print on
each (not LLVM). Prints instructions, seconds (min over repeats), seconds per instruction and
the ratio of each size's per-instruction time to the smallest's: about 1 for every size when the
transformation is linear (a ratio near 10 at 10x the size would be quadratic). The times are CPU
seconds of this process, the best of the repeats, so a shared machine disturbs them less.
`--profile N` runs cProfile on the size-N function and prints the top entries.
"""
from __future__ import annotations

import argparse
import time

from ir_passes import parse_module, print_module, reverse_mode

HEADER = """declare double @llvm.sin.f64(double)
declare double @llvm.exp.f64(double)

define void @f(ptr noalias %x, ptr noalias %y, ptr noalias %z, i64 %n) {
entry:
  br label %u0
"""


def loop_unit(k: int, carry: str) -> tuple[list, str]:
    """z[i] = sin(x[i] * z[i]) + acc over i < n, acc carried: 16 instructions."""
    return [
        f"u{k}:",
        f"  br label %l{k}",
        f"l{k}:",
        f"  %i{k} = phi i64 [ 0, %u{k} ], [ %in{k}, %l{k} ]",
        f"  %acc{k} = phi double [ {carry}, %u{k} ], [ %accn{k}, %l{k} ]",
        f"  %px{k} = getelementptr double, ptr %x, i64 %i{k}",
        f"  %a{k} = load double, ptr %px{k}, align 8",
        f"  %pz{k} = getelementptr double, ptr %z, i64 %i{k}",
        f"  %b{k} = load double, ptr %pz{k}, align 8",
        f"  %c{k} = fmul double %a{k}, %b{k}",
        f"  %s{k} = call double @llvm.sin.f64(double %c{k})",
        f"  %d{k} = fadd double %s{k}, %acc{k}",
        f"  store double %d{k}, ptr %pz{k}, align 8",
        f"  %accn{k} = fmul double %d{k}, 5.000000e-01",
        f"  %in{k} = add i64 %i{k}, 1",
        f"  %more{k} = icmp slt i64 %in{k}, %n",
        f"  br i1 %more{k}, label %l{k}, label %e{k}",
        f"e{k}:",
        f"  br label %u{k + 1}",
    ], f"%accn{k}"


def line_unit(k: int, carry: str) -> tuple[list, str]:
    """Straight-line code on x[k % 8], stored into y[k % 8]: 12 instructions."""
    j = k % 8
    return [
        f"u{k}:",
        f"  %q{k} = getelementptr double, ptr %x, i64 {j}",
        f"  %v{k} = load double, ptr %q{k}, align 8",
        f"  %w{k} = fmul double %v{k}, {carry}",
        f"  %t{k} = fadd double %w{k}, %v{k}",
        f"  %r{k} = fdiv double %t{k}, 3.000000e+00",
        f"  %x{k} = call double @llvm.exp.f64(double %r{k})",
        f"  %h{k} = fmul double %x{k}, %t{k}",
        f"  %g{k} = fsub double %h{k}, %w{k}",
        f"  %qy{k} = getelementptr double, ptr %y, i64 {j}",
        f"  %o{k} = load double, ptr %qy{k}, align 8",
        f"  %p{k} = fadd double %o{k}, %g{k}",
        f"  store double %p{k}, ptr %qy{k}, align 8",
        f"  br label %u{k + 1}",
    ], f"%g{k}"


def branch_unit(k: int, carry: str) -> tuple[list, str]:
    """if carry > 0: carry * carry else: -carry, joined by a phi: 7 instructions."""
    return [
        f"u{k}:",
        f"  %cmp{k} = fcmp ogt double {carry}, 0.000000e+00",
        f"  br i1 %cmp{k}, label %t{k}, label %f{k}",
        f"t{k}:",
        f"  %sq{k} = fmul double {carry}, {carry}",
        f"  br label %j{k}",
        f"f{k}:",
        f"  %ng{k} = fneg double {carry}",
        f"  br label %j{k}",
        f"j{k}:",
        f"  %ph{k} = phi double [ %sq{k}, %t{k} ], [ %ng{k}, %f{k} ]",
        f"  br label %u{k + 1}",
    ], f"%ph{k}"


UNITS = (loop_unit, line_unit, line_unit, branch_unit)   # 16 + 12 + 12 + 7 = 47 per round


def generate(target: int) -> str:
    """A function of about `target` instructions."""
    lines, carry, k, count = [], "1.000000e+00", 0, 0
    sizes = {loop_unit: 16, line_unit: 12, branch_unit: 7}
    while count + 2 < target:
        unit = UNITS[k % len(UNITS)]
        body, carry = unit(k, carry)
        lines += body
        count += sizes[unit]
        k += 1
    lines += [f"u{k}:", f"  store double {carry}, ptr %y, align 8", "  ret void", "}"]
    return HEADER + "\n".join(lines) + "\n"


def transform(text: str) -> tuple[int, str]:
    """parse + analyses + reverse mode + print; returns (instructions of f, output text)."""
    module = parse_module(text)
    n = sum(1 for _ in module.functions["f"].instructions())
    reverse_mode(module, "f", ["dup", "dup", "dup", "const"], "grad", noalias=True)
    return n, print_module(module)


def measure(target: int, repeats: int) -> tuple[int, float]:
    text = generate(target)
    best, n = float("inf"), 0
    for _ in range(repeats):
        t0 = time.process_time()
        n, _ = transform(text)
        best = min(best, time.process_time() - t0)
    return n, best


def series(sizes, repeats) -> list:
    transform(generate(50))                      # imports and first-use costs
    rows = []
    for s in sizes:
        n, t = measure(s, repeats if s <= 2000 else max(1, repeats - 1))
        rows.append((n, t, t / n))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.transform_scaling")
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", type=int, default=0, help="cProfile the function of this size")
    args = ap.parse_args(argv)
    if args.profile:
        import cProfile
        import pstats
        text = generate(args.profile)
        transform(text)
        prof = cProfile.Profile()
        prof.runcall(transform, text)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0
    rows = series([int(s) for s in args.sizes.split(",")], args.repeats)
    base = rows[0][2]
    print(f"{'instructions':>12} {'seconds':>9} {'us/instruction':>15} {'ratio':>6}")
    for n, t, per in rows:
        print(f"{n:>12} {t:>9.3f} {per * 1e6:>15.1f} {per / base:>6.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
