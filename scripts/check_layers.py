#!/usr/bin/python3
"""check_layers.py - keep ppqfmt's modules layered (make check-layers).

A module is a source file and its header (onnx/load.c + onnx/load.h). Two
rules, checked on the built objects and the sources:

  1. folders: core/ is three layers, one direction between them:
     core/ir/ (the graph, tensors, names, memory, diagnostics) uses only
     core/ir/; core/infer/ (facts, dims, the inference driver and the rule
     context) uses core/ir/ and core/infer/; core/ops/ (the op rules, the
     registry, the evaluation kernels) uses all three. formatter/ uses only
     core/ and formatter/; onnx/ uses only core/ and onnx/ (and the
     generated protobuf code); api/ (the library: options, the run, the
     report) uses core/, onnx/, formatter/ and api/; cli/ may use everything. Checked on #include
     lines and on the symbols each object file uses (nm), so a declaration
     copied by hand instead of included does not hide a dependency.
  2. no cycles between modules: A uses a symbol B defines and B (directly or
     through others) uses one A defines. A cycle means the two modules are
     one piece of code split across files, or a helper sits in the wrong one.

Usage: scripts/check_layers.py [BUILD_DIR]   (default: build)
Prints each violation on a line and exits 1 if there is any.
"""
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORE = ("core/ir", "core/infer", "core/ops")
FOLDERS = CORE + ("onnx", "formatter", "api", "cli")
ALLOWED = {
    "core/ir": {"core/ir"},
    "core/infer": {"core/ir", "core/infer"},
    "core/ops": {"core/ir", "core/infer", "core/ops"},
    "onnx": {*CORE, "onnx", "gen"},
    "formatter": {*CORE, "formatter"},
    "api": {*CORE, "onnx", "formatter", "api"},
    "cli": {*CORE, "onnx", "formatter", "api", "cli"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(path):
    """'onnx/load.c' -> 'onnx/load'."""
    return os.path.splitext(os.path.normpath(path))[0]


def folder_of(module):
    """'core/ir/graph' -> 'core/ir', 'onnx/load' -> 'onnx'."""
    return os.path.dirname(module)


def include_edges():
    """(module, included module) for every quoted #include."""
    for folder in FOLDERS:
        for name in sorted(os.listdir(os.path.join(REPO, folder))):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(folder, name)
            with open(os.path.join(REPO, path)) as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                target = os.path.normpath(os.path.join(folder, inc))
                if inc == "onnx.pb-c.h":
                    target = "gen/onnx.pb-c.h"
                yield module_of(path), module_of(target)


def nm(obj, *flags):
    out = subprocess.run(["nm", *flags, obj], capture_output=True, text=True, check=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def symbol_edges(build):
    """(module, module defining a symbol it uses), from the object files."""
    defined, used = {}, {}
    objroot = os.path.join(build, "obj")
    for folder in FOLDERS + ("gen",):
        d = os.path.join(objroot, folder)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".o"):
                continue
            mod = module_of(os.path.join(folder, name))
            obj = os.path.join(d, name)
            for parts in nm(obj, "--defined-only", "-g"):
                if len(parts) == 3 and parts[1] in "TDBRCV":
                    defined[parts[2]] = mod
            used[mod] = [parts[-1] for parts in nm(obj, "-u")]
    for mod, syms in used.items():
        for s in syms:
            if s in defined and defined[s] != mod:
                yield mod, defined[s]


def folder_violations(edges):
    seen = set()
    for a, b in edges:
        fa, fb = folder_of(a), folder_of(b)
        if fa in ALLOWED and fb not in ALLOWED[fa] and (a, b) not in seen:
            seen.add((a, b))
            yield f"layer: {a} uses {b} ({fa}/ may use only {', '.join(sorted(ALLOWED[fa]))})"


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "build")
    edges = list(include_edges()) + list(symbol_edges(build))
    problems = list(folder_violations(edges))
    for name in sorted(os.listdir(os.path.join(REPO, "core"))):
        if name.endswith((".c", ".h")):
            problems.append(f"layer: core/{name} is outside core's layers ({', '.join(CORE)})")
    for comp in cycles(edges):
        problems.append("cycle: " + " <-> ".join(comp))
    for p in problems:
        print(p)
    print(f"check-layers: {len(problems)} problem(s) in {len(set(a for a, _ in edges))} modules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
