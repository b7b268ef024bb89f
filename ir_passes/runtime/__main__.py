"""`python -m ir_passes.runtime FILE[:SECTION] KEY=VALUE ...`: print a runtime file (or one section
of a file of pieces) filled with the values (`KEY=piece:NAME`: section NAME of the same file): the
golden tests of the templates that no helper name reaches (tests/filecheck/runtime/
checkpoint_split.ll). FILE may be the path of a host's own file of pieces (`PATH.ll:SECTION`,
tests/filecheck/host/)."""
import sys

from .source import fill, load, read_pieces, sections


def main(argv=None) -> int:
    args = sys.argv[1:] if argv is None else argv
    name, _, section = args[0].partition(":")
    values = dict(a.split("=", 1) for a in args[1:])
    if section:
        pieces = read_pieces(name) if name.endswith(".ll") else sections(name)
        values = {k: pieces[v[6:]] if v.startswith("piece:") else v for k, v in values.items()}
        print(fill(pieces[section], **values))
    else:
        print(load(name, **values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
