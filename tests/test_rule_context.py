"""The BLAS/LAPACK records (ir_passes/rules/blas.py, lapack*.py) and the warp shuffles
(nvptx.py) use only the rule context
(ir_passes/rules/context.py) of the transform calling them, and reverse mode's Gradient and
forward mode's ForwardMode implement every member of it."""
import ast
import pathlib

import pytest

from ir_passes.rules import context
from ir_passes.transforms.forward.state import ForwardMode
from ir_passes.transforms.reverse.sweeps.gradient import Gradient

RULES = pathlib.Path(context.__file__).parent
FILES = [RULES / "blas.py", RULES / "nvptx.py"] + sorted(RULES.glob("lapack*.py"))


def members(protocol) -> set:
    out = set()
    for cls in protocol.__mro__:
        if cls.__module__ == context.__name__:
            out |= {n for n in vars(cls) if not n.startswith("_")}
            out |= set(vars(cls).get("__annotations__", {}))
    return out


@pytest.mark.parametrize("protocol,impl", [(context.ReverseContext, Gradient),
                                           (context.ForwardContext, ForwardMode)])
def test_the_transforms_implement_the_context(protocol, impl):
    missing = [n for n in sorted(members(protocol))
               if not hasattr(impl, n) and n not in getattr(impl, "__slots__", ())]
    assert not missing, f"{impl.__name__} lacks {missing}"


def context_uses(tree) -> list:
    """(line, name) of each attribute read on a rule context: `g.x`, `fm.x`, `self.g.x`."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        v = node.value
        if isinstance(v, ast.Name) and v.id in ("g", "fm") or \
                isinstance(v, ast.Attribute) and v.attr == "g" and \
                isinstance(v.value, ast.Name) and v.value.id == "self":
            out.append((node.lineno, node.attr))
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_records_use_only_the_context(path):
    allowed = members(context.ReverseContext) | members(context.ForwardContext)
    uses = context_uses(ast.parse(path.read_text()))
    assert uses, "the check sees no use of the context"
    outside = [f"{path.name}:{line} .{name}" for line, name in uses if name not in allowed]
    assert not outside, "reaches past the rule context: " + ", ".join(outside)
