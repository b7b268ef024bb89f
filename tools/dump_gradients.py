"""Write the generated module text of many gradients to a folder, to compare two versions of
the code byte for byte (a refactor must not change what ir_passes emits).

    python -m tools.dump_gradients OUT [--only GROUP ...] [-j 2]

Groups: one per benchmark workload (`workload.<name>`), one per gradient corpus file of the
tests (`corpus.<file>`), `modes` (batched reverse, Hessian-vector products, batched forward
on a few corpus kernels) and `linalg` (kernels of the BLAS/LAPACK tests, one or more per record
of rules/blas.py and rules/lapack*.py, complex ones included). Each group runs in a fresh
process, in a fixed order, so Numba's function numbering (part of the mangled names) is the
same from run to run. For every case it writes `<case>.reverse.ll` (CompiledGradient.generated,
or the error), `<case>.layout.txt` (the tape layout `explain` reads) and `<case>.forward.ll`
(the forward-mode module, or the error). Compare two runs with `diff -r` (a tree checked out in
another folder writes that folder in the debug info's file names: replace it before comparing).

The ADBench data is looked for in shared/data/adbench one or two folders above the checkout
unless ADBENCH_DATA names it.
"""
from __future__ import annotations

import argparse
import importlib
import os
import subprocess
import sys

import numpy as np
from numba import njit

from benchmarks.workloads.ba import ba_residual
from enzyme_py import Active, BatchDuplicated, Const, Duplicated, Forward, compile_gradient, inspect

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ["elementwise", "elementwise_noneed", "rnn", "heat", "gmm", "lstm", "ba", "nbody",
             "softdtw"]
CORPORA = ["test_kernels_ops", "test_kernels_arrays", "test_kernels_loops", "test_kernels_math"]
MODES_CASES = ("f32_sin_exp", "rounding_zero_derivative", "cast_fpext_f32_in", "dot_return")


def groups() -> list:
    return [f"workload.{w}" for w in WORKLOADS] + [f"corpus.{c}" for c in CORPORA] + \
        ["modes", "linalg"]


def describe(exc: BaseException) -> str:
    return f"error: {type(exc).__name__}: {exc}\n"


def write(folder: str, name: str, text: str) -> None:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w") as f:
        f.write(text)


def forward_args(args):
    """The annotations of a reverse-mode call, as forward mode takes them (the shadows and a
    unit tangent for each Active scalar as the directions)."""
    return [Active(a.value, 1.0) if isinstance(a, Active) else a for a in args]


def dump_case(folder: str, name: str, kernel, args) -> None:
    try:
        g = inspect(kernel, *args)
        write(folder, f"{name}.reverse.ll", g.generated + (describe(g.error) if g.error else ""))
        write(folder, f"{name}.layout.txt", repr(g.layout) + "\n")
    except Exception as exc:  # noqa: BLE001 - the error is part of the behaviour compared
        write(folder, f"{name}.reverse.ll", describe(exc))
    try:
        f = inspect(kernel, *forward_args(args), mode=Forward)
        write(folder, f"{name}.forward.ll", f.generated + (describe(f.error) if f.error else ""))
    except Exception as exc:  # noqa: BLE001
        write(folder, f"{name}.forward.ll", describe(exc))


def run_workload(out: str, name: str) -> None:
    mod = importlib.import_module(f"benchmarks.workloads.{name}")
    inst = mod.setup(quick=True)
    folder = os.path.join(out, f"workload.{name}")
    if name == "ba":
        dump_case(folder, "ba_residual", ba_residual, inst.annotated())
        c = compile_gradient(ba_residual, *inst.batched_args())
        write(folder, "ba_residual.batched.ll", c.generated)
        return
    dump_case(folder, name, inst.kernel, inst.annotated())


def corpus_cases(module: str) -> list:
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    return importlib.import_module(module).corpus.cases


def run_corpus(out: str, module: str) -> None:
    folder = os.path.join(out, f"corpus.{module}")
    for c in corpus_cases(module):
        dump_case(folder, c.name, c.kernel, c.args())


def hvp_module():
    """enzyme_py's Hessian-vector module, where this tree has it (older trees: enzyme_py/hvp.py)."""
    if os.path.exists(os.path.join(ROOT, "enzyme_py", "modes", "hvp.py")):
        return importlib.import_module("enzyme_py.modes.hvp")
    return importlib.import_module("enzyme_py.hvp")


def run_modes(out: str) -> None:
    """Batched reverse (k seeds), batched forward (k directions) and Hessian-vector products."""
    folder = os.path.join(out, "modes")
    cases = {c.name: c for m in CORPORA for c in corpus_cases(m)}
    for name in MODES_CASES:
        c = cases[name]
        args = c.args()
        batched = [BatchDuplicated(a.value, (a.shadow, np.zeros_like(a.shadow)))
                   if isinstance(a, Duplicated) else a for a in args]
        try:
            g = compile_gradient(c.kernel, *batched)
            write(folder, f"{name}.batched_reverse.ll", g.gradient + g.generated)
        except Exception as exc:  # noqa: BLE001
            write(folder, f"{name}.batched_reverse.ll", describe(exc))
        fwd = [Active(a.value, (1.0, 0.5)) if isinstance(a, Active) else a for a in batched]
        try:
            f = inspect(c.kernel, *fwd, mode=Forward)
            write(folder, f"{name}.batched_forward.ll", f.generated + (describe(f.error) if f.error else ""))
        except Exception as exc:  # noqa: BLE001
            write(folder, f"{name}.batched_forward.ll", describe(exc))


    @njit
    def energy(x, k):
        e = 0.0
        for i in range(x.shape[0] - 1):
            e += 0.5 * k * (x[i + 1] - x[i]) ** 2 + np.sin(x[i]) * x[i + 1]
        return e

    x = np.linspace(-1.0, 1.0, 7)
    for width in (1, 3):
        h = hvp_module().compile_hvp(energy, x, Const(2.0).value, width=width)
        write(folder, f"energy.hvp{width}.ll", h.gradient + h.generated)


