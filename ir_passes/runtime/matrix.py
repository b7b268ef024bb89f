"""Helper functions for the BLAS and LAPACK records (rules/blas.py, rules/lapack*.py), added on
demand through helpers.ensure, each for float64 and float32 (`enzpy.<name>.<f64|f32>`).

Whole functions have a runtime file each (nrm2_adjoint.ll, arena.ll, swap_rows.ll, ...). The
elementwise maps over a column-major matrix share one loop, grid.ll, filled from a section of
matrix_grids.ll: a section gives `params:`, `grid: ROWS x COLS` (default %rows x %cols), values
`KEY: value`, and the blocks `pre:`, `head:`, `body:`, `tail:` (a section without labels is a
body, or a piece other sections bring in as `{{KEY}}`). The maps of square matrices come in
families: `square.<name>` for real matrices and their complex twins `c<name>`, `hermitian.<name>`
for complex matrices alone."""
from __future__ import annotations

import re

from .helpers import FLOATS, HELPERS, add_file
from .source import fill, load, sections

PIECES = sections("matrix_grids")
SHARED = {key: text for key, text in PIECES.items() if key.isupper()}
FIELD = re.compile(r"^(params|grid|[A-Z][A-Z0-9_]*): (.*)$")
BLOCKS = ("pre", "head", "body", "tail")


def fields(piece: str) -> dict:
    """The fields and blocks of a section of matrix_grids.ll."""
    out, block = {b: [] for b in BLOCKS}, "body"
    for line in piece.splitlines():
        m = FIELD.match(line)
        if m:
            out[m.group(1)] = m.group(2)
        elif line.rstrip(":") in BLOCKS and line.endswith(":"):
            block = line[:-1]
        else:
            out[block].append(line)
    return {k: "\n".join(v) if k in BLOCKS else v for k, v in out.items()}


def grid(name: str, piece: str, **values) -> None:
    """Register `enzpy.<name>.<s>`: grid.ll filled from section text `piece` and `values`."""
    f = fields(piece)
    rows, _, cols = f.pop("grid", "%rows x %cols").partition(" x ")
    text = load("grid", NAME=name, PARAMS=f.pop("params"), ROWS=rows, COLS=cols, SUFFIX="{{SUFFIX}}",
                **{b.upper(): f.pop(b) for b in BLOCKS})
    for s, t, _ in FLOATS:
        HELPERS[f"enzpy.{name}.{s}"] = fill(text, SUFFIX=s, TYPE=t, **SHARED, **f, **values)


for _key, _piece in PIECES.items():
    _family, _, _name = _key.partition(".")
    if _family == "square":
        grid(_name, PIECES["family.square"], MAP=_piece, ONE="1.0")
        grid("c" + _name, PIECES["family.complex_square"], MAP=_piece, ONE="%one")
    elif _family == "hermitian":
        grid(_name, PIECES["family.hermitian"], MAP=_piece)
    elif not _name and not _key.isupper():
        grid(_key, _piece)

add_file("enzpy.arena_push", "arena")
for _s, _t, _ in FLOATS:
    for _c, _p in (("", 1), ("c", 2)):
        add_file(f"enzpy.{_c}nrm2_adjoint.{_s}", "nrm2_adjoint", SUFFIX=_s, TYPE=_t, PREFIX=_c, PARTS=_p)
        add_file(f"enzpy.{_c}nrm2_tangent.{_s}", "nrm2_tangent", SUFFIX=_s, TYPE=_t, PREFIX=_c, PARTS=_p)
    for _file in ("swap_rows", "cswap_rows", "eig_middle", "diagonal", "cdot_adjoint"):
        add_file(f"enzpy.{_file}.{_s}", _file, SUFFIX=_s, TYPE=_t)
    # the adjoint operand (WHICH) and the primal one, in gemm_guarded as loaded values
    for _w, _d, _p in (("a", "%va", "%vb"), ("b", "%vb", "%va")):
        add_file(f"enzpy.gemm_guarded_{_w}.{_s}", "gemm_guarded", SUFFIX=_s, TYPE=_t, WHICH=_w, ADJOINT=_d,
                 PRIMAL=_p)
    for _w, _d, _p, _dl, _pl in (("a", "a", "b", "m", "n"), ("b", "b", "a", "n", "m")):
        add_file(f"enzpy.zero_meets_nonfinite_{_w}.{_s}", "zero_meets_nonfinite", SUFFIX=_s, TYPE=_t,
                 WHICH=_w, ADJOINT=_d, PRIMAL=_p, ADJOINT_LEN=_dl, PRIMAL_LEN=_pl)
