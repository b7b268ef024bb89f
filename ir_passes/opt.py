"""Run passes on a .ll file: `python -m ir_passes.opt -p reverse-mode --activity dup,const in.ll`.

Without passes it round-trips the file through the parser and printer.
"""
from __future__ import annotations

import argparse
import sys

from .ir.parser import parse_module
from .ir.printer import print_module
from .passes import PASSES


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ir_passes.opt")
    ap.add_argument("input", help=".ll file, or - for standard input")
    ap.add_argument("-p", "--passes", default="", help="comma-separated: reverse-mode, forward-mode, hoist-loads, forward-stores, fold-sign-tests, simplify, print")
    ap.add_argument("--fn", default="", help="the function to work on (default: the first defined)")
    ap.add_argument("--activity", default="", help="per parameter: const, dup or active")
    ap.add_argument("--cache", default="auto", choices=["auto", "minimal", "always"])
    ap.add_argument("--noalias", action="store_true", help="distinct pointer parameters never overlap")
    ap.add_argument("--nonnegative", default="", help="with -p fold-sign-tests: parameter indices >= 0")
    ap.add_argument("--width", type=int, default=1, help="with -p forward-mode: tangents per value")
    ap.add_argument("--libmvec", default="", help="with -p reverse-mode/forward-mode: ISA letters "
                    "(b, c, d, e) whose libmvec variants the rules' math calls may use")
    ap.add_argument("--what", default="loops", help="with -p print: dominators, loops, types, activity")
    args = ap.parse_args(argv)
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    module = parse_module(text)
    activity = tuple(a for a in args.activity.split(",") if a)
    out = None
    for name in [p for p in args.passes.split(",") if p]:
        cls = PASSES[name]
        if name == "reverse-mode":
            p = cls(fn=args.fn, activity=activity, cache=args.cache, noalias=args.noalias,
                    libmvec=args.libmvec)
        elif name == "forward-mode":
            p = cls(fn=args.fn, activity=activity, width=args.width, libmvec=args.libmvec)
        elif name in ("hoist-loads", "forward-stores"):
            p = cls(fn=args.fn, noalias=args.noalias)
        elif name == "fold-sign-tests":
            p = cls(fn=args.fn, nonnegative=tuple(int(k) for k in args.nonnegative.split(",") if k))
        elif name == "print":
            p = cls(what=args.what, fn=args.fn, activity=activity)
        else:
            p = cls()
        out = p.apply(module)
        if out is not None and name != "print":
            module = parse_module(out)
            out = None
    sys.stdout.write(out if out is not None else print_module(module))
    return 0


if __name__ == "__main__":
    sys.exit(main())
