"""The import structure of ir_passes and enzyme_py (docs/architecture.md): no circles, imports at
the top of modules (optional dependencies excepted), no private name imported across modules,
and every import going down the layers."""
import ast

from tools.check_imports import analyse, cycles, modules

# Layers, lowest first: a module imports modules of its own layer or of lower ones. Groups of the
# same layer (reverse and forward mode) do not import each other.
IR_PASSES = [
    [("ir_passes.ir", "ir_passes.errors", "ir_passes.options")],
    [("ir_passes.runtime",)],
    [("ir_passes.rules",)],
    [("ir_passes.analysis",)],
    [("ir_passes.transforms.common",)],
    [("ir_passes.transforms.prepare",)],
    [("ir_passes.transforms.reverse",), ("ir_passes.transforms.forward",)],
    [("ir_passes.transforms.gpu_kernel",)],
    [("ir_passes.passes", "ir_passes.opt", "ir_passes")],
]
ENZYME_PY = [
    [("enzyme_py.annotations", "enzyme_py.errors", "enzyme_py.timings", "enzyme_py.options")],
    [("enzyme_py.arguments",)],
    [("enzyme_py.bridge",)],
    [("enzyme_py.disk_cache",)],
    [("enzyme_py.modes",)],
    [("enzyme_py.api",)],
    [("enzyme_py.check", "enzyme_py.explain", "enzyme_py.helpers", "enzyme_py.custom",
      "enzyme_py.njit_api", "enzyme_py.workspace", "enzyme_py.sparse", "enzyme_py.colouring",
      "enzyme_py")],
]
# transforms/reverse/'s groups, lowest first (docs/architecture.md): calls/ and loops/ share a layer
# as one group (calls.py asks checkpoint/ about outlined time loops, checkpoint/ and fusion.py
# ask calls/)
_R = "ir_passes.transforms.reverse."
REVERSE = [
    [(_R + "tape",)],
    [(_R + "shadows",)],
    [(_R + "calls", _R + "loops")],
    [(_R + "parallel",)],
    [(_R + "sweeps",)],
]
# target-neutral parts of the bridge: a sibling target (enzyme_py/cuda) imports them
NEUTRAL = ("enzyme_py.bridge.layout", "enzyme_py.bridge.entry", "enzyme_py.bridge.optimize", "enzyme_py.arguments",
           "enzyme_py.annotations")


def place(name, layers):
    """(layer, group) of module `name`: the longest matching prefix wins."""
    best = None
    for k, layer in enumerate(layers):
        for g, group in enumerate(layer):
            for prefix in group:
                if name == prefix or name.startswith(prefix + "."):
                    if best is None or len(prefix) > best[2]:
                        best = (k, g, len(prefix))
    return best[:2] if best else None


def test_no_circles():
    edges, _, _ = analyse()
    assert cycles(edges) == []


def test_no_function_local_imports():
    _, local, _ = analyse()
    assert local == []


def test_no_private_name_imported_across_modules():
    _, _, private = analyse()
    assert private == []


def test_imports_go_down_the_layers():
    edges, _, _ = analyse()
    wrong = []
    for layers in (IR_PASSES, ENZYME_PY, REVERSE):
        for a, targets in edges.items():
            pa = place(a, layers)
            for b in targets:
                pb = place(b, layers)
                if pa is None or pb is None:
                    continue
                if pb[0] > pa[0] or (pb[0] == pa[0] and pb[1] != pa[1]):
                    wrong.append(f"{a} -> {b}")
    assert wrong == []


def test_target_neutral_parts_import_nothing_cpu_specific():
    paths = modules()
    bad = []
    for name in NEUTRAL:
        tree = ast.parse(open(paths[name]).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                mod = node.module
                if "registry" in mod and "numba" in mod or mod in ("convention", "codegen", "capture",
                                                                    "cleanup", "link", "nrt"):
                    bad.append(f"{name}: from {mod}")
    assert bad == []


def test_enzyme_py_uses_only_the_public_functions_of_ir_passes():
    """enzyme_py talks to ir_passes through the package's top level (ir_passes/__init__.py)."""
    edges, _, _ = analyse()
    deep = sorted(f"{a} -> {b}" for a, targets in edges.items() if a.startswith("enzyme_py")
                  for b in targets if b.startswith("ir_passes."))
    assert deep == []
