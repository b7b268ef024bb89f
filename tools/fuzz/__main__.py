"""python -m tools.fuzz --n 10000 --seed S   (see `--help`)."""
import argparse
import os
import signal
import sys
import tempfile

import numpy as np

from . import parallel
from .campaign import all_rule_keys, run_campaign, write_summary
from .checker import Settings, check_program
from .generator import PROFILES, generate
from .program import render
from .shrinker import shrink_failures


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m tools.fuzz",
        description="Differential fuzzing of enzyme_py: random Numba kernels, reverse-mode "
                    "gradients checked against finite differences.")
    ap.add_argument("--n", type=int, default=1000, help="kernels to generate (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="campaign seed (kernel i has seed "
                    "SEED*1000000+i)")
    ap.add_argument("--start", type=int, default=0, help="skip kernels 0..START-1 (resume a "
                    "campaign)")
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (default: CPU count)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per kernel before it "
                    "counts as a 'timeout' failure")
    ap.add_argument("--recycle", type=int, default=250, help="restart a worker after this many "
                    "kernels (Numba never frees compiled code)")
    ap.add_argument("--out", default=None, help="directory for results.jsonl, summary.json and "
                    "shrunk reproducers (default: a new temporary directory)")
    ap.add_argument("--shrink", type=int, default=5, metavar="K", help="shrink up to K failures "
                    "(the first of each category first) into regression tests (default 5; 0: off)")
    ap.add_argument("--profile", choices=sorted(PROFILES), default="default",
                    help="generator preset (tools.fuzz.generator.PROFILES)")
    ap.add_argument("--forward", choices=["auto", "on", "off"], default="auto",
                    help="forward-vs-reverse checks (auto: when mode=Forward is implemented)")
    ap.add_argument("--one", type=int, metavar="SEED", help="check one kernel in this process, "
                    "print its source and outcome")
    ap.add_argument("--show", type=int, metavar="SEED", help="print one kernel's source")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)

    settings = Settings(forward={"auto": None, "on": True, "off": False}[args.forward])
    config = PROFILES[args.profile]

    if args.show is not None or args.one is not None:
        seed = args.show if args.show is not None else args.one
        prog = generate(seed, config)
        if config.parallel:
            print(parallel.render(prog))
        elif config.exits:
            print(prog.source + f"# stop={prog.stop} lo={prog.lo} n={prog.n} marker={prog.marker}")
        elif config.complex_data:
            print(prog.source + f"# n={prog.n} steps={prog.steps}")
        elif config.containers:
            print(prog.source + "".join(f"# {a.name}: {a.kind} {a.value!r}\n" for a in prog.args)
                  + f"# seed={prog.ret_seed!r}")
        else:
            print(render(prog))
        own_source = config.exits or config.complex_data or config.containers
        for p in prog.used_params() if config.parallel else [] if own_source else prog.params:
            print(f"# {p.name}: {p.kind} {p.ann} {p.dtype} {p.layout} "
                  f"{'dims=' + str(p.dims) if hasattr(p, 'dims') else np.shape(p.value)}")
        if args.one is not None:
            out = check_program(prog, settings)
            print(f"# outcome: {out.status} {out.category} ({out.seconds:.2f} s)")
            if out.detail:
                print(out.detail)
        return 0

    out_dir = args.out or tempfile.mkdtemp(prefix=f"tools_fuzz_s{args.seed}_")
    os.makedirs(out_dir, exist_ok=True)
    print(f"tools.fuzz: {args.n} kernels, seed {args.seed}, results in {out_dir}", file=sys.stderr)

    def _term(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt
    signal.signal(signal.SIGINT, _term)
    signal.signal(signal.SIGTERM, _term)
    summary = run_campaign(args.n, args.seed, jobs=args.jobs or None, settings=settings,
                           config=config, timeout=args.timeout, recycle=args.recycle, out_dir=out_dir,
                           progress=not args.quiet, start=args.start)
    text = summary.format(all_rule_keys())
    print(text)
    write_summary(summary, out_dir, "summary")
    if summary.interrupted:
        return 130

    if args.shrink and summary.failures:
        written = shrink_failures(summary, out_dir, args.shrink, settings=settings, config=config,
                                  timeout=args.timeout,
                                  command=" ".join(["python -m tools.fuzz"] + (argv or sys.argv[1:])))
        for path in written:
            print(f"reproducer: {path}")
    return 1 if summary.failures else 0


if __name__ == "__main__":
    sys.exit(main())
