"""Shrinking a failing program to a small reproducer, and writing it as a pytest regression test.

`shrink(prog, still_fails)` is greedy delta reduction over the program tree. It repeatedly tries
candidate reductions, biggest first, and keeps one whenever `still_fails(candidate)` holds:

- drop unused helpers and parameters;
- delete runs of statements in every block (halves, quarters, ... single statements), or, for a
  statement defining a local, replace its value by a constant;
- replace a loop by its body (the loop variable becomes its first value), an `if` by one branch,
  a trip count by 1 or 2, a kernel that returns by one that does not;
- replace an expression by a constant or by one of its operands;
- make arguments simpler: Duplicated/Active -> Const, float32 -> float64, strided/F -> C layout,
  smaller sizes, round values and shadows, seed 1.

Candidates that `program.validate` rejects are skipped without running the oracle. The oracle
is expensive (a compilation and a gradient build), so results are cached by source text.

`regression_test(prog, outcome)` returns the text of a ready-to-paste pytest file.
"""
from __future__ import annotations

import copy
import os
import time
from dataclasses import fields, is_dataclass
from typing import Callable, Iterator, Optional

import numpy as np

from . import parallel as P
from .campaign import Pool
from .checker import Settings
from .generator import generate
from .outcome import FAIL
from .program import (Assign, Bin, Break, Call, CallStmt, Cast, Cmp, DataInt, For, HCall, If,
                      IfExp, IMin, Int, Load, Name, Neg, Node, Num, Program, Range, Reduce,
                      Return, Shape, Store, Temp, ToFloat, While, count_nodes, int_value,
                      is_valid, render_functions, split_call, stmt_blocks, walk_all)


# ---------------------------------------------------------------------------------------------
# locating things inside a program (paths survive deep copies)
# ---------------------------------------------------------------------------------------------

def _blocks(prog: Program):
    """Every statement list, as (path, list): path is a tuple of steps from the program."""
    out = []

    def rec(path, block):
        out.append((path, block))
        for i, s in enumerate(block):
            for j, b in enumerate(stmt_blocks(s)):
                rec(path + (i, j), b)
    rec(("body",), prog.body)
    for k, h in enumerate(prog.helpers):
        rec(("helper", k), h.body)
    return out


def _get_block(prog: Program, path):
    if path[0] == "body":
        block = prog.body
        rest = path[1:]
    else:
        block = prog.helpers[path[1]].body
        rest = path[2:]
    for i in range(0, len(rest), 2):
        block = stmt_blocks(block[rest[i]])[rest[i + 1]]
    return block


def _expr_slots(prog: Program):
    """Every (owner, attribute, index) holding an expression node, kernel and helpers."""
    slots = []

    def visit(node):
        if not is_dataclass(node):
            return
        for f in fields(node):
            v = getattr(node, f.name)
            if isinstance(v, Node) and not isinstance(v, (Break,)) and _is_expr(v):
                slots.append((node, f.name, None))
                visit(v)
            elif isinstance(v, tuple):
                for i, x in enumerate(v):
                    if isinstance(x, Node) and _is_expr(x):
                        slots.append((node, f.name, i))
                        visit(x)
            elif isinstance(v, list):
                for x in v:
                    if isinstance(x, Node):
                        visit(x)
            elif isinstance(v, Range):
                for g in ("start", "stop"):
                    x = getattr(v, g)
                    if x is not None:
                        slots.append((v, g, None))
                        visit(x)
    for s in prog.body:
        visit(s)
    for h in prog.helpers:
        for s in h.body:
            visit(s)
        if h.ret is not None:
            slots.append((h, "ret", None))
            visit(h.ret)
    return slots


_EXPR_TYPES = (Num, Int, Name, Shape, Load, Bin, Neg, Call, HCall, Cmp, IfExp, Cast, ToFloat,
               DataInt, IMin, Reduce)


def _is_expr(n):
    return isinstance(n, _EXPR_TYPES)


def _slot_get(slot):
    owner, attr, i = slot
    v = getattr(owner, attr)
    return v[i] if i is not None else v


