"""The differential fuzzer (tools.fuzz, issue 6): its parts, and a fast slice of a campaign.

The slice checks SLICE_N generated kernels with fixed seeds (each: a Numba compile, a gradient
build, finite differences). A kernel passes when its gradient matches finite differences, or
when it is discarded (finite differences unreliable) or unsupported (UnsupportedError); it fails
on a wrong gradient, a crash, or an invalid program (a fuzzer bug). Seeds that hit a known bug are
xfail(strict) and name the reproducer in tests/regressions/.

A full campaign: python -m tools.fuzz --n 10000 --seed S
"""
import os

import numpy as np
import pytest

from tools.fuzz import check_program, generate, render
from tools.fuzz.campaign import Pool, Summary, kernel_seed
from tools.fuzz.checker import _Discard, Settings, forward_available, load, run_traced
from tools.fuzz.outcome import DISCARD, FAIL, INVALID, PASS, UNSUPPORTED, Outcome
from tools.fuzz.program import (FUNCS, Assign, Break, Call, For, If, Int, Load, Name, Num,
                                    Program, Range, Return, Store, While, count_nodes,
                                    is_valid, make_args, walk_all)
from tools.fuzz.shrinker import regression_test, same_failure, shrink

SLICE_SEED = 11
# 50 kernels cost about 55 s of CPU (campaigns with `python -m tools.fuzz` run thousands);
# ENZYME_FUZZ_SLICE=N runs the first N (0: none)
SLICE_N = int(os.environ.get("ENZYME_FUZZ_SLICE", "50"))

# slice seeds that hit a known bug -> the regression test reproducing it (xfail, not strict:
# the regression test itself is the strict one; remove the entry when the bug is fixed)
KNOWN = {
}


# ---------------------------------------------------------------------------------------------
# generator
# ---------------------------------------------------------------------------------------------

def test_generator_is_deterministic():
    for s in (0, 1, 12345, kernel_seed(SLICE_SEED, 7)):
        a, b = generate(s), generate(s)
        assert render(a) == render(b)
        assert render(a, traced=True) == render(b, traced=True)
        for p, q in zip(a.params, b.params):
            assert p.name == q.name and p.ann == q.ann
            assert np.array_equal(np.asarray(p.value), np.asarray(q.value))
            if p.shadow is not None:
                assert np.array_equal(p.shadow, q.shadow)
    assert render(generate(1)) != render(generate(2))


def test_generated_programs_are_valid_and_their_traced_copy_runs():
    for s in range(300):
        prog = generate(s)
        assert is_valid(prog), s
        if s % 3 == 0:     # the traced copy is plain Python: cheap
            ns = load(prog)
            try:
                run_traced(ns["kern_traced"], [a.value for a in make_args(prog)])
            except _Discard:
                pass


def _coverage(n):
    seen = set()
    for s in range(n):
        prog = generate(s)
        depth = _max_loop_depth(prog.body)
        seen.add(f"depth{min(depth, 3)}")
        for node in walk_all(prog):
            seen.add(type(node).__name__)
            if isinstance(node, Call):
                seen.add("fn:" + node.fn)
        for p in prog.params:
            seen.add(f"{p.kind}:{p.ann}:{p.dtype}:{len(p.dims)}d:{p.layout}")
        if prog.helpers:
            seen.add("helpers")
        if prog.uses_f32():
            seen.add("f32")
    return seen


def _max_loop_depth(block):
    from tools.fuzz.program import stmt_blocks
    best = 0
    for s in block:
        inner = max([_max_loop_depth(b) for b in stmt_blocks(s)] or [0])
        best = max(best, inner + (1 if isinstance(s, (For, While)) else 0))
    return best


def test_generator_covers_the_constructs_of_the_issue():
    seen = _coverage(400)
    for fn in FUNCS:
        assert "fn:" + fn in seen, fn
    for kind in ("For", "While", "If", "Break", "Return", "Store", "Assign", "CallStmt", "HCall",
                 "Temp", "Load", "Cast", "IfExp", "DataInt", "Reduce", "Raise", "depth3",
                 "helpers", "f32"):
        assert kind in seen, kind
    for ann in ("arr:dup", "arr:const", "float:active", "float:const"):
        assert any(k.startswith(ann) for k in seen), ann
    for dt in ("f32", "f64"):
        assert any(k.startswith("arr:dup:" + dt) for k in seen)
    for layout in ("C", "F", "S"):
        assert any(k.startswith("arr:") and k.endswith(layout) for k in seen), layout
    assert any(k.startswith("arr:") and ":2d:" in k for k in seen)
    assert any(k.startswith("iarr:") for k in seen) and any(k.startswith("int:") for k in seen)


