"""Parse LLVM assembly text into the IR model.

Function bodies are parsed into instructions. Everything else at the top level (globals, metadata,
attribute groups, declarations) is kept as raw text and printed back unchanged. Debug records
(`#dbg_value`) are dropped; `!dbg` attachments are kept and resolved to Python file:line.
An instruction this parser does not model is kept as an opaque instruction with its operands found,
so it still prints and clones; the transforms refuse to differentiate it.
"""
from __future__ import annotations

import re

from . import types as T
from .instructions import Instruction
from .module import Block, Function, Module
from .opcodes import BINARY, CASTS
from .values import Argument, Constant, ConstFloat, ConstInt, Global, Value, parse_float_literal

TOKEN = re.compile(r"""
    (?P<str>c?"[^"]*")
  | (?P<local>%(?:"[^"]*"|[-a-zA-Z$._0-9]+))
  | (?P<global>@(?:"[^"]*"|[-a-zA-Z$._0-9]+))
  | (?P<meta>!(?:"[^"]*"|[-a-zA-Z$._0-9]+)?)
  | (?P<attr>\#[0-9]+)
  | (?P<num>-?0x[0-9A-Fa-f]+|0x[KLMHR][0-9A-Fa-f]+|[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan))
  | (?P<word>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<dots>\.\.\.)
  | (?P<punct>[()\[\]{}<>,=*:|])
""", re.X)

FMF = {"fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc"}
INT_FLAGS = {"nsw", "nuw", "exact", "disjoint", "nneg", "samesign", "inbounds", "nusw", "inrange"}
CONST_WORDS = {"null", "undef", "poison", "zeroinitializer", "none", "true", "false"}
FLOAT_TYPES = set(T.FloatType.BITS)


class ParseError(ValueError):
    pass


def tokenize(text: str) -> list[str]:
    out, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        if text[pos] == ";":
            break
        m = TOKEN.match(text, pos)
        if not m:
            raise ParseError(f"cannot tokenize {text[pos:pos + 40]!r} in {text!r}")
        out.append(m.group(0))
        pos = m.end()
    return out


class Tokens:
    def __init__(self, toks: list[str], line: str):
        self.t, self.i, self.line = toks, 0, line

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.t[j] if j < len(self.t) else ""

    def next(self) -> str:
        tok = self.peek()
        self.i += 1
        return tok

    def accept(self, tok: str) -> bool:
        if self.peek() == tok:
            self.i += 1
            return True
        return False

    def expect(self, tok: str) -> str:
        got = self.next()
        if got != tok:
            raise ParseError(f"expected {tok!r}, got {got!r} in: {self.line.strip()}")
        return got

    def done(self) -> bool:
        return self.i >= len(self.t)

    def group(self) -> str:
        """Consume a balanced (...)/[...]/{...}/<...> group and return its text."""
        close = {"(": ")", "[": "]", "{": "}", "<": ">"}
        stack, parts = [], []
        while True:
            tok = self.next()
            if tok == "":
                raise ParseError(f"unbalanced group in: {self.line.strip()}")
            parts.append(tok)
            if tok in close:
                stack.append(close[tok])
            elif stack and tok == stack[-1]:
                stack.pop()
                if not stack:
                    return join_tokens(parts)


def join_tokens(parts: list[str]) -> str:
    """Tokens back to text, spaced the way LLVM prints them."""
    out = ""
    for k, tok in enumerate(parts):
        prev = parts[k - 1] if k else ""
        tight = (not out or prev in ("(", "[") or tok in (")", "]", ",")
                 or (tok == "(" and prev not in (",", "x")))
        out += tok if tight else " " + tok
    return out


def is_type_start(tok: str) -> bool:
    return (tok in ("void", "ptr", "label", "metadata", "[", "{", "<", "opaque", "token")
            or tok in FLOAT_TYPES or re.fullmatch(r"i\d+", tok) is not None
            or (tok.startswith("%") and False))


