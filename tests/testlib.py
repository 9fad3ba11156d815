"""testlib.py - shared by the test suites: counting checks, and walking an ONNX
model's graphs (the main graph and every If/Loop/Scan body below it)."""
import os
import sys

import onnx

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")

SKIP = "skip: "  # a check that cannot run here returns SKIP + why; it counts neither way


class Tally:
    """Counts checks and prints one line each: `ok NAME`, `FAIL NAME: why`
    or `skip NAME: why`; summary() prints the suite's last line."""

    def __init__(self, suite, width=600):
        self.suite, self.width = suite, width
        self.passed = self.failed = 0

    def report(self, name, err):
        if err is not None and str(err).startswith(SKIP):
            print("skip %s: %s" % (name, str(err)[len(SKIP):]))
        elif err is None:
            self.passed += 1
            print("ok %s" % name)
        else:
            self.failed += 1
            print("FAIL %s: %s" % (name, " ".join(str(err).split())[:self.width]))
        sys.stdout.flush()

    def check(self, name, fn, *args):
        """Runs fn(*args) -> None (pass) or an error string; exceptions fail."""
        try:
            err = fn(*args)
        except Exception as e:  # a broken output must fail the check, not the runner
            err = "%s: %s" % (type(e).__name__, e)
        self.report(name, err)
        return err is None

    def summary(self):
        """Prints `SUITE: N passed, M failed`; the exit status for it."""
        print("%s: %d passed, %d failed" % (self.suite, self.passed, self.failed))
        return 1 if self.failed else 0


def models_in(folder, patterns=()):
    """Names (without .onnx) of the models in folder, sorted; only those
    containing one of patterns when any are given."""
    models = sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".onnx")) \
        if os.path.isdir(folder) else []
    return [m for m in models if not patterns or any(p in m for p in patterns)]


def subgraphs(node):
    """(label, graph) for each graph attribute of node: `name` or `name[i]`."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.name, a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            for i, g in enumerate(a.graphs):
                yield "%s[%d]" % (a.name, i), g


def scoped_graphs(m):
    """Yields the scope chain [(path, graph), ...] (outermost first) of m's main
    graph and of every subgraph; a path reads like `main/loop0.body`."""
    def walk(chain):
        yield chain
        path, g = chain[-1]
        for n in g.node:
            for label, sub in subgraphs(n):
                yield from walk(chain + [("%s/%s.%s" % (path, n.name, label), sub)])
    yield from walk([("main", m.graph)])


def ortcheck():
    """scripts/ortcheck.py (onnxruntime through node), imported when first
    needed so that suites that never run a model do not need it."""
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    try:
        import ortcheck as oc
    except ImportError as e:
        raise RuntimeError("scripts/ortcheck.py not importable (%s)" % e)
    return oc
