"""lstm: ADBench's LSTM loss over a text (benchmarks/workloads/lstm.py's kernel, run on a copy
of the state: the eval's input state is not changed) and its gradient in the main and extra
parameters by one reverse call, flattened as the C++ tools give it (main, then extra)."""
import numpy as np
from numba import njit

from enzyme_py import Const, Duplicated, autodiff

from ...workloads.lstm import lstm_objective
from .protocol import Function


@njit
def objective(main, extra, state, sequence):
    return lstm_objective(main, extra, state.copy(), sequence)


@njit
def jacobian(main, extra, state, sequence):
    dm, de = np.zeros_like(main), np.zeros_like(extra)
    s = state.copy()
    autodiff(lstm_objective, Duplicated(main, dm), Duplicated(extra, de),
             Duplicated(s, np.zeros_like(s)), Const(sequence))
    return np.concatenate((dm.ravel(), de.ravel()))


def prepare(raw):
    return tuple(np.array(raw[k], dtype=np.float64)
                 for k in ("main_params", "extra_params", "state", "sequence"))


FUNCTIONS = {
    "objective": Function(prepare, objective),
    "jacobian": Function(prepare, jacobian, post=lambda g: g.tolist()),
}