# ---------------------------------------------------------------------------------------------
# validator
# ---------------------------------------------------------------------------------------------

def _tiny():
    from tools.fuzz.program import Param
    x = Param("x0", "arr", "dup", "f64", dims=("N",), value=np.array([0.5, 1.5]),
              shadow=np.ones(2))
    c = Param("c0", "arr", "const", "f64", dims=("N",), value=np.array([0.1, 0.2]))
    body = [For("i0", Range(None, Int(2)), [Store("x0", (Name("i0"),), Load("c0", (Name("i0"),)))])]
    return Program(0, {"N": 2, "R": 1, "C": 1}, [x, c], [], body, False)


def test_validator_accepts_and_rejects():
    assert is_valid(_tiny())
    bad = []
    p = _tiny()
    p.body[0].rng.stop = Int(3)                     # index out of bounds
    bad.append(p)
    p = _tiny()
    p.body.append(Assign("v0", Name("v9")))         # undefined local
    bad.append(p)
    p = _tiny()
    p.body.append(Break())                          # break outside a loop
    bad.append(p)
    p = _tiny()
    p.body.append(Store("c0", (Int(0),), Load("x0", (Int(1),))))   # active data into Const memory
    bad.append(p)
    p = _tiny()
    p.body.append(Assign("v0", Num(1.0)))
    p.body.append(If(_cmp(), [Return(Num(1.0))], []))
    bad.append(p)                                   # return in a kernel that returns nothing
    for p in bad:
        assert not is_valid(p)


def _cmp():
    from tools.fuzz.program import Cmp
    return Cmp("<", Num(0.5), Num(1.0))


# ---------------------------------------------------------------------------------------------
# shrinker and regression tests (synthetic oracle: no compilation)
# ---------------------------------------------------------------------------------------------

def test_shrinker_reduces_to_what_the_oracle_needs():
    prog = next(generate(s) for s in range(1000) if "math.sin(" in render(generate(s))
                and count_nodes(generate(s)) > 60)

    def still_fails(p):
        return "math.sin(" in render(p)
    small = shrink(prog, still_fails, max_checks=3000)
    assert still_fails(small) and is_valid(small)
    assert count_nodes(small) < count_nodes(prog) // 3
    assert len(render(small).splitlines()) <= 12, render(small)


def test_regression_test_text():
    prog = generate(3)
    out = Outcome(FAIL, "wrong_gradient", "check_gradient(kern): FAILED")
    text = regression_test(prog, out, reason="a made-up root cause")
    compile(text, "<regression>", "exec")
    assert "@pytest.mark.xfail(strict=True, reason='a made-up root cause')" in text
    assert "def test_fuzz_s3():" in text and "check_gradient(kern, *_args()" in text
    died = regression_test(prog, Outcome(FAIL, "died:SIGSEGV"))
    compile(died, "<regression>", "exec")
    assert "subprocess.run" in died


def test_same_failure():
    assert same_failure(Outcome(FAIL, "died:SIGSEGV"), Outcome(FAIL, "died:SIGBUS"))
    assert same_failure(Outcome(FAIL, "crash:KeyError"), Outcome(FAIL, "crash:KeyError"))
    assert not same_failure(Outcome(FAIL, "crash:KeyError"), Outcome(FAIL, "wrong_gradient"))
    assert not same_failure(Outcome(FAIL, "wrong_gradient"), Outcome(DISCARD, "branch_flip"))


