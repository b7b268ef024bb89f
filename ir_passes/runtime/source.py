"""The runtime's LLVM IR files, `ir_passes/runtime/<name>.ll`, read once.

A file is the LLVM IR of one helper concept (its functions, the globals they own, their
declarations), written for libc's malloc / realloc / free (heap.rewrite retargets it). A file
that is a template writes `{{NAME}}` where a value goes (a float type, a suffix, a function
name); `load` fills every placeholder from its keywords and refuses a missing or unused one.
Comments are free: the parser drops them. Each file has a golden test,
tests/filecheck/runtime/<name>.ll (`opt -p runtime --helpers ...`).

A file of pieces (matrix_grids.ll) is split by `sections` at lines `; -- <key>`; `fill` fills
the placeholders of a text with values that may bring in placeholders of their own. A host's own
file of pieces is read by `read_pieces` (its path), filled the same way.
"""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent
PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")
SECTION = re.compile(r"^; -- (\S+)[ \t]*$", re.M)


@cache
def _read(name: str) -> str:
    return (HERE / f"{name}.ll").read_text()


def placeholders(name: str) -> set:
    """The placeholder names of runtime file `name`."""
    return set(PLACEHOLDER.findall(_read(name)))


def load(name: str, **values) -> str:
    """The text of runtime file `name` with each `{{KEY}}` replaced by str(values[KEY])."""
    wanted = placeholders(name)
    if wanted != set(values):
        raise KeyError(f"runtime/{name}.ll takes {sorted(wanted)}, given {sorted(values)}")
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), _read(name))


def files() -> list:
    """The names of the runtime's .ll files."""
    return sorted(p.stem for p in HERE.glob("*.ll"))


def sections(name: str) -> dict:
    """{key: text} of runtime file `name`, a file of pieces each after a line `; -- <key>`; comment
    and blank lines are dropped."""
    return split(_read(name))


@cache
def read_pieces(path: str | Path) -> dict:
    """`sections` of the .ll file at `path` (a host's own file of pieces)."""
    return split(Path(path).read_text())


def split(text: str) -> dict:
    """{key: text} of the pieces of `text`, each after a line `; -- <key>` (comment and blank lines
    dropped)."""
    parts = SECTION.split(text)
    return {key: "\n".join(line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(";"))
            for key, text in zip(parts[1::2], parts[2::2])}


def fill(text: str, **values) -> str:
    """`text` with each `{{KEY}}` replaced by str(values[KEY]), again in what they bring in, until
    none is left (unused values are allowed)."""
    while PLACEHOLDER.search(text):
        text = PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), text)
    return text

