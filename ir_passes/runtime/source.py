"""The runtime's LLVM IR files, `ir_passes/runtime/<name>.ll`, read once.

A file is the LLVM IR of one helper concept (its functions, the globals they own, their
declarations), written for libc's malloc / realloc / free (heap.rewrite retargets it). A file
that is a template writes `{{NAME}}` where a value goes (a float type, a suffix, a function
name); `load` fills every placeholder from its keywords and refuses a missing or unused one.
Comments are free: the parser drops them. Each file has a golden test,
tests/filecheck/runtime/<name>.ll (`opt -p runtime --helpers ...`).
"""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

HERE = Path(__file__).parent
PLACEHOLDER = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")


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