def _slot_set(slot, value):
    owner, attr, i = slot
    if i is None:
        setattr(owner, attr, value)
    else:
        t = list(getattr(owner, attr))
        t[i] = value
        setattr(owner, attr, tuple(t))


def _subst(node, name, value):
    """Replace Name(name) by a copy of `value` everywhere below `node` (in place)."""
    for slot in _slots_below(node):
        v = _slot_get(slot)
        if isinstance(v, Name) and v.name == name:
            _slot_set(slot, copy.deepcopy(value))


def _slots_below(node):
    slots = []

    def visit(n):
        if isinstance(n, list):
            for x in n:
                visit(x)
            return
        if not is_dataclass(n):
            return
        for f in fields(n):
            v = getattr(n, f.name)
            if isinstance(v, Node):
                slots.append((n, f.name, None))
                visit(v)
            elif isinstance(v, tuple):
                for i, x in enumerate(v):
                    if isinstance(x, Node):
                        slots.append((n, f.name, i))
                        visit(x)
            elif isinstance(v, list):
                visit(v)
            elif isinstance(v, Range):
                for g in ("start", "stop"):
                    if getattr(v, g) is not None:
                        slots.append((v, g, None))
                        visit(getattr(v, g))
    visit(node)
    return slots


# ---------------------------------------------------------------------------------------------
# candidate reductions
# ---------------------------------------------------------------------------------------------

def _used_names(prog):
    names = set()
    for n in walk_all(prog):
        if isinstance(n, Name):
            names.add(n.name)
        elif isinstance(n, (Load, Shape, Reduce)):
            names.add(n.arr)
        elif isinstance(n, Store):
            names.add(n.arr)
        elif isinstance(n, HCall):
            for a in n.args:
                if isinstance(a, Name):
                    names.add(a.name)
    for n in walk_all(prog):
        if isinstance(n, For) and isinstance(n.rng.stop, Name):
            names.add(n.rng.stop.name)
    return names


def _used_helpers(prog):
    used = set()
    for n in walk_all(prog):
        if isinstance(n, HCall):
            used.add(n.helper)
    return used


