#!/usr/bin/python3
"""End-to-end tests of the constant, identity and isolated passes.

Usage: tests/test_passes.py [--keep DIR] [PATTERN ...]

For every model in testdata/ (made by scripts/make_testdata.py) this runs
ppqfmt (build/ppqfmt, or $PPQFMT) with the default passes, with only the pass
the model is about (--passes=NAME, from the <pass>_<case> file name) and with
--passes=none, and checks each output for:
  - structure: what must be gone, kept, renamed, or turned into initializers.
    Expected values are read from the INPUT model (the Constant node's
    attribute, the input initializer), never from ppqfmt's output;
  - validity: onnx.checker.check_model(full_check=True);
  - interface: graph input/output names, order and types unchanged; model
    fields (ir_version, opset_import, producer, graph name, doc strings) kept;
    relative order of surviving nodes kept;
  - numbers: onnxruntime (scripts/ortcheck.py) gives the same outputs; models
    with a scalar bool input (If condition) are run with it false and true;
  - idempotence (format the output again: same bytes) and determinism (a
    second run: same bytes); --passes=none gives the input bytes back.
Each check prints `ok NAME` or `FAIL NAME: reason`; the last line is
`test_passes: N passed, M failed`; the exit status is 1 if anything failed.
PATTERN (substring) restricts the models tested.  --keep DIR keeps outputs.
Run with Debian's /usr/bin/python3 (python3-onnx).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.environ.get("PPQFMT_TESTDATA", os.path.join(REPO, "testdata"))
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))
RUN_TIMEOUT = 60

PASSED = 0
FAILED = 0


def report(name, err):
    global PASSED, FAILED
    if err is None:
        PASSED += 1
        print("ok %s" % name)
    else:
        FAILED += 1
        print("FAIL %s: %s" % (name, " ".join(str(err).split())[:600]))
    sys.stdout.flush()


def check(name, fn, *args):
    """Run fn(*args) -> None (pass) or an error string; exceptions fail."""
    try:
        err = fn(*args)
    except Exception as e:  # a broken output must fail the check, not the runner
        err = "%s: %s" % (type(e).__name__, e)
    report(name, err)
    return err is None


# ---------------------------------------------------------------------------
# graph helpers (subgraphs included)
# ---------------------------------------------------------------------------

def graphs(g, path="main"):
    """Yield (path, graph) for g and every subgraph below it."""
    yield path, g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graphs(a.g, "%s/%s.%s" % (path, n.name, a.name))
            elif a.type == onnx.AttributeProto.GRAPHS:
                for i, sg in enumerate(a.graphs):
                    yield from graphs(sg, "%s/%s.%s[%d]" % (path, n.name, a.name, i))


def all_nodes(m):
    return [(p, g, n) for p, g in graphs(m.graph) for n in g.node]


def find_node(m, name):
    """(graph, node) of the node called name, or (None, None)."""
    for _, g, n in all_nodes(m):
        if n.name == name:
            return g, n
    return None, None


def need_node(m, name):
    g, n = find_node(m, name)
    if n is None:
        raise LookupError("node %s not found in the output" % name)
    return g, n


def initializer(g, name):
    for t in g.initializer:
        if t.name == name:
            return t
    return None


def producer(g, name):
    for n in g.node:
        if name in n.output:
            return n
    return None


def constant_value(node):
    """Value of a Constant node, decoded independently from its attribute."""
    if node.op_type != "Constant" or len(node.attribute) != 1:
        raise ValueError("%s is not a one-attribute Constant" % node.name)
    a = node.attribute[0]
    if a.name == "value":
        return numpy_helper.to_array(a.t)
    if a.name == "value_float":
        return np.array(a.f, np.float32)
    if a.name == "value_floats":
        return np.array(list(a.floats), np.float32)
    if a.name == "value_int":
        return np.array(a.i, np.int64)
    if a.name == "value_ints":
        return np.array(list(a.ints), np.int64)
    if a.name == "value_string":
        return np.array(a.s.decode("utf-8"), dtype=object)
    if a.name == "value_strings":
        return np.array([s.decode("utf-8") for s in a.strings], dtype=object)
    raise ValueError("unsupported Constant attribute %s" % a.name)


def same_array(got, exp):
    """None if got equals exp exactly (dtype, shape, bits/strings)."""
    got, exp = np.asarray(got), np.asarray(exp)
    if exp.dtype == object or got.dtype == object:
        if got.dtype != object or exp.dtype != object:
            return "dtype %s, expected %s" % (got.dtype, exp.dtype)
        g = [v.decode("utf-8") if isinstance(v, bytes) else v for v in got.flat]
        e = [v.decode("utf-8") if isinstance(v, bytes) else v for v in exp.flat]
        if got.shape != exp.shape or g != e:
            return "value %r%s, expected %r%s" % (g, got.shape, e, exp.shape)
        return None
    if got.dtype != exp.dtype:
        return "dtype %s, expected %s" % (got.dtype, exp.dtype)
    if got.shape != exp.shape:
        return "shape %s, expected %s" % (got.shape, exp.shape)
    if got.tobytes() != exp.tobytes():
        return "values differ: %s vs expected %s" % (got.flatten()[:6], exp.flatten()[:6])
    return None


def input_constant(inp, const_name):
    _, n = find_node(inp, const_name)
    if n is None:
        raise LookupError("test bug: no Constant %s in the input model" % const_name)
    return constant_value(n)


def input_initializer(inp, name):
    for _, g in graphs(inp.graph):
        t = initializer(g, name)
        if t is not None:
            return numpy_helper.to_array(t)
    raise LookupError("test bug: no initializer %s in the input model" % name)


def describe(g, name):
    p = producer(g, name)
    return ("made by %s node %s" % (p.op_type, p.name)) if p else "not defined in that graph"


# ---------------------------------------------------------------------------
# structural checks: each factory returns (label, fn(inp, out) -> err|None)
# ---------------------------------------------------------------------------

def no_op(op):
    def fn(inp, out):
        left = [n.name or "?" for _, _, n in all_nodes(out) if n.op_type == op]
        return ("%d %s node(s) left: %s" % (len(left), op, left)) if left else None
    return ("no %s nodes left" % op, fn)


def op_count(op, count):
    def fn(inp, out):
        left = [n.name for _, _, n in all_nodes(out) if n.op_type == op]
        return None if len(left) == count else "%d %s nodes %s, expected %d" % (
            len(left), op, left, count)
    return ("%d %s node(s)" % (count, op), fn)


def kept(*names):
    def fn(inp, out):
        miss = [x for x in names if find_node(out, x)[1] is None]
        return ("missing: %s" % miss) if miss else None
    return ("kept %s" % ",".join(names), fn)


def removed(*names):
    def fn(inp, out):
        left = [x for x in names if find_node(out, x)[1] is not None]
        return ("still there: %s" % left) if left else None
    return ("removed %s" % ",".join(names), fn)


def fed_by_param(consumer, idx, const_name):
    """consumer's input idx is an initializer of the consumer's own graph
    holding exactly the value of Constant const_name of the input model."""
    def fn(inp, out):
        exp = input_constant(inp, const_name)
        g, n = need_node(out, consumer)
        if idx >= len(n.input) or not n.input[idx]:
            return "%s has no input %d" % (consumer, idx)
        name = n.input[idx]
        t = initializer(g, name)
        if t is None:
            return "%s input %d '%s' is not an initializer of %s's graph (%s)" % (
                consumer, idx, name, consumer, describe(g, name))
        err = same_array(numpy_helper.to_array(t), exp)
        return ("initializer %s: %s" % (name, err)) if err else None
    return ("%s input %d is an initializer equal to %s" % (consumer, idx, const_name), fn)


def output_holds(out_name, const_name):
    """Main graph output out_name still carries the Constant's value: it is an
    initializer, or an Identity chain from one."""
    def fn(inp, out):
        exp = input_constant(inp, const_name)
        g, name = out.graph, out_name
        for _ in range(16):
            t = initializer(g, name)
            if t is not None:
                err = same_array(numpy_helper.to_array(t), exp)
                return ("initializer %s: %s" % (name, err)) if err else None
            p = producer(g, name)
            if p is None:
                return "%s is neither an initializer nor produced by a node" % name
            if p.op_type != "Identity":
                return "%s is made by %s node %s" % (name, p.op_type, p.name)
            name = p.input[0]
        return "Identity chain too long"
    return ("output %s holds the value of %s" % (out_name, const_name), fn)


def node_output(node, idx, name):
    def fn(inp, out):
        _, n = need_node(out, node)
        got = n.output[idx] if idx < len(n.output) else None
        return None if got == name else "%s output %d is %r, expected %r" % (node, idx, got, name)
    return ("%s writes %s" % (node, name), fn)


def node_input(node, idx, name):
    def fn(inp, out):
        _, n = need_node(out, node)
        got = n.input[idx] if idx < len(n.input) else None
        return None if got == name else "%s input %d is %r, expected %r" % (node, idx, got, name)
    return ("%s reads %s" % (node, name), fn)


def init_kept(name):
    """An initializer called name still exists (any graph) with the input's values."""
    def fn(inp, out):
        exp = input_initializer(inp, name)
        for _, g in graphs(out.graph):
            t = initializer(g, name)
            if t is not None:
                err = same_array(numpy_helper.to_array(t), exp)
                return ("initializer %s: %s" % (name, err)) if err else None
        return "initializer %s is gone" % name
    return ("initializer %s kept" % name, fn)


