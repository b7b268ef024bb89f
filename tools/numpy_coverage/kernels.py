"""Build one @njit kernel per catalog entry from its expression. The kernel's parameters are the
entry's input names (inputs.py); it returns the float the expression computes. `W(r)` weighs an
array's elements with distinct weights, so a gradient that permutes or drops elements shows."""
import numpy as np
from numba import njit


@njit
def W(r):
    f = r.ravel()
    s = 0.0
    for i in range(f.size):
        s += f[i] * (1.0 + 0.25 * i)
    return s


def build(name, expr, params):
    """The @njit kernel `def cov_<name>(<params>): <expr>`, returning the last line's value."""
    fname = "cov_" + "".join(c if c.isalnum() else "_" for c in name)
    *body, last = expr.split("\n")
    lines = [f"def {fname}({', '.join(params)}):"] + ["    " + b for b in body] + ["    return " + last]
    src = "\n".join(lines) + "\n"
    scope = {"np": np, "W": W}
    exec(compile(src, f"<numpy_coverage {name}>", "exec"), scope)
    return njit(scope[fname])
