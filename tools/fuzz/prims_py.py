"""The traced copy of a kernel runs as plain Python with these stand-ins for `prims` and these
recorders. It only decides whether finite differences are trustworthy, so it need not be
bit-identical to Numba (float32 promotion rules differ slightly between NumPy and Numba; a
decision that rounding could flip is close enough to its boundary to be caught by the
perturbation test anyway).

`Trace` collects, during one run:
- `decisions`: every discrete decision in order (comparison outcomes, signs taken by abs and
  copysign, which side min/max picked, integer parts of floor/rint/modulo, float->int values,
  the position of np.max/np.min);
- `maxabs`: the largest magnitude assigned or stored; `nonfinite`: how many non-finite values;
- `margin`: the smallest relative distance of an argument to the edge of its function's domain
  (log, sqrt, asin, tan poles, cbrt at 0, ...), and `den`: the smallest |denominator|.
"""
import math

import numpy as np


class Trace:
    __slots__ = ("decisions", "maxabs", "nonfinite", "margin", "den")

    def __init__(self):
        self.decisions = []
        self.maxabs = 0.0
        self.nonfinite = 0
        self.margin = math.inf
        self.den = math.inf


# stand-ins for the intrinsics of prims ---------------------------------------------------------

def fma(a, b, c):
    return np.float64(a) * np.float64(b) + np.float64(c)


fmuladd = fma


def minnum(a, b):
    return np.fmin(np.float64(a), np.float64(b))


def maxnum(a, b):
    return np.fmax(np.float64(a), np.float64(b))


def exp10(a):
    return np.float64(10.0) ** np.float64(a)


def nearbyint(a):
    return np.rint(np.float64(a))


roundeven = nearbyint


def llvm_round(a):
    a = np.float64(a)
    return np.copysign(np.floor(np.abs(a) + 0.5), a)


def powi(a, n):
    return np.float64(a) ** n


def libm_cbrt(a):
    return np.cbrt(np.float64(a))


def libm_exp(a):
    return np.exp(np.float64(a))


# recorders ---------------------------------------------------------------------------------------

def _ipart(q):
    q = float(q)
    if q != q:
        return "nan"
    if abs(q) > 1e15:
        return "big" if q > 0 else "-big"
    return int(q)


def t_cmp(a, b, code, tr):
    if code == 0:
        r = a < b
    elif code == 1:
        r = a <= b
    elif code == 2:
        r = a > b
    else:
        r = a >= b
    r = bool(r)
    tr.decisions.append(r)
    return r


def _sign(a):
    return 1 if a > 0 else (2 if a < 0 else 3)


def t_sign(a, tr):
    tr.decisions.append(_sign(a))
    return a


def t_floor(a, tr):
    tr.decisions.append(_ipart(np.floor(a)))
    return a


def t_ceil(a, tr):
    tr.decisions.append(_ipart(np.ceil(a)))
    return a


def t_trunc(a, tr):
    tr.decisions.append(_ipart(np.trunc(a)))
    return a


def t_rint(a, tr):
    tr.decisions.append(_ipart(np.floor(2.0 * a)))
    return a


def t_copysign(a, b, tr):
    tr.decisions.append((_sign(a), _sign(b)))
    return math.copysign(a, b)


def _order(a, b):
    return 1 if a < b else (2 if a > b else 3)


def t_min(a, b, tr):
    tr.decisions.append(_order(a, b))
    return min(a, b)


def t_max(a, b, tr):
    tr.decisions.append(_order(a, b))
    return max(a, b)


def t_fmin(a, b, tr):
    tr.decisions.append(_order(a, b))
    return np.fmin(a, b)


def t_fmax(a, b, tr):
    tr.decisions.append(_order(a, b))
    return np.fmax(a, b)


def t_minnum(a, b, tr):
    tr.decisions.append(_order(a, b))
    return minnum(a, b)


def t_maxnum(a, b, tr):
    tr.decisions.append(_order(a, b))
    return maxnum(a, b)


def t_fmod(a, b, tr):
    if b == 0:
        raise ZeroDivisionError("fmod by zero")
    tr.decisions.append(_ipart(np.trunc(a / b)))
    return np.fmod(a, b)


def t_mod(a, b, tr):
    if b == 0:
        raise ZeroDivisionError("modulo by zero")
    r = a % b
    tr.decisions.append(_ipart((a - r) / b))
    return r


def t_int(v, tr):
    tr.decisions.append(v)
    return v


def t_argmax(v, a, tr):
    tr.decisions.append(("argmax", int(np.argmax(a))))
    return v


def t_argmin(v, a, tr):
    tr.decisions.append(("argmin", int(np.argmin(a))))
    return v


def t_float(v):
    """Numba's float() keeps a float32 a float32."""
    return v if isinstance(v, np.float32) else np.float64(v)


def t_val(v, tf):
    if isinstance(v, complex):
        raise ValueError("math domain error (fuzz: complex value)")
    av = abs(float(v))
    if av != av or av == math.inf:
        tf.nonfinite += 1
    elif av > tf.maxabs:
        tf.maxabs = av
    return v


def _margin(m, tf):
    m = float(m)
    if not (m >= tf.margin):
        tf.margin = m
    if not (m > 0):
        # outside the domain: Numba computes NaN, Python may raise or go complex; either way the
        # run is discarded (near_singularity), so stop here
        raise ValueError("math domain error (fuzz: argument outside the domain)")


def t_pos(a, lo, tf):
    _margin((a - lo) / (1.0 + abs(a)), tf)
    return a


def t_unit(a, tf):
    _margin(1.0 - abs(a), tf)
    return a


def t_nz(a, tf):
    _margin(abs(a), tf)
    return a


def t_tan(a, tf):
    _margin(abs(math.cos(a)), tf)
    return a


def t_hyp(a, b, tf):
    _margin(abs(a) + abs(b), tf)
    return a


def t_den(b, tf):
    ab = abs(b)
    if isinstance(ab, complex):
        raise ValueError("math domain error (fuzz: complex value)")
    ab = float(ab)
    if not (ab >= tf.den):
        tf.den = ab
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return b