def candidates(prog: Program) -> Iterator[Program]:
    """Smaller variants of `prog`, roughly biggest reductions first (each a deep copy)."""
    # unused helpers and parameters
    used_h = _used_helpers(prog)
    if any(h.name not in used_h for h in prog.helpers):
        c = copy.deepcopy(prog)
        c.helpers = [h for h in c.helpers if h.name in used_h]
        yield c
    used = _used_names(prog)
    unused = [p.name for p in prog.params if p.name not in used]
    if unused and len(unused) < len(prog.params):
        c = copy.deepcopy(prog)
        c.params = [p for p in c.params if p.name not in unused]
        yield c

    # a kernel that returns -> one that does not
    if prog.returns:
        c = copy.deepcopy(prog)
        c.returns = False
        c.body = c.body[:-1]
        for path, block in _blocks(c):
            block[:] = [s for s in block if not (isinstance(s, If) and s.body and isinstance(s.body[0], Return))]
        yield c

    # statement runs
    for path, block in _blocks(prog):
        n = len(block)
        if prog.returns and path == ("body",):
            n -= 1            # keep the final return
        size = n
        while size >= 1:
            for start in range(0, n - size + 1, size):
                c = copy.deepcopy(prog)
                b = _get_block(c, path)
                del b[start:start + size]
                yield c
            size //= 2

    # compound statements -> a part of them
    for path, block in _blocks(prog):
        for i, s in enumerate(block):
            if isinstance(s, For):
                c = copy.deepcopy(prog)
                b = _get_block(c, path)
                loop = b[i]
                first = loop.rng.start if (loop.rng.start is not None and loop.rng.step > 0) else Int(0)
                if loop.rng.step < 0:
                    first = Int(0)
                body = loop.body
                for st in body:
                    _subst(st, loop.var, first)
                b[i:i + 1] = body
                yield c
                for trip in (1, 2):
                    c = copy.deepcopy(prog)
                    loop = _get_block(c, path)[i]
                    if loop.rng.step == 1 and not (isinstance(loop.rng.stop, Int) and loop.rng.stop.value <= trip):
                        loop.rng.stop = Int(trip)
                        yield c
            elif isinstance(s, While):
                c = copy.deepcopy(prog)
                b = _get_block(c, path)
                loop = b[i]
                for st in loop.body:
                    _subst(st, loop.counter, Int(0))
                b[i:i + 1] = loop.body
                yield c
                if loop.cond is not None:
                    c = copy.deepcopy(prog)
                    _get_block(c, path)[i].cond = None
                    yield c
                if s.bound > 1:
                    c = copy.deepcopy(prog)
                    _get_block(c, path)[i].bound = 1
                    yield c
            elif isinstance(s, If):
                for which in ("body", "orelse"):
                    c = copy.deepcopy(prog)
                    b = _get_block(c, path)
                    b[i:i + 1] = getattr(b[i], which)
                    yield c
                if s.orelse:
                    c = copy.deepcopy(prog)
                    _get_block(c, path)[i].orelse = []
                    yield c
            elif isinstance(s, Assign) and s.op is None and not isinstance(s.expr, Num):
                c = copy.deepcopy(prog)
                _get_block(c, path)[i].expr = Num(0.5)
                yield c
            elif isinstance(s, Assign) and s.op is not None:
                c = copy.deepcopy(prog)
                _get_block(c, path)[i].op = None
                yield c
            elif isinstance(s, Store) and s.op is not None:
                c = copy.deepcopy(prog)
                _get_block(c, path)[i].op = None
                yield c
            elif isinstance(s, Temp) and s.ctor == "empty":
                c = copy.deepcopy(prog)
                t = _get_block(c, path)[i]
                t.ctor, t.fill, t.fill_vars = "zeros", None, ()
                yield c
            elif isinstance(s, CallStmt) and s.name:
                c = copy.deepcopy(prog)
                _get_block(c, path)[i].name = None
                yield c

    # expressions -> a constant or an operand
    n_slots = len(_expr_slots(prog))
    for k in range(n_slots):
        e = _slot_get(_expr_slots(prog)[k])
        repl = []
        if isinstance(e, (Num, Int, Name, Shape)):
            if isinstance(e, Num) and (e.value not in (0.5, 1.0) or e.f32):
                repl.append(Num(1.0 if e.value == 0.5 else 0.5))
            if isinstance(e, Name):
                repl.append(Num(0.5))
        elif isinstance(e, Cmp):
            repl.extend([Cmp(e.op, e.a, Num(0.5)), Cmp(e.op, Num(0.5), e.b)])
        elif isinstance(e, (DataInt, IMin)):
            repl.append(Int(1))
        else:
            if not isinstance(e, (Load,)):
                repl.append(Num(0.5))
            for ch in e.children():
                if _is_expr(ch) and not isinstance(ch, Cmp):
                    repl.append(ch)
            if isinstance(e, Load):
                repl.append(Num(0.5))
                for j, ix in enumerate(e.idx):
                    if not isinstance(ix, Int) or ix.value != 0:
                        idx = list(e.idx)
                        idx[j] = Int(0)
                        repl.append(Load(e.arr, tuple(idx)))
        for r in repl:
            c = copy.deepcopy(prog)
            _slot_set(_expr_slots(c)[k], copy.deepcopy(r))
            yield c
    for path, block in _blocks(prog):
        for i, s in enumerate(block):
            if isinstance(s, Store):
                for j, ix in enumerate(s.idx):
                    if not isinstance(ix, Int) or ix.value != 0:
                        c = copy.deepcopy(prog)
                        st = _get_block(c, path)[i]
                        idx = list(st.idx)
                        idx[j] = Int(0)
                        st.idx = tuple(idx)
                        yield c

    # arguments
    yield from _arg_candidates(prog)


