"""Numba's complex power, `numba_cpow(a*, b*, y*)` (y = a ** b, each a {double, double}), with
a derivative.

It is a C function of Numba's helper library that reads and writes memory, so AD cannot see
through it. Before cleanup each call is sent to `enzpy.cpow`, defined in the module as

    call numba_cpow(a, b, y)                     ; through a pointer global: inactive
    y.re = ruled_re(a.re, a.im, b.re, b.im, y.re, y.im)    ; returns y.re
    y.im = ruled_im(a.re, a.im, b.re, b.im, y.re, y.im)    ; returns y.im

so the value is exactly numba_cpow's, and the two pass-through cfuncs carry the partial
derivatives of y's parts (the way rule_calls.py gives an @njit function a custom rule). With
D_a = b a^(b-1) and D_b = log(a) y (y holomorphic in a and b): d y.re = Re D da.re - Im D da.im,
d y.im = Im D da.re + Re D da.im. At a = 0, D_b is 0 (a^b is 0 nearby for Re b > 0).
"""
from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
from llvmlite import binding as llvm
from numba import float64

from ir_passes import fill_template, read_pieces, register_external

from .rule_calls import slot, slots

CALL = "@numba_cpow("
NAME = "enzpy.cpow"
CALLEE = f'@"{NAME}"('
PIECES = read_pieces(Path(__file__).with_suffix(".ll"))     # the IR of enzpy.cpow


@numba.njit(cache=False)
def _da(ar, ai, br, bi):
    a, b = complex(ar, ai), complex(br, bi)
    if b == 0:
        return 0j
    return b * a ** (b - 1.0)


@numba.njit(cache=False)
def _db(ar, ai, yr, yi):
    a = complex(ar, ai)
    if a == 0:
        return 0j
    return np.log(a) * complex(yr, yi)


_SIG = float64(float64, float64, float64, float64, float64, float64)


@numba.cfunc(_SIG)
def _ruled_re(ar, ai, br, bi, yr, yi):
    return yr


@numba.cfunc(_SIG)
def _ruled_im(ar, ai, br, bi, yr, yi):
    return yi


@numba.cfunc(_SIG)
def _re_ar(ar, ai, br, bi, yr, yi):
    return _da(ar, ai, br, bi).real


@numba.cfunc(_SIG)
def _re_ai(ar, ai, br, bi, yr, yi):
    return -_da(ar, ai, br, bi).imag


@numba.cfunc(_SIG)
def _re_br(ar, ai, br, bi, yr, yi):
    return _db(ar, ai, yr, yi).real


@numba.cfunc(_SIG)
def _re_bi(ar, ai, br, bi, yr, yi):
    return -_db(ar, ai, yr, yi).imag


@numba.cfunc(_SIG)
def _im_ar(ar, ai, br, bi, yr, yi):
    return _da(ar, ai, br, bi).imag


@numba.cfunc(_SIG)
def _im_br(ar, ai, br, bi, yr, yi):
    return _db(ar, ai, yr, yi).imag


_registered: list = []


def _register() -> tuple:
    """(numba_cpow's address, ruled_re's, ruled_im's), registered with ir_passes once."""
    if not _registered:
        cpow = llvm.address_of_symbol("numba_cpow")
        register_external(slot(cpow), [], inactive_fn=True)
        # d y.im / d a.im = Re D_a = d y.re / d a.re, and likewise for b
        register_external(slot(_ruled_re.address),
                          [_re_ar.address, _re_ai.address, _re_br.address, _re_bi.address, 0, 0])
        register_external(slot(_ruled_im.address),
                          [_im_ar.address, _re_ar.address, _im_br.address, _re_br.address, 0, 0])
        _registered.extend([cpow, _ruled_re.address, _ruled_im.address])
    return tuple(_registered)


def _definition(cpow: int, re: int, im: int) -> str:
    return slots(cpow, re, im) + fill_template(PIECES["definition"], NAME=NAME, CPOW=slot(cpow),
                                               RE=slot(re), IM=slot(im)) + "\n"


def substitute(text: str) -> str:
    """`text` with its calls of numba_cpow sent to enzpy.cpow (defined here)."""
    if CALL not in text:
        return text
    body = text.replace(f"call void {CALL}", f"call void {CALLEE}")
    if body == text:
        return text
    return body + "\n" + _definition(*_register())
