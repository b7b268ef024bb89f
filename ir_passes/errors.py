"""Errors: what a user can act on, and what is a bug of ir_passes."""
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


class InternalError(Exception):
    """A bug of ir_passes, not a property of the user's code: a state the transforms should never
    reach. The message asks the user to report the kernel that led there."""

    def __init__(self, what: str, instruction: str = ""):
        self.what, self.instruction = what, instruction
        msg = f"internal error: {what}"
        if instruction:
            msg += f"\n  LLVM instruction: {instruction.strip()}"
        msg += ("\n  This is a bug of the differentiation, not of your code: please report it "
                "with the kernel and the arguments that led here.")
        super().__init__(msg)