def _arg_candidates(prog: Program):
    for k, p in enumerate(prog.params):
        if p.ann in ("dup", "active") and sum(q.ann in ("dup", "active") for q in prog.params) > 1:
            c = copy.deepcopy(prog)
            q = c.params[k]
            q.ann, q.shadow = "const", None
            yield c
        if p.dtype == "f32":
            c = copy.deepcopy(prog)
            q = c.params[k]
            q.dtype = "f64"
            if q.kind == "arr":
                q.value = np.asarray(q.value, np.float64)
                if q.shadow is not None:
                    q.shadow = np.asarray(q.shadow, np.float64)
            yield c
        if p.kind in ("arr", "iarr") and p.layout != "C":
            c = copy.deepcopy(prog)
            c.params[k].layout = "C"
            yield c
        if p.kind == "int" and p.offset:
            c = copy.deepcopy(prog)
            c.params[k].offset = 0
            yield c
    for label, size in prog.sizes.items():
        for new in sorted({1, 2, size - 1}):
            if 1 <= new < size:
                yield _resize(prog, label, new)
    # simpler numbers: shadows to 1, values rounded
    c = copy.deepcopy(prog)
    changed = False
    for q in c.params:
        if q.shadow is not None and not np.all(q.shadow == 1):
            q.shadow = np.ones_like(q.shadow)
            changed = True
    if changed:
        yield c
    for digits in (1, 2):
        c = copy.deepcopy(prog)
        changed = False
        for q in c.params:
            if q.kind == "arr":
                r = np.round(q.value, digits)
                if not np.array_equal(r, q.value):
                    q.value, changed = r.astype(q.value.dtype), True
            elif q.kind == "float":
                r = round(float(q.value), digits)
                if r != q.value:
                    q.value, changed = r, True
        if changed:
            yield c
    if prog.ret_seed != 1.0:
        c = copy.deepcopy(prog)
        c.ret_seed = 1.0
        yield c
    for k, p in enumerate(prog.params):
        if p.kind == "arr" and p.value.size:
            c = copy.deepcopy(prog)
            q = c.params[k]
            q.value = np.full_like(q.value, 0.5)
            yield c


def _resize(prog, label, new):
    c = copy.deepcopy(prog)
    c.sizes = dict(c.sizes)
    c.sizes[label] = new
    for q in c.params:
        if q.kind in ("arr", "iarr") and label in q.dims:
            sl = tuple(slice(0, new) if d == label else slice(None) for d in q.dims)
            q.value = np.ascontiguousarray(np.asarray(q.value)[sl])
            if q.shadow is not None:
                q.shadow = np.ascontiguousarray(np.asarray(q.shadow)[sl])
            if q.kind == "iarr":
                q.value = q.value % max(1, c.sizes[q.dims[0]])
    return c


# ---------------------------------------------------------------------------------------------
# the reduction loop
# ---------------------------------------------------------------------------------------------

def _key(prog):
    parts = [render_functions(prog), repr(prog.sizes), repr(prog.ret_seed), repr(prog.returns)]
    for p in prog.params:
        parts.append(f"{p.name}:{p.kind}:{p.ann}:{p.dtype}:{p.layout}:{p.offset}:"
                     f"{np.asarray(p.value).tobytes().hex() if p.value is not None else ''}:"
                     f"{np.asarray(p.shadow).tobytes().hex() if p.shadow is not None else ''}")
    return "\n".join(parts)


def shrink(prog: Program, still_fails: Callable[[Program], bool], max_checks: int = 600,
           max_seconds: float = 1800.0, log: Optional[Callable[[str], None]] = None) -> Program:
    """Greedy reduction of `prog` while `still_fails` holds (see the module docstring)."""
    t0 = time.monotonic()
    cache = {}
    checks = 0
    best = copy.deepcopy(prog)
    progress = True
    while progress:
        progress = False
        for cand in candidates(best):
            if checks >= max_checks or time.monotonic() - t0 > max_seconds:
                return best
            if not is_valid(cand):
                continue
            k = _key(cand)
            if k in cache:
                continue
            checks += 1
            ok = still_fails(cand)
            cache[k] = ok
            if ok:
                if log:
                    log(f"  shrink: {count_nodes(best)} -> {count_nodes(cand)} nodes "
                        f"({checks} checks, {time.monotonic() - t0:.0f} s)")
                best = cand
                progress = True
                break
    return best


# ---------------------------------------------------------------------------------------------
# regression tests
# ---------------------------------------------------------------------------------------------

