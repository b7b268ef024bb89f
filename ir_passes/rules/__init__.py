"""Everything known about an instruction or a call, as data: derivative rules (registry.py and
the rule modules), what calls do besides computing a value (effects.py), whole-vector library
calls with their own derivatives (blas.py, lapack.py), the host's calling convention (convention.py), and
the strong-zero application of a rule's partials that both modes share (partials.py).

Importing any of it fills the tables: the rule modules register themselves here."""
from . import arithmetic, effects, intrinsics, libdevice, libm, nvptx  # noqa: F401 - they fill the rule table