def test_summary_counts_and_formats():
    s = Summary(5, 6, 2)
    s.add(1, Outcome(PASS, rules=frozenset({"fadd"})))
    s.add(2, Outcome(DISCARD, "branch_flip"))
    s.add(3, Outcome(UNSUPPORTED, "call to external function `numba_xxdot`"))
    s.add(4, Outcome(FAIL, "wrong_gradient"))
    s.add(5, Outcome(FAIL, "died:SIGSEGV"))
    s.add(6, Outcome(INVALID, "numba:TypingError"))
    text = s.format(["fadd", "fmul"])
    assert s.generated == 6 and s.checked == 3
    for piece in ("branch_flip", "numba_xxdot", "wrong_gradient", "seeds 4", "died:SIGSEGV",
                  "numba:TypingError", "exercised: 1/2; never: fmul", "forward"):
        assert piece in text, piece
    assert s.to_json()["failures"] == {"wrong_gradient": [4], "died:SIGSEGV": [5]}
    # forward-mode outcomes other than "checked" keep example seeds too
    s.add(7, Outcome(PASS, forward="checked"))
    s.add(8, Outcome(PASS, forward="unsupported:internal: a varying value has no tangent"))
    assert "(e.g. seeds 8)" in s.format()
    assert s.to_json()["forward_examples"] == {
        "unsupported:internal: a varying value has no tangent": [8]}


# ---------------------------------------------------------------------------------------------
# checker
# ---------------------------------------------------------------------------------------------

def test_checker_discards_branch_near_its_boundary():
    prog = _tiny()
    prog.params[0].value = np.array([0.5, 1.0 + 1e-9])
    prog.body.insert(0, If(_cmp_x(), [Store("x0", (Int(0),), Num(3.0))], []))
    assert is_valid(prog)
    out = check_program(prog)
    assert (out.status, out.category) == (DISCARD, "branch_flip")


def _cmp_x():
    from tools.fuzz.program import Cmp
    return Cmp(">", Load("x0", (Int(1),)), Num(1.0))


def test_checker_passes_a_simple_kernel():
    prog = _tiny()
    prog.body[0].body[0].expr = Call("sin", (Load("x0", (Name("i0"),)),))
    out = check_program(prog)
    assert out.status == PASS, out.detail
    assert "llvm.sin" in out.rules


def test_forward_detection_is_a_runtime_probe():
    from enzyme_py import Duplicated, Forward, autodiff
    try:
        autodiff(lambda x: None, Duplicated(np.ones(1), np.ones(1)), mode=Forward)
        implemented = True
    except NotImplementedError:
        implemented = False
    except Exception:
        implemented = True
    assert forward_available() is implemented


def test_worker_death_is_a_failure_not_a_crash_of_the_campaign():
    import signal
    pool = Pool(1, timeout=120)
    try:
        [(key, out)] = list(pool.run([(1, "die", signal.SIGSEGV)]))
        assert (key, out.status, out.category) == (1, FAIL, "died:SIGSEGV"), out
        [(key, out)] = list(pool.run([(2, "program", _tiny())]))     # the worker was replaced
        assert (key, out.status) == (2, PASS), out
    finally:
        pool.close()


# ---------------------------------------------------------------------------------------------
# the slice
# ---------------------------------------------------------------------------------------------

def _slice_params():
    out = []
    for i in range(SLICE_N):
        s = kernel_seed(SLICE_SEED, i)
        marks = []
        if s in KNOWN:
            marks.append(pytest.mark.xfail(strict=False, reason=f"known bug: {KNOWN[s]}"))
        out.append(pytest.param(s, marks=marks, id=str(s)))
    return out


@pytest.mark.parametrize("seed", _slice_params())
def test_slice(seed):
    prog = generate(seed)
    out = check_program(prog)
    assert out.status in (PASS, DISCARD, UNSUPPORTED), (
        f"seed {seed}: {out.status} {out.category}\n{render(prog)}\n{out.detail}\n"
        f"reproduce: python -m tools.fuzz --one {seed}")


# ---------------------------------------------------------------------------------------------
# the callers profile (tools/fuzz/callers.py): declarations and calls of real code
# ---------------------------------------------------------------------------------------------

CALLERS_N = int(os.environ.get("ENZYME_FUZZ_CALLERS_SLICE", "12"))


def test_callers_profile_draws_every_form():
    from tools.fuzz.generator import PROFILES
    seen = set()
    for i in range(200):
        f = generate(kernel_seed(SLICE_SEED, i), PROFILES["callers"]).forms
        seen |= {"sig"} if f.sig_helpers else set()
        seen |= {"locals"} if f.locals_helpers else set()
        seen |= {k for k in ("cache", "early") if getattr(f, k)}
        seen |= {"omitted"} if f.omitted else set()
        seen |= {"keywords"} if f.keywords else set()
        seen |= {f.ret[0]} if f.ret else set()
    assert seen == {"sig", "locals", "cache", "early", "omitted", "keywords", "array", "tuple"}
    # the other profiles draw nothing of it, and their programs are unchanged
    assert generate(kernel_seed(SLICE_SEED, 3)).forms is None