def parse_type(ts: Tokens) -> T.Type:
    tok = ts.next()
    if re.fullmatch(r"i\d+", tok):
        t: T.Type = T.IntType(int(tok[1:]))
    elif tok in FLOAT_TYPES:
        t = T.FloatType(tok)
    elif tok == "ptr":
        t = T.ptr
        if ts.peek() == "addrspace":
            ts.next(); ts.expect("("); n = int(ts.next()); ts.expect(")")
            t = T.PtrType(n)
    elif tok == "void":
        t = T.void
    elif tok == "label":
        t = T.label
    elif tok == "metadata":
        t = T.MetadataType()
    elif tok == "[":
        n = int(ts.next()); ts.expect("x"); el = parse_type(ts); ts.expect("]")
        t = T.ArrayType(n, el)
    elif tok == "<" and ts.peek() == "{":
        ts.next()
        t = T.StructType(parse_type_list(ts, "}"), packed=True)
        ts.expect(">")
    elif tok == "<":
        scalable = ts.accept("vscale") and ts.expect("x") == "x"
        n = int(ts.next()); ts.expect("x"); el = parse_type(ts); ts.expect(">")
        t = T.VectorType(n, el, scalable)
    elif tok == "{":
        t = T.StructType(parse_type_list(ts, "}"))
    elif tok.startswith("%"):
        t = T.NamedType(tok)
    else:
        raise ParseError(f"unknown type {tok!r} in: {ts.line.strip()}")
    while ts.peek() == "*":  # typed pointers from older printers
        ts.next()
        t = T.ptr
    return t


def parse_type_list(ts: Tokens, close: str) -> list[T.Type]:
    out = []
    while not ts.accept(close):
        out.append(parse_type(ts))
        ts.accept(",")
    return out


class Forward(Value):
    """A local name used before its definition; replaced when the function is complete."""

    def __init__(self, type: T.Type, name: str):
        self.type, self.name = type, name