def init_removed(name):
    def fn(inp, out):
        where = [p for p, g in graphs(out.graph) if initializer(g, name) is not None]
        return ("initializer %s still in %s" % (name, where)) if where else None
    return ("initializer %s removed" % name, fn)


def init_count(count):
    def fn(inp, out):
        names = [t.name for _, g in graphs(out.graph) for t in g.initializer]
        return None if len(names) == count else "initializers %s, expected %d" % (names, count)
    return ("%d initializers" % count, fn)


def vi_kept(name):
    def fn(inp, out):
        exp = [v for v in inp.graph.value_info if v.name == name]
        got = [v for v in out.graph.value_info if v.name == name]
        if not got:
            return "value_info %s is gone" % name
        if got[0].type.SerializeToString() != exp[0].type.SerializeToString():
            return "value_info %s type changed" % name
        return None
    return ("value_info %s kept" % name, fn)


def vi_removed(name):
    def fn(inp, out):
        left = [p for p, g in graphs(out.graph) for v in g.value_info if v.name == name]
        return ("value_info %s still in %s" % (name, left)) if left else None
    return ("value_info %s removed" % name, fn)


def graph_input_kept(name):
    def fn(inp, out):
        names = [i.name for i in out.graph.input]
        return None if name in names else "graph inputs are %s" % names
    return ("graph input %s kept" % name, fn)


