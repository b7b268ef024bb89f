"""Regression: the CUDA target measured a device array's memory as size * itemsize bytes from its
pointer, ignoring strides. A strided view (`d[::2]`) reaches further, so an argument sharing
memory with it could be taken as disjoint, and the gradient built for noalias memory (whose
loads the early-loads pass then moves: a silent wrong gradient). Needs no GPU."""
def test_device_bounds_follow_strides():
    """A strided device view reaches past size * itemsize bytes: two views that share memory
    must not be taken as disjoint (that would let the gradient assume noalias)."""
    from enzyme_py.cuda.api import _device_bounds
    base = 1 << 20
    every_other = {"data": (base, False), "shape": (50,), "typestr": "<f8", "strides": (16,)}
    assert _device_bounds(every_other) == (base, base + 49 * 16 + 8)
    later = {"data": (base + 480, False), "shape": (10,), "typestr": "<f8", "strides": None}
    assert _device_bounds(later) == (base + 480, base + 560)
    lo, hi = _device_bounds(every_other)
    assert lo < base + 560 and base + 480 < hi            # they overlap
    backwards = {"data": (base + 792, False), "shape": (100,), "typestr": "<f8", "strides": (-8,)}
    assert _device_bounds(backwards) == (base, base + 800)
    c2 = {"data": (base, False), "shape": (3, 4), "typestr": "<f4", "strides": None}
    assert _device_bounds(c2) == (base, base + 48)
