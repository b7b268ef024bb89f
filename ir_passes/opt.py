"""Run passes on a .ll file: `python -m ir_passes.opt -p reverse-mode --activity dup,const in.ll`.

Without passes it round-trips the file through the parser and printer. The options are those
the passes declare (passes.py): each becomes `--<field>`, and a pass gets the ones it declares.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from .ir.parser import parse_module
from .ir.printer import print_module
from .passes import PASSES


def options() -> dict:
    """{field name: its declaration} over every pass; a name shared by two passes must mean the
    same (one parse, one set of choices)."""
    out = {}
    for p in PASSES.values():
        for f in fields(p):
            meta = f.metadata
            seen = out.get(f.name)
            if seen is not None and (seen["parse"], seen["choices"]) != (meta["parse"], meta["choices"]):
                raise TypeError(f"passes declare option --{f.name} differently")
            out.setdefault(f.name, meta)
    return out


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m ir_passes.opt")
    ap.add_argument("input", help=".ll file, or - for standard input")
    ap.add_argument("-p", "--passes", default="", help="comma-separated: " + ", ".join(PASSES))
    for name, meta in options().items():
        flag = "--" + name.replace("_", "-")
        users = [p.name for p in PASSES.values() if name in {f.name for f in fields(p)}]
        text = f"{meta['help']} ({', '.join(users)})".replace("%", "%%")   # argparse formats help
        if meta["parse"] is None:
            ap.add_argument(flag, dest=name, action="store_true", default=argparse.SUPPRESS, help=text)
        else:
            ap.add_argument(flag, dest=name, default=argparse.SUPPRESS, help=text,
                            choices=meta["choices"])
    return ap


def build(name: str, given: dict):
    """The pass `name` with the options it declares that the command line gave."""
    cls = PASSES[name]
    values = {}
    for f in fields(cls):
        if f.name in given:
            parse = f.metadata["parse"]
            values[f.name] = given[f.name] if parse is None else parse(given[f.name])
    return cls(**values)


def main(argv=None) -> int:
    args = vars(parser().parse_args(argv))
    text = sys.stdin.read() if args["input"] == "-" else open(args["input"]).read()
    module = parse_module(text)
    out = None
    for name in [p for p in args["passes"].split(",") if p]:
        out = build(name, args).apply(module)
        if out is not None and name != "print":
            module = parse_module(out)
            out = None
    sys.stdout.write(out if out is not None else print_module(module))
    return 0


if __name__ == "__main__":
    sys.exit(main())