# (test module, kernel, argument shapes, dtype): float arrays are Duplicated, ints passed as is
LINALG = [
    ("rule_cases.blas", "matmul_into", [(3, 4), (4, 2), (3, 2)], np.float64),
    ("rule_cases.blas", "matvec", [(3, 4), (4,)], np.float64),
    ("rule_cases.blas", "vecmat", [(3,), (3, 4)], np.float32),
    ("rule_cases.blas", "norm_of", [(5,)], np.float64),
    ("rule_cases.blas", "vdot_of", [(5,), (5,)], np.float64),
    ("rule_cases.blas", "product_then_overwrite", [(3, 3), (3, 3), (3, 3)], np.float64),
    ("rule_cases.blas", "product_loop", [(4, 4), (4, 3), (4, 3), 3], np.float64),
    ("rule_cases.lapack", "solve_sum", [(4, 4), (4,)], np.float64),
    ("rule_cases.lapack_lu", "chol_weighted", [(4, 4), (4, 4)], np.float64),
    ("rule_cases.lapack_lu", "packed_lu_use", [(4, 4), (4, 4)], np.float64),
    ("rule_cases.lapack_lu", "inv_weighted", [(4, 4), (4, 4)], np.float64),
    ("rule_cases.lapack_spectral", "eigh_use", [(4, 4), (4,), (4, 4)], np.float64),
    ("test_linalg_svd_qr", "svd_thin", [(5, 3), (5, 3), (3,), (3, 3)], np.float64),
    ("test_linalg_svd_qr", "qr_weighted", [(5, 3), (5, 3), (3, 3)], np.float64),
    ("test_linalg_svd_qr", "lstsq_use", [(5, 3), (5, 2), (3, 2), (2,), (3,)], np.float64),
    ("test_complex_lapack", "norm_into", [(5,), (1,)], np.complex128),
    ("test_complex_lapack", "chol_into", [(3, 3), (3, 3)], np.complex128),
    ("test_complex_lapack", "svd_into", [(4, 3), (4, 3), (3,), (3, 3)], np.complex128),
    ("test_complex_lapack", "eigvals_into", [(3, 3), (3,)], np.complex128),
]


def linalg_args(shapes, dtype) -> list:
    r = np.random.default_rng(0)
    out = []
    for s in shapes:
        if isinstance(s, int):
            out.append(s)
            continue
        a = r.uniform(-1, 1, s)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * r.uniform(-1, 1, s)
        if len(s) == 2 and s[0] == s[1]:
            a = a @ a.conj().T + s[0] * np.eye(s[0])     # definite: every solver takes it
        a = a.astype(dtype)
        out.append(Duplicated(a, np.zeros_like(a)))
    return out


def run_linalg(out: str) -> None:
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    folder = os.path.join(out, "linalg")
    for module, name, shapes, dtype in LINALG:
        kernel = getattr(importlib.import_module(module), name)
        dump_case(folder, name, kernel, linalg_args(shapes, dtype))


def run_group(out: str, group: str) -> None:
    kind, _, name = group.partition(".")
    if kind == "workload":
        run_workload(out, name)
    elif kind == "corpus":
        run_corpus(out, name)
    elif kind == "linalg":
        run_linalg(out)
    else:
        run_modes(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.dump_gradients")
    ap.add_argument("out", help="folder to write into (created)")
    ap.add_argument("--only", nargs="*", default=None, help="groups (default: all)")
    ap.add_argument("-j", type=int, default=2, help="groups run in parallel")
    ap.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    todo = args.only or groups()
    if args.in_process:
        for g in todo:
            run_group(args.out, g)
        return 0
    env = dict(os.environ, PYTHONHASHSEED="0")
    if "ADBENCH_DATA" not in env:
        for up in (os.path.dirname(ROOT), os.path.dirname(os.path.dirname(ROOT))):
            if os.path.isdir(os.path.join(up, "shared", "data", "adbench")):
                env["ADBENCH_DATA"] = os.path.join(up, "shared", "data", "adbench")
                break
    env.pop("ENZYME_PY_CACHE_DIR", None)
    running, failed = [], []
    for g in todo:
        cmd = [sys.executable, "-m", "tools.dump_gradients", args.out, "--in-process", "--only", g]
        running.append((g, subprocess.Popen(cmd, cwd=ROOT, env=env)))
        while len([p for _, p in running if p.poll() is None]) >= args.j:
            running[[p.poll() is None for _, p in running].index(True)][1].wait()
    for g, p in running:
        if p.wait() != 0:
            failed.append(g)
    if failed:
        print("failed groups:", " ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
