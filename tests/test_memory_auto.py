"""memory="auto" chooses from the machine (enzyme_py/modes/memory.py: the last-level cache's size,
the memory bandwidth) and the loop's tape (checkpoint/version.py): the full tape when it fits half
the cache or when recomputation costs more than the tape's traffic, else segments whose tapes
fit the cache. The machine's figures are overridden here (ENZYME_PY_LLC_BYTES,
ENZYME_PY_MEMORY_BANDWIDTH) so that the choice does not depend on the machine the tests run on."""
import json

import numpy as np
import pytest
from numba import njit

from enzyme_py import Active, Duplicated, check_gradient, explain
from enzyme_py.modes import memory
from enzyme_py.modes.reverse import autodiff, prepare


@njit
def heat(u, alpha, steps):
    n = u.shape[0]
    r = alpha * 0.5
    for s in range(steps):
        left = u[0]
        for i in range(1, n - 1):
            ui = u[i]
            u[i] = ui + r * (left - 2.0 * ui + u[i + 1])
            left = ui


N, STEPS, STATE = 40, 60, 40 * 8 + 32      # the state: u and the loop's carry


def heat_args():
    rng = np.random.default_rng(5)
    u0, w = rng.standard_normal(N), rng.standard_normal(N)
    return lambda: [Duplicated(u0.copy(), w.copy()), Active(0.7), STEPS]


def machine(monkeypatch, cache, bandwidth):
    monkeypatch.setenv(memory.CACHE_ENV, str(cache))
    monkeypatch.setenv(memory.BANDWIDTH_ENV, str(bandwidth))


def gradients(memory_option):
    args = heat_args()()
    out = autodiff(heat, *args, memory=memory_option)
    return args[0].value, args[0].shadow, out[1]


def test_small_cache_goes_to_segments(monkeypatch):
    """A 4 KiB cache and a slow memory: the 60-step tape (about 60 x 352 B) does not fit half
    the cache and its traffic costs more than recomputing, so the loop runs in segments of
    (4096 / 4) // 352 = 2 steps; the gradient equals the full tape's and finite differences."""
    machine(monkeypatch, 4096, 10**8)
    (c,) = explain(heat, *heat_args()(), memory="auto").checkpointed
    assert not c.full_tape and c.why == "recomputation is cheaper"
    assert c.segment == 2 and c.steps == STEPS // 2 and c.cache == 4096
    assert c.recompute_ps < c.traffic_ps
    text = str(c)
    assert "exceeds half the 4096 B last-level cache" in text and "30 steps of 2 iterations" in text
    assert "recomputation is cheaper than its traffic" in text and f"{STATE} B of tape" in text
    u, du, dalpha = gradients("auto")
    u_t, du_t, dalpha_t = gradients("tape")
    assert np.array_equal(u, u_t) and np.array_equal(du, du_t)
    assert dalpha == pytest.approx(dalpha_t, rel=1e-12)
    report = check_gradient(heat, *heat_args()(), memory="auto")
    assert report.passed, str(report)


def test_large_cache_keeps_the_full_tape(monkeypatch):
    machine(monkeypatch, 1 << 30, 10**8)
    (c,) = explain(heat, *heat_args()(), memory="auto").checkpointed
    assert c.full_tape and c.why == "fits the cache"
    assert "full tape kept" in str(c) and f"fits half the {1 << 30} B last-level cache" in str(c)
    assert c.tape_bytes == (N - 2) * 8 * STEPS


def test_costly_recomputation_keeps_the_full_tape(monkeypatch):
    """The same small cache with a fast memory: the traffic the segments would save is hidden by
    the reverse sweep's work, so the full tape is kept, and explain says why with the numbers."""
    machine(monkeypatch, 4096, 10**12)
    (c,) = explain(heat, *heat_args()(), memory="auto").checkpointed
    assert c.full_tape and c.why == "recomputation costs more"
    assert c.traffic_ps == 0 < c.recompute_ps
    assert "recomputation costs more than the traffic it saves" in str(c)


def test_the_gradient_is_built_per_cache_size(monkeypatch):
    """The choice is built into the gradient, so its key (in memory and on disk) holds the
    cache's size and the bandwidth: another machine's figures build another gradient."""
    keys = set()
    for cache, bandwidth in ((4096, 10**8), (1 << 30, 10**8), (4096, 10**12)):
        machine(monkeypatch, cache, bandwidth)
        grad = prepare(heat, heat_args()(), "auto", memory="auto")[0]
        keys.add(id(grad))
    assert len(keys) == 3


def test_bandwidth_is_measured_once_and_kept(monkeypatch, tmp_path):
    monkeypatch.delenv(memory.BANDWIDTH_ENV, raising=False)
    monkeypatch.setenv("ENZYME_PY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(memory, "_BANDWIDTH", None)
    calls = []
    monkeypatch.setattr(memory, "memory_bandwidth_now", lambda cache: calls.append(cache) or 12 * 10**9)
    assert memory.memory_bandwidth() == 12 * 10**9
    assert json.loads((tmp_path / memory.MACHINE_FILE).read_text()) == {"bandwidth": 12 * 10**9}
    monkeypatch.setattr(memory, "_BANDWIDTH", None)      # a fresh process reads the file
    assert memory.memory_bandwidth() == 12 * 10**9 and len(calls) == 1


def test_bandwidth_measurement():
    """A real measurement: a plausible figure, rounded to 0.1 GB/s (it enters the key)."""
    bw = memory.memory_bandwidth_now(1 << 20)
    assert 10**8 <= bw <= 10**13 and bw % 10**8 == 0