# ---------------------------------------------------------------------------
# generic checks
# ---------------------------------------------------------------------------

def check_interface(inp, out):
    errs = []
    for what in ("input", "output"):
        a, b = getattr(inp.graph, what), getattr(out.graph, what)
        na, nb = [v.name for v in a], [v.name for v in b]
        if na != nb:
            errs.append("graph %ss %s, expected %s" % (what, nb, na))
            continue
        for va, vb in zip(a, b):
            if va.type.SerializeToString() != vb.type.SerializeToString():
                errs.append("graph %s %s type/shape changed" % (what, va.name))
    return "; ".join(errs) or None


def check_model_fields(inp, out):
    def fields(m):
        return {
            "ir_version": m.ir_version,
            "opset_import": sorted((o.domain, o.version) for o in m.opset_import),
            "producer": (m.producer_name, m.producer_version, m.domain, m.model_version),
            "doc_string": m.doc_string,
            "metadata_props": [(p.key, p.value) for p in m.metadata_props],
            "graph.name": m.graph.name,
            "graph.doc_string": m.graph.doc_string,
        }
    fa, fb = fields(inp), fields(out)
    bad = ["%s %r, expected %r" % (k, fb[k], fa[k]) for k in fa if fa[k] != fb[k]]
    return "; ".join(bad) or None


def check_order(inp, out):
    """Nodes that survive keep their relative order, graph by graph."""
    out_graphs = dict(graphs(out.graph))
    for path, g in graphs(inp.graph):
        og = out_graphs.get(path)
        if og is None:
            continue
        names = [n.name for n in g.node]
        pos = {x: i for i, x in enumerate(names)}
        seq = [pos[n.name] for n in og.node if n.name in pos]
        if seq != sorted(seq):
            return "%s: node order %s, input order %s" % (
                path, [names[i] for i in seq], names)
    return None