def _array_literal(a, dtype) -> str:
    a = np.asarray(a)
    lst = np.asarray(a, np.float64 if dtype != "i64" else np.int64).tolist()
    np_dt = {"f64": "np.float64", "f32": "np.float32", "i64": "np.int64"}[dtype]
    return f"np.array({lst!r}, dtype={np_dt})"


def _arg_code(prog: Program):
    """Lines building the arguments, and the expression listing them."""
    lines, names = [], []
    for p in prog.params:
        if p.kind in ("arr", "iarr"):
            lit = _array_literal(p.value, p.dtype)
            wrap = {"C": "{}", "F": "np.asfortranarray({})", "S": "_strided({})"}[p.layout]
            lines.append(f"{p.name} = {wrap.format(lit)}")
            if p.ann == "dup":
                lines.append(f"d{p.name} = {wrap.format(_array_literal(p.shadow, p.dtype))}")
                names.append(f"Duplicated({p.name}, d{p.name})")
            else:
                names.append(f"Const({p.name})")
        elif p.kind == "float":
            v = f"np.float32({float(p.value)!r})" if p.dtype == "f32" else repr(float(p.value))
            names.append(f"{'Active' if p.ann == 'active' else 'Const'}({v})")
        else:
            names.append(f"Const({int_value(prog, p)})")
    return lines, names


_STRIDED = '''

def _strided(a):
    """A view of every other element of a buffer twice as long (a non-contiguous array)."""
    buf = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
    view = buf[..., ::2]
    view[...] = a
    return view
'''


def regression_test(prog: Program, outcome, reason: str = "", name: str = "",
                    command: str = "") -> str:
    """A pytest file reproducing `outcome` on `prog` (xfail strict until the bug is fixed)."""
    st = Settings()
    f32 = prog.uses_f32()
    rtol = st.rtol32 if f32 else st.rtol64
    eps = st.eps32 if f32 else st.eps64
    name = name or f"s{prog.seed}"
    cat = outcome.category
    reason = reason or f"{cat} found by the fuzzer (root cause not analysed yet)"
    arg_lines, arg_names = _arg_code(prog)
    needs_strided = any(p.layout == "S" for p in prog.params)
    detail = "\n".join("    " + ln for ln in (outcome.detail or "").strip().splitlines()[-25:])
    src = render_functions(prog)
    body_args = "\n".join("    " + ln for ln in arg_lines)
    call_args = ", ".join(arg_names)
    isolated = cat.startswith("died") or cat == "timeout"
    head = f'''"""Fuzzer reproducer ({cat}), seed {prog.seed}.

{reason}

Found by the differential fuzzer (tools.fuzz){": " + command if command else ""}; shrunk
automatically. What the fuzzer saw:

{detail}
"""
'''
    imports = ["import math", "", "import numpy as np", "import pytest", "from numba import njit", "",
               "from enzyme_py import Active, Const, Duplicated, check_gradient",
               "from tools.fuzz import prims  # noqa: F401  (intrinsics the kernel may call)"]
    if isolated:
        imports = ["import subprocess", "import sys", "import textwrap"] + [""] + imports
    out = [head, "\n".join(imports) + "\n\n\n", src.rstrip() + "\n"]
    if needs_strided:
        out.append(_STRIDED)
    out.append(f'''

def _args():
{body_args if body_args else "    pass"}
    return [{call_args}]


{_check_code(prog, rtol, eps)}
''')
    mark = f'@pytest.mark.xfail(strict=True, reason={reason!r})'
    if isolated:
        out.append(f'''

{mark}
def test_fuzz_{name}():
    # the gradient {"crashes the process" if cat.startswith("died") else "does not finish"}: run it in a child process
    code = "import sys; sys.path[:0] = %r\\n" % (sys.path,) + \\
        "import importlib.util as u\\n" \\
        "spec = u.spec_from_file_location('repro', %r)\\n" % (__file__,) + \\
        "m = u.module_from_spec(spec); spec.loader.exec_module(m); m.check()\\n"
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("timed out")
    assert r.returncode == 0, textwrap.shorten(r.stderr, 2000)
''')
    else:
        out.append(f'''

{mark}
def test_fuzz_{name}():
    check()
''')
    return "".join(out)


