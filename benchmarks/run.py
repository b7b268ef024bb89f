"""The benchmark runner behind `python -m benchmarks`.

For each workload: compile the primal, build the enzyme_py gradient (timing the first call),
check it (finite differences, the hand-written adjoint), then time primal, gradient,
hand-written adjoint and peers interleaved, repeat after repeat, so that every ratio is taken
pair by pair within one repeat and the noise of a shared machine hits both sides alike. The
table reports medians (of times, and of the per-repeat ratios).

A workload whose gradient raises or disagrees with finite differences is recorded as an
error; the run goes on.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

from .harness import rel_err, verify
from .workloads import ORDER

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "out")
PEERS = ("jax", "torch", "warp")


# ---- small helpers -----------------------------------------------------------------------

def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _short(text: str, width: int = 60) -> str:
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= width else first[:width - 3] + "..."


def _median(xs):
    return statistics.median(xs) if xs else None


def _peer_available(name):
    mod = {"jax": "jax", "torch": "torch", "warp": "warp"}[name]
    try:
        importlib.import_module(mod)
        return True
    except Exception:
        return False


def _tape_bytes(inst):
    import enzyme_py
    explain = getattr(enzyme_py, "explain", None)
    if explain is None:
        return None
    try:
        return int(explain(inst.kernel, *inst.annotated()).tape_bytes)
    except Exception:
        return None


# ---- one workload -------------------------------------------------------------------------

def run_workload(name, quick=False, repeats=None, budget_s=None, peers=PEERS, log=print):
    mod = importlib.import_module(f".workloads.{name}", __package__)
    row = {"workload": name, "title": mod.TITLE, "errors": {}}
    inst = mod.setup(quick=quick)
    row["size"] = inst.note
    rng = np.random.default_rng(12345)

    # primal: compile, then a warm call
    inst.reset()
    row["primal_compile_s"] = _timed(inst.primal)

    # enzyme_py gradient: first call = build + compile + run
    grad_ok = False
    g_enzyme = None
    try:
        inst.reset()
        row["grad_compile_s"] = _timed(lambda: (inst.compile(), inst.grad()))
        inst.reset()
        inst.grad()
        g_enzyme = inst.grad_vector().copy()
        ok, msg = verify(inst, rng)
        row["grad_check"] = msg
        if ok:
            grad_ok = True
        else:
            row["errors"]["enzyme_py"] = f"wrong gradient: {msg}"
    except Exception as exc:
        row["errors"]["enzyme_py"] = _error_text(exc)
    if "enzyme_py" in row["errors"]:
        log(f"  [{name}] enzyme_py: {_short(row['errors']['enzyme_py'], 200)}")
    row["tape_bytes"] = _tape_bytes(inst) if grad_ok else None

    # hand-written adjoint: checked against finite differences and enzyme_py
    hand_ok = False
    g_hand = None
    if inst.hand is not None:
        try:
            inst.reset()
            inst.hand.call()
            inst.reset()
            inst.hand.call()
            g_hand = inst.hand.result().copy()
            ok, msg = verify(inst, rng, g=g_hand)
            if ok and g_enzyme is not None and grad_ok:
                diff = rel_err(g_enzyme, g_hand)
                msg += f"; vs enzyme_py {diff:.1e}"
                ok = diff <= 1e-8
            row["hand_check"] = msg
            if ok:
                hand_ok = True
            else:
                row["errors"]["hand"] = f"wrong gradient: {msg}"
        except Exception as exc:
            row["errors"]["hand"] = _error_text(exc)
    inst.reset()

    # peers
    peer_calls = {}
    for peer in peers:
        if not _peer_available(peer):
            row[f"{peer}_status"] = "not installed"
            continue
        setup = getattr(mod, f"{peer}_setup", None)
        if setup is None:
            row[f"{peer}_status"] = "no port"
            continue
        try:
            if peer == "jax":
                import jax
                jax.config.update("jax_enable_x64", True)
            elif peer == "torch":
                import torch
                torch.set_num_threads(1)
            t0 = time.perf_counter()
            fwd, grad, result = setup(inst)
            grad()
            row[f"{peer}_compile_s"] = time.perf_counter() - t0
            fwd()
            ref = g_enzyme if grad_ok else (g_hand if hand_ok else None)
            got = np.asarray(result(), dtype=float).ravel()
            if ref is not None:
                diff = rel_err(got, ref)
                if not diff <= 1e-6:
                    raise AssertionError(f"{peer} gradient differs from the reference "
                                         f"by {diff:.2e}")
            else:
                ok, msg = verify(inst, rng, g=got)
                if not ok:
                    raise AssertionError(f"{peer} gradient: {msg}")
            row[f"{peer}_status"] = "ok"
            peer_calls[peer] = (fwd, grad)
        except Exception as exc:
            row[f"{peer}_status"] = "error"
            row["errors"][peer] = _error_text(exc)
    inst.reset()

    # interleaved timing
    calls = [("primal", lambda: inst.primal())]
    if grad_ok:
        calls.append(("grad", inst.grad))
    if hand_ok:
        calls.append(("hand", inst.hand.call))
    for peer, (fwd, grad) in peer_calls.items():
        calls.append((f"{peer}_primal", fwd))
        calls.append((f"{peer}_grad", grad))
    warm = 1 if quick else 2
    for _ in range(warm):
        for _, fn in calls:
            inst.reset()
            fn()
    # how many repeats fit the budget
    inst.reset()
    per_round = sum(_timed(fn) for _, fn in calls) + 1e-4
    if repeats is None:
        budget = budget_s if budget_s is not None else (0.5 if quick else 4.0)
        repeats = int(min(40 if not quick else 5, max(3 if quick else 7, budget / per_round)))
    times = {k: [] for k, _ in calls}
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for key, fn in calls:
                inst.reset()
                times[key].append(_timed(fn))
    finally:
        if gc_was:
            gc.enable()
    row["repeats"] = repeats
    for key, ts in times.items():
        row[f"{key}_s"] = _median(ts)
    prim = times["primal"]

    def ratio(a, b):
        if a in times and b in times:
            return _median([x / y for x, y in zip(times[a], times[b])])
        return None
    row["grad_over_primal"] = ratio("grad", "primal")
    row["hand_over_primal"] = ratio("hand", "primal")
    row["grad_over_hand"] = ratio("grad", "hand")
    for peer in peer_calls:
        row[f"{peer}_over_primal"] = ratio(f"{peer}_grad", "primal")
        row[f"{peer}_own_ratio"] = ratio(f"{peer}_grad", f"{peer}_primal")
        row[f"grad_over_{peer}"] = ratio("grad", f"{peer}_grad")
    row["primal_spread"] = (min(prim), max(prim))

    # the user API's overhead (validation + cache lookup) on top of the entry call
    if grad_ok and not hasattr(inst, "verify"):
        try:
            api, ent = [], []
            for _ in range(max(3, min(repeats, 10))):
                inst.reset()
                api.append(_timed(inst.grad_api))
                inst.reset()
                ent.append(_timed(inst.grad))
            row["autodiff_overhead_s"] = max(0.0, _median(api) - _median(ent))
        except Exception as exc:
            row["errors"]["autodiff_api"] = _error_text(exc)
    inst.reset()
    return row


def cold_start(name, quick):
    """First gradient call in two fresh processes sharing an empty on-disk cache
    (ENZYME_PY_CACHE_DIR): the first compiles and stores, the second loads."""
    out = []
    with tempfile.TemporaryDirectory(prefix="enzyme_py_cache_") as cache:
        env = dict(os.environ, ENZYME_PY_CACHE_DIR=cache)
        for _ in range(2):
            cmd = [sys.executable, "-m", f"{__package__}.coldstart", name] + (["--quick"] if quick
                                                                               else [])
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env,
                                  cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
            try:
                out.append(json.loads(proc.stdout.strip().splitlines()[-1])["grad_first_call_s"])
            except Exception:
                out.append(None)
    return out


# ---- table --------------------------------------------------------------------------------

def _ms(s):
    if s is None:
        return "-"
    ms = s * 1e3
    return f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"


def _x(r):
    return "-" if r is None else f"{r:.2f}"


def _bytes(b):
    if b is None:
        return "n/a"
    for unit in ("B", "KB", "MB", "GB"):
        if b < 1024 or unit == "GB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.1f} {unit}"
        b /= 1024


COLUMNS = [
    ("workload", 12), ("size", 24), ("primal ms", 10), ("grad ms", 10), ("grad/prim", 9),
    ("hand ms", 9), ("hand/prim", 9), ("enz/hand", 8), ("JAX ms", 9), ("JAX/prim", 8),
    ("JAX own", 7), ("torch", 13), ("warp", 13), ("tape", 9), ("compile s", 9),
    ("cache load s", 12),
]


def table_rows(rows):
    out = []
    notes = []
    for r in rows:
        err = r["errors"]
        if "enzyme_py" in err:
            notes.append((r["workload"], "enzyme_py", err["enzyme_py"]))
            grad = f"ERROR[{len(notes)}]"
            gp = comp = "-"
        else:
            grad, gp = _ms(r.get("grad_s")), _x(r.get("grad_over_primal"))
            comp = f"{r['grad_compile_s']:.2f}" if r.get("grad_compile_s") is not None else "-"
        if "hand" in err:
            notes.append((r["workload"], "hand", err["hand"]))
            hand, hp = f"ERROR[{len(notes)}]", "-"
        else:
            hand, hp = _ms(r.get("hand_s")), _x(r.get("hand_over_primal"))

        def peer_cell(p, with_time=True):
            st = r.get(f"{p}_status", "not installed")
            if st == "error":
                notes.append((r["workload"], p, err.get(p, "")))
                return f"ERROR[{len(notes)}]"
            if st == "ok":
                return _ms(r.get(f"{p}_grad_s")) if with_time else _x(r.get(f"{p}_over_primal"))
            return st
        jax_ms = peer_cell("jax")
        jax_r = _x(r.get("jax_over_primal")) if r.get("jax_status") == "ok" else "-"
        jax_own = _x(r.get("jax_own_ratio")) if r.get("jax_status") == "ok" \
            else "-"
        torch = peer_cell("torch", False) if r.get("torch_status") == "ok" \
            else peer_cell("torch")
        warp = peer_cell("warp", False) if r.get("warp_status") == "ok" \
            else peer_cell("warp")
        cache = r.get("cache_load_s")
        out.append([r["workload"], r.get("size", ""), _ms(r.get("primal_s")), grad, gp, hand, hp,
                    _x(r.get("grad_over_hand")), jax_ms, jax_r, jax_own, torch, warp,
                    _bytes(r.get("tape_bytes")), comp,
                    "n/a" if cache is None else f"{cache:.2f}"])
    return out, notes


def format_table(rows):
    body, notes = table_rows(rows)
    widths = [max(w, len(h), *(len(str(b[i])) for b in body)) for i, (h, w) in
              enumerate(COLUMNS)]
    lines = ["  ".join(h.ljust(w) for (h, _), w in zip(COLUMNS, widths)),
             "  ".join("-" * w for w in widths)]
    for b in body:
        lines.append("  ".join(str(c).ljust(w) for c, w in zip(b, widths)))
    if notes:
        lines.append("")
        for i, (wl, who, text) in enumerate(notes, 1):
            lines.append(f"[{i}] {wl} / {who}: " + text.replace("\n", "\n    "))
    return "\n".join(lines)


def format_markdown(rows):
    body, notes = table_rows(rows)
    lines = ["| " + " | ".join(h for h, _ in COLUMNS) + " |",
             "|" + "|".join("---" for _ in COLUMNS) + "|"]
    for b in body:
        lines.append("| " + " | ".join(str(c) for c in b) + " |")
    for i, (wl, who, text) in enumerate(notes, 1):
        lines.append(f"\n[{i}] {wl} / {who}: `{_short(text, 300)}`")
    return "\n".join(lines)


def write_png(rows, path, log=print):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        log("matplotlib is not installed: skipping the bar chart "
            "(pip install matplotlib, or the 'bench' extra)")
        return None
    series = [("enzyme_py", "grad_over_primal"), ("hand-written", "hand_over_primal"),
              ("JAX jit(grad)", "jax_over_primal"), ("PyTorch", "torch_over_primal"),
              ("Warp (CPU)", "warp_over_primal")]
    series = [s for s in series if any(r.get(s[1]) for r in rows)]
    names = [r["workload"] for r in rows]
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(names)), 4.5))
    width = 0.8 / max(1, len(series))
    for k, (label, key) in enumerate(series):
        xs = [i + (k - (len(series) - 1) / 2) * width for i in range(len(names))]
        vals = [r.get(key) or 0.0 for r in rows]
        bars = ax.bar(xs, vals, width, label=label)
        for b, r in zip(bars, rows):
            if key == "grad_over_primal" and "enzyme_py" in r["errors"]:
                ax.text(b.get_x() + b.get_width() / 2, 0.03, "error", rotation=90,
                        ha="center", va="bottom", fontsize=7, color="red",
                        transform=ax.get_xaxis_transform())
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=20)
    ax.set_yscale("log")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set_ylabel("gradient time / Numba primal time")
    ax.set_title("Gradient / primal (median of per-repeat ratios)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# ---- main ---------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help=f"run only this workload (repeatable; one of {', '.join(ORDER)})")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats per workload")
    ap.add_argument("--no-peers", action="store_true", help="skip JAX / PyTorch / Warp")
    ap.add_argument("--cold", action="store_true",
                    help="also time the first gradient call in fresh processes")
    ap.add_argument("--out", default=OUT_DIR, help="output folder (default benchmarks/out)")
    args = ap.parse_args(argv)
    names = ORDER
    if args.only:
        bad = [n for n in args.only if n not in ORDER]
        if bad:
            ap.error(f"unknown workload {bad[0]!r}; choose from {', '.join(ORDER)}")
        names = [n for n in ORDER if n in args.only]
    peers = () if args.no_peers else PEERS
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in names:
        print(f"running {name} ...", file=sys.stderr, flush=True)
        try:
            row = run_workload(name, quick=args.quick, repeats=args.repeats, peers=peers,
                               log=lambda m: print(m, file=sys.stderr, flush=True))
        except Exception as exc:          # the harness itself failed on this workload
            traceback.print_exc()
            row = {"workload": name, "title": name, "errors": {"enzyme_py": _error_text(exc)}}
        if args.cold and "enzyme_py" not in row["errors"]:
            first, second = cold_start(name, args.quick)
            row["fresh_first_call_s"] = first
            row["cache_load_s"] = second
        rows.append(row)
    for peer in PEERS:
        if peer in peers and not _peer_available(peer):
            print(f"{peer}: not installed", file=sys.stderr)
    meta = {"python": platform.python_version(), "machine": platform.machine(),
            "processor": platform.processor(), "cpus": os.cpu_count(), "quick": args.quick,
            "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    for mod in ("numba", "llvmlite", "numpy", "jax", "torch", "warp"):
        try:
            meta[mod] = importlib.import_module(mod).__version__
        except Exception:
            pass
    text = format_table(rows)
    print(text)
    suffix = "_quick" if args.quick else ""
    if args.only:
        suffix += "_" + "_".join(names)
    jpath = os.path.join(args.out, f"results{suffix}.json")
    with open(jpath, "w") as f:
        json.dump({"meta": meta, "rows": rows, "table": text}, f, indent=1, default=float)
    with open(os.path.join(args.out, f"results{suffix}.md"), "w") as f:
        f.write(format_markdown(rows) + "\n")
    png = write_png(rows, os.path.join(args.out, f"ratios{suffix}.png"),
                    log=lambda m: print(m, file=sys.stderr))
    print(f"\nwrote {jpath}" + (f" and {png}" if png else ""), file=sys.stderr)
    return 0