class FunctionParser:
    def __init__(self, fn: Function, module: Module):
        self.fn, self.module = fn, module
        self.values: dict[str, Value] = {a.name: a for a in fn.params if a.name}
        self.blocks: dict[str, Block] = {}
        self.forwards: list[Forward] = []

    # --- values
    def local(self, name: str, type: T.Type) -> Value:
        if name in self.values:
            return self.values[name]
        f = Forward(type, name)
        self.values[name] = f
        self.forwards.append(f)
        return f

    def block(self, name: str) -> Block:
        if name not in self.blocks:
            self.blocks[name] = Block(name, self.fn)
        return self.blocks[name]

    def label(self, ts: Tokens) -> Block:
        ts.expect("label")
        return self.block(unquote(ts.next()[1:]))

    def value(self, ts: Tokens, type: T.Type) -> Value:
        tok = ts.peek()
        if tok.startswith("%"):
            ts.next()
            return self.local(unquote(tok[1:]), type)
        if tok.startswith("@"):
            ts.next()
            return Global(type, unquote(tok[1:]))
        if tok in ("true", "false") and isinstance(type, T.IntType):
            ts.next()
            return ConstInt(type, tok == "true")
        if tok in CONST_WORDS:
            ts.next()
            return Constant(type, tok)
        if tok and (tok[0].isdigit() or tok[0] in "-+") or tok in ("inf", "nan"):
            ts.next()
            if isinstance(type, T.IntType):
                return ConstInt(type, int(tok, 0))
            if isinstance(type, T.FloatType):
                return ConstFloat(type, parse_float_literal(tok), tok)
            return Constant(type, tok)
        if tok.startswith('c"'):
            ts.next()
            return Constant(type, tok)
        if tok in ("{", "[", "<"):
            return Constant(type, ts.group())
        if re.fullmatch(r"[a-z_]+", tok or "-"):  # constant expression: op [flags] ( ... )
            words = []
            while ts.peek() and ts.peek() != "(":
                words.append(ts.next())
            return Constant(type, " ".join(words + [ts.group()]))
        raise ParseError(f"cannot parse a value at {tok!r} in: {ts.line.strip()}")

    def typed_value(self, ts: Tokens) -> Value:
        t = parse_type(ts)
        return self.value(ts, t)

    # --- instructions
    def instruction(self, line: str) -> Instruction:
        ts = Tokens(tokenize(line), line)
        name = ""
        if ts.peek().startswith("%") and ts.peek(1) == "=":
            name = unquote(ts.next()[1:])
            ts.next()
        start = ts.i
        try:
            inst = self.parse_op(ts)
        except ParseError:
            ts.i = start
            inst = self.opaque(ts)
        inst.name = name
        self.metadata(ts, inst)
        if name:
            prev = self.values.get(name)
            if isinstance(prev, Forward):
                prev.type = inst.type
            self.values[name] = inst
        return inst

    def metadata(self, ts: Tokens, inst: Instruction) -> None:
        parts = []
        while ts.accept(","):
            key = ts.next()
            if key == "align":
                inst.align = int(ts.next())
                continue
            val = ts.group() if ts.peek() == "!" and ts.peek(1) == "{" else ts.next()
            if val == "!" and ts.peek() == "{":
                val = "!" + ts.group()
            if key == "!dbg":
                inst.dbg = val
            else:
                parts.append(f"{key} {val}")
        if not ts.done():
            raise ParseError(f"trailing tokens {ts.t[ts.i:]} in: {ts.line.strip()}")
        inst.meta = "".join(", " + p for p in parts)

    def flags(self, ts: Tokens, allowed: set[str]) -> list[str]:
        out = []
        while ts.peek() in allowed:
            out.append(ts.next())
        return out

    def parse_op(self, ts: Tokens) -> Instruction:
        op = ts.next()
        if op in BINARY:
            flags = self.flags(ts, FMF | INT_FLAGS)
            t = parse_type(ts)
            a = self.value(ts, t); ts.expect(","); b = self.value(ts, t)
            return Instruction(op, t, [a, b], flags=flags)
        if op == "fneg":
            flags = self.flags(ts, FMF)
            t = parse_type(ts)
            return Instruction(op, t, [self.value(ts, t)], flags=flags)
        if op in ("icmp", "fcmp"):
            flags = self.flags(ts, FMF | INT_FLAGS)
            pred = ts.next()
            t = parse_type(ts)
            a = self.value(ts, t); ts.expect(","); b = self.value(ts, t)
            rt = T.VectorType(t.count, T.i1) if isinstance(t, T.VectorType) else T.i1
            return Instruction(op, rt, [a, b], flags=flags, pred=pred)
        if op in CASTS:
            flags = self.flags(ts, INT_FLAGS)
            v = self.typed_value(ts); ts.expect("to"); t = parse_type(ts)
            return Instruction(op, t, [v], flags=flags)
        if op == "select":
            flags = self.flags(ts, FMF)
            c = self.typed_value(ts); ts.expect(",")
            a = self.typed_value(ts); ts.expect(",")
            b = self.typed_value(ts)
            return Instruction(op, a.type, [c, a, b], flags=flags)
        if op == "phi":
            flags = self.flags(ts, FMF)
            t = parse_type(ts)
            vals, blocks = [], []
            while ts.accept("["):
                vals.append(self.value(ts, t)); ts.expect(",")
                blocks.append(self.block(unquote(ts.next()[1:]))); ts.expect("]")
                if not (ts.peek() == "," and ts.peek(1) == "["):
                    break
                ts.next()
            return Instruction(op, t, vals, flags=flags, blocks=blocks)
        if op == "load":
            vol = ts.accept("volatile")
            t = parse_type(ts); ts.expect(",")
            p = self.typed_value(ts)
            return Instruction(op, t, [p], volatile=vol)
        if op == "store":
            vol = ts.accept("volatile")
            v = self.typed_value(ts); ts.expect(",")
            p = self.typed_value(ts)
            return Instruction(op, T.void, [v, p], volatile=vol)
        if op == "getelementptr":
            flags = self.flags(ts, INT_FLAGS)
            st = parse_type(ts); ts.expect(",")
            ops = [self.typed_value(ts)]
            while ts.peek() == "," and not ts.peek(1).startswith("!") and ts.peek(1) != "align":
                ts.next()
                ops.append(self.typed_value(ts))
            return Instruction(op, ops[0].type, ops, flags=flags, source_type=st)
        if op == "alloca":
            st = parse_type(ts)
            ops = []
            if ts.peek() == "," and ts.peek(1) != "align":
                ts.next()
                ops.append(self.typed_value(ts))
            return Instruction(op, T.ptr, ops, source_type=st)
        if op in ("call", "tail", "musttail", "notail"):
            return self.call(ts, op)
        if op == "ret":
            if ts.accept("void"):
                return Instruction("ret")
            return Instruction("ret", T.void, [self.typed_value(ts)])
        if op == "br":
            if ts.peek() == "label":
                return Instruction("br", targets=[self.label(ts)])
            c = self.typed_value(ts); ts.expect(",")
            a = self.label(ts); ts.expect(",")
            b = self.label(ts)
            return Instruction("br", T.void, [c], targets=[a, b])
        if op == "switch":
            c = self.typed_value(ts); ts.expect(",")
            default = self.label(ts)
            ts.expect("[")
            cases = []
            while not ts.accept("]"):
                k = self.typed_value(ts); ts.expect(",")
                cases.append((k, self.label(ts)))
            return Instruction("switch", T.void, [c], targets=[default], cases=cases)
        if op == "unreachable":
            return Instruction("unreachable")
        if op == "extractvalue":
            agg = self.typed_value(ts)
            idx = self.int_list(ts)
            return Instruction(op, element_type(agg.type, idx), [agg], indices=idx)
        if op == "insertvalue":
            agg = self.typed_value(ts); ts.expect(",")
            v = self.typed_value(ts)
            return Instruction(op, agg.type, [agg, v], indices=self.int_list(ts))
        if op == "freeze":
            v = self.typed_value(ts)
            return Instruction(op, v.type, [v])
        raise ParseError(f"unmodelled instruction {op!r}")

    def int_list(self, ts: Tokens) -> list[int]:
        out = []
        while ts.peek() == "," and ts.peek(1).lstrip("-").isdigit():
            ts.next()
            out.append(int(ts.next()))
        return out

    def call(self, ts: Tokens, op: str) -> Instruction:
        tail = ""
        if op != "call":
            tail = op
            ts.expect("call")
        flags = self.flags(ts, FMF)
        cconv, ret_attrs = [], []
        while not is_type_start(ts.peek()):
            tok = ts.next()
            if tok in ("fastcc", "ccc", "coldcc") or tok == "cc":
                cconv.append(tok if tok != "cc" else f"cc {ts.next()}")
            elif ts.peek() == "(":
                ret_attrs.append(tok + ts.group())
            elif tok == "align":
                ret_attrs.append(f"{tok} {ts.next()}")
            else:
                ret_attrs.append(tok)
        rt = parse_type(ts)
        fnty_text = ""
        if ts.peek() == "(":
            fnty_text = f"{rt} " + ts.group()
        callee_tok = ts.peek()
        callee = self.value(ts, T.ptr)
        if not callee_tok.startswith(("%", "@")) and callee_tok not in CONSTEXPR_OPS:
            raise ParseError("unusual callee")   # a C function at a fixed address is an inttoptr
        ts.expect("(")
        args, arg_attrs = [], []
        while not ts.accept(")"):
            t = parse_type(ts)
            attrs = []
            while not self.is_value_start(ts):
                tok = ts.next()
                if ts.peek() == "(":
                    attrs.append(tok + ts.group())
                elif tok == "align":
                    attrs.append(f"{tok} {ts.next()}")
                else:
                    attrs.append(tok)
            args.append(self.value(ts, t))
            arg_attrs.append(" ".join(attrs))
            ts.accept(",")
        fn_attrs = []
        while not ts.done() and ts.peek() != ",":
            tok = ts.next()
            fn_attrs.append(tok + ts.group() if ts.peek() in ("(", "[") else tok)
        return Instruction("call", rt, args, name="", flags=flags, callee=callee, tail=tail,
                           cconv=" ".join(cconv), ret_attrs=" ".join(ret_attrs),
                           arg_attrs=arg_attrs, fn_attrs=" ".join(fn_attrs), fnty_text=fnty_text)

    @staticmethod
    def is_value_start(ts: Tokens) -> bool:
        tok = ts.peek()
        if not tok:
            raise ParseError("argument list ended early")
        if tok[0] in "%@-+" or tok[0].isdigit() or tok.startswith('c"') or tok in CONST_WORDS:
            return True
        if tok in ("{", "[", "<"):
            return True
        return ts.peek(1) == "(" and tok in CONSTEXPR_OPS

    def opaque(self, ts: Tokens) -> Instruction:
        """Keep an instruction we do not model: its text with operand slots."""
        rt = opaque_result_type(Tokens(ts.t[ts.i:], ts.line))
        parts, ops = [], []
        while not ts.done():
            if ts.peek() == "," and ts.peek(1).startswith("!") and ts.peek(1) != "!":
                break
            tok = ts.next()
            if tok.startswith("%"):
                parts.append("{%d}" % len(ops))
                ops.append(self.local(unquote(tok[1:]), T.void))
            else:
                parts.append(tok.replace("{", "{{").replace("}", "}}"))
        opcode = parts[0] if parts else "?"
        return Instruction("opaque", rt, ops, raw=join_tokens(parts), flags=[opcode])

    # --- body
    def body(self, lines: list[str]) -> None:
        current = None
        for line in join_continued(lines):
            s = line.strip()
            if not s or s.startswith(";") or s.startswith("#dbg_"):
                continue
            m = re.match(r'^("[^"]*"|[-a-zA-Z$._0-9]+):', s)
            if m and not s.startswith("%"):
                current = self.block(unquote(m.group(1)))
                self.fn.blocks.append(current)
                continue
            if current is None:
                current = self.block(self.implicit_entry_name())
                self.fn.blocks.append(current)
            current.append(self.instruction(s))
        self.resolve()

    def implicit_entry_name(self) -> str:
        return str(sum(1 for a in self.fn.params if not a.name))

    def resolve(self) -> None:
        for inst in self.fn.instructions():
            for k, v in enumerate(inst.ops):
                if isinstance(v, Forward):
                    target = self.values.get(v.name)
                    if isinstance(target, Forward) or target is None:
                        raise ParseError(f"use of undefined value %{v.name} in @{self.fn.name}")
                    inst.ops[k] = target


