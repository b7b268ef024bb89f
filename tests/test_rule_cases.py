"""The rule families' finite-difference cases (tests/rule_cases/<family>.py, one module per
family of ir_passes/rules/), each run in reverse mode (check_gradient) and forward mode (a
central difference along a random direction), or in the modes it names: fd_modes.py. Families whose cases are still
written as tests of their own (PENDING) are named with the file that holds them."""
import importlib
import os
import pkgutil

import pytest

import rule_cases
from fd_modes import check_forward, check_reverse

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = os.path.join(os.path.dirname(HERE), "ir_passes", "rules")
FAMILIES = sorted(m.name for m in pkgutil.iter_modules(rule_cases.__path__))
PENDING = {"lapack_qr": "test_linalg_svd_qr.py",
           "lapack_lstsq": "test_linalg_svd_qr.py", "lapack_eig": "test_complex_lapack.py",
           "lapack_eig_real": "test_linalg_eig.py",
           "libm": "test_kernels_math.py"}
CASES = [(f"{family}:{case.name}", case) for family in FAMILIES
         for case in importlib.import_module(f"rule_cases.{family}").CASES]


@pytest.mark.parametrize("case,mode", [(c, m) for _, c in CASES for m in c.modes],
                         ids=[f"{name}-{m}" for name, c in CASES for m in c.modes])
def test_case(case, mode):
    check = check_reverse if mode == "reverse" else check_forward
    check(case.kernel, *case.inputs(), rtol=case.rtol)


def test_every_family_has_cases():
    families = {n[:-3] for n in os.listdir(RULES)
                if n in ("blas.py", "libm.py") or n.startswith("lapack") and n.endswith(".py")}
    assert set(FAMILIES) <= families and all(importlib.import_module(f"rule_cases.{f}").CASES for f in FAMILIES)
    assert set(FAMILIES) | set(PENDING) == families, families ^ (set(FAMILIES) | set(PENDING))
    assert not set(FAMILIES) & set(PENDING)
