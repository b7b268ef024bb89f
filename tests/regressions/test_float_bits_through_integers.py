"""A float whose bits go through integer operations and back (a float64 moved as two 32-bit
halves, as a warp shuffle the float-shuffles pass does not recognise would move it) built a
reverse-mode gradient that silently missed the derivative along that path: only `bitcast` carried
the float's activity to the integers, the `trunc` / `lshr` / `or` after it did not. Reverse mode
now refuses it (analysis/activity.py, check_float_bits), as forward mode refuses the `trunc`;
the same copy through a float keeps its derivative."""
import pytest

from ir_passes import UnsupportedError, parse_module, reverse_mode

# y[0] = x[0] * (x[0]'s bits split in halves and joined again)
SPLIT = """
define void @f(ptr noalias %x, ptr noalias %y) {
entry:
  %v = load double, ptr %x
  %bits = bitcast double %v to i64
  %lo = trunc i64 %bits to i32
  %hi.w = lshr i64 %bits, 32
  %hi = trunc i64 %hi.w to i32
  %lo.z = zext i32 %lo to i64
  %hi.z = zext i32 %hi to i64
  %hi.s = shl i64 %hi.z, 32
  %joined = or i64 %hi.s, %lo.z
  %w = bitcast i64 %joined to double
  %p = fmul double %v, %w
  store double %p, ptr %y
  ret void
}
"""


def test_bits_rejoined_are_refused():
    module = parse_module(SPLIT)
    with pytest.raises(UnsupportedError, match="bits of differentiable float data"):
        reverse_mode(module, "f", ["dup", "dup"], "df")


def test_bits_tested_only_are_accepted():
    """An integer view that only decides (a sign test) carries no derivative and is fine."""
    text = SPLIT.replace("%w = bitcast i64 %joined to double", "%neg = icmp slt i64 %bits, 0\n"
                         "  %w = select i1 %neg, double -1.0, double 1.0")
    reverse_mode(parse_module(text), "f", ["dup", "dup"], "df")