def opaque_result_type(ts: Tokens) -> T.Type:
    """The result type of the unmodelled instructions that have one (atomics)."""
    op = ts.next()
    if op not in ("atomicrmw", "cmpxchg"):
        return T.void
    while ts.peek() in ("volatile", "weak"):
        ts.next()
    if op == "atomicrmw":
        ts.next()  # the operation
    parse_type(ts); ts.next(); ts.expect(",")
    t = parse_type(ts)
    return t if op == "atomicrmw" else T.StructType([t, T.i1])


CONSTEXPR_OPS = {"getelementptr", "bitcast", "ptrtoint", "inttoptr", "addrspacecast", "add", "sub",
                 "mul", "xor", "trunc", "blockaddress", "dso_local_equivalent", "no_cfi"}


def element_type(t: T.Type, idx: list[int]) -> T.Type:
    for k in idx:
        if isinstance(t, T.StructType):
            t = t.elements[k]
        elif isinstance(t, (T.ArrayType, T.VectorType)):
            t = t.element
        else:
            raise ParseError(f"cannot index {t}")
    return t


def join_continued(lines: list[str]) -> list[str]:
    """LLVM prints a switch's cases on lines of their own: join them into one instruction."""
    out, pending = [], None
    for line in lines:
        if pending is not None:
            pending += " " + line.strip()
            if line.strip().startswith("]"):
                out.append(pending)
                pending = None
            continue
        if " switch " in f" {line.strip()}" and line.rstrip().endswith("["):
            pending = line.rstrip()
            continue
        out.append(line)
    return out


