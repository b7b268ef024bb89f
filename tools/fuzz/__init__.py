"""Differential fuzzing of enzyme_py: random Numba kernels, gradients checked against finite
differences (issue 6).

- `generate(seed)` -> `Program`: a random valid kernel and its arguments (`generator.py`);
- `render(prog)` -> its Python source (`program.py`);
- `check_program(prog)` -> `Outcome` (`checker.py`);
- `shrink(prog, outcome)` -> a smaller program failing the same way, and
  `regression_test(prog, outcome)` -> a ready-to-paste pytest file (`shrinker.py`);
- `python -m tools.fuzz --n 10000 --seed S` runs a campaign (`campaign.py`).
"""
from .checker import Outcome, Settings, check_program
from .generator import Config, generate
from .program import Program, render

__all__ = ["generate", "render", "check_program", "Outcome", "Settings", "Config", "Program"]