@pytest.mark.parametrize("i", range(CALLERS_N))
def test_callers_slice(i):
    from tools.fuzz.generator import PROFILES
    seed = kernel_seed(SLICE_SEED, i)
    prog = generate(seed, PROFILES["callers"])
    out = check_program(prog)
    assert out.status in (PASS, DISCARD, UNSUPPORTED), (
        f"seed {seed}: {out.status} {out.category}\n{render(prog)}\n{out.detail}\n"
        f"reproduce: python -m tools.fuzz --one {seed} --profile callers")


# ---------------------------------------------------------------------------------------------
# the parallel profile (tools/fuzz/parallel.py): race-free prange kernels
# ---------------------------------------------------------------------------------------------

PARALLEL_N = int(os.environ.get("ENZYME_FUZZ_PARALLEL_SLICE", "3"))


def test_parallel_profile_draws_every_template():
    from tools.fuzz import parallel
    from tools.fuzz.generator import PROFILES
    seen, timed, helpers = set(), 0, 0
    for i in range(300):
        k = generate(kernel_seed(SLICE_SEED, i), PROFILES["parallel"])
        assert isinstance(k, parallel.ParKernel)
        src = parallel.render(k)
        compile(src, "<parallel>", "exec")
        assert "@njit(parallel=True)" in src and ("prange(" in src or "np." in src)
        seen |= {b.name for b in k.blocks}
        timed += "for t in range(steps):" in src
        helpers += "def hfun" in src
        if k.helper is not None:        # never recursive (seed 17000115 was)
            assert "hfun" not in parallel.render_expr(k.helper)
    assert seen == set(parallel._Gen.TEMPLATES)
    assert timed > 20 and helpers > 20
    # deterministic, and the default profile's programs are unchanged by it
    a = parallel.render(generate(kernel_seed(SLICE_SEED, 5), PROFILES["parallel"]))
    assert a == parallel.render(generate(kernel_seed(SLICE_SEED, 5), PROFILES["parallel"]))
    assert generate(kernel_seed(SLICE_SEED, 3)).forms is None


def test_parallel_checker_compares_with_the_serial_gradient(monkeypatch):
    """The comparison with the serial kernel can fail: against a serial copy whose constants
    differ slightly (finite differences still pass), the kernel is a serial_mismatch."""
    from numba import njit

    from tools.fuzz import parallel
    from tools.fuzz.generator import PROFILES
    k = generate(kernel_seed(SLICE_SEED, 1), PROFILES["parallel"])
    k.blocks = [parallel.Block("map", ["for i in prange(n):", "    y[i] = 0.3 * math.sin(x[i])"],
                               [], arrays=frozenset({"x", "y"}))]
    k.helper = None
    assert parallel.check_parallel(k, Settings()).status == PASS

    def other(kern):
        ns = {}
        exec(parallel.render(k).replace("0.3 *", "0.3000001 *"), ns)
        return njit(ns["kern"].py_func)
    monkeypatch.setattr(parallel, "serial_copy", other)
    out = parallel.check_parallel(k, Settings())
    assert out.status == FAIL and out.category == "serial_mismatch[threads=1]", out


def test_parallel_shrinker_and_reproducer():
    """The shrinker drops blocks and subexpressions the oracle does not need; the reproducer
    it writes is a pytest file whose test runs the kernel's checks."""
    from tools.fuzz import parallel
    from tools.fuzz.generator import PROFILES
    k = next(k for k in (generate(kernel_seed(SLICE_SEED, i), PROFILES["parallel"])
                         for i in range(100))
             if len(k.blocks) >= 2 and any(b.name == "reduce" for b in k.blocks))
    small = parallel.shrink(k, lambda c: any(b.name == "reduce" for b in c.blocks), log=lambda m: 0)
    assert [b.name for b in small.blocks] == ["reduce"]
    assert parallel.count_nodes(small) < parallel.count_nodes(k)
    text = parallel.regression_test(small, Outcome(FAIL, "serial_mismatch[threads=2]"),
                                    command="python -m tools.fuzz --profile parallel")
    ns = {}
    exec(compile(text, "<reproducer>", "exec"), ns)
    ns[next(n for n in ns if n.startswith("test_fuzz_parallel_"))](1)


