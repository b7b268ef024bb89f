"""Debug locations for generated functions, in a form LLVM's verifier accepts.

Instructions a transform derives from a primal one carry the primal's !dbg location. LLVM wants
every location of a function with a DISubprogram to lead (through its inlinedAt chain and
lexical blocks) to that function's own subprogram, and a subprogram to belong to one function
only. `own_scopes` gives each generated function with locations a distinct copy of the
subprogram most of them lead to, and new location nodes leading to the copy; locations leading
elsewhere are dropped, and calls left without one get the copy's line 0 (LLVM wants a location
on every call in a function with a subprogram).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

_NODE = re.compile(r"^(![0-9]+) = (distinct )?(.*)$")


@dataclass
class Scoped:
    """How one generated function prints: its subprogram and its locations' new ids."""
    subprogram: str
    dbg: dict = field(default_factory=dict)   # old !dbg id -> new id ("" to drop)
    fallback: str = ""                        # the location of calls that have none


def _field(body: str, key: str) -> str | None:
    m = re.search(rf"\b{key}: (![0-9]+)", body)
    return m.group(1) if m else None


class _Nodes:
    def __init__(self, raw: list[str]):
        self.body = {}
        for line in raw:
            m = _NODE.match(line)
            if m:
                self.body[m.group(1)] = m.group(3)
        self.next = 1 + max((int(k[1:]) for k in self.body), default=0)
        self.added: list[str] = []

    def add(self, body: str, distinct: bool = False) -> str:
        ref = f"!{self.next}"
        self.next += 1
        self.body[ref] = body
        self.added.append(f"{ref} = {'distinct ' if distinct else ''}{body}")
        return ref

    def subprogram(self, loc: str, depth: int = 0) -> str | None:
        """The subprogram location `loc`'s chain ends at."""
        body = self.body.get(loc, "")
        if depth > 50 or not body.startswith("!DILocation"):
            return None
        outer = _field(body, "inlinedAt")
        return self.subprogram(outer, depth + 1) if outer else self.scope_subprogram(_field(body, "scope"))

    def scope_subprogram(self, scope: str | None, depth: int = 0) -> str | None:
        body = self.body.get(scope or "", "")
        if body.startswith("!DISubprogram"):
            return scope
        if depth > 50 or not body.startswith("!DILexicalBlock"):
            return None
        return self.scope_subprogram(_field(body, "scope"), depth + 1)


def own_scopes(raw: list[str], functions) -> tuple[dict, list[str]]:
    """({function: Scoped} for each of `functions` that has locations, the metadata lines to add).
    `raw`: the module's top-level text lines (its metadata among them)."""
    nodes = _Nodes(raw)
    out = {}
    for fn in functions:
        used = [i.dbg for i in fn.instructions() if i.dbg in nodes.body]
        ends = Counter(s for s in map(nodes.subprogram, used) if s)
        if not ends:
            continue
        old = ends.most_common(1)[0][0]
        body = re.sub(r",? retainedNodes: ![0-9]+", "", nodes.body[old])
        scoped = Scoped(nodes.add(body, distinct=True))
        scopes = {old: scoped.subprogram}
        for d in dict.fromkeys(used):
            _remap(nodes, d, old, scopes, scoped.dbg)
        scoped.fallback = nodes.add(f"!DILocation(line: 0, scope: {scoped.subprogram})")
        out[fn] = scoped
    return out, nodes.added


def _remap(nodes, loc, old, scopes, done, depth=0) -> str | None:
    """A new location like `loc` whose chain ends at the copy of `old` (None when it ends
    elsewhere)."""
    if loc not in done:
        done[loc] = _copy_location(nodes, loc, old, scopes, done, depth) or ""
    return done[loc] or None


def _copy_location(nodes, loc, old, scopes, done, depth) -> str | None:
    body = nodes.body.get(loc, "")
    if depth > 50 or not body.startswith("!DILocation"):
        return None
    outer = _field(body, "inlinedAt")
    if outer:
        new = _remap(nodes, outer, old, scopes, done, depth + 1)
        return nodes.add(body.replace(f"inlinedAt: {outer}", f"inlinedAt: {new}")) if new else None
    scope = _copy_scope(nodes, _field(body, "scope"), old, scopes)
    return nodes.add(re.sub(r"\bscope: ![0-9]+", f"scope: {scope}", body)) if scope else None


def _copy_scope(nodes, scope, old, scopes, depth=0) -> str | None:
    """The copy of `scope` (the subprogram `old` or a lexical block inside it) under old's copy."""
    if scope in scopes:
        return scopes[scope]
    body = nodes.body.get(scope or "", "")
    if depth > 50 or not body.startswith("!DILexicalBlock"):
        return None
    parent = _copy_scope(nodes, _field(body, "scope"), old, scopes, depth + 1)
    if parent is None:
        return None
    scopes[scope] = nodes.add(re.sub(r"\bscope: ![0-9]+", f"scope: {parent}", body), distinct=True)
    return scopes[scope]
