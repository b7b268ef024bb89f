"""Errors a user can act on."""
from __future__ import annotations


class UnsupportedError(Exception):
    """A construct enzyme_py cannot differentiate.

    `construct` says what it is in plain words, `instruction` is the LLVM text, and `location` is
    the source (file, line) from debug info when there is one.
    """

    def __init__(self, construct: str, instruction: str = "", location=None, hint: str = ""):
        self.construct, self.instruction, self.location, self.hint = construct, instruction, location, hint
        msg = construct
        if location:
            msg += f" at {location[0]}:{location[1]}"
        if instruction:
            msg += f"\n  LLVM instruction: {instruction.strip()}"
        if hint:
            msg += f"\n  {hint}"
        super().__init__(msg)
