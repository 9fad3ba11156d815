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


def pass_models(root):
    """Paths of tests/test_passes.py's models under root/testdata, sorted:
    those of the pass modules with SPECS (tests/passes/)."""
    import passes  # tests/passes/, which imports this module
    return sorted(os.path.join(root, "testdata", c.path) for mod in passes.modules()
                  if hasattr(mod, "SPECS") for c in mod.MODELS.cases)


def subgraphs(node):
    """(label, graph) for each graph attribute of node: `name` or `name[i]`."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.name, a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            for i, g in enumerate(a.graphs):
                yield "%s[%d]" % (a.name, i), g


def subgraph_path(path, node, label):
    """The path of node's subgraph `label` inside the graph at path, such as
    `main/loop0.body` (the node's op type when it has no name)."""
    return "%s/%s.%s" % (path, node.name or node.op_type, label)


def scoped_graphs(m):
    """Yields the scope chain [(path, graph), ...] (outermost first) of m's main
    graph and of every subgraph (paths: subgraph_path)."""
    def walk(chain):
        yield chain
        path, g = chain[-1]
        for n in g.node:
            for label, sub in subgraphs(n):
                yield from walk(chain + [(subgraph_path(path, n, label), sub)])
    yield from walk([("main", m.graph)])


def graphs(g, path="main"):
    """(path, graph) for g and every graph nested in it (paths: subgraph_path)."""
    yield path, g
    for n in g.node:
        for label, sub in subgraphs(n):
            yield from graphs(sub, subgraph_path(path, n, label))


def nodes(m):
    """(path, graph, node) for every node of model m, subgraphs included."""
    return [(p, g, n) for p, g in graphs(m.graph) for n in g.node]


def check_interface(inp, out, params_may_change=False):
    """None when out keeps inp's graph inputs and outputs: names, order and
    types. params_may_change leaves out the graph inputs that are initializers
    (before IR 4 every initializer is also an input, so a pass that adds or
    drops a parameter changes that list); else an error string."""
    def inputs(m):
        inits = {t.name for t in m.graph.initializer} if params_may_change else set()
        return [v for v in m.graph.input if v.name not in inits]
    errs = []
    for what, a, b in (("input", inputs(inp), inputs(out)),
                       ("output", inp.graph.output, out.graph.output)):
        na, nb = [v.name for v in a], [v.name for v in b]
        if na != nb:
            errs.append("graph %ss %s, expected %s" % (what, nb, na))
            continue
        for va, vb in zip(a, b):
            if va.type.SerializeToString() != vb.type.SerializeToString():
                errs.append("graph %s %s type/shape changed" % (what, va.name))
    return "; ".join(errs) or None


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


# --- --target-opset checks shared by tests/test_target_opset.py (Debian's onnx) and
# tests/test_target_opset_modern.py (the pinned onnx of .deps/venv) ---

def run_ppqfmt(ppqfmt, args):
    """(exit status, stderr text) of ppqfmt run with args."""
    import subprocess
    p = subprocess.run([ppqfmt] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def default_opset(m):
    return next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def check_raise_alone(check, ppqfmt, label, src, dst, target, min_ir):
    """`--passes=none --target-opset=target` from src to dst: exit 0, the opset and at least
    min_ir, the full checker. The output model, or None when ppqfmt failed."""
    rc, err = run_ppqfmt(ppqfmt, ["--passes=none", "--target-opset=%d" % target, src, "-o", dst])
    if not check("%s: raise alone exits 0" % label,
                 lambda: None if rc == 0 else "exit %d: %s" % (rc, err.strip())):
        return None
    out = onnx.load(dst)
    check("%s: opset and IR" % label, lambda: None if default_opset(out) == target and
          out.ir_version >= min_ir else "opset %d ir %d" % (default_opset(out), out.ir_version))
    check("%s: full checker" % label, onnx.checker.check_model, out, True)
    return out


def check_refused(check, ppqfmt, label, src, dst, target, word):
    """--target-opset=target refused: exit 2, one `ppqfmt:` line naming word, no output."""
    rc, err = run_ppqfmt(ppqfmt, ["--target-opset=%d" % target, src, "-o", dst])
    lines = err.strip().splitlines()
    check("%s: exit 2, one line naming %s, no output" % (label, word), lambda: None if (
        rc == 2 and len(lines) == 1 and lines[0].startswith("ppqfmt: ") and word in lines[0]
        and not os.path.exists(dst)) else "exit %d, stderr %r, output %s" %
        (rc, err, os.path.exists(dst)))


def check_default_passes(check, ppqfmt, label, src, dst, target, equiv):
    """`--target-opset=target` with the default passes: exit 0, the output still at opset
    target (no legacy-form pass raised it again), the full checker, and equiv(src, dst) (None,
    or why the outputs differ)."""
    rc, err = run_ppqfmt(ppqfmt, ["--target-opset=%d" % target, src, "-o", dst])
    if check("%s: default passes exit 0" % label,
             lambda: None if rc == 0 else "exit %d: %s" % (rc, err.strip())):
        check("%s: default passes keep opset %d" % (label, target),
              lambda: None if default_opset(onnx.load(dst)) == target else
              "opset %d" % default_opset(onnx.load(dst)))
        check("%s: default passes full checker" % label, onnx.checker.check_model,
              onnx.load(dst), True)
        check("%s: onnxruntime same outputs" % label, equiv, src, dst)


# --- small models built with onnx.helper, shared by tests/test_target_opset_modern.py and
# tests/test_lower_opset.py (the pinned onnx of .deps/venv) ---

def tensor_vi(name, shape, dtype=onnx.TensorProto.FLOAT):
    return onnx.helper.make_tensor_value_info(name, dtype, shape)


# The IR version of the onnx release that introduced each default-domain opset
# (onnx.helper.VERSION_TABLE): what a raise to that opset must write at least.
IR_OF_OPSET = {1: 3, 5: 3, 6: 3, 7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8,
               16: 8, 17: 8, 18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13,
               27: 13, 28: 14}


def model_at(opset, nodes, inputs, outputs, inits=()):
    """A one-graph model importing default-domain opset `opset`, at that opset's IR version."""
    g = onnx.helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", opset)])
    m.ir_version = IR_OF_OPSET[opset]
    return m


def node_attr(node, name):
    """The value of node's attribute name, or None."""
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return None


def node_named(model, name):
    return next(n for n in model.graph.node if n.name == name)


def ort_same_outputs(src, dst):
    """None when onnxruntime gives the same outputs on the models at src and dst (random
    inputs), else why not."""
    oc = ortcheck()
    feeds = oc.random_inputs(src)
    ok, msg = oc.compare(oc.run_python(src, feeds), oc.run_python(dst, feeds))
    return None if ok else msg


def write_data_set(folder, inputs, outputs=()):
    """A data set --check-inputs reads: input_K.pb (and output_K.pb) TensorProto
    files in folder, from (name, array) pairs in order."""
    from onnx import numpy_helper
    os.makedirs(folder, exist_ok=True)
    for prefix, pairs in (("input", inputs), ("output", outputs)):
        for k, (name, a) in enumerate(pairs):
            with open(os.path.join(folder, "%s_%d.pb" % (prefix, k)), "wb") as f:
                f.write(numpy_helper.from_array(a, name).SerializeToString())