def unquote(name: str) -> str:
    return name[1:-1] if name.startswith('"') and name.endswith('"') else name


def parse_header(line: str, is_decl: bool) -> Function:
    """Parse a `define`/`declare` line into a Function (without body)."""
    at = re.search(r'@("[^"]*"|[-a-zA-Z$._0-9]+)\(', line)
    if not at:
        raise ParseError(f"cannot find the function name in: {line}")
    name = unquote(at.group(1))
    head = Tokens(tokenize(line[:at.start()]), line)
    words = head.t
    # the return type is the last type-looking run before the name
    k = len(words) - 1
    if words[k] in ("}", "]", ">"):
        depth, j = 0, k
        while True:
            if words[j] in ("}", "]", ">"):
                depth += 1
            elif words[j] in ("{", "[", "<"):
                depth -= 1
                if depth == 0:
                    break
            j -= 1
        k = j
    if k > 0 and words[k - 1] == "<" and words[k] == "{":
        k -= 1
    ret = parse_type(Tokens(words[k:], line))
    prefix = join_tokens(words[:k])
    rest = line[at.end():]
    ts = Tokens(tokenize(rest), line)
    params, vararg = [], False
    while not ts.accept(")"):
        if ts.accept("..."):
            vararg = True
            continue
        t = parse_type(ts)
        attrs, pname = [], ""
        while ts.peek() not in (",", ")"):
            tok = ts.next()
            if tok.startswith("%"):
                pname = unquote(tok[1:])
            elif ts.peek() == "(":
                attrs.append(tok + ts.group())
            else:
                attrs.append(tok)
        params.append(Argument(t, pname, " ".join(attrs), len(params)))
        ts.accept(",")
    suffix_toks = []
    while not ts.done() and ts.peek() != "{":
        tok = ts.next()
        suffix_toks.append(tok + ts.group() if ts.peek() == "(" else tok)
    fn = Function(name, ret, params, prefix=prefix, suffix=" ".join(suffix_toks), vararg=vararg,
                  is_declaration=is_decl)
    return fn


