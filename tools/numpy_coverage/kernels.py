"""Build one @njit kernel per catalog entry from its expression. The kernel's parameters are the
entry's input names (inputs.py); it returns the float the expression computes. `W(r)` weighs an
array's elements with distinct weights, so a gradient that permutes or drops elements shows.
For complex inputs the returned value goes through `as_real` (its real part plus 0.37 times its
imaginary part), so the kernel returns a float either way."""
import numpy as np
from numba import njit


@njit
def W(r):
    f = r.ravel()
    s = 0.0
    for i in range(f.size):
        s += f[i] * (1.0 + 0.25 * i)
    return s


@njit
def as_real(v):
    return v.real + 0.37 * v.imag


def build(name, expr, params, real=False):
    """The @njit kernel `def cov_<name>(<params>): <expr>`, returning the last line's value
    (`real`: through as_real; a parameter may be named R, as inputs.py's rectangular matrix)."""
    fname = "cov_" + "".join(c if c.isalnum() else "_" for c in name)
    *body, last = expr.split("\n")
    last = f"as_real({last})" if real else last
    lines = [f"def {fname}({', '.join(params)}):"] + ["    " + b for b in body] + ["    return " + last]
    src = "\n".join(lines) + "\n"
    scope = {"np": np, "W": W, "as_real": as_real}
    exec(compile(src, f"<numpy_coverage {name}>", "exec"), scope)
    return njit(scope[fname])