def _check_code(prog, rtol, eps) -> str:
    """`check()`: check_gradient on the call as the program makes it."""
    if prog.forms is None:
        return (f"def check():\n"
                f"    report = check_gradient(kern, *_args(), seed={prog.ret_seed!r}, "
                f"rtol={rtol!r}, eps={eps!r})\n"
                f"    assert report.passed, str(report)")
    forms = prog.forms
    names = tuple(p.name for p in prog.params)
    keywords = tuple(split_call(prog, names)[1])
    omitted = tuple(n for n in names if n in forms.omitted)
    return (f"def _call():   # defaults left out, keywords (tools/fuzz/callers.py)\n"
            f"    args = dict(zip({names!r}, _args()))\n"
            f"    pos = [a for n, a in args.items() if n not in {keywords + omitted!r}]\n"
            f"    return pos, {{n: args[n] for n in {keywords!r}}}\n\n\n"
            f"def check():\n"
            f"    pos, kw = _call()\n"
            f"    report = check_gradient(kern, *pos, seed={_seed_src(prog.ret_seed)}, "
            f"rtol={rtol!r}, eps={eps!r}, **kw)\n"
            f"    assert report.passed, str(report)")


def _seed_src(seed) -> str:
    if isinstance(seed, tuple):
        return "(" + ", ".join(_seed_src(s) for s in seed) + ("," if len(seed) == 1 else "") + ")"
    if isinstance(seed, np.ndarray):
        return f"np.array({seed.tolist()!r})"
    return repr(seed)


# ---------------------------------------------------------------------------------------------
# campaign glue
# ---------------------------------------------------------------------------------------------

def same_failure(original, outcome) -> bool:
    """Whether `outcome` is the failure `original` (same category; a crash by the same
    exception type; any death by a signal counts as the same)."""
    if outcome.status != FAIL:
        return False
    if original.category.startswith("died"):
        return outcome.category.startswith("died")
    return outcome.category == original.category


def shrink_failures(summary, out_dir, k, settings=None, config=None, timeout=180.0, command="",
                    log=print):
    """Shrink up to `k` failures of a campaign summary (the first seed of each category first),
    each in a fresh worker process, and write their regression tests into `out_dir/regressions`.
    Returns the paths written."""

    picks = []
    for cat, seeds in summary.failures.items():
        picks.append((cat, seeds[0]))
    for cat, seeds in summary.failures.items():
        for s in seeds[1:]:
            picks.append((cat, s))
    picks = picks[:k]
    os.makedirs(os.path.join(out_dir, "regressions"), exist_ok=True)
    written = []
    seen = {}
    pool = Pool(1, settings, config, timeout=timeout)
    try:
        for cat, seed in picks:
            prog = generate(seed, config)
            [(_, original)] = list(pool.run([(seed, "program", prog)]))
            if original.status != "fail":
                log(f"seed {seed}: did not fail again ({original.status} {original.category}); skipped")
                continue
            par = not isinstance(prog, Program)     # the parallel profile's kernels
            if par and not hasattr(prog, "blocks"):
                log(f"seed {seed}: no shrinker for this profile's kernels; "
                    f"reproduce with --one {seed}")
                continue
            log(f"seed {seed}: shrinking {original.category} "
                f"({(P.count_nodes if par else count_nodes)(prog)} nodes)")

            def still_fails(cand, original=original):
                [(_, out)] = list(pool.run([(seed, "program", cand)]))
                return same_failure(original, out)
            small = (P.shrink if par else shrink)(prog, still_fails, log=log)
            key = P.render(small) if par else render_functions(small)
            if key in seen:
                log(f"seed {seed}: shrinks to the same kernel as seed {seen[key]}; not written again")
                continue
            seen[key] = seed
            [(_, final)] = list(pool.run([(seed, "program", small)]))
            text = (P.regression_test if par else regression_test)(
                small, final if same_failure(original, final) else original, command=command)
            safe = "".join(ch if ch.isalnum() else "_" for ch in original.category).strip("_").lower()
            path = os.path.join(out_dir, "regressions", f"test_fuzz_{safe}_{seed}.py")
            with open(path, "w") as f:
                f.write(text)
            written.append(path)
    finally:
        pool.close()
    return written
