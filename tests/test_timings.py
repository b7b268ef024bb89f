"""Per-stage build timings (enzyme_py/timings.py) and the lowering-only capture."""
import gc

import numba
import numpy as np
from numba.core import types

import enzyme_py
from enzyme_py import Duplicated, timings
from enzyme_py.bridge.capture import capture


@numba.njit
def _sum_squares(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


STAGES = ("capture", "cleanup", "parse", "AD", "print", "verify", "O3 + codegen", "entry")


def test_compiled_gradient_carries_its_stage_timings():
    enzyme_py.clear_cache()
    x = np.arange(4.0)
    g = enzyme_py.compile_gradient(_sum_squares, Duplicated(x, np.zeros(4)))
    t = g.timings
    for name in STAGES + ("total",):
        assert name in t and t[name] >= 0.0, name
    assert sum(t[name] for name in STAGES) <= t["total"] * 1.01 + 1e-3


def test_timings_table_printed_when_asked(monkeypatch, capsys):
    enzyme_py.clear_cache()
    monkeypatch.setenv("ENZYME_PY_TIMINGS", "1")
    x = np.arange(3.0)
    enzyme_py.compile_gradient(_sum_squares, Duplicated(x, np.zeros(3)))
    err = capsys.readouterr().err
    assert "enzyme_py timings: _sum_squares" in err
    for name in STAGES + ("total",):
        assert f"  {name} " in err


def test_stage_outside_a_record_is_free_and_records_nest():
    with timings.stage("nothing"):
        pass
    with timings.record() as outer:
        with timings.stage("a"):
            with timings.record() as inner:
                with timings.stage("b"):
                    pass
    assert set(outer) == {"a", "total"} and set(inner) == {"b", "total"}


def test_capture_lowers_the_copy_without_compiling_it():
    cap = capture(_sum_squares, (types.float64[::1],))
    assert not cap.dispatcher.overloads          # no machine code, no overload
    assert f"@{cap.fn_name}(" in cap.text and "!dbg" in cap.text


def test_build_holds_the_garbage_collector_off_and_restores_it():
    seen = []

    @timings.timed_build
    def build(dispatcher):
        seen.append(gc.isenabled())
        return dispatcher

    assert gc.isenabled()
    build(object())
    assert seen == [False] and gc.isenabled()
    gc.disable()            # the caller's own choice is kept
    try:
        with timings.gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
