"""Rules for float arithmetic, casts and select. See registry.py for the contract."""
from ..ir.values import ConstFloat
from .registry import define


define("fadd", lambda b, d, x, y: d, lambda b, d, x, y: d, zero_guard="never")
define("fsub", lambda b, d, x, y: d, lambda b, d, x, y: b.fneg(d), zero_guard="never")
define("fmul", lambda b, d, x, y: b.fmul(d, x[1]), lambda b, d, x, y: b.fmul(d, x[0]),
       zero_guard="operands")
def _fdiv_divisor(b, d, x, y):
    """d * -a/c^2 = -(d/c) * y; for a reciprocal (a = 1, y = 1/c) -(d*y)*y needs no division."""
    a = x[0]
    if isinstance(a, ConstFloat) and a.value == 1.0:
        return b.fneg(b.fmul(b.fmul(d, y), y))
    return b.fneg(b.fmul(b.fdiv(d, x[1]), y))


define("fdiv", lambda b, d, x, y: b.fdiv(d, x[1]), _fdiv_divisor)
define("fneg", lambda b, d, x, y: b.fneg(d), zero_guard="never")
# fmod(a, c) = a - c * trunc(a / c)
define("frem",
       lambda b, d, x, y: d,
       lambda b, d, x, y: b.fneg(b.fmul(d, b.intrinsic("trunc", [b.fdiv(x[0], x[1])]))))
define("fpext", lambda b, d, x, y: b.cast("fptrunc", d, x.operand_type(0)),
       zero_guard="never")
define("fptrunc", lambda b, d, x, y: b.cast("fpext", d, x.operand_type(0)),
       zero_guard="never")
define("select",
       None,
       lambda b, d, x, y: b.select(x[0], d, b.fconst(d.type, 0.0)),
       lambda b, d, x, y: b.select(x[0], b.fconst(d.type, 0.0), d), zero_guard="never")
define("freeze", lambda b, d, x, y: d, zero_guard="never")