@pytest.mark.parametrize("i", range(PARALLEL_N))
def test_parallel_slice(i):
    from tools.fuzz.generator import PROFILES
    from tools.fuzz.parallel import render as prender
    seed = kernel_seed(SLICE_SEED, i)
    k = generate(seed, PROFILES["parallel"])
    out = check_program(k)
    assert out.status in (PASS, DISCARD, UNSUPPORTED), (
        f"seed {seed}: {out.status} {out.category}\n{prender(k)}\n{out.detail}\n"
        f"reproduce: python -m tools.fuzz --one {seed} --profile parallel")
    if out.status == PASS:
        assert out.forward.startswith(("checked", "unsupported"))


# ---------------------------------------------------------------------------------------------
# the exits profile (tools/fuzz/exits.py): temporaries and early exits, allocators checked
# ---------------------------------------------------------------------------------------------

EXITS_N = int(os.environ.get("ENZYME_FUZZ_EXITS_SLICE", "4"))


def test_exits_profile_draws_every_exit():
    from tools.fuzz import exits
    from tools.fuzz.generator import PROFILES
    seen = set()
    for i in range(300):
        k = generate(kernel_seed(SLICE_SEED, i), PROFILES["exits"])
        assert isinstance(k, exits.ExitKernel)
        compile(k.source, "<exits>", "exec")
        seen |= {(t, "test") for t, _, _, _ in k.exits} | {(a, "action") for _, a, _, _ in k.exits}
        seen |= {(w, "when") for _, _, w, _ in k.exits} | {(p, "place") for _, _, _, p in k.exits}
    assert seen == ({(t, "test") for t in exits.TESTS} | {(a, "action") for a in exits.ACTIONS}
                    | {(w, "when") for w in exits.WHEN}
                    | {(p, "place") for p in ("first", "after_temp", "last")})
    a = generate(kernel_seed(SLICE_SEED, 5), PROFILES["exits"]).source
    assert a == generate(kernel_seed(SLICE_SEED, 5), PROFILES["exits"]).source


def test_exits_slice_under_allocator_checks():
    """A few kernels on a worker started with PYTHONMALLOC=debug MALLOC_CHECK_=3: heap
    corruption kills it, a failure here."""
    from tools.fuzz.campaign import run_campaign
    from tools.fuzz.generator import PROFILES
    summary = run_campaign(EXITS_N, SLICE_SEED, jobs=1, config=PROFILES["exits"], progress=False)
    assert summary.generated == EXITS_N
    assert not summary.failures and not summary.invalid, summary.format()


# the complex profile (tools/fuzz/complex_data.py): complex arrays in both modes

def test_complex_profile_draws_every_sink_and_checks_a_slice():
    from tools.fuzz import complex_data
    from tools.fuzz.generator import PROFILES
    kernels = [generate(kernel_seed(SLICE_SEED, i), PROFILES["complex"]) for i in range(40)]
    for k in kernels:
        compile(k.source, "<complex>", "exec")
    sources = "".join(k.source for k in kernels)
    assert all(s in sources for s in ("out[i] = v", "s += 0.7", "z[i] = 0.5", "** w[i]",
                                      "** 2.5", "for t in range("))
    active = [k for k in kernels if k.active_c]             # c a complex Active scalar
    assert len(active) >= 5
    for k in kernels[:4] + active[:1]:
        out = check_program(k, Settings())
        assert out.status == PASS and out.forward == "checked", (k.source, out.detail)
    assert isinstance(kernels[0], complex_data.ComplexKernel)


# ---------------------------------------------------------------------------------------------
# the lists, dicts and optional profiles (tools/fuzz/containers.py): typed containers and
# Optional returns in both modes
# ---------------------------------------------------------------------------------------------

