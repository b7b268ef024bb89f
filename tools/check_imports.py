"""Check the import structure of ir_passes, enzyme_py and tools (issues 15 and 30):

- no import circles among their modules (module-level imports, `try` and `if` included);
- no import inside a function or class body, except of an optional dependency (OPTIONAL);
- no private name (`_x`) imported from another module.

    python -m tools.check_imports        # prints what it finds; exit status 1 when anything
    python -m tools.check_imports --hidden   # the circles function-local imports would close

A module's edges are the modules it imports by name: `from .a import f` is an edge to `a`,
`from . import a` to `a` when `a` is a submodule, else to the package's `__init__`.
"""
from __future__ import annotations

import ast
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("ir_passes", "enzyme_py", "tools")
OPTIONAL = {"cffi", "scipy", "matplotlib", "jax", "torch", "warp", "nvidia"}
# the `cuda` extra: enzyme_py imports its CUDA target only when a CUDA kernel comes (docs/cuda.md)
OPTIONAL_MODULES = ("enzyme_py.cuda",)


def modules(root: str = ROOT) -> dict:
    """{dotted module name: path} of every module of PACKAGES."""
    out = {}
    for pkg in PACKAGES:
        for folder, _, names in os.walk(os.path.join(root, pkg)):
            for n in names:
                if n.endswith(".py"):
                    rel = os.path.relpath(os.path.join(folder, n), root)[:-3].split(os.sep)
                    if rel[-1] == "__init__":
                        rel = rel[:-1]
                    out[".".join(rel)] = os.path.join(folder, n)
    return out


def resolve(name: str, node: ast.ImportFrom | ast.Import, is_package: bool) -> list:
    """The absolute module names an import statement in module `name` refers to."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        parts = name.split(".")
        base = parts if is_package else parts[:-1]
        base = base[:len(base) - node.level + 1]
        prefix = ".".join(base + ([node.module] if node.module else []))
    else:
        prefix = node.module or ""
    return [prefix] + [f"{prefix}.{a.name}" for a in node.names]


class Visitor(ast.NodeVisitor):
    def __init__(self, name, is_package, known, hidden=False):
        self.name, self.is_package, self.known = name, is_package, known
        self.hidden = hidden      # count function-local imports as edges too
        self.edges, self.local, self.private = set(), [], []
        self.depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_If(self, node):
        """`if TYPE_CHECKING:` imports are never run: not edges."""
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for n in node.orelse:
                self.visit(n)
            return
        self.generic_visit(node)

    def _import(self, node):
        targets = resolve(self.name, node, self.is_package)
        top = targets[0].split(".")[0]
        optional = top in OPTIONAL or targets[0].startswith(OPTIONAL_MODULES)
        if self.depth and not optional:
            self.local.append((node.lineno, ast.unparse(node)))
        if self.depth and not self.hidden:
            return
        if isinstance(node, ast.ImportFrom):
            prefix, names = targets[0], targets[1:]
            subs = [t for t in names if t in self.known]
            if prefix in self.known and len(subs) < len(names):
                self.edges.add(prefix)
            self.edges.update(subs)
            if any(a.name.startswith("_") and not a.name.startswith("__") and t not in self.known
                   and prefix != self.name and top in PACKAGES for a, t in zip(node.names, names)):
                self.private.append((node.lineno, ast.unparse(node)))
        else:
            self.edges.update(t for t in targets if t in self.known)

    visit_Import = visit_ImportFrom = _import


def analyse(root: str = ROOT, hidden: bool = False):
    """(edges {module: set of modules}, local imports, private imports); `hidden`: function-local
    imports count as edges (the circles they hide)."""
    known = modules(root)
    edges, local, private = {}, [], []
    for name, path in sorted(known.items()):
        with open(path) as f:
            tree = ast.parse(f.read(), path)
        v = Visitor(name, path.endswith("__init__.py"), known, hidden)
        v.visit(tree)
        edges[name] = v.edges - {name}
        local += [(name, *x) for x in v.local]
        private += [(name, *x) for x in v.private]
    return edges, local, private


def cycles(edges: dict) -> list:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    edges, local, private = analyse(hidden="--hidden" in sys.argv)
    found = cycles(edges)
    for comp in found:
        print("circle:", " ".join(comp))
    for name, line, text in local:
        print(f"local import: {name}:{line}: {text}")
    for name, line, text in private:
        print(f"private name imported: {name}:{line}: {text}")
    n = len(found) + len(local) + len(private)
    print(f"{len(edges)} modules: {len(found)} circles, {len(local)} local imports, "
          f"{len(private)} private names imported")
    return 1 if n else 0


if __name__ == "__main__":
    sys.exit(main())
