#!/usr/bin/env python3
"""Counts of the workspace's structure, per crate: the figures a restructuring is judged by.

Run from the repository root: `python3 scripts/structure_counts.py` (add `--list` to print the
functions, files and circles behind each count). Reads `crates/*/src` as text; standard library
only. What each column counts:

- `loc`: lines of non-test code (files under `src/`, up to a file's first `#[cfg(test)]` line;
  `tests.rs` files and `tests/` folders inside `src/` are test code).
- `params`: structs named `*Params` (written by hand or through `params!`).
- `valid`, `deref`, `with`: hand-written `Valid*` structs, hand-written `Deref` impls for them,
  and hand-written `fn with_*` setters (the ones `params!` writes do not appear in the text).
- `args5`: public functions (outside tests) that take five or more arguments, `self` aside.
- `fn150`: functions (outside tests) longer than 150 lines.
- `file1000`: `.rs` files under the crate (tests included) longer than 1,000 lines.
- `circles`: import circles between modules: strongly connected groups of two or more modules
  in the graph of `crate::…`, `super::…` and child-module paths in non-test code. A path from
  a module into its own ancestor or descendant is not an edge (a parent re-exporting its
  children, a child using its parent's items); circles are between modules neither of which
  contains the other.
"""

import os
import re
import sys
from collections import defaultdict

ROOT = "crates"


def non_test(text):
    """The part of a file before its first `#[cfg(test)]` line."""
    m = re.search(r"^\s*#\[cfg\(test\)\]", text, re.M)
    return text[: m.start()] if m else text


def strip_strings_comments(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]


def is_test_file(rel):
    parts = rel.split(os.sep)
    return parts[-1] == "tests.rs" or "tests" in parts[:-1]


def src_files(crate):
    src = os.path.join(ROOT, crate, "src")
    for d, _, fs in os.walk(src):
        for f in sorted(fs):
            if f.endswith(".rs"):
                path = os.path.join(d, f)
                yield path, os.path.relpath(path, src)