def check_full(path):
    onnx.checker.check_model(onnx.load(path), full_check=True)
    return None


_ORTCHECK = None


def ortcheck():
    global _ORTCHECK
    if _ORTCHECK is None:
        sys.path.insert(0, os.path.join(REPO, "scripts"))
        try:
            import ortcheck as oc
        except ImportError as e:
            raise RuntimeError("scripts/ortcheck.py not importable (%s)" % e)
        _ORTCHECK = oc
    return _ORTCHECK


def bool_scalar_inputs(m):
    inits = {t.name for t in m.graph.initializer}
    return [i.name for i in m.graph.input
            if i.name not in inits and i.type.tensor_type.elem_type == onnx.TensorProto.BOOL
            and len(i.type.tensor_type.shape.dim) == 0]


def check_equiv(inp_path, out_path, inp):
    """onnxruntime: same outputs on the same random inputs.  An If condition
    (scalar bool input) is tried both false and true so both branches run."""
    oc = ortcheck()
    conds = bool_scalar_inputs(inp)
    if not conds or not all(hasattr(oc, f) for f in ("random_inputs", "run_models", "compare")):
        ok, msg = oc.equiv(inp_path, out_path, seed=0)
        return None if ok else msg
    base = oc.random_inputs(inp_path, 0)
    errs = []
    for value in (False, True):
        feeds = dict(base)
        for c in conds:
            feeds[c] = np.array(value)
        ra, rb = oc.run_models([{"model": inp_path, "inputs": feeds},
                                {"model": out_path, "inputs": feeds}])
        if isinstance(ra, str):
            errs.append("onnxruntime failed on the input (%s=%s): %s" % (conds, value, ra))
        elif isinstance(rb, str):
            errs.append("onnxruntime failed on the output (%s=%s): %s" % (conds, value, rb))
        else:
            ok, msg = oc.compare(ra, rb)
            if not ok:
                errs.append("%s=%s: %s" % (conds, value, msg))
    return "; ".join(errs) or None


# ---------------------------------------------------------------------------
# what each model must look like after formatting
#   single:  checked after --passes=<pass of the model>
#   default: checked after the default pipeline
#   both:    checked after both
# ---------------------------------------------------------------------------

NC, NI = no_op("Constant"), no_op("Identity")