def parse_module(text: str) -> Module:
    mod = Module()
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("define "):
            fn = parse_header(line, False)
            j = i + 1
            while lines[j].rstrip() != "}":
                j += 1
            FunctionParser(fn, mod).body(lines[i + 1:j])
            mod.add_function(fn)
            i = j + 1
            continue
        if line.startswith("declare "):
            fn = parse_header(line, True)
            fn.raw = line
            mod.add_function(fn)
        elif line.strip() and not line.lstrip().startswith(";"):
            mod.items.append(line)
        i += 1
    mod.locations = debug_locations([x for x in mod.items if isinstance(x, str)])
    return mod


def debug_locations(raw: list[str]) -> dict[str, list[tuple[str, int]]]:
    """Map !DILocation ids to their (file, line) chain: innermost first, then each inlinedAt."""
    nodes: dict[str, str] = {}
    for line in raw:
        m = re.match(r"^(![0-9]+) = (?:distinct )?(.*)$", line)
        if m:
            nodes[m.group(1)] = m.group(2)

    def field(body: str, key: str) -> str | None:
        m = re.search(rf"\b{key}: (\"(?:[^\"\\]|\\.)*\"|[^,)]+)", body)
        return m.group(1).strip('"') if m else None

    def file_of(ref: str | None, depth: int = 0) -> str:
        if not ref or depth > 20 or ref not in nodes:
            return "?"
        body = nodes[ref]
        if body.startswith("!DIFile"):
            d, f = field(body, "directory") or "", field(body, "filename") or "?"
            return f if f.startswith("/") or not d else f"{d}/{f}"
        return file_of(field(body, "file") or field(body, "scope"), depth + 1)

    out = {}
    for ref, body in nodes.items():
        if not body.startswith("!DILocation"):
            continue
        loc, chain = body, []
        while len(chain) < 50:
            chain.append((file_of(field(loc, "scope")), int(field(loc, "line") or 0)))
            outer = field(loc, "inlinedAt")
            if not outer or outer not in nodes:
                break
            loc = nodes[outer]
        out[ref] = chain
    return out
