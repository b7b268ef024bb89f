"""Second derivatives of a wrapped kernel (enzyme_py.jax), on NumPy arrays.

- `rev2(kernel, operands, cts, v)`: sum_k ct_k H_k v, the tangent in direction v of the reverse
  sweep's result J^T ct (H_k the Hessian of output entry k over the differentiable inputs), by
  forward mode over reverse mode (modes/hvp.py) of a scalar function of one flat array: the
  inputs unpacked from it, the kernel run, <ct, outputs> (+ seed * the return value) returned.
- `tangent2(kernel, operands, u, v)`: [u^T H_k v]_k, the tangent in direction v of forward
  mode's result J u, as <rev2(ct = e_k, u), v> for each output entry k (H_k is symmetric).

Both run the kernel again: second derivatives do not use the split-mode tape.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .helpers import hessian_vector_product

IN, INOUT, OUT, CONST, STATIC = "in", "inout", "out", "const", "static"
_MAX_WIDTH = 16


class SecondOrder:
    """The @njit functions second derivatives of one JaxKernel differentiate, built on first use."""

    def __init__(self, kernel):
        self.k = kernel
        self._flat = None

    # ---- sum_k ct_k H_k v: forward over reverse of <ct, f(flat)> ------------------------------

    def flat_function(self):
        if self._flat is None:
            self._flat = _flat_source(self.k)
        return self._flat

    def rev2(self, operands, cts, vs):
        """sum_k ct_k H_k v for each v in `vs` (lists of arrays, one per differentiable input)."""
        k = self.k
        dtypes = {k.examples[p].dtype for p in k.diff}
        if len(dtypes) != 1:
            raise TypeError(f"{k.name}: second derivatives need the differentiable inputs to share "
                            f"one float type, not {sorted(map(str, dtypes))}")
        fn = self.flat_function()
        ops = dict(zip(k.operands, operands))
        flat = np.concatenate([np.ravel(ops[p]) for p in k.diff]).astype(dtypes.pop())
        consts = [np.ascontiguousarray(c, dtype=a.dtype) for c, a in zip(cts, k.out_avals)]
        cts_arrays, seed = (consts[:-1], float(consts[-1])) if k.returns else (consts, None)
        extra = [np.ascontiguousarray(ops[p]) for p in k.operands if k.kinds[p] == CONST]
        extra += [seed] if k.returns else []
        flats = [np.concatenate([np.ravel(a) for a in v]).astype(flat.dtype) for v in vs]
        width = min(_MAX_WIDTH, len(flats))       # one width per call: one build
        out = []
        for start in range(0, len(flats), width):
            chunk = flats[start:start + width]
            chunk += [np.zeros_like(flat)] * (width - len(chunk))
            out += hessian_vector_product(fn, flat, tuple(chunk), *cts_arrays, *extra)[:len(flats) - start]
        return [_split(h, k) for h in out]

    # ---- [u^T H_k v]_k: one product per output entry ----------------------------------------

    def tangent2(self, operands, u, v):
        """[u^T H_k v]_k = [<rev2(ct = e_k, u), v>]_k: one forward-over-reverse product per
        output entry (forward mode over forward mode meets code it cannot differentiate, such
        as vectorised loads, on most kernels)."""
        k = self.k
        flat_v = np.concatenate([np.ravel(a) for a in v])
        out = [np.zeros(a.shape, a.dtype) for a in k.out_avals]
        for j, o in enumerate(out):
            for i in range(o.size):
                cts = [np.zeros(a.shape, a.dtype) for a in k.out_avals]
                cts[j].flat[i] = 1.0
                h = self.rev2(operands, cts, [u])[0]
                o.flat[i] = np.dot(np.concatenate([np.ravel(a) for a in h]), flat_v)
        return out


def _split(flat, k):
    """A flat vector over the differentiable inputs as one array per input."""
    out, start = [], 0
    for p in k.diff:
        a = k.examples[p]
        out.append(flat[start:start + a.size].reshape(a.shape).astype(a.dtype))
        start += a.size
    return out


def _flat_source(k):
    """@njit L(flat, *cts, *const operands[, seed]) = <cts, outputs> (+ seed * return value) of
    the kernel run on the inputs unpacked from flat (a copy: the kernel may write them)."""
    scope = {"np": np, "kernel": k.dispatcher}
    cts = [f"c{p}" for p in k.outs]
    consts = [f"a{p}" for p in k.operands if k.kinds[p] == CONST]
    params = ["flat"] + cts + consts + (["seed"] if k.returns else [])
    lines, start = [], 0
    for p, kind in enumerate(k.kinds):
        a = k.examples[p]
        if kind in (IN, INOUT):
            scope[f"dt{p}"] = a.dtype.type
            lines += [f"    a{p} = np.empty({a.shape!r}, dt{p})", f"    f{p} = a{p}.reshape(-1)",
                      f"    for i in range({a.size}):", f"        f{p}[i] = flat[{start} + i]"]
            start += a.size
        elif kind == OUT:
            scope[f"dt{p}"] = a.dtype.type
            lines.append(f"    a{p} = np.zeros({a.shape!r}, dt{p})")
        elif kind == STATIC:
            scope[f"a{p}"] = a
    call = f"kernel({', '.join(f'a{p}' for p in range(len(k.kinds)))})"
    lines += [f"    r = {call}" if k.returns else f"    {call}", "    s = 0.0"]
    for p in k.outs:
        lines += [f"    o{p} = a{p}.reshape(-1)", f"    w{p} = c{p}.reshape(-1)",
                  f"    for i in range({k.examples[p].size}):", f"        s += w{p}[i] * o{p}[i]"]
    if k.returns:
        lines.append("    s += seed * r")
    lines.append("    return s")
    src = f"def flat_{k.name}({', '.join(params)}):\n" + "\n".join(lines) + "\n"
    exec(src, scope)
    return njit(scope[f"flat_{k.name}"])