CONTAINERS_N = int(os.environ.get("ENZYME_FUZZ_CONTAINERS_SLICE", "2"))
CONTAINER_FEATURES = {
    "lists": {"argument", "built_view", "built_temp", "built_rows", "built_arrays", "elements",
              "arrexpr", "pairwise", "neighbour", "writes", "write_indexed", "steps", "prange"},
    "dicts": {"hyper", "lookup_in_loop", "steps", "update_w", "update_b", "prange"},
    "optional": {"prange", "use"} | {"test_" + t for t in ("is_not_none", "positive", "data")}
    | {"ret_" + r for r in ("pair", "nested", "first", "alone")}
    | {"call_" + c for c in ("omitted", "none", "positive", "negative")},
}


@pytest.mark.parametrize("profile", sorted(CONTAINER_FEATURES))
def test_container_profiles_draw_every_template(profile):
    from tools.fuzz import containers
    from tools.fuzz.generator import PROFILES
    seen = set()
    for i in range(150):
        k = generate(kernel_seed(SLICE_SEED, i), PROFILES[profile])
        assert isinstance(k, containers.ContainerKernel)
        compile(k.source, "<containers>", "exec")
        seen |= k.features
    assert seen == CONTAINER_FEATURES[profile]
    a = generate(kernel_seed(SLICE_SEED, 5), PROFILES[profile])
    assert a.source == generate(kernel_seed(SLICE_SEED, 5), PROFILES[profile]).source


def test_optional_profile_returns_an_optional_leaf():
    """A kernel called with a float w_max under a data test returns Optional(float)."""
    import numba

    from tools.fuzz import containers
    from tools.fuzz.generator import PROFILES
    k = next(k for k in (generate(kernel_seed(SLICE_SEED, i), PROFILES["optional"])
                         for i in range(200))
             if {"test_data", "ret_pair", "call_positive"} <= k.features and "prange" not in k.features)
    kern = containers.load(k)["kern"]
    pos, kw = containers.annotated(k)
    kern(*[a.value for a in pos], **{n: a.value for n, a in kw.items()})
    assert isinstance(kern.nopython_signatures[0].return_type[1], numba.types.Optional)


def test_container_forward_check_can_fail():
    """The <v, J u> = <J^T v, u> comparison fails when forward mode's weights differ from the
    reverse seeds."""
    from tools.fuzz import containers
    from tools.fuzz.generator import PROFILES
    k = next(k for k in (generate(kernel_seed(SLICE_SEED, i), PROFILES["lists"])
                         for i in range(50))
             if "argument" in k.features and "prange" not in k.features)
    kern = containers.load(k)["kern"]
    pos, _ = containers.annotated(k)
    v = {}
    for m, (a, arg) in enumerate(zip(pos, k.args)):
        if arg.kind == "list":
            v.update({(arg.name, j): np.linspace(0.5, 1.5, len(x)) for j, x in enumerate(a.value)})
        elif arg.kind == "arr":
            v[(arg.name,)] = np.ones(a.value.shape)
    assert containers.forward_check(kern, k, v, 1e-6) == ("checked", "")
    bad = {p: (2.0 if p[0] == "out" else 1.0) * x for p, x in v.items()}
    fwd = containers.forward_check

    def skewed(kern, k, v, rtol):      # reverse mode seeded with v, forward weighed with bad
        return fwd(kern, k, v, rtol, weights=bad)
    assert skewed(kern, k, v, 1e-6)[1].startswith("<v, J u> forward")


def _serial_container_seeds(profile):
    """The first CONTAINERS_N serial kernels of the profile without a loop of steps (parallel
    ones, and dict lookups repeated over steps, compile for up to a minute on a loaded
    machine; campaigns check them)."""
    from tools.fuzz.generator import PROFILES
    seeds = (kernel_seed(SLICE_SEED, i) for i in range(100))
    return [s for s in seeds
            if not {"prange", "steps"} & generate(s, PROFILES[profile]).features][:CONTAINERS_N]


@pytest.mark.parametrize("profile, seed", [(p, s) for p in sorted(CONTAINER_FEATURES)
                                           for s in _serial_container_seeds(p)])
def test_container_slice(profile, seed):
    from tools.fuzz.generator import PROFILES
    k = generate(seed, PROFILES[profile])
    out = check_program(k)
    assert out.status == PASS and out.forward == "checked", (
        f"seed {seed}: {out.status} {out.category}\n{k.source}\n{out.detail}\n"
        f"reproduce: python -m tools.fuzz --one {seed} --profile {profile}")
