"""LLVM IR is written in .ll files (ir_passes/runtime/*.ll, enzyme_py/bridge/*.ll), each with a
golden test, not in Python strings: a string literal of the packages that holds a definition or
declaration of a named function, an instruction or a global fails here. The IR model (ir_passes/
ir/: the printer and parser) and docstrings are not scanned."""
import ast
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PACKAGES = ("ir_passes", "enzyme_py", "tools")
# harness.py matches the IR it retargets with regular expressions (its own IR is harness.ll)
NOT_SCANNED = ("ir_passes/runtime/", "ir_passes/ir/", "enzyme_py/cuda/harness.py")
# strings still to move, by file: each must still be there (the list only shrinks)
KNOWN: dict = {}

OPCODES = ("load|store|call|getelementptr|alloca|icmp|fcmp|phi|select|fadd|fsub|fmul|fdiv|fneg|add|sub|"
           "mul|udiv|sdiv|and|or|xor|shl|lshr|ashr|bitcast|zext|sext|trunc|insertvalue|extractvalue|"
           "atomicrmw|ptrtoint|inttoptr|sitofp|uitofp|fptosi|fptoui|fpext|fptrunc|addrspacecast")
IR = re.compile(r"(^|\n)\s*(define|declare)\b[^\n]*@\"?[A-Za-z_.$]"           # a named function
                rf"|%[-\w.$\"]+ = ({OPCODES})\b"                               # an instruction
                r"|(^|\n)\s*(call|store)\s+[^\s{}]+\s+[@%]"                  # a call or store
                r"|(^|\n)\s*(ret\s+(void\b|\S+\s+[@%\d-])|br\s+(i1|label)\s+%)"  # a terminator
                r"|(^|\n)\s*@[-\w.$\"]+\s*=[^\n]*\bglobal\b")                 # a global


def _docstrings(tree) -> set:
    return {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}


def _strings(tree):
    """(line, text) of each string literal, an f-string's expressions written `{}`."""
    skip = _docstrings(tree)
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for n in ast.walk(tree):
        if isinstance(n, ast.JoinedStr):
            yield n.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in n.values)
        elif (isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip
              and id(n) not in inner):
            yield n.lineno, n.value


def ir_strings() -> dict:
    """{path: [(line, text)]} of the string literals of the packages that hold IR."""
    found = {}
    for package in PACKAGES:
        for folder, _, names in os.walk(os.path.join(ROOT, package)):
            for name in sorted(names):
                path = os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, "/")
                if not name.endswith(".py") or path.startswith(NOT_SCANNED):
                    continue
                tree = ast.parse(open(os.path.join(ROOT, path)).read())
                hits = [(line, text) for line, text in _strings(tree) if IR.search(text)]
                if hits:
                    found[path] = hits
    return found


def test_no_ir_in_python_strings():
    found = ir_strings()
    counts = {path: len(hits) for path, hits in found.items()}
    assert counts == KNOWN, {p: found.get(p) for p in set(counts) | set(KNOWN) if counts.get(p) != KNOWN.get(p)}


def test_the_scan_finds_ir():
    for text in ('define internal void @enzpy.f(ptr %p) {', '  %x = load double, ptr %p',
                 'call void @free(ptr %p)', 'ret i32 %st', '@"g" = linkonce global ptr null',
                 'declare double @llvm.sin.f64(double)'):
        assert IR.search(text), text
    for text in ('call void {}', 'declare {} @"{}"({}', 'a value is used before it is defined'):
        assert not IR.search(text), text


def test_every_host_ir_file_has_a_golden_test():
    bridge = os.path.join(ROOT, "enzyme_py", "bridge")
    files = {n for n in os.listdir(bridge) if n.endswith(".ll")}
    assert files <= set(os.listdir(os.path.join(HERE, "filecheck", "host")))
