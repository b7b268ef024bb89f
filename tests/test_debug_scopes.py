"""print_module(locate_generated=True): a generated function's locations, on a subprogram of its
own, pass LLVM's verifier (which strips invalid debug info whole, with a warning)."""
import llvmlite.binding as llvm

from ir_passes import parse_module, print_module

TEXT = """define double @f(double %x) !dbg !6 {
  %y = fmul double %x, %x, !dbg !10
  ret double %y, !dbg !10
}
define double @g(double %x) {
  %a = fmul double %x, %x, !dbg !10
  %b = fadd double %a, %x, !dbg !12
  %c = call double @f(double %b)
  %d = fsub double %c, %x, !dbg !21
  ret double %d, !dbg !10
}
!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!4, !5}
!0 = distinct !DICompileUnit(language: DW_LANG_C_plus_plus, file: !1, producer: "t", isOptimized: true, \
runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "kernel.py", directory: "/src")
!4 = !{i32 2, !"Dwarf Version", i32 4}
!5 = !{i32 2, !"Debug Info Version", i32 3}
!6 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 50, type: !7, scopeLine: 50, \
spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!7 = !DISubroutineType(types: !8)
!8 = !{}
!10 = !DILocation(line: 52, column: 1, scope: !6)
!11 = distinct !DISubprogram(name: "h", scope: !1, file: !1, line: 70, type: !7, scopeLine: 70, \
spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!12 = !DILocation(line: 71, column: 1, scope: !11, inlinedAt: !13)
!13 = !DILocation(line: 53, column: 1, scope: !14)
!14 = distinct !DILexicalBlock(scope: !6, file: !1, line: 53)
!20 = distinct !DISubprogram(name: "k", scope: !1, file: !1, line: 90, type: !7, scopeLine: 90, \
spFlags: DISPFlagDefinition | DISPFlagOptimized, unit: !0)
!21 = !DILocation(line: 91, column: 1, scope: !20)
""".replace("\\\n", "")


def _module():
    m = parse_module(TEXT)
    m.functions["g"].generated = True
    return m


def test_generated_function_gets_its_own_subprogram():
    text = print_module(_module(), locate_generated=True)
    g = text[text.index("define double @g"):]
    g = g[:g.index("}")]
    assert "!dbg" in g.splitlines()[0]
    assert g.count(", !dbg !") == 4        # the call gets line 0; the one in `k` (%d) is dropped
    checked = llvm.parse_assembly(text)
    checked.verify()
    assert str(checked).count("!dbg") == text.count("!dbg")   # nothing stripped as invalid
    chains = parse_module(text).locations
    lines = [chains[i.dbg] for i in parse_module(text).functions["g"].instructions() if i.dbg]
    assert lines[:2] == [[("/src/kernel.py", 52)], [("/src/kernel.py", 71), ("/src/kernel.py", 53)]]
    assert lines[2] == [("/src/kernel.py", 0)]


def test_default_prints_generated_functions_without_locations():
    text = print_module(_module())
    g = text[text.index("define double @g"):]
    assert "!dbg" not in g[:g.index("}")]
