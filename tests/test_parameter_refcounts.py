"""Reference counts of handle parameters dropped before AD
(transforms/prepare/drop_parameter_refcounts.py): the gradient's forward sweep retains and releases
no array the caller passed in when nothing else uses its handle, and keeps them when the handle
goes into a list. Values against finite differences; NRT statistics show every allocation and
meminfo freed over repeated calls, and the caller's arrays keep their Python reference counts
(an unbalanced drop would leak the caller's meminfo or free it early)."""
import re
import sys

import numpy as np
from numba import njit

from enzyme_py import Duplicated, autodiff, compile_gradient
from fd_modes import check_reverse
from linalg_kernels import rnn
from nrt_stats import unfreed


@njit
def listed(x, y):
    # the handles of x and y go into a list: their retains and releases stay
    items = [x, y]
    s = 0.0
    for a in items:
        s += np.sum(a * a * x[0])
    return s


def gradient_text(kernel, *args):
    g = compile_gradient(kernel, *(Duplicated(a, np.zeros_like(a)) for a in args))
    text = g.generated
    start = text.index("define i32 @__enzyme_py_grad")
    return text[start:text.index("\n}\n", start)]


def parameter_refcounts(text) -> int:
    return len(re.findall(r"@NRT_(?:incref|decref)\(ptr %arg\.\w+\.0\)", text))


def args(r):
    return (r.uniform(-0.5, 0.5, (4, 4)), r.uniform(-1, 1, (4, 3)), r.uniform(-1, 1, (6, 3)),
            r.uniform(-1, 1, 4))


def test_time_loop_retains_no_parameter():
    r = np.random.default_rng(1)
    assert parameter_refcounts(gradient_text(rnn, *args(r))) == 0
    check_reverse(rnn, *args(r))


def test_time_loop_frees_everything():
    a = args(np.random.default_rng(2))
    shadows = [np.zeros_like(x) for x in a]

    def call():
        autodiff(rnn, *(Duplicated(x, s) for x, s in zip(a, shadows)))
    call()  # the first call may compile (a build keeps one reference to its arguments)
    refs = [sys.getrefcount(x) for x in a]
    assert unfreed(call) == (0, 0)
    # the caller's arrays: no reference dropped or kept by the calls
    assert [sys.getrefcount(x) for x in a] == refs


def test_handles_in_a_list_keep_their_counts():
    r = np.random.default_rng(3)
    x, y = r.uniform(-1, 1, 3), r.uniform(-1, 1, 4)
    assert parameter_refcounts(gradient_text(listed, x, y)) > 0
    check_reverse(listed, x, y)

    refs = sys.getrefcount(x), sys.getrefcount(y)

    def call():
        autodiff(listed, Duplicated(x, np.zeros(3)), Duplicated(y, np.zeros(4)))
    assert unfreed(call) == (0, 0)
    assert (sys.getrefcount(x), sys.getrefcount(y)) == refs