SPECS = {
    "constant_value_raw": dict(both=[NC, fed_by_param("add0", 1, "const0")]),
    "constant_value_float_data": dict(both=[NC, fed_by_param("mul0", 1, "const0")]),
    "constant_value_int64": dict(both=[NC, fed_by_param("reshape0", 1, "const0")]),
    "constant_value_float": dict(both=[NC, fed_by_param("mul0", 1, "const0")]),
    "constant_value_floats": dict(both=[NC, fed_by_param("add0", 1, "const0")]),
    "constant_value_int": dict(both=[NC, fed_by_param("gather0", 1, "const0")]),
    "constant_value_ints": dict(both=[NC, fed_by_param("unsqueeze0", 1, "const0")]),
    "constant_value_string": dict(both=[
        NC, fed_by_param("where0", 1, "const_pos"), fed_by_param("where0", 2, "const_neg")]),
    "constant_value_strings": dict(both=[
        NC, fed_by_param("where0", 1, "const_a"), fed_by_param("where0", 2, "const_b")]),
    "constant_graph_output": dict(both=[NC, output_holds("C", "const0"), kept("relu0")]),
    "constant_two_consumers": dict(both=[
        NC, fed_by_param("add0", 1, "const0"), fed_by_param("mul0", 1, "const0")]),
    "constant_in_if": dict(both=[
        NC, kept("if0"), fed_by_param("then_add", 1, "then_const"),
        fed_by_param("else_mul", 1, "else_const")]),
    # other default passes (fuse-bias) may legitimately fold add0 into the
    # Conv bias, so B and A are only checked with --passes=constant
    "constant_weights": dict(
        both=[NC, kept("conv0", "relu0"), fed_by_param("conv0", 1, "const_w")],
        single=[kept("add0"), fed_by_param("conv0", 2, "const_b"),
                fed_by_param("add0", 1, "const_a")]),

    "identity_middle": dict(both=[NI, kept("relu0", "sig0"), node_input("sig0", 0, "r")]),
    "identity_graph_output": dict(both=[NI, node_output("relu0", 0, "Y")]),
    "identity_shared_output": dict(both=[
        NI, node_output("relu0", 0, "Y"), node_input("sig0", 0, "Y")]),
    "identity_input_to_output": dict(both=[
        op_count("Identity", 1), kept("id0", "relu0"),
        node_input("id0", 0, "X"), node_output("id0", 0, "Y")]),
    "identity_initializer_to_output": dict(both=[
        op_count("Identity", 1), kept("id0", "add0"), init_kept("W")]),
    "identity_chain": dict(both=[NI, node_input("sig0", 0, "r")]),
    "identity_chain_output": dict(both=[NI, node_output("relu0", 0, "Y")]),
    "identity_output_input": dict(both=[op_count("Identity", 1), kept("relu0")]),
    "identity_in_if": dict(both=[
        NI, kept("if0", "then_relu", "else_sig"),
        node_output("then_relu", 0, "then_out"), node_input("else_sig", 0, "X")]),
    "identity_if_outer_output": dict(both=[
        op_count("Identity", 1), kept("then_id", "else_neg"),
        node_input("then_id", 0, "X"), node_output("then_id", 0, "then_out")]),
    "identity_in_loop": dict(both=[
        op_count("Identity", 1), kept("loop0", "body_id_cond", "body_add"),
        removed("body_id_v"), node_input("body_add", 0, "v_in"), init_kept("one")]),

    "isolated_dead_chain": dict(both=[removed("dead0", "dead1"), kept("relu0")]),
    "isolated_unused_initializer": dict(both=[init_removed("U"), init_kept("W"), kept("add0")]),
    "isolated_value_info": dict(both=[
        removed("dead0"), kept("relu0", "sig0"), vi_removed("d0"), vi_kept("r")]),
    "isolated_outer_scope_use": dict(both=[
        kept("outer0", "outer1", "if0", "then_add", "else_mul")]),
    "isolated_outer_initializer": dict(both=[kept("if0", "then_add"), init_kept("K")]),
    "isolated_dead_in_subgraph": dict(both=[
        removed("sub_dead0"), removed("feed_dead"), kept("if0", "then_relu", "else_neg")]),
    "isolated_dead_if": dict(both=[removed("dead_if", "feed_if"), kept("relu0")]),
    "isolated_unused_input": dict(both=[graph_input_kept("Z"), kept("relu0")]),
    "isolated_initializer_input": dict(both=[
        graph_input_kept("B"), init_kept("B"), init_kept("W"), kept("add0")]),
    "isolated_dead_constant": dict(
        single=[removed("dead_const")],
        default=[NC, init_count(0), kept("relu0")]),

    "sample": dict(default=[
        NC, NI, removed("dead_sig", "id0"), kept("conv0", "relu0"),
        init_removed("unused_scale"), fed_by_param("conv0", 1, "const_w"),
        fed_by_param("conv0", 2, "const_b"), node_input("relu0", 0, "conv_out")]),
}

PASS_NAMES = ("constant", "identity", "isolated")


# ---------------------------------------------------------------------------
# running ppqfmt
# ---------------------------------------------------------------------------

def ppqfmt(opts, src, dst):
    """Run ppqfmt; None on exit 0 with dst written, else an error string."""
    if os.path.exists(dst):
        os.unlink(dst)
    cmd = [PPQFMT] + opts + [src, "-o", dst]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timed out after %ds: %s" % (RUN_TIMEOUT, " ".join(cmd))
    except OSError as e:
        return "cannot run %s: %s" % (PPQFMT, e)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace").strip()[-300:])
    if not os.path.exists(dst):
        return "exit 0 but no output file %s" % dst
    return None


def read(path):
    with open(path, "rb") as f:
        return f.read()


def same_bytes(a, b, what):
    da, db = read(a), read(b)
    if da == db:
        return None
    i = next((k for k in range(min(len(da), len(db))) if da[k] != db[k]), min(len(da), len(db)))
    return "%s: %d vs %d bytes, first difference at byte %d" % (what, len(db), len(da), i)