def functions(text):
    """(name, first line, number of lines, argument text, is pub) of every fn in `text`."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = re.match(
            r"\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+\"\w+\"\s+)?fn\s+(\w+)",
            lines[i],
        )
        if not m:
            i += 1
            continue
        depth = 0
        started = False
        j = i
        while j < len(lines):
            s = strip_strings_comments(lines[j])
            for c in s:
                if c == "{":
                    depth += 1
                    started = True
                elif c == "}":
                    depth -= 1
            if started and depth == 0:
                break
            if not started and s.rstrip().endswith(";"):
                break
            j += 1
        head = "\n".join(lines[i : j + 1])
        out.append((m.group(7), i + 1, j - i + 1, arguments(head, m.group(7)), bool(m.group(1) and m.group(2) is None)))
        i = j + 1 if started else i + 1
    return out


def arguments(head, name):
    """The top-level arguments of the signature in `head`, `self` aside."""
    m = re.search(r"fn\s+" + name + r"\s*(<)?", head)
    i = m.end()
    if m.group(1):  # skip generics
        depth = 1
        while depth and i < len(head):
            depth += {"<": 1, ">": -1}.get(head[i], 0)
            i += 1
    while i < len(head) and head[i] != "(":
        i += 1
    depth = 0
    parts = []
    cur = ""
    for c in head[i:]:
        if c in "([{<":
            depth += 1
            if depth == 1 and c == "(":
                continue
        if c in ")]}>":
            depth -= 1
            if depth == 0:
                break
        if c == "," and depth == 1:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    if cur.strip():
        parts.append(cur)
    return [p for p in parts if p.strip() and "self" not in p.split(":")[0]]


def module_of(rel):
    name = rel[:-3].replace(os.sep, "::")
    if name.endswith("::mod"):
        name = name[: -len("::mod")]
    return "crate" if name in ("lib", "main") else "crate::" + name


def circles(crate):
    mods = {}
    for path, rel in src_files(crate):
        if is_test_file(rel) or rel == "main.rs" and os.path.exists(os.path.join(ROOT, crate, "src", "lib.rs")):
            continue
        mods[module_of(rel)] = non_test(open(path).read())
    names = set(mods)

    def resolve(path):
        parts = path.split("::")
        for k in range(len(parts), 0, -1):
            cand = "::".join(parts[:k])
            if cand in names:
                return cand
        return None

    def related(a, b):
        return a == b or a.startswith(b + "::") or b.startswith(a + "::") or "crate" in (a, b)

    edges = defaultdict(set)
    for mod, text in mods.items():
        parent = mod.rsplit("::", 1)[0] if "::" in mod else mod
        children = set(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text, re.M))
        code = "\n".join(strip_strings_comments(l) for l in text.split("\n"))
        targets = []
        for m in re.finditer(r"\bcrate((?:::\w+)+)", code):
            targets.append("crate" + m.group(1))
        for m in re.finditer(r"\bsuper((?:::\w+)+)", code):
            targets.append(parent + m.group(1).replace("::super", ""))
        # `use` groups: crate::{a, b::c}
        for m in re.finditer(r"\b(crate|super)::\{([^}]*)\}", code):
            base = "crate" if m.group(1) == "crate" else parent
            for item in m.group(2).split(","):
                item = item.strip().split(" as ")[0]
                if item:
                    targets.append(base + "::" + item)
        for m in re.finditer(r"\b(\w+)::", code):
            if m.group(1) in children:
                targets.append(mod + "::" + m.group(1))
        for t in targets:
            r = resolve(t)
            if r and not related(mod, r):
                edges[mod].add(r)
    # Tarjan's strongly connected components
    index = {}
    low = {}
    stack = []
    on = set()
    sccs = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
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
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(mods):
        if v not in index:
            visit(v)
    return sccs


def main():
    listing = "--list" in sys.argv
    crates = sorted(c for c in os.listdir(ROOT) if os.path.isdir(os.path.join(ROOT, c, "src")))
    cols = ["loc", "params", "valid", "deref", "with", "args5", "fn150", "file1000", "circles"]
    total = defaultdict(int)
    details = []
    print(f"{'crate':<18}" + "".join(f"{c:>9}" for c in cols))
    for crate in crates:
        row = defaultdict(int)
        for path, rel in src_files(crate):
            full = open(path).read()
            test = is_test_file(rel)
            code = "" if test else non_test(full)
            row["loc"] += len(code.split("\n")) if code else 0
            row["params"] += len(re.findall(r"\bstruct\s+\w+Params\b", code))
            row["valid"] += len(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?struct\s+Valid\w+", code, re.M))
            row["deref"] += len(re.findall(r"impl(?:<[^>]*>)?\s+(?:std::ops::)?Deref\s+for\s+Valid\w+", code))
            row["with"] += len(re.findall(r"\bfn\s+with_\w+", code))
            for name, line, n, args, public in functions(code):
                if public and len(args) >= 5:
                    row["args5"] += 1
                    details.append(f"args5    {crate}/src/{rel}:{line} {name} ({len(args)})")
                if n > 150:
                    row["fn150"] += 1
                    details.append(f"fn150    {crate}/src/{rel}:{line} {name} ({n} lines)")
        for d, _, fs in os.walk(os.path.join(ROOT, crate)):
            if "target" in d.split(os.sep):
                continue
            for f in fs:
                if f.endswith(".rs"):
                    p = os.path.join(d, f)
                    n = len(open(p).read().split("\n"))
                    if n > 1000:
                        row["file1000"] += 1
                        details.append(f"file1000 {p} ({n} lines)")
        for c in circles(crate):
            row["circles"] += 1
            details.append(f"circle   {crate}: " + " -> ".join(c))
        for c in cols:
            total[c] += row[c]
        print(f"{crate:<18}" + "".join(f"{row[c]:>9}" for c in cols))
    print(f"{'total':<18}" + "".join(f"{total[c]:>9}" for c in cols))
    if listing:
        print()
        print("\n".join(details))


if __name__ == "__main__":
    main()
