"""Structural promises of the code (docs/architecture.md): declared fields fail loudly on a typo,
internal errors are told apart from unsupported code, ir_passes names no host, the FileCheck
folders are named as the passes, and no test drops a check_gradient report unread."""
import ast
import os
import re

import pytest

import ir_passes
from ir_passes import InternalError, UnsupportedError, parse_module
from ir_passes.ir.instructions import Instruction
from ir_passes.passes import PASSES
from ir_passes.transforms.forward.state import ForwardMode
from ir_passes.transforms.reverse.sweeps.gradient import Gradient

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

MODULE = """
define void @f(ptr %x, ptr %y) {
entry:
  %a = load double, ptr %x, align 8
  %m = fmul double %a, %a
  store double %m, ptr %y, align 8
  ret void
}
"""


def test_instruction_fields_are_declared():
    inst = Instruction("fadd")
    inst.flags = ["fast"]
    with pytest.raises(AttributeError):
        inst.flag = ["fast"]          # a typo of `flags`
    c = inst.copy()
    assert c.flags == ["fast"] and c.flags is not inst.flags


def test_reverse_and_forward_state_fields_are_declared():
    module = parse_module(MODULE)
    g = Gradient(module, module.functions["f"], ["dup", "dup"], "grad")
    g.layout = None
    with pytest.raises(AttributeError):
        g.layuot = None
    fm = ForwardMode(module, "f", ["dup", "dup"], "fwd")
    with pytest.raises(AttributeError):
        fm.widht = 2


def test_internal_error_is_not_unsupported_and_asks_for_the_kernel():
    err = InternalError("a value is used before it is defined", "%x = fadd double %a, %b")
    assert not isinstance(err, UnsupportedError)
    assert "report" in str(err) and "kernel" in str(err)


def test_ir_passes_names_no_host():
    found = []
    for folder, _, names in os.walk(os.path.join(ROOT, "ir_passes")):
        for n in names:
            if n.endswith(".py"):
                text = open(os.path.join(folder, n)).read()
                found += [f"{n}: {m}" for m in re.findall(r"(?i)numba|NRT_\w*", text)]
    assert found == []


def test_filecheck_folders_are_named_as_the_passes():
    root = os.path.join(HERE, "filecheck")
    folders = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))
               and any(f.endswith(".ll") for f in os.listdir(os.path.join(root, d)))}
    # (a folder with no test left, e.g. lit's Output/ after a rename, is not a test folder;
    # host/ holds the host's own IR files, enzyme_py/bridge/*.ll, not a pass's)
    assert folders - {"roundtrip", "host"} <= set(PASSES), folders - set(PASSES)


# each module of transforms/reverse/ (its path below it) -> the folder of tests/filecheck/reverse-mode/
# that holds its golden tests, named as the module (the state and the plan are what the driver and
# the availability tests print)
REVERSE_GOLDEN = {
    "sweeps/driver": "driver", "sweeps/gradient": "driver", "sweeps/forward_sweep": "forward-sweep",
    "sweeps/reverse_sweep": "reverse-sweep", "sweeps/instructions": "instructions",
    "sweeps/report": "report",
    "tape/tape": "tape", "tape/tape_keys": "tape-keys", "tape/availability": "availability",
    "tape/plan": "availability", "tape/recurrence": "recurrence", "tape/restore": "restore",
    "tape/retain": "retain",
    "shadows/memory": "memory", "shadows/growing": "growing", "shadows/shadow_updates": "shadow-updates",
    "shadows/deferred": "deferred", "shadows/deferred_rank1": "deferred-rank1",
    "calls/calls": "calls", "calls/public_split": "public-split", "calls/success": "success",
    "loops/fusion": "fusion", "loops/gated": "gated", "loops/trips": "trips",
    **{f"loops/checkpoint/{m}": "checkpoint" for m in ("budget", "emit", "outline", "schedule", "state",
                                                        "step_local", "version")},
    "parallel/parallel_launch": "parallel", "parallel/parallel_private": "parallel",
    "../common/noneed": "noneed",
}


def test_every_reverse_module_has_golden_tests():
    source = os.path.join(ROOT, "ir_passes", "transforms", "reverse")
    modules = {os.path.relpath(os.path.join(folder, n), source)[:-3].replace(os.sep, "/")
               for folder, _, names in os.walk(source) for n in names
               if n.endswith(".py") and n != "__init__.py"}
    assert modules - set(REVERSE_GOLDEN) == set()
    stale = [m for m in REVERSE_GOLDEN if not os.path.exists(os.path.join(source, m + ".py"))]
    assert stale == []      # every entry names a module that is there
    tests = os.path.join(HERE, "filecheck", "reverse-mode")
    folders = {d for d in os.listdir(tests) if os.path.isdir(os.path.join(tests, d))
               and any(f.endswith(".ll") for f in os.listdir(os.path.join(tests, d)))}
    assert set(REVERSE_GOLDEN.values()) == folders, set(REVERSE_GOLDEN.values()) ^ folders
    assert [f for f in os.listdir(tests) if f.endswith(".ll")] == []     # each in its module's folder


def test_public_names_still_exported():
    for name in ("parse_module", "print_module", "reverse_mode", "forward_mode", "Extent", "Heap",
                 "LIBC_HEAP", "register_heap", "UnsupportedError", "register_allocator",
                 "register_dot", "register_external", "register_inactive", "Activity",
                 "CacheMode", "InternalError", "register_success_codes"):
        assert hasattr(ir_passes, name), name


def test_no_test_drops_a_gradient_report():
    """check_gradient returns its report and raises nothing: a call whose report is not used
    (outside `pytest.raises`) checks nothing."""
    dropped = []
    for folder, _, names in os.walk(HERE):
        for n in names:
            if not n.endswith(".py"):
                continue
            path = os.path.join(folder, n)
            tree = ast.parse(open(path).read())
            raising = {id(node) for w in ast.walk(tree) if isinstance(w, ast.With)
                       for item in w.items if "raises" in ast.unparse(item.context_expr)
                       for stmt in w.body for node in ast.walk(stmt)}
            for node in ast.walk(tree):
                if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                        and ast.unparse(node.value.func).endswith("check_gradient") and id(node) not in raising:
                    dropped.append(f"{os.path.relpath(path, ROOT)}:{node.lineno}")
    assert dropped == []
