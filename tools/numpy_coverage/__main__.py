"""python -m tools.numpy_coverage [--only NAME ...] [--out PATH]   (see --help)."""
import argparse
import sys
import time
from pathlib import Path

import numba
import numpy
import scipy

from .catalog import ALL_GROUPS
from .checks import check
from .table import render, summary

DOC = Path(__file__).resolve().parents[2] / "docs" / "numpy-coverage.md"


def _versions():
    return f"NumPy {numpy.__version__}, Numba {numba.__version__}, SciPy {scipy.__version__}"


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m tools.numpy_coverage",
        description="Differentiate one kernel per function of Numba's supported NumPy API in "
                    "reverse and forward mode against finite differences; write the table.")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="check only the functions of this name (repeatable); the table is then "
                         "printed, and written only with --out")
    ap.add_argument("--out", type=Path, help=f"where to write the table (default: {DOC} when "
                                             "every function is checked)")
    ap.add_argument("--quiet", action="store_true", help="no line per function")
    args = ap.parse_args(argv)

    groups = [(t, [e for e in es if not args.only or e.name in args.only]) for t, es in ALL_GROUPS]
    groups = [(t, es) for t, es in groups if es]
    if not groups:
        ap.error(f"no function named {args.only}")
    results = {}
    start = time.perf_counter()
    for _, entries in groups:
        for e in entries:
            t = time.perf_counter()
            results[id(e)] = check(e) if e.differentiable else None
            r = results[id(e)]
            if not args.quiet:
                line = "no derivative" if r is None else f"{r.reverse.status} / {r.forward.status}"
                print(f"{e.name:<32} {line:<20} {time.perf_counter() - t:5.1f} s", flush=True)
    text = render(groups, results, _versions())
    passed, total = summary(results.values())
    print(f"{passed} of {total} functions with a derivative pass in both modes "
          f"({time.perf_counter() - start:.0f} s)")
    out = args.out or (None if args.only else DOC)
    if out is None:
        print(text)
    else:
        out.write_text(text)
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