def test_run(model, run, opts, specs, src, workdir):
    """Format src with opts, then run the generic and the structural checks."""
    tag = "%s/%s" % (model, run)
    dst = os.path.join(workdir, "%s.%s.onnx" % (model, run))
    if not check("%s: ppqfmt exits 0" % tag, ppqfmt, opts, src, dst):
        return
    inp = onnx.load(src)
    try:
        out = onnx.load(dst)
    except Exception as e:
        report("%s: output loads" % tag, e)
        return
    check("%s: full checker" % tag, check_full, dst)
    check("%s: graph inputs/outputs unchanged" % tag, check_interface, inp, out)
    check("%s: model fields kept" % tag, check_model_fields, inp, out)
    check("%s: surviving node order kept" % tag, check_order, inp, out)
    for label, fn in specs:
        check("%s: %s" % (tag, label), fn, inp, out)
    check("%s: onnxruntime equivalent" % tag, check_equiv, src, dst, inp)

    again = os.path.join(workdir, "%s.%s.again.onnx" % (model, run))
    check("%s: idempotent" % tag, lambda: ppqfmt(opts, dst, again)
          or same_bytes(dst, again, "formatting the output again changed it"))
    rerun = os.path.join(workdir, "%s.%s.rerun.onnx" % (model, run))
    check("%s: deterministic" % tag, lambda: ppqfmt(opts, src, rerun)
          or same_bytes(dst, rerun, "two runs differ"))


def test_none(model, src, workdir):
    dst = os.path.join(workdir, "%s.none.onnx" % model)
    check("%s/none: --passes=none is byte-identical" % model,
          lambda: ppqfmt(["--passes=none"], src, dst) or same_bytes(src, dst, "output differs"))


def test_report(src, workdir):
    """--report=json writes parseable JSON on stderr."""
    dst = os.path.join(workdir, "report.onnx")
    p = subprocess.run([PPQFMT, "--report=json", src, "-o", dst], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-300:])
    text = p.stderr.decode("utf-8", "replace").strip()
    try:
        json.loads(text)
        return None
    except ValueError:
        pass
    lines = [x for x in text.splitlines() if x.strip()]
    try:
        for x in lines:
            json.loads(x)
        return None if lines else "nothing on stderr"
    except ValueError as e:
        return "stderr is not JSON (%s): %r" % (e, text[:200])


def main(argv):
    keep, patterns = None, []
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--keep" and args:
            keep = args.pop(0)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            patterns.append(a)

    models = sorted(f[:-5] for f in os.listdir(TESTDATA) if f.endswith(".onnx")) \
        if os.path.isdir(TESTDATA) else []
    if patterns:
        models = [m for m in models if any(p in m for p in patterns)]

    if not (os.path.isfile(PPQFMT) and os.access(PPQFMT, os.X_OK)):
        report("setup", "ppqfmt not found at %s (build it, or set PPQFMT)" % PPQFMT)
    elif not models:
        report("setup", "no models in %s (run scripts/make_testdata.py)" % TESTDATA)
    else:
        workdir = keep or tempfile.mkdtemp(prefix="test_passes_")
        os.makedirs(workdir, exist_ok=True)
        try:
            for model in models:
                spec = SPECS.get(model)
                if spec is None:
                    report("%s: has expectations" % model, "no entry in SPECS of tests/test_passes.py")
                    continue
                src = os.path.join(TESTDATA, model + ".onnx")
                both = spec.get("both", [])
                test_run(model, "default", [], both + spec.get("default", []), src, workdir)
                pname = model.split("_")[0]
                if pname in PASS_NAMES:
                    test_run(model, pname, ["--passes=" + pname],
                             both + spec.get("single", []), src, workdir)
                test_none(model, src, workdir)
                if model == "sample":
                    check("sample: --report=json is JSON on stderr", test_report, src, workdir)
            missing = sorted(set(SPECS) - set(models))
            if missing and not patterns:
                report("testdata complete", "models missing from %s: %s" % (TESTDATA, missing))
        finally:
            if keep is None:
                shutil.rmtree(workdir, ignore_errors=True)

    print("test_passes: %d passed, %d failed" % (PASSED, FAILED))
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
