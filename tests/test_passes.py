#!/usr/bin/python3
"""End-to-end tests of the passes (constant, identity, isolated, split-params,
fuse-bias, fuse-bn, bn-to-conv, de-inplace).

Usage: tests/test_passes.py [--keep DIR] [--jobs N] [PATTERN ...]

For every model in testdata/ (made by scripts/make_testdata.py) this runs
ppqfmt (build/ppqfmt, or $PPQFMT) with the default passes, with only the pass
the model is about (--passes=NAME, from the <pass>_<case> file name: see
PASS_NAMES, e.g. fusebn_* -> fuse-bn) and with --passes=none, and checks each
output for:
  - structure: what must be gone, kept, renamed, or turned into initializers.
    Expected values are read from the INPUT model (the Constant node's
    attribute, the input initializer), never from ppqfmt's output;
  - validity: onnx.checker.check_model(full_check=True);
  - interface: graph input/output names, order and types unchanged; model
    fields (ir_version, opset_import, producer, graph name, doc strings) kept;
    relative order of surviving nodes kept;
  - numbers: onnxruntime (scripts/ortcheck.py) gives the same outputs; models
    with a scalar bool input (If condition) are run with it false and true;
    folded weights are also compared with a float64 fold computed here from
    the input's parameters; models that are not SSA (de-inplace; onnxruntime
    refuses them) are compared with a numpy reference instead;
  - idempotence (format the output again: same bytes) and determinism (a
    second run: same bytes); --passes=none gives the input bytes back.
Each check prints `ok NAME` or `FAIL NAME: reason`; the last line is
`test_passes: N passed, M failed`; the exit status is 1 if anything failed.
PATTERN (substring) restricts the models tested.  --keep DIR keeps outputs.
--jobs N (default: the CPUs this process may use) shares the models among N
forked workers; each worker's lines are printed whole when it ends.
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
from onnx import helper, numpy_helper

import testlib  # tests/, beside this file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.environ.get("PPQFMT_TESTDATA", os.path.join(REPO, "testdata"))
NOOPS_DIR = os.path.join(TESTDATA, "noops")  # scripts/make_noops_testdata.py
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))
RUN_TIMEOUT = 60

T = testlib.Tally("test_passes")
report, check = T.report, T.check


# ---------------------------------------------------------------------------
# graph helpers (subgraphs included)
# ---------------------------------------------------------------------------

def find_node(m, name):
    """(graph, node) of the node called name, or (None, None)."""
    for _, g, n in testlib.nodes(m):
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
    for _, g in testlib.graphs(inp.graph):
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
        left = [n.name or "?" for _, _, n in testlib.nodes(out) if n.op_type == op]
        return ("%d %s node(s) left: %s" % (len(left), op, left)) if left else None
    return ("no %s nodes left" % op, fn)


def op_count(op, count):
    def fn(inp, out):
        left = [n.name for _, _, n in testlib.nodes(out) if n.op_type == op]
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


def param_equal(got, exp):
    """None if got equals exp: same dtype and shape, integers and bools
    exactly, floats within 1e-5 relative (numpy computes the expectation
    in float64 from the input's parameters, ppqfmt rounds each step)."""
    exp = np.asarray(exp)
    if got.dtype != exp.dtype or got.shape != exp.shape:
        return "got %s%s, expected %s%s" % (got.dtype, got.shape, exp.dtype, exp.shape)
    if got.dtype.kind == "f":
        ok = np.allclose(got.astype(np.float64), exp.astype(np.float64), rtol=1e-5, atol=1e-6)
    else:
        ok = np.array_equal(got, exp)
    return None if ok else "values differ: %r vs %r" % (got.ravel()[:6], exp.ravel()[:6])


def folded_input(consumer, idx, expect):
    """consumer's input idx is an initializer (its graph's or an enclosing
    one's) equal to expect(I), I(name) being initializer `name` of the input
    model as an ndarray: a folded value, computed here with numpy."""
    def fn(inp, out):
        chain, n = find_scoped(out, consumer)
        got = node_param(chain, n, idx)
        err = param_equal(got, expect(lambda name: input_initializer(inp, name)))
        return "%s input %d: %s" % (consumer, idx, err) if err else None
    return ("%s input %d is the folded value" % (consumer, idx), fn)


def output_param(out_name, expect):
    """Main graph output out_name is an initializer equal to expect(I)."""
    def fn(inp, out):
        t = initializer(out.graph, out_name)
        if t is None:
            return "%s is not an initializer (%s)" % (out_name, describe(out.graph, out_name))
        err = param_equal(numpy_helper.to_array(t), expect(lambda name: input_initializer(inp, name)))
        return "%s: %s" % (out_name, err) if err else None
    return ("output %s is the folded value" % out_name, fn)


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
        for _, g in testlib.graphs(out.graph):
            t = initializer(g, name)
            if t is not None:
                err = same_array(numpy_helper.to_array(t), exp)
                return ("initializer %s: %s" % (name, err)) if err else None
        return "initializer %s is gone" % name
    return ("initializer %s kept" % name, fn)


def init_removed(name):
    def fn(inp, out):
        where = [p for p, g in testlib.graphs(out.graph) if initializer(g, name) is not None]
        return ("initializer %s still in %s" % (name, where)) if where else None
    return ("initializer %s removed" % name, fn)


def init_count(count):
    def fn(inp, out):
        names = [t.name for _, g in testlib.graphs(out.graph) for t in g.initializer]
        return None if len(names) == count else "initializers %s, expected %d" % (names, count)
    return ("%d initializers" % count, fn)


def sparse_inits(g):
    """{name: SparseTensorProto} of g's sparse initializers."""
    return {t.values.name: t for t in g.sparse_initializer}


def sparse_dense(t):
    """The dense numpy value of a SparseTensorProto (linear or [NNZ, rank]
    indices), computed here from its parts."""
    dense = np.zeros(int(np.prod(t.dims)), numpy_helper.to_array(t.values).dtype)
    idx = numpy_helper.to_array(t.indices).astype(np.int64)
    if idx.ndim == 2:
        idx = np.ravel_multi_index(idx.T, list(t.dims))
    dense[idx] = numpy_helper.to_array(t.values)
    return dense.reshape(list(t.dims))


def sparse_kept(name):
    """Sparse initializer `name` of the main graph is still one, byte for byte."""
    def fn(inp, out):
        got = sparse_inits(out.graph).get(name)
        if got is None:
            return "no sparse initializer %s (dense: %s)" % (
                name, initializer(out.graph, name) is not None)
        exp = sparse_inits(inp.graph)[name]
        return None if got.SerializeToString() == exp.SerializeToString() else \
            "sparse initializer %s changed" % name
    return ("sparse initializer %s kept as it was" % name, fn)


def sparse_removed(name):
    def fn(inp, out):
        return "sparse initializer %s still there" % name \
            if name in sparse_inits(out.graph) else None
    return ("sparse initializer %s removed" % name, fn)


def sparse_split(name, keeper):
    """Every node input that read main-graph sparse initializer `name` reads
    its own sparse initializer holding the same dense value; keeper (node,
    input index) still reads `name`."""
    def fn(inp, out):
        exp = sparse_dense(sparse_inits(inp.graph)[name])
        got = sparse_inits(out.graph)
        readers = [(n.name, i) for n in inp.graph.node for i, x in enumerate(n.input)
                   if x == name]
        seen, errs = set(), []
        for node_name, i in readers:
            _, n = need_node(out, node_name)
            x = n.input[i]
            if x not in got:
                errs.append("%s input %d reads %s, not a sparse initializer" % (node_name, i, x))
                continue
            err = same_array(sparse_dense(got[x]), exp)
            if err:
                errs.append("%s input %d (%s): %s" % (node_name, i, x, err))
            if x in seen:
                errs.append("%s shared" % x)
            seen.add(x)
        _, k = need_node(out, keeper[0])
        if k.input[keeper[1]] != name:
            errs.append("%s input %d reads %s, expected %s" % (keeper + (k.input[keeper[1]], name)))
        return "; ".join(errs) or None
    return ("each use of sparse %s has its own sparse copy" % name, fn)


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
        left = [p for p, g in testlib.graphs(out.graph) for v in g.value_info if v.name == name]
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

def check_model_fields(inp, out, opsets=None):
    """opsets: {domain: version} the run is expected to set (the rest kept)."""
    def fields(m, changes=None):
        imports = dict((o.domain, o.version) for o in m.opset_import)
        imports.update(changes or {})
        return {
            "ir_version": m.ir_version,
            "opset_import": sorted(imports.items()),
            "producer": (m.producer_name, m.producer_version, m.domain, m.model_version),
            "doc_string": m.doc_string,
            "metadata_props": [(p.key, p.value) for p in m.metadata_props],
            "graph.name": m.graph.name,
            "graph.doc_string": m.graph.doc_string,
        }
    fa, fb = fields(inp, opsets), fields(out)
    if opsets and fb["ir_version"] >= fa["ir_version"]:
        fa["ir_version"] = fb["ir_version"]  # a raised opset may raise it
    bad = ["%s %r, expected %r" % (k, fb[k], fa[k]) for k in fa if fa[k] != fb[k]]
    return "; ".join(bad) or None


def check_order(inp, out):
    """Nodes that survive keep their relative order, graph by graph."""
    out_graphs = dict(testlib.graphs(out.graph))
    for path, g in testlib.graphs(inp.graph):
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


def check_full(path, full=True):
    onnx.checker.check_model(onnx.load(path), full_check=full)
    return None


ortcheck = testlib.ortcheck


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
# helpers for split-params, fuse-bias, fuse-bn, bn-to-conv and de-inplace.
# Expected values are computed (in float64) from the INPUT model's
# parameters, never read from ppqfmt's output.
# ---------------------------------------------------------------------------

scoped_graphs = testlib.scoped_graphs


def find_scoped(m, name):
    """(scope chain, node) of the node called name."""
    for chain in scoped_graphs(m):
        for n in chain[-1][1].node:
            if n.name == name:
                return chain, n
    raise LookupError("node %s not found" % name)


def resolve_param(chain, name):
    """(graph path, TensorProto) of the initializer that `name` means when
    read in the innermost graph of chain; None when it names a graph input
    (an initializer that is also a graph input is an input), a node output
    or nothing."""
    for path, g in reversed(chain):
        if name in {i.name for i in g.input} or any(name in n.output for n in g.node):
            return None
        t = initializer(g, name)
        if t is not None:
            return path, t
    return None


def param_uses(m):
    """[((node name, input index), (graph path, initializer name), tensor)]
    for every node input (all graphs) that reads an initializer."""
    uses = []
    for chain in scoped_graphs(m):
        for n in chain[-1][1].node:
            for i, x in enumerate(n.input):
                got = resolve_param(chain, x) if x else None
                if got is not None:
                    uses.append(((n.name, i), (got[0], x), got[1]))
    return uses


def attr(n, name, default=None):
    for a in n.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def node_param(chain, n, idx):
    """ndarray of n's input idx (an initializer), None if the input is absent."""
    if idx >= len(n.input) or not n.input[idx]:
        return None
    got = resolve_param(chain, n.input[idx])
    if got is None:
        raise ValueError("%s input %d (%s) is not an initializer" % (n.name, idx, n.input[idx]))
    return numpy_helper.to_array(got[1])


def affine(m, name):
    """Effective parameters of Conv/ConvTranspose/Gemm `name`, in float64:
    W (Conv [Cout,Cin/g,k..], ConvTranspose [Cin,Cout/g,k..], Gemm alpha*B as
    [K,N]) and b (per output channel: B, or beta*C broadcast to [N]; zeros
    when absent); wdtype/bdtype the stored dtypes (bdtype None: no bias)."""
    chain, n = find_scoped(m, name)
    W, B = node_param(chain, n, 1), node_param(chain, n, 2)
    if W is None:
        raise ValueError("%s has no weight" % name)
    group = attr(n, "group", 1)
    if n.op_type == "Gemm":
        Wk = (W.T if attr(n, "transB", 0) else W).astype(np.float64) * attr(n, "alpha", 1.0)
        N = Wk.shape[1]
        b = np.zeros(N) if B is None else \
            attr(n, "beta", 1.0) * np.broadcast_to(B.astype(np.float64), (1, N)).reshape(N)
        return dict(op="Gemm", node=n, W=Wk, b=b, wdtype=W.dtype,
                    bdtype=None if B is None else B.dtype, group=1)
    if n.op_type == "Conv":
        cout = W.shape[0]
    elif n.op_type == "ConvTranspose":
        cout = W.shape[1] * group
    else:
        raise ValueError("%s is a %s" % (name, n.op_type))
    b = np.zeros(cout) if B is None else B.astype(np.float64).reshape(-1)
    return dict(op=n.op_type, node=n, W=W.astype(np.float64), b=b, wdtype=W.dtype,
                bdtype=None if B is None else B.dtype, group=group)


def bn_affine(m, name):
    """(s, shift, dtype) of inference BatchNormalization `name`:
    y = x*s + shift per channel, s = scale/sqrt(var+eps), shift = bias-mean*s."""
    chain, n = find_scoped(m, name)
    if n.op_type != "BatchNormalization":
        raise ValueError("test bug: %s is a %s" % (name, n.op_type))
    scale, bias, mean, var = (node_param(chain, n, i) for i in range(1, 5))
    eps = float(np.float32(attr(n, "epsilon", 1e-5)))
    s = scale.astype(np.float64) / np.sqrt(var.astype(np.float64) + eps)
    return s, bias.astype(np.float64) - mean.astype(np.float64) * s, scale.dtype


def scale_channels(a, W, s):
    """W (canonical, see affine) with output channel c scaled by s[c]."""
    if a["op"] == "Gemm":
        return W * s[None, :]
    if a["op"] == "Conv":
        return W * s.reshape((-1,) + (1,) * (W.ndim - 1))
    G = a["group"]                      # ConvTranspose: out channel g*(Cout/G)+j
    cin, cg = W.shape[:2]
    k = W.shape[2:]
    Wg = W.reshape((G, cin // G, cg) + k) * s.reshape((G, 1, cg) + (1,) * len(k))
    return Wg.reshape(W.shape)


def addend(m, add_name, produced, c):
    """The Add's parameter operand (the one that is not `produced`) as a
    per-channel vector of length c."""
    chain, n = find_scoped(m, add_name)
    others = [x for x in n.input if x != produced]
    if len(others) != 1:
        raise ValueError("test bug: %s does not read %s once" % (add_name, produced))
    A = node_param(chain, n, list(n.input).index(others[0])).astype(np.float64)
    if A.size == 1:
        return np.full(c, A.reshape(-1)[0])
    if A.size == c:
        return A.reshape(c)
    raise ValueError("test bug: addend of %s has shape %s" % (add_name, A.shape))


def close(what, got, exp, dtype):
    """None if got is exp rounded to dtype (float16/bfloat16: 1e-3 relative,
    else 1e-5), with an absolute slack relative to max|exp|."""
    if got.shape != exp.shape:
        return "%s shape %s, expected %s" % (what, got.shape, exp.shape)
    rtol = 1e-3 if np.dtype(dtype).itemsize <= 2 else 1e-5
    big = np.abs(exp).max() if exp.size else 0.0
    bad = np.abs(got - exp) > rtol * (np.abs(exp) + big) + 1e-12
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape)
        return "%s: %d of %d values off, e.g. at %s %r, expected %r" % (
            what, int(bad.sum()), bad.size, tuple(int(k) for k in i), got[i], exp[i])
    return None


def same_attrs(a, b):
    key = lambda n: sorted(x.SerializeToString() for x in n.attribute)
    return key(a) == key(b)


def folded(prod, add=None, bn=None, mul=None):
    """prod (Conv/ConvTranspose/Gemm) absorbed the bias Add `add` and/or the
    BatchNormalization `bn` (Add first): its effective weight and bias equal
    the fold computed from the input model; weight (and bias) dtype = the
    input weight's; Conv/ConvTranspose attributes unchanged.  Gemm may
    express the result with any alpha/beta/transB: only alpha*B and beta*C
    are compared."""
    def fn(inp, out):
        a = affine(inp, prod)
        W, b = a["W"], a["b"]
        if add:
            b = b + addend(inp, add, a["node"].output[0], b.size)
        if bn:
            s, shift, _ = bn_affine(inp, bn)
            W, b = scale_channels(a, W, s), b * s + shift
        if mul:  # the Mul's constant, one factor per channel (fuse-conv-scale)
            s = addend(inp, mul, a["node"].output[0], b.size)
            W, b = scale_channels(a, W, s), b * s
        o = affine(out, prod)
        if o["op"] != a["op"]:
            return "%s is a %s, expected %s" % (prod, o["op"], a["op"])
        dt = a["wdtype"]
        errs = [e for e in (close("weight", o["W"], W, dt), close("bias", o["b"], b, dt)) if e]
        if o["wdtype"] != dt:
            errs.append("weight dtype %s, expected %s" % (o["wdtype"], dt))
        if o["bdtype"] is not None and o["bdtype"] != dt:
            errs.append("bias dtype %s, expected %s" % (o["bdtype"], dt))
        if a["op"] != "Gemm" and not same_attrs(a["node"], o["node"]):
            errs.append("attributes changed")
        return "; ".join(errs) or None
    what = "+".join(x for x in (add, bn, mul) if x)
    return ("%s holds the fold of %s" % (prod, what), fn)


def unchanged(*names):
    """Nodes kept as they were: op, inputs, outputs, attributes, and the
    values of the initializers they read."""
    def fn(inp, out):
        errs = []
        for name in names:
            ci, ni = find_scoped(inp, name)
            try:
                co, no = find_scoped(out, name)
            except LookupError as e:
                errs.append(str(e))
                continue
            if (no.op_type, list(no.input), list(no.output)) != \
                    (ni.op_type, list(ni.input), list(ni.output)):
                errs.append("%s is %s(%s)->%s, was %s(%s)->%s" % (
                    name, no.op_type, list(no.input), list(no.output),
                    ni.op_type, list(ni.input), list(ni.output)))
                continue
            if not same_attrs(ni, no):
                errs.append("%s: attributes changed" % name)
            for k, x in enumerate(ni.input):
                pi = resolve_param(ci, x) if x else None
                if pi is None:
                    continue
                po = resolve_param(co, x)
                if po is None:
                    errs.append("%s input %d %s is no longer an initializer" % (name, k, x))
                    continue
                err = same_array(numpy_helper.to_array(po[1]), numpy_helper.to_array(pi[1]))
                if err:
                    errs.append("%s input %d %s: %s" % (name, k, x, err))
        return "; ".join(errs) or None
    return ("unchanged %s" % ",".join(names), fn)


def params_used_once():
    """No initializer is read by more than one node input (all graphs;
    initializers that are graph inputs don't count)."""
    def fn(inp, out):
        by = {}
        for use, key, _ in param_uses(out):
            by.setdefault(key, []).append(use)
        bad = ["%s read by %s" % (k[1], v) for k, v in sorted(by.items()) if len(v) > 1]
        return "; ".join(bad) or None
    return ("no initializer used twice", fn)


def split_copies(name, keeper=None):
    """Each use (node, input index) of the main-graph initializer `name` in
    the input reads, in the output, its own initializer (in scope) with the
    same dtype, dims and values; one of them is still called `name`: the
    use `keeper` = (node, index) when given."""
    def fn(inp, out):
        exp = numpy_helper.to_array(initializer(inp.graph, name))
        uses = [u for u, k, _ in param_uses(inp) if k == ("main", name)]
        if len(uses) < 2:
            return "test bug: %s has %d uses in the input" % (name, len(uses))
        got = {u: (k, t) for u, k, t in param_uses(out)}
        errs, keys = [], []
        for u in uses:
            if u not in got:
                errs.append("%s input %d does not read an initializer" % u)
                continue
            k, t = got[u]
            err = same_array(numpy_helper.to_array(t), exp)
            if err:
                errs.append("%s input %d reads %s: %s" % (u[0], u[1], k[1], err))
            keys.append(k)
        if len(set(keys)) != len(keys):
            errs.append("uses share initializers: %s" % [k[1] for k in keys])
        if keeper is not None:
            if keeper in got and got[keeper][0] != ("main", name):
                errs.append("%s input %d reads %s, expected %s (the first use keeps the name)"
                            % (keeper[0], keeper[1], got[keeper][0][1], name))
        elif ("main", name) not in keys:
            errs.append("no use reads %s any more" % name)
        return "; ".join(errs) or None
    return ("each use of %s has its own copy" % name, fn)


def bn_as_conv(bn, rank, data_dtype=None):
    """BatchNormalization `bn` of the input became a Conv in the same graph:
    it writes bn's output, reads bn's input, group = C, kernel_shape =
    [1]*(rank-2), no stride/pad/dilation, weight [C,1,1..] = s and bias =
    beta - mean*s (float64 from the input's BN), in the BN's dtype (or
    data_dtype, the data's type, when the statistics have another)."""
    def fn(inp, out):
        ci, nb = find_scoped(inp, bn)
        x, y = nb.input[0], nb.output[0]
        s, shift, dt = bn_affine(inp, bn)
        dt = dt if data_dtype is None else np.dtype(data_dtype)
        c = s.size
        path = ci[-1][0]
        chain = next((ch for ch in scoped_graphs(out) if ch[-1][0] == path), None)
        if chain is None:
            return "graph %s is gone" % path
        g = chain[-1][1]
        p = producer(g, y)
        if p is None or p.op_type != "Conv":
            return "%s is %s" % (y, describe(g, y))
        errs = []
        if p.input[0] != x:
            errs.append("Conv %s reads %s, expected %s" % (p.name, p.input[0], x))
        if attr(p, "group", 1) != c:
            errs.append("group %s, expected %d" % (attr(p, "group", 1), c))
        ks = attr(p, "kernel_shape")
        if ks is None or list(ks) != [1] * (rank - 2):
            errs.append("kernel_shape %s, expected %s" % (ks, [1] * (rank - 2)))
        for a, ok in (("strides", 1), ("dilations", 1), ("pads", 0)):
            v = attr(p, a)
            if v is not None and any(e != ok for e in v):
                errs.append("%s %s" % (a, list(v)))
        if attr(p, "auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET"):
            errs.append("auto_pad %s" % attr(p, "auto_pad"))
        W, B = node_param(chain, p, 1), node_param(chain, p, 2)
        if W.dtype != dt or (B is not None and B.dtype != dt):
            errs.append("weight/bias dtype %s/%s, expected %s" % (
                W.dtype, None if B is None else B.dtype, dt))
        if W.shape != (c, 1) + (1,) * (rank - 2):
            errs.append("weight shape %s, expected %s" % (W.shape, (c, 1) + (1,) * (rank - 2)))
        else:
            e = close("weight", W.astype(np.float64).reshape(c), s, dt)
            errs += [e] if e else []
        b = np.zeros(c) if B is None else B.astype(np.float64).reshape(-1)
        e = close("bias", b, shift, dt)
        errs += [e] if e else []
        return "; ".join(errs) or None
    return ("%s became a depthwise %dD 1x..x1 Conv" % (bn, rank - 2), fn)


def ssa():
    """Every name is defined once: graph inputs, initializers that are not
    inputs, node outputs, in each graph and against its enclosing graphs."""
    def fn(inp, out):
        errs = []
        for chain in scoped_graphs(out):
            outer = set()
            for _, g in chain[:-1]:
                outer |= {i.name for i in g.input} | {t.name for t in g.initializer} | \
                    {o for n in g.node for o in n.output}
            g = chain[-1][1]
            seen = {i.name for i in g.input}
            defs = [t.name for t in g.initializer if t.name not in seen] + \
                [o for n in g.node for o in n.output if o]
            for d in defs:
                if d in seen or d in outer:
                    errs.append("%s: %s defined twice" % (chain[-1][0], d))
                seen.add(d)
        return "; ".join(errs) or None
    return ("SSA (every name defined once)", fn)


def reads_output(reader, ridx, writer, widx=0):
    """reader's input ridx is writer's output widx (whatever its new name)."""
    def fn(inp, out):
        _, r = need_node(out, reader)
        _, w = need_node(out, writer)
        got = r.input[ridx] if ridx < len(r.input) else None
        exp = w.output[widx] if widx < len(w.output) else None
        return None if got == exp and got else "%s input %d is %r, %s output %d is %r" % (
            reader, ridx, got, writer, widx, exp)
    return ("%s reads %s's output %d" % (reader, writer, widx), fn)


def subgraph_output(owner, label, idx, writer, widx=0):
    """Output idx of owner's subgraph `label` is writer's output widx (whatever
    its new name): a branch returning an outer-scope value."""
    def fn(inp, out):
        _, o = need_node(out, owner)
        _, w = need_node(out, writer)
        sub = dict(testlib.subgraphs(o)).get(label)
        if sub is None or idx >= len(sub.output):
            return "%s has no %s output %d" % (owner, label, idx)
        got, exp = sub.output[idx].name, w.output[widx]
        return None if got == exp else "%s.%s output %d is %r, %s output %d is %r" % (
            owner, label, idx, got, writer, widx, exp)
    return ("%s.%s output %d is %s's output %d" % (owner, label, idx, writer, widx), fn)


def check_reference(src, dst, inp, reference):
    """onnxruntime on the formatted model gives reference(feeds) (a numpy
    computation of what the input model means), for models onnxruntime
    refuses (not SSA).  An If condition is tried false and true."""
    oc = ortcheck()
    base = oc.random_inputs(src, 0)
    conds = bool_scalar_inputs(inp)
    errs = []
    for value in ((False, True) if conds else (None,)):
        feeds = dict(base)
        for c in conds:
            feeds[c] = np.array(value)
        got = oc.run_models([{"model": dst, "inputs": feeds}])[0]
        if isinstance(got, str):
            errs.append("onnxruntime failed on the output: %s" % got)
            continue
        dtypes = {o.name: oc.ONNX_DTYPES[o.type.tensor_type.elem_type] for o in inp.graph.output}
        ref = {k: np.asarray(v).astype(dtypes[k]) for k, v in reference(feeds).items()}
        ok, msg = oc.compare(ref, got)
        if not ok:
            errs.append(("%s=%s: " % (conds, value) if conds else "") + msg)
    return "; ".join(errs) or None


def check_warns(opts, src, workdir, words):
    """ppqfmt's stderr names each of words (a warning says where; --report
    says what each pass did)."""
    dst = os.path.join(workdir, "warn.onnx")
    p = subprocess.run([PPQFMT] + opts + [src, "-o", dst], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode != 0:
        return "exit %d: %s" % (p.returncode, err.strip()[-300:])
    miss = [w for w in words if w not in err]
    return ("stderr does not mention %s: %r" % (miss, err.strip()[:300])) if miss else None


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


def _relu(v):
    return np.maximum(v, 0.0)


def _f64(feeds, name):
    return np.asarray(feeds[name], np.float64)


# ---------------------------------------------------------------------------
# what each model must look like after formatting
#   single:  checked after --passes=<pass of the model>
#   default: checked after the default pipeline
#   both:    checked after both
#   warns:   names the single-pass run must mention on stderr (a warning)
#   reports: what the single-pass run's --report must say (on stderr)
#   reference: fn(feeds) -> {output: ndarray}, the numpy meaning of a model
#            onnxruntime refuses (not SSA); replaces the equivalence check
#   no_numbers: why onnxruntime cannot run even the output (no numbers check)
#   plain_checker: why the checker runs without shape inference (python3-onnx
#            1.12 cannot infer through a sparse_initializer; onnxruntime can)
#   single_not_ssa: why the single-pass output stays not SSA (de-inplace did
#            not run): no checker, no numbers; it must still load (idempotent)
# ---------------------------------------------------------------------------

# numpy meanings of the fold_* models' folded values (make_testdata.py)

def _int_arith(I):
    a, b = I("a"), I("b")
    q = np.array([int(x / y) for x, y in zip(a.tolist(), b.tolist())], np.int64)  # truncates
    m = np.mod(a, b)  # the sign of the divisor, as Mod with fmod=0
    mx = np.maximum(np.maximum(np.abs(-q - m), b ** 2), m)
    return np.minimum(mx, 50)


def _mask(I):
    rg = np.arange(4)
    return np.where(~(rg < rg[:, None]), 0.0, -1e4).astype(np.float32)


def _reduce_matmul(I):
    a, b = I("A").astype(np.float64), I("B").astype(np.float64)
    s1 = a.sum(1, keepdims=True) + a.max(1, keepdims=True)
    t = np.cumsum(a @ b, 1) + np.sqrt(s1 * s1) + 1.0 / np.exp(b.mean(0))
    return t.astype(np.float32)


def _split_gather(I):
    c = I("C")
    c0, c1 = c[:, :2], c[:, 2:]
    g = c0[[3, 0, 1, 1]]
    ge = np.take_along_axis(g, np.array([[1], [0], [1], [0]]), 1)
    return np.concatenate([c1[:, [3, 1]], np.tile(ge, (1, 2))], 1)



def _softmax(a, axis, log=False):
    """(Log)Softmax along axis in float64, returned as float32."""
    a = a.astype(np.float64)
    z = a - a.max(axis, keepdims=True)
    lse = np.log(np.exp(z).sum(axis, keepdims=True))
    return (z - lse if log else np.exp(z - lse)).astype(np.float32)


def _coerced(a, axis, log=False):
    """Softmax before opset 13: every axis from `axis` on is one row."""
    return _softmax(a.reshape(int(np.prod(a.shape[:axis])), -1), 1, log).reshape(a.shape)


_NN10 = {
    "sm": lambda I: _coerced(I("A"), 1),
    "ls": lambda I: _coerced(I("A"), 0, log=True),
    "cl": lambda I: np.clip(I("A"), np.float32(-0.5), np.float32(0.25)),
    "pd": lambda I: np.pad(I("P"), ((1, 0), (2, 1)), mode="reflect"),
    "am": lambda I: np.argmax(I("A"), 1).astype(np.int64),
    "gm": lambda I: (0.5 * I("G1").T.astype(np.float64) @ I("G2") + 2.0 * I("C")).astype(np.float32),
    "ey": lambda I: np.eye(3, 4, k=-1, dtype=np.float32),
    "oh": lambda I: np.where(np.arange(3)[:, None] == I("OI")[None, :], 2.0, 0.5).astype(np.float32),
}

_NN13 = {
    "sm": lambda I: _softmax(I("A"), 1),
    "ls": lambda I: _softmax(I("A"), -1, log=True),
    "cl": lambda I: np.maximum(I("CI"), I("CLO")),
    "pc": lambda I: np.pad(I("P")[:, 1:], ((1, 0), (0, 1)), constant_values=9.0),
    "pe": lambda I: np.pad(I("P"), ((0, 0), (1, 1)), mode="edge"),
    "gn": lambda I: np.stack([I("D")[0, 2], I("D")[1, -3]])[:, None, :],
    "oh": lambda I: np.where((I("OI") % 4)[:, None, :] == np.arange(4)[None, :, None],
                             1.5, -1.0).astype(np.float32),
    "an": lambda I: (3 - np.argmin(I("T")[:, ::-1], 1))[:, None].astype(np.int64),
}


def _nn_spec(refs, ops):
    return dict(both=[op_count("Add", len(refs))] + [op_count(o, 0) for o in ops] +
                [folded_input("add_" + v, 1, f) for v, f in refs.items()])


NC, NI = no_op("Constant"), no_op("Identity")
NBN, NADD = no_op("BatchNormalization"), no_op("Add")
ONCE, SSA = params_used_once(), ssa()

SPECS = {
    "constant_value_raw": dict(both=[NC, fed_by_param("add0", 1, "const0")]),
    "constant_rewritten": dict(
        single=[op_count("Constant", 3)], default=[NC], warns=["const0", "const1", "const2"],
        single_not_ssa="c and k are written twice and de-inplace does not run",
        reference=lambda f: {"Y": (_f64(f, "X") + np.array([1.5, -2.0, 0.25])) *
                             np.array([2.0, 0.5, -1.0]) + np.array([0.125, 4.0, -3.0])}),
    "constant_value_info": dict(
        both=[NC, fed_by_param("slice0", 3, "const0"), fed_by_param("slice0", 4, "const1"),
              vi_removed("axes"), vi_kept("steps")]),
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
    "identity_initializer_to_output": dict(
        single=[op_count("Identity", 1), kept("id0", "add0"), init_kept("W")],
        default=[NI, kept("add0"), output_param("Y", lambda I: I("W"))]),
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

    # -- split-params ------------------------------------------------------
    "splitparams_two_convs": dict(both=[
        op_count("Conv", 2), split_copies("W", ("conv0", 1)), split_copies("B", ("conv0", 2)),
        ONCE, init_count(4)]),
    "splitparams_same_node": dict(both=[
        kept("sum0", "mul0"), split_copies("s", ("sum0", 1)), ONCE, init_count(3)]),
    "splitparams_main_and_if": dict(both=[
        kept("conv0", "then_conv", "else_relu"), split_copies("W", ("conv0", 1)), ONCE,
        init_count(2)]),
    "splitparams_if_branches": dict(both=[
        kept("then_add", "else_mul"), split_copies("K"), ONCE, init_count(2)]),
    "splitparams_initializer_input": dict(
        both=[node_input("add0", 1, "W_in"), node_input("mul0", 1, "W_in"),
              graph_input_kept("W_in"), init_kept("W_in"), init_count(1)],
        warns=["W_in"]),
    "splitparams_sparse": dict(
        both=[kept("add0", "mul0"), sparse_split("S", ("add0", 1)), init_count(0)],
        single=[sparse_kept("U")], default=[sparse_removed("U")],
        plain_checker="python3-onnx 1.12 types sparse initializers as sparse_tensor"),
    "splitparams_single_uses": dict(single=[
        unchanged("conv0", "mul0"), init_kept("W"), init_kept("B"), init_kept("M"),
        init_count(3)], default=[no_op("Mul"), folded("conv0", mul="mul0")]),  # fuse-conv-scale

    # -- fuse-bias ---------------------------------------------------------
    "fusebias_conv_nobias": dict(
        both=[NADD, node_output("conv0", 0, "a"), node_input("relu0", 0, "a"),
              folded("conv0", add="add0")],
        default=[init_count(2)]),
    "fusebias_conv_bias": dict(
        both=[NADD, node_output("conv0", 0, "Y"), folded("conv0", add="add0")],
        default=[init_count(2)]),
    "fusebias_addend_first": dict(
        both=[NADD, node_output("conv0", 0, "Y"), folded("conv0", add="add0")],
        default=[init_count(2)]),
    "fusebias_conv_scalar": dict(
        both=[NADD, node_output("conv0", 0, "Y"), folded("conv0", add="add0")],
        default=[init_count(2)]),
    "fusebias_conv1d": dict(
        both=[NADD, node_output("conv0", 0, "Y"), folded("conv0", add="add0")],
        default=[init_count(2)]),
    "fusebias_convtranspose": dict(
        both=[NADD, node_output("convt0", 0, "Y"), folded("convt0", add="add0")],
        default=[init_count(2)]),
    "fusebias_gemm": dict(
        both=[NADD, node_output("gemm0", 0, "Y"), folded("gemm0", add="add0")],
        default=[init_count(2)]),
    "fusebias_gemm_noc": dict(
        both=[NADD, node_output("gemm0", 0, "a"), node_input("relu0", 0, "a"),
              folded("gemm0", add="add0")],
        default=[init_count(2)]),
    "fusebias_gemm_scalar": dict(
        both=[NADD, node_output("gemm0", 0, "Y"), folded("gemm0", add="add0")],
        default=[init_count(2)]),
    "fusebias_gemm_c_value_info": dict(
        both=[NADD, folded("gemm0", add="add0"), vi_removed("C")]),
    "fusebias_conv_vector": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    "fusebias_spatial": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    "fusebias_rank_raising": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    "fusebias_addend_input": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    "fusebias_two_consumers": dict(both=[
        op_count("Add", 1), unchanged("conv0", "add0", "relu0")]),
    "fusebias_conv_output": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    # the folded bias would overflow float16: inf where the model gave ~30000
    "fusebias_float16_overflow": dict(
        both=[op_count("Add", 1), unchanged("conv0", "add0")], warns=["add0"]),

    # -- fuse-bn -------------------------------------------------------------
    "fusebn_conv_bias": dict(
        both=[NBN, node_output("conv0", 0, "b"), node_input("relu0", 0, "b"),
              folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_identity_params": dict(
        both=[NBN, node_output("conv0", 0, "Y")], default=[NI]),
    "fusebn_conv_nobias": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_conv_grouped": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_conv_depthwise": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_conv1d": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_conv3d": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_convtranspose": dict(
        both=[NBN, node_output("convt0", 0, "Y"), folded("convt0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_convtranspose_nobias": dict(
        both=[NBN, node_output("convt0", 0, "b"), node_input("relu0", 0, "b"),
              folded("convt0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_gemm_transb1": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_gemm_transb0": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")],
        default=[init_count(2)]),
    # one weight element per output channel: each scaled by its own factor
    "fusebn_conv_grouped_k1": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_convtranspose_k1": dict(
        both=[NBN, node_output("convt0", 0, "Y"), folded("convt0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_gemm_transb1_k1": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_gemm_c_value_info": dict(
        both=[NBN, folded("gemm0", bn="bn0"), vi_removed("C")]),
    "fusebn_gemm_c2d": dict(
        both=[NBN, node_output("gemm0", 0, "b"), node_input("relu0", 0, "b"),
              folded("gemm0", bn="bn0")],
        default=[init_count(2)]),
    "fusebn_float16": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    # the folded weight would overflow float16: inf where the model gave ~200
    "fusebn_float16_overflow": dict(
        single=[unchanged("conv0", "bn0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4)],
        warns=["bn0"]),
    # float32 weights are checked too, by column for a Gemm: 2e37 * 100
    # overflows; the same weight with the large factor on another column folds
    "fusebn_float32_overflow_gemm": dict(
        single=[unchanged("gemm0", "bn0")],
        default=[unchanged("gemm0", "bn0")],
        warns=["bn0"]),
    "fusebn_float32_overflow_gemm_block2": dict(
        single=[unchanged("gemm0", "bn0")],
        default=[unchanged("gemm0", "bn0")],
        warns=["bn0"]),
    "fusebn_float32_large_gemm": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")]),
    "fusebn_float32_overflow_conv": dict(
        single=[unchanged("conv0", "bn0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4)],
        warns=["bn0"]),
    # the fold needs the values of a sparse weight: kept, and kept sparse
    "fusebn_sparse_weight": dict(
        single=[unchanged("conv0", "bn0"), sparse_kept("Wsp")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4),
                 sparse_kept("Wsp")],
        warns=["conv0", "Wsp"], plain_checker="python3-onnx 1.12 types sparse initializers as sparse_tensor"),
    "fusebn_in_if": dict(
        both=[NBN, node_output("then_conv", 0, "then_out"), folded("then_conv", bn="then_bn"),
              unchanged("else_conv")],
        default=[init_count(3)]),
    "fusebn_two_consumers": dict(
        single=[unchanged("conv0", "bn0", "relu0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0", "relu0"), bn_as_conv("bn0", 4)]),
    "fusebn_conv_output": dict(
        single=[unchanged("conv0", "bn0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4)]),
    "fusebn_weight_input": dict(
        single=[unchanged("conv0", "bn0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4)]),
    # training-form BNs are neither fused nor turned into a Conv
    "fusebn_training_mode": dict(both=[op_count("Conv", 1), unchanged("conv0", "bn0")]),
    "fusebn_extra_outputs": dict(both=[op_count("Conv", 1), unchanged("conv0", "bn0")]),
    # fuse-bn alone may fold into private copies of W or leave the BNs: the
    # numbers decide; after split-params (default) both fold
    "fusebn_loop_ir3": dict(
        both=[op_count("BatchNormalization", 1), op_count("Add", 1), op_count("Conv", 2),
              kept("loop0", "body_conv", "body_bn", "body_conv2", "body_add")],
        warns=["body_bn"]),
    "fusebn_shared_weight": dict(default=[
        NBN, op_count("Conv", 2), node_output("conv0", 0, "b0"), node_input("relu0", 0, "b0"),
        node_output("conv1", 0, "Y"), folded("conv0", bn="bn0"), folded("conv1", bn="bn1"),
        ONCE, init_count(4)]),

    # -- bn-to-conv ------------------------------------------------------------
    "bntoconv_rank3": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 3)], default=[init_count(2)]),
    "bntoconv_rank4": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4), node_input("relu0", 0, "b")],
        default=[init_count(2)]),
    "bntoconv_rank5": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 5)], default=[init_count(2)]),
    "bntoconv_symbolic": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4)], default=[init_count(2)]),
    "bntoconv_value_info": dict(
        both=[NBN, op_count("Conv", 1), kept("reshape0"), bn_as_conv("bn0", 3)],
        default=[init_count(3)]),
    "bntoconv_float16": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4)], default=[init_count(2)]),
    # float16 data, float32 statistics: the Conv takes the data's type
    "bntoconv_float16_data": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4, np.float16)],
        default=[init_count(2)]),
    "bntoconv_unknown_dtype": dict(
        both=[op_count("Conv", 0), unchanged("bn0")], warns=["bn0", "element type"],
        no_numbers="onnxruntime has no com.example:Opaque"),
    # a factor of 1e5 is inf as a float16 weight
    "bntoconv_float16_overflow": dict(
        both=[op_count("Conv", 0), unchanged("bn0", "mul0")], warns=["bn0"]),
    "bntoconv_in_if": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("then_bn", 4), kept("if0", "else_neg")],
        default=[init_count(2)]),
    "bntoconv_unknown_rank": dict(
        both=[op_count("Conv", 0), unchanged("bn0", "flatten0")], warns=["bn0"]),
    "bntoconv_rank2": dict(both=[op_count("Conv", 0), unchanged("bn0")], warns=["bn0"]),

    # -- de-inplace (inputs are not SSA: onnxruntime refuses them, so the
    #    output is compared with a numpy reference) ----------------------------
    "deinplace_chain": dict(
        both=[SSA, kept("relu0", "sig0", "neg0"), reads_output("sig0", 0, "relu0"),
              node_output("sig0", 0, "x"), node_input("neg0", 0, "x")],
        reference=lambda f: {"Y": -_sig(_relu(_f64(f, "X")))}),
    "deinplace_output": dict(
        both=[SSA, kept("relu0", "tanh0"), reads_output("tanh0", 0, "relu0"),
              node_output("tanh0", 0, "Y")],
        reference=lambda f: {"Y": np.tanh(_relu(_f64(f, "X")))}),
    "deinplace_readers": dict(
        both=[SSA, kept("relu0", "neg0", "sig0", "add0"), reads_output("neg0", 0, "relu0"),
              reads_output("sig0", 0, "relu0"), node_output("sig0", 0, "x"),
              node_input("add0", 0, "a"), node_input("add0", 1, "x")],
        reference=lambda f: {"Y": -_relu(_f64(f, "X")) + _sig(_relu(_f64(f, "X")))}),
    "deinplace_three_writes": dict(
        both=[SSA, kept("relu0", "neg0", "mul0", "sig0", "add0"),
              reads_output("neg0", 0, "relu0"), reads_output("mul0", 0, "neg0"),
              reads_output("mul0", 1, "neg0"), reads_output("sig0", 0, "neg0"),
              node_output("sig0", 0, "x"), node_input("add0", 0, "m"),
              node_input("add0", 1, "x")],
        reference=lambda f: {"Y": _relu(_f64(f, "X")) ** 2 + _sig(-_relu(_f64(f, "X")))}),
    "deinplace_multi_output": dict(
        both=[SSA, kept("split0", "add0", "relu0"), node_output("split0", 0, "a"),
              reads_output("add0", 0, "split0", 0), reads_output("add0", 1, "split0", 1),
              node_output("add0", 0, "b"), node_input("relu0", 0, "b")],
        reference=lambda f: {"Y": _relu(_f64(f, "X")[:, :2] + _f64(f, "X")[:, 2:])}),
    "deinplace_in_if": dict(
        both=[SSA, kept("if0", "then_relu", "then_neg", "then_sig", "else_neg"),
              reads_output("then_neg", 0, "then_relu"), node_output("then_neg", 0, "t"),
              node_input("then_sig", 0, "t")],
        reference=lambda f: {"Y": _sig(-_relu(_f64(f, "X"))) if f["cond"] else -_f64(f, "X")}),

    # an If and a Loop read the first t from the outer scope; t is written again
    # after them
    "deinplace_outer_scope": dict(
        both=[SSA, kept("relu0", "if0", "then_neg", "else_sig", "loop0", "body_add", "neg0",
                        "add1"),
              reads_output("then_neg", 0, "relu0"), reads_output("else_sig", 0, "relu0"),
              reads_output("body_add", 1, "relu0"), reads_output("neg0", 0, "relu0"),
              node_output("neg0", 0, "t"), node_input("add1", 1, "t")],
        reference=lambda f: {"Y": (-_relu(_f64(f, "X")) if f["cond"]
                                   else _sig(_relu(_f64(f, "X"))))
                             + _f64(f, "X") + 2 * _relu(_f64(f, "X")) - _relu(_f64(f, "X"))}),
    "deinplace_outer_output": dict(
        both=[SSA, kept("relu0", "if0", "then_neg", "neg0", "add0"),
              reads_output("then_neg", 0, "relu0"),
              subgraph_output("if0", "else_branch", 0, "relu0"),
              reads_output("neg0", 0, "relu0"), node_output("neg0", 0, "t")],
        no_numbers="onnxruntime refuses a subgraph returning an outer value directly"),

    # -- several rules in one model (default pipeline only) --------------------
    "mixed_loop_body": dict(default=[
        NC, NBN, NADD, op_count("Identity", 1), kept("loop0", "body_conv", "conv_out",
                                                   "body_id_cond"),
        removed("body_id", "body_bn", "body_const", "body_add"), ONCE]),
    # the folded target [2,-1] keeps X's shape [2,12]: eliminate-noops then
    # removes reshape0 in the default run
    "fold_shape_chain": dict(both=[
        removed("shape0", "gather0", "unsq0", "concat0", "size0", "cast0"), kept("mul0"),
        folded_input("mul0", 1, lambda I: np.float32(I("W").size))],
        single=[kept("reshape0"),
                folded_input("reshape0", 1, lambda I: np.array([I("W").shape[0], -1], np.int64))],
        default=[removed("reshape0"), node_input("mul0", 0, "X")]),
    "fold_weight_transform": dict(both=[
        removed("tr0", "mul0", "cast0", "cast1", "reshape0"), kept("matmul0", "conv0"),
        folded_input("matmul0", 1, lambda I: (I("W").T.astype(np.float64) * I("s"))
                     .astype(np.float16).astype(np.float32)),
        folded_input("conv0", 1, lambda I: I("Wc").reshape(2, 3, 3, 3))]),
    "fold_int_arith": dict(both=[
        op_count("Add", 1), kept("add0"), folded_input("add0", 1, _int_arith)]),
    "fold_mask": dict(both=[
        removed("range0", "unsq0", "less0", "not0", "where0", "cos0", "trilu0"),
        kept("add0", "mul1"), folded_input("add0", 1, _mask),
        folded_input("mul1", 1, lambda I: np.tril(np.full((4, 4), 2.0, np.float32)))]),
    "fold_reduce_matmul": dict(both=[
        op_count("Add", 1), op_count("MatMul", 0), kept("add0"),
        folded_input("add0", 1, _reduce_matmul)]),
    "fold_nn_opset10": _nn_spec(_NN10, ["Softmax", "LogSoftmax", "Clip", "Pad", "ArgMax",
                                         "Gemm", "EyeLike", "OneHot"]),
    "fold_nn_opset13": _nn_spec(_NN13, ["Softmax", "LogSoftmax", "Clip", "Pad", "GatherND",
                                         "OneHot", "ArgMin"]),
    "fold_split_gather": dict(both=[
        op_count("Add", 1), kept("add0"), folded_input("add0", 1, _split_gather)]),
    "fold_in_if": dict(both=[
        removed("then_tr", "else_neg"), kept("if0", "then_mul", "else_add"),
        folded_input("then_mul", 1, lambda I: I("W").T),
        folded_input("else_add", 1, lambda I: -I("K"))]),
    "fold_kept": dict(both=[kept("expand0", "dq0", "rnd0", "div0", "tr0")],
                      warns=["expand0", "div0"], no_numbers="RandomNormal differs from run to run"),
    "fold_static_shape": dict(both=[
        removed("shape0", "gather0", "unsq0", "concat0", "size0", "cast0", "zshape_tail", "zconcat"),
        kept("reshape0", "mul0", "reshape1", "zshape_all"),
        folded_input("reshape0", 1, lambda I: np.array([-1, 4], np.int64)),
        folded_input("mul0", 1, lambda I: np.float32(2 * 3 * 4)),
        folded_input("reshape1", 1, lambda I: np.array([-1, 3], np.int64))]),
    "fold_partial_shape": dict(both=[
        removed("gather1", "unsq1", "slice0", "cast0"),
        kept("shape0", "gather0", "unsq0", "concat0", "reshape0", "mul0"),
        folded_input("concat0", 1, lambda I: np.array([3], np.int64)),
        folded_input("mul0", 1, lambda I: np.array([3.0], np.float32))]),
    "fold_transpose_tiled": dict(both=[
        removed("tr0", "tr1"), kept("add0", "add1"),
        folded_input("add0", 1, lambda I: I("W").transpose(2, 0, 1)),
        folded_input("add1", 1, lambda I: I("H").transpose(1, 2, 0))]),
    "fold_large": dict(both=[
        removed("tr0", "cast0", "cast1"), kept("matmul0"),
        folded_input("matmul0", 1, lambda I: I("W").T.astype(np.float16).astype(np.float32))]),
    "mixed_conv_add_bn_shared": dict(default=[
        NBN, NADD, op_count("Conv", 2), op_count("Relu", 1),
        node_output("conv0", 0, "b0"), node_input("relu0", 0, "b0"),
        node_output("conv1", 0, "Y"), folded("conv0", add="add0", bn="bn0"),
        folded("conv1", bn="bn1"), ONCE, init_count(4)]),
}

# ---------------------------------------------------------------------------
# fold's If rule (models from scripts/make_fold_if_testdata.py): an If whose
# condition is a constant gives way to the nodes of its chosen branch.
# ---------------------------------------------------------------------------

def node_in_graph(node, path):
    """node lives in the graph at path (testlib.graphs' paths: main, ...)."""
    def fn(inp, out):
        where = [p for p, _, n in testlib.nodes(out) if n.name == node]
        return None if where == [path] else "%s is in %s, expected %s" % (node, where, path)
    return ("%s in %s" % (node, path), fn)


def node_names_unique():
    """No two nodes of the model (any graph) share a name."""
    def fn(inp, out):
        names = [n.name for _, _, n in testlib.nodes(out) if n.name]
        twice = sorted({x for x in names if names.count(x) > 1})
        return ("node names used twice: %s" % twice) if twice else None
    return ("node names unique", fn)


def reads_renamed(readers, old):
    """Every (node, input index) of readers reads one value, written by a
    node, whose name is no longer old: a branch value renamed where it
    landed because the enclosing graph defines old too."""
    def fn(inp, out):
        got = {need_node(out, n)[1].input[i] for n, i in readers}
        if len(got) != 1:
            return "they read %s" % sorted(got)
        name = got.pop()
        made_by(out, name)  # raises when no node writes it
        return None if name != old else "the value is still called %s" % old
    return ("%s read a renamed %s" % (",".join(n for n, _ in readers), old), fn)


def written_by_identity(value, source):
    """value (a graph output kept by name) is written by an Identity of source."""
    def fn(inp, out):
        _, n = made_by(out, value)
        got = (n.op_type, list(n.input))
        return None if got == ("Identity", [source]) else "%s is written by %s%s" % (
            value, got[0], got[1])
    return ("%s = Identity(%s)" % (value, source), fn)


def vi_moved(name):
    """A branch's value_info entry for name is now the main graph's, with
    the type the input declared."""
    def fn(inp, out):
        exp = [v for _, g in testlib.graphs(inp.graph) for v in g.value_info if v.name == name]
        got = [v for v in out.graph.value_info if v.name == name]
        if not got:
            return "the main graph has no value_info %s" % name
        same = got[0].type.SerializeToString() == exp[0].type.SerializeToString()
        return None if same else "value_info %s type changed" % name
    return ("value_info %s in the main graph" % name, fn)


def vi_defined():
    """Every value_info entry (any graph) names a value its graph defines."""
    def fn(inp, out):
        bad = []
        for path, g in testlib.graphs(out.graph):
            defined = {i.name for i in g.input} | {t.name for t in g.initializer} | \
                {o for n in g.node for o in n.output}
            bad += ["%s: %s" % (path, v.name) for v in g.value_info if v.name not in defined]
        return ("value_info naming no value: %s" % bad) if bad else None
    return ("value_info names defined values", fn)


NO_IF, VI_DEFINED = no_op("If"), vi_defined()

FOLD_IF_SPECS = {
    "fold_if_then_scalar": dict(
        both=[NO_IF, removed("else_neg"), node_input("then_relu", 0, "X"),
              node_input("then_add", 1, "W"), node_output("then_add", 0, "r"),
              node_input("mul0", 0, "r"), vi_moved("t0"), vi_removed("then_out"), VI_DEFINED],
        reports=["inlined then branch 1 (if0)"]),
    "fold_if_else_scalar": dict(
        both=[NO_IF, removed("then_relu", "then_add"), node_output("else_neg", 0, "r")],
        reports=["inlined else branch 1 (if0)"]),
    "fold_if_cond_shape1": dict(
        both=[NO_IF, removed("a_else_neg", "b_then_relu", "b_then_add"),
              node_output("a_then_add", 0, "rt"), node_output("b_else_neg", 0, "rf")],
        reports=["inlined then branch 1 (ift)", "inlined else branch 1 (iff)"]),
    "fold_if_in_loop": dict(
        both=[NO_IF, removed("else_neg"), node_in_graph("then_mul", "main/loop0.body"),
              node_input("then_mul", 0, "a"), node_input("then_mul", 1, "W"),
              node_output("then_mul", 0, "acc_out")],
        reports=["inlined then branch 1 (body_if)"]),
    "fold_if_nested": dict(both=[
        op_count("If", 1), removed("else_neg"), node_in_graph("if1", "main"),
        node_output("if1", 0, "r"), node_input("inner_add", 0, "t0"),
        node_output("then_relu", 0, "t0")]),
    "fold_if_name_clash": dict(both=[
        op_count("If", 1), node_output("relu0", 0, "a"), node_input("add0", 0, "a"),
        reads_renamed([("then_add", 0), ("inner_add", 0)], "a"), SSA, node_names_unique(),
        VI_DEFINED]),
    "fold_if_nested_outer_output": dict(
        both=[op_count("If", 1), node_output("relu0", 0, "a"),
              subgraph_output("if1", "then_branch", 0, "then_relu"),
              reads_renamed([("inner_neg", 0)], "a"), SSA],
        no_numbers="onnxruntime refuses a subgraph returning an outer value directly"),
    "fold_if_graph_output": dict(both=[
        NO_IF, no_op("Identity"), removed("else_neg"), node_output("then_add", 0, "Y")]),
    # onnxruntime refuses the input (its then branch returns X itself)
    "fold_if_outer_output": dict(
        both=[NO_IF, node_input("relu_r", 0, "X"), written_by_identity("Z", "X")],
        reference=lambda f: {"Y": _relu(_f64(f, "X")), "Z": _f64(f, "X")}),
    # Z = Identity(K2) folds into an initializer on fold's next run
    "fold_if_init_output": dict(both=[
        NO_IF, folded_input("add_k", 1, lambda I: I("K")), output_param("Z", lambda I: I("K2"))]),
    "fold_if_multi_output": dict(
        both=[NO_IF, node_output("then_neg", 0, "r1"), node_input("add0", 1, "r1")],
        single=[node_output("then_relu", 0, "r0"), node_input("add0", 0, "r0"),
                node_input("mul0", 1, "r0"), written_by_identity("Z", "r0")],
        default=[no_op("Identity"), node_output("then_relu", 0, "Z"), node_input("add0", 0, "Z"),
                 node_input("mul0", 1, "Z")]),
    "fold_if_dynamic_cond": dict(both=[
        op_count("If", 2), kept("if0", "if1", "then_relu", "then_add", "else_neg", "k_then_relu",
                                "k_then_add", "k_else_neg"),
        node_input("if0", 0, "cond"), node_input("if1", 0, "c1")]),
    # inference cannot tell r's dims while the If stands (its branches
    # disagree): shape0 folds only once the branch took its place
    "fold_if_shape_folds": dict(both=[
        NO_IF, no_op("Shape"), node_output("then_relu", 0, "r"),
        folded_input("reshape0", 1, lambda I: np.array([2, 3], np.int64))]),
}
SPECS.update(FOLD_IF_SPECS)

# ---------------------------------------------------------------------------
# the pattern fusions (fuse-pad, fuse-conv-scale, fuse-matmul-add,
# fuse-layernorm, fuse-gelu; models from scripts/make_fusion_testdata.py).
# Expected attributes and values come from the input model.
# ---------------------------------------------------------------------------

def made_by(m, value):
    """(scope chain, node) of the node writing value, in any graph."""
    for chain in scoped_graphs(m):
        for n in chain[-1][1].node:
            if value in n.output:
                return chain, n
    raise LookupError("no node writes %s" % value)


def pad_pads(chain, pad):
    """The pads of Pad node `pad` (attribute or initializer input)."""
    p = attr(pad, "pads")
    return list(p) if p is not None else [int(v) for v in node_param(chain, pad, 1)]


def pad_folded(pad, consumer, include=False):
    """Pad `pad` is gone; `consumer` reads the Pad's input with its own pads
    plus the Pad's spatial pads (and count_include_pad=1 when include)."""
    def fn(inp, out):
        chain, pn = find_scoped(inp, pad)
        _, cn = find_scoped(inp, consumer)
        pp = pad_pads(chain, pn)
        rank = len(pp) // 2
        k = rank - 2
        own = list(attr(cn, "pads", [0] * 2 * k))
        exp = [own[i] + pp[2 + i] for i in range(k)] + [own[k + i] + pp[rank + 2 + i]
                                                          for i in range(k)]
        _, on = find_scoped(out, consumer)
        errs = []
        if on.input[0] != pn.input[0]:
            errs.append("%s reads %s, expected %s" % (consumer, on.input[0], pn.input[0]))
        if list(attr(on, "pads", [])) != exp:
            errs.append("%s pads %s, expected %s" % (consumer, list(attr(on, "pads", [])), exp))
        if include and attr(on, "count_include_pad", 0) != 1:
            errs.append("%s count_include_pad is not 1" % consumer)
        if any(n.name == pad for _, _, n in testlib.nodes(out)):
            errs.append("%s still there" % pad)
        return "; ".join(errs) or None
    return ("%s folded into %s" % (pad, consumer), fn)


def bn_forward(bn, conv):
    """BatchNormalization `bn` folded into the Conv `conv` reading it: conv
    reads bn's input, with W'[o,j] = W[o,j] * s[c] and
    b'[o] = b[o] + sum_{j,k} W[o,j,k] * shift[c], c = group(o) * (Cin/G) + j
    the input channel W[o,j] reads; weight (and bias) of the weight's dtype;
    attributes unchanged."""
    def fn(inp, out):
        a = affine(inp, conv)
        s, shift, _ = bn_affine(inp, bn)
        W, G = a["W"], a["group"]
        cout, cg = W.shape[:2]
        chan = (np.arange(cout)[:, None] // (cout // G)) * cg + np.arange(cg)[None, :]
        spread = lambda v: v[chan].reshape(W.shape[:2] + (1,) * (W.ndim - 2))
        expW = W * spread(s)
        expb = a["b"] + (W * spread(shift)).reshape(cout, -1).sum(axis=1)
        o = affine(out, conv)
        dt = a["wdtype"]
        errs = [e for e in (close("weight", o["W"], expW, dt), close("bias", o["b"], expb, dt))
                if e]
        _, bn_node = find_scoped(inp, bn)
        if o["node"].input[0] != bn_node.input[0]:
            errs.append("%s reads %s, expected %s" % (conv, o["node"].input[0], bn_node.input[0]))
        if o["wdtype"] != dt or (o["bdtype"] is not None and o["bdtype"] != dt):
            errs.append("weight/bias dtype %s/%s, expected %s" % (o["wdtype"], o["bdtype"], dt))
        if not same_attrs(a["node"], o["node"]):
            errs.append("attributes changed")
        return "; ".join(errs) or None
    return ("%s holds the forward fold of %s" % (conv, bn), fn)


def gemm_of(mm, add):
    """MatMul `mm` and Add `add` became one Gemm(x, W, b) writing add's
    output (alpha, beta 1, no transposes), in the same graph."""
    def fn(inp, out):
        _, mn = find_scoped(inp, mm)
        _, an = find_scoped(inp, add)
        ichain = find_scoped(inp, mm)[0]
        w = node_param(ichain, mn, 1)
        b = node_param(ichain, an, [x for x in an.input].index(
            [x for x in an.input if x != mn.output[0]][0]))
        chain, g = made_by(out, an.output[0])
        exp = ["Gemm", mn.input[0], 3, 1.0, 1.0, 0, 0]
        got = [g.op_type, g.input[0], len(g.input), attr(g, "alpha", 1.0), attr(g, "beta", 1.0),
               attr(g, "transA", 0), attr(g, "transB", 0)]
        if got != exp:
            return "%s is written by %s, expected %s" % (an.output[0], got, exp)
        err = same_array(node_param(chain, g, 1), w) or same_array(node_param(chain, g, 2), b)
        if err:
            return "Gemm W or C: %s" % err
        where = find_scoped(inp, mm)[0][-1][0]
        return None if chain[-1][0] == where else "the Gemm is in %s, not %s" % (
            chain[-1][0], where)
    return ("%s+%s became a Gemm" % (mm, add), fn)


def gemm_nd(mm, add, shape):
    """MatMul `mm` + Add `add` became Reshape(x, [-1, K]) -> Gemm(W, b) ->
    Reshape(shape) writing add's output; W and b hold the input's values."""
    def fn(inp, out):
        ichain, mn = find_scoped(inp, mm)
        _, an = find_scoped(inp, add)
        w = node_param(ichain, mn, 1)
        b = node_param(ichain, an, list(an.input).index(
            [x for x in an.input if x != mn.output[0]][0]))
        chain, r2 = made_by(out, an.output[0])
        _, g = made_by(out, r2.input[0])
        _, r1 = made_by(out, g.input[0])
        ops = [r1.op_type, g.op_type, r2.op_type, r1.input[0]]
        if ops != ["Reshape", "Gemm", "Reshape", mn.input[0]]:
            return "%s is made by %s" % (an.output[0], ops)
        errs = [e for e in (
            same_array(node_param(chain, r1, 1), np.array([-1, w.shape[0]], np.int64)),
            same_array(node_param(chain, r2, 1), np.array(shape, np.int64)),
            same_array(node_param(chain, g, 1), w), same_array(node_param(chain, g, 2), b)) if e]
        return "; ".join(errs) or None
    return ("%s+%s became Reshape-Gemm-Reshape" % (mm, add), fn)


def layernorm(mean, out_value, k, gamma=None, beta=None, nd=None):
    """The pattern from ReduceMean `mean` became one LayerNormalization
    writing out_value: reads mean's input, axis -k, epsilon the value of the
    Add's constant (the pattern's `add` node, sharing mean's name prefix),
    Scale = gamma broadcast to the normalized dims nd (ones without gamma),
    B = beta broadcast (absent without beta), both of x's type."""
    def fn(inp, out):
        chain, mn = find_scoped(inp, mean)
        prefix = mean[:-len("mean")]
        achain, an = find_scoped(inp, prefix + "add")
        eps = node_param(achain, an, 1).reshape(-1)[0]
        ochain, ln = made_by(out, out_value)
        errs = []
        if ln.op_type != "LayerNormalization" or ln.input[0] != mn.input[0]:
            return "%s is written by %s(%s)" % (out_value, ln.op_type, list(ln.input))
        if attr(ln, "axis", -1) != -k:
            errs.append("axis %s, expected %d" % (attr(ln, "axis", -1), -k))
        if np.float32(attr(ln, "epsilon", 1e-5)) != np.float32(eps):
            errs.append("epsilon %r, expected %r" % (attr(ln, "epsilon", 1e-5), eps))
        for idx, src in ((1, gamma), (2, beta)):
            if src is None and idx == 2:
                if len(ln.input) > 2 and ln.input[2]:
                    errs.append("has a B input, expected none")
                continue
            if src is None:
                exp, dt = np.ones(nd), np.float32
            else:
                _, sn = find_scoped(inp, src[0])
                sv = node_param(chain, sn, src[1])
                exp, dt = np.broadcast_to(sv.astype(np.float64), nd), sv.dtype
            got = node_param(ochain, ln, idx)
            if got.dtype != dt:
                errs.append("input %d dtype %s, expected %s" % (idx, got.dtype, dt))
            err = close("input %d" % idx, got.astype(np.float64), np.asarray(exp), dt)
            if err:
                errs.append(err)
        return "; ".join(errs) or None
    return ("LayerNormalization from %s" % mean, fn)


def gelu_op(value, x, op_type, bias=None, alpha=None):
    """value is written by com.microsoft op_type(x) (op_type(x, bias) with a
    bias; attribute alpha equal to the float32 of alpha when given);
    com.microsoft is imported once."""
    inputs = [x] + ([bias] if bias else [])

    def fn(inp, out):
        _, n = made_by(out, value)
        if (n.op_type, n.domain, list(n.input)) != (op_type, "com.microsoft", inputs):
            return "%s is written by %s.%s(%s)" % (value, n.domain, n.op_type, list(n.input))
        if alpha is not None and np.float32(attr(n, "alpha", 0.0)) != np.float32(alpha):
            return "alpha %r, expected %r" % (attr(n, "alpha"), alpha)
        imports = [o.version for o in out.opset_import if o.domain == "com.microsoft"]
        return None if imports == [1] else "com.microsoft imports: %s" % imports
    return ("%s = com.microsoft.%s(%s)" % (value, op_type, ", ".join(inputs)), fn)


NPAD, NMUL, NMM, NRM = no_op("Pad"), no_op("Mul"), no_op("MatMul"), no_op("ReduceMean")
LN1 = op_count("LayerNormalization", 1)
MS = {"single": {"com.microsoft": 1}}  # fuse-gelu adds the domain's import

FUSION_SPECS = {
    # -- fuse-pad ------------------------------------------------------------
    "fusepad_conv": dict(both=[NPAD, pad_folded("pad0", "op0")]),
    "fusepad_conv_value": dict(both=[unchanged("pad0", "op0")], warns=["pad0"]),
    "fusepad_conv_channels": dict(both=[unchanged("pad0", "op0")]),
    "fusepad_conv_negative": dict(both=[unchanged("pad0", "op0")]),
    "fusepad_reflect": dict(both=[unchanged("pad0", "op0")]),
    "fusepad_two_consumers": dict(both=[unchanged("pad0", "op0", "relu0")]),
    "fusepad_avgpool_include": dict(both=[NPAD, pad_folded("pad0", "op0", include=True)]),
    "fusepad_avgpool_exclude": dict(both=[NPAD, pad_folded("pad0", "op0", include=True)]),
    "fusepad_avgpool_exclude_pads": dict(both=[unchanged("pad0", "op0")], warns=["pad0"]),
    "fusepad_avgpool_ceil": dict(both=[unchanged("pad0", "op0")], warns=["pad0"]),
    "fusepad_maxpool_zero": dict(both=[unchanged("pad0", "op0")], warns=["pad0"]),
    "fusepad_maxpool_neginf": dict(both=[NPAD, pad_folded("pad0", "op0")]),
    "fusepad_attr_form": dict(both=[NPAD, pad_folded("pad0", "op0")],
                              opsets={"default": {"": 11}}),  # the pad pass raises it
    "fusepad_in_if": dict(both=[NPAD, pad_folded("then_pad", "then_conv"),
                                unchanged("else_conv")]),

    # -- fuse-conv-scale -----------------------------------------------------
    "fusescale_conv": dict(both=[NMUL, node_output("conv0", 0, "Y"), folded("conv0", mul="mul0")]),
    "fusescale_conv_nobias": dict(both=[NMUL, folded("conv0", mul="mul0"),
                                        ("conv0 has no bias", lambda i, o: None if len(
                                            find_scoped(o, "conv0")[1].input) == 2
                                            else "conv0 got a bias input")]),
    "fusescale_scalar": dict(both=[NMUL, folded("conv0", mul="mul0")]),
    "fusescale_convtranspose": dict(both=[NMUL, folded("conv0", mul="mul0")]),
    "fusescale_gemm": dict(both=[NMUL, node_output("conv0", 0, "Y"), folded("conv0", mul="mul0")]),
    "fusescale_conv_vector": dict(both=[unchanged("conv0", "mul0")]),
    "fusescale_two_consumers": dict(both=[unchanged("conv0", "mul0", "relu0")]),
    "fusescale_float16_overflow": dict(both=[unchanged("conv0", "mul0")], warns=["mul0"]),
    "fusescale_in_if": dict(both=[NMUL, node_output("then_conv", 0, "then_out"),
                                  folded("then_conv", mul="then_mul"), unchanged("else_conv")]),

    # -- fuse-bn-forward -----------------------------------------------------
    "fusebnfwd_conv": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "fusebnfwd_conv_nobias": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "fusebnfwd_grouped": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "fusebnfwd_pointwise_grouped": dict(both=[NBN, op_count("Conv", 1),
                                              bn_forward("bn0", "conv0")]),
    "fusebnfwd_valid_1d": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "fusebnfwd_padded_no_shift": dict(both=[NBN, op_count("Conv", 1),
                                            bn_forward("bn0", "conv0")]),
    "fusebnfwd_float16": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "fusebnfwd_in_if": dict(both=[NBN, bn_forward("then_bn", "then_conv"),
                                  unchanged("else_conv")]),
    # not exact (padding, ConvTranspose) or not the BN's only reader: kept;
    # the default run turns the BN into a depthwise Conv (bn-to-conv)
    "fusebnfwd_padded": dict(single=[unchanged("bn0", "conv0")],
                             default=[NBN, unchanged("conv0"), bn_as_conv("bn0", 4)]),
    "fusebnfwd_two_consumers": dict(single=[unchanged("bn0", "conv0", "relu0")],
                                    default=[NBN, unchanged("conv0"), bn_as_conv("bn0", 4)]),
    "fusebnfwd_convtranspose": dict(single=[unchanged("bn0", "conv0")],
                                    default=[NBN, unchanged("conv0"), bn_as_conv("bn0", 4)]),
    "fusebnfwd_float16_overflow": dict(single=[unchanged("bn0", "conv0")],
                                       default=[NBN, unchanged("conv0"), bn_as_conv("bn0", 4)],
                                       warns=["bn0"]),

    # -- fuse-matmul-add -----------------------------------------------------
    "fusemm_rank2": dict(both=[NMM, NADD, gemm_of("mm0", "add0")]),
    "fusemm_row_bias": dict(both=[NMM, NADD, gemm_of("mm0", "add0")]),
    "fusemm_scalar_bias": dict(both=[NMM, NADD, gemm_of("mm0", "add0")]),
    "fusemm_rank3": dict(both=[unchanged("mm0", "add0")]),
    "fusemm_full_bias": dict(both=[unchanged("mm0", "add0")]),
    "fusemm_weight_input": dict(both=[unchanged("mm0", "add0")]),
    "fusemm_two_consumers": dict(both=[unchanged("mm0", "add0", "relu0")]),
    "fusemm_in_if": dict(both=[op_count("MatMul", 1), gemm_of("then_mm", "then_add"),
                               unchanged("else_mm")]),

    "fusemmnd_rank3": dict(default=[unchanged("mm0", "add0")],
                           single=[NMM, NADD, gemm_nd("mm0", "add0", [2, 3, 5])]),
    "fusemmnd_symbolic_batch": dict(default=[unchanged("mm0", "add0")],
                                    single=[NMM, NADD, gemm_nd("mm0", "add0", [-1, 3, 2, 5])]),
    "fusemmnd_two_unknown": dict(both=[unchanged("mm0", "add0")]),

    # -- fuse-layernorm --------------------------------------------------------
    "fuseln_torch": dict(both=[NRM, LN1, op_count("Div", 0),
                               layernorm("mean", "Y", 1, ("gamma", 1), ("beta", 1), (8,))]),
    "fuseln_reciprocal": dict(both=[NRM, LN1, no_op("Reciprocal"),
                                    layernorm("mean", "Y", 1, ("gamma", 0), ("beta", 0), (6,))]),
    "fuseln_two_subs": dict(both=[NRM, LN1, no_op("Sub"),
                                  layernorm("mean", "Y", 1, ("gamma", 1), ("beta", 1), (6,))]),
    "fuseln_no_affine": dict(both=[NRM, LN1, layernorm("mean", "Y", 1, nd=(6,))]),
    "fuseln_two_axes": dict(both=[NRM, LN1, layernorm("mean", "Y", 2, ("gamma", 1), ("beta", 1),
                                                      (3, 4))]),
    "fuseln_positive_axes": dict(both=[NRM, LN1, layernorm("mean", "Y", 1, ("gamma", 1),
                                                           ("beta", 1), (4,))]),
    "fuseln_undeclared_gamma": dict(both=[NRM, LN1, layernorm("mean", "Y", 1, ("gamma", 1),
                                                              ("beta", 1), (8,))]),
    "fuseln_symbolic_no_gamma": dict(both=[op_count("ReduceMean", 2), no_op("LayerNormalization")],
                                     warns=["mean"]),
    "fuseln_float16": dict(both=[NRM, LN1, layernorm("mean", "Y", 1, ("gamma", 1), ("beta", 1),
                                                     (8,))]),
    "fuseln_not_trailing": dict(both=[op_count("ReduceMean", 2), no_op("LayerNormalization")]),
    "fuseln_opset13": dict(both=[op_count("ReduceMean", 2), no_op("LayerNormalization")]),
    "fuseln_shared_variance": dict(both=[op_count("ReduceMean", 2),
                                         no_op("LayerNormalization")]),
    "fuseln_tf_keras": dict(both=[NRM, LN1, no_op("Reciprocal"), no_op("Sub"),
                                  layernorm("mean", "Y", 1, ("gamma", 1), ("shift", 0), (8,))]),
    "fuseln_tf_no_affine": dict(both=[NRM, LN1, no_op("Neg"), layernorm("mean", "Y", 1, nd=(6,))]),
    "fuseln_tf_shared_scale": dict(both=[op_count("ReduceMean", 2),
                                         no_op("LayerNormalization")]),
    "fuseln_in_if": dict(both=[NRM, LN1, layernorm("t_mean", "then_out", 1, ("t_gamma", 1),
                                                   ("t_beta", 1), (8,)),
                               unchanged("else_relu")]),

    # -- fuse-gelu (off by default: the default run keeps the pattern) ---------
    "fusegelu_erf_torch": dict(default=[op_count("Erf", 1)], opsets=MS,
                               single=[no_op("Erf"), no_op("Mul"), gelu_op("Y", "X", "Gelu")]),
    "fusegelu_erf_mul": dict(default=[op_count("Erf", 1)], opsets=MS,
                             single=[no_op("Erf"), no_op("Mul"), gelu_op("Y", "X", "Gelu")]),
    "fusegelu_erf_half_first": dict(default=[op_count("Erf", 1)], opsets=MS,
                                    single=[no_op("Erf"), no_op("Mul"),
                                            gelu_op("Y", "X", "Gelu")]),
    "fusegelu_untyped_input": dict(default=[op_count("Erf", 1)], opsets=MS,
                                   single=[no_op("Erf"), gelu_op("Y", "x", "Gelu")]),
    "fusegelu_float16": dict(both=[op_count("Erf", 1), no_op("Gelu")], warns=["erf0"]),
    "fusegelu_erf_wrong_constant": dict(both=[op_count("Erf", 1), no_op("Gelu")]),
    "fusegelu_erf_shared": dict(both=[op_count("Erf", 1), no_op("Gelu")]),
    "fusegelu_tanh_gpt2": dict(default=[op_count("Tanh", 1)], opsets=MS,
                               single=[no_op("Tanh"), no_op("Pow"), no_op("Mul"),
                                       gelu_op("Y", "X", "FastGelu")]),
    "fusegelu_tanh_cube_mul": dict(default=[op_count("Tanh", 1)], opsets=MS,
                                   single=[no_op("Tanh"), no_op("Mul"),
                                           gelu_op("Y", "X", "FastGelu")]),
    "fusegelu_tanh_wrong_constant": dict(both=[op_count("Tanh", 1), no_op("FastGelu")]),
    "fusegelu_quick": dict(default=[op_count("Sigmoid", 1)], opsets=MS,
                           single=[no_op("Sigmoid"), no_op("Mul"),
                                   gelu_op("Y", "X", "QuickGelu", alpha=1.702)]),
    "fusegelu_quick_other_alpha": dict(both=[op_count("Sigmoid", 1), no_op("QuickGelu")]),
    "fusegelu_bias_erf": dict(default=[op_count("Erf", 1)], opsets=MS,
                              single=[no_op("Erf"), no_op("Add"),
                                      gelu_op("Y", "X", "BiasGelu", bias="B")]),
    "fusegelu_bias_tanh": dict(default=[op_count("Tanh", 1)], opsets=MS,
                               single=[no_op("Tanh"), no_op("Add"),
                                       gelu_op("Y", "X", "FastGelu", bias="B")]),
    "fusegelu_bias_read_elsewhere": dict(default=[op_count("Erf", 1)], opsets=MS,
                                         single=[no_op("Erf"), op_count("Add", 1),
                                                 gelu_op("Y", "x", "Gelu")]),
    "fusegelu_bias_broadcast": dict(default=[op_count("Erf", 1)], opsets=MS,
                                    single=[no_op("Erf"), op_count("Add", 1),
                                            gelu_op("Y", "x", "Gelu")]),
    "fusegelu_in_if": dict(default=[op_count("Erf", 1)],
                           single=[no_op("Erf"), gelu_op("then_out", "X", "Gelu")]),
}
SPECS.update(FUSION_SPECS)

# ---------------------------------------------------------------------------
# eliminate-noops (models from scripts/make_noops_testdata.py, in
# testdata/noops/): most read X -> relu0 -> op0 -> relu1 -> Y, so a removed
# op0 leaves relu1 reading relu0's output r.
# ---------------------------------------------------------------------------

def composed_perm(first, second, node):
    """node's perm is Transpose `first` then `second` of the input model,
    composed here by transposing an index array with numpy."""
    def fn(inp, out):
        _, a = find_scoped(inp, first)
        _, b = find_scoped(inp, second)
        rank = len(attr(a, "perm"))
        x = np.arange(np.prod(range(2, 2 + rank))).reshape(range(2, 2 + rank))
        exp = np.transpose(np.transpose(x, attr(a, "perm")), attr(b, "perm"))
        _, n = find_scoped(out, node)
        got = np.transpose(x, list(attr(n, "perm")))
        return None if got.shape == exp.shape and (got == exp).all() else \
            "%s perm %s is not %s then %s" % (node, list(attr(n, "perm")), first, second)
    return ("%s composes %s and %s" % (node, first, second), fn)


GONE = [removed("op0"), node_input("relu1", 0, "r")]
STAYS = [unchanged("op0")]
GONE1 = [removed("op0"), node_input("sm1", 0, "r")]  # chain1: Softmax-1 for Relu

NOOPS_SPECS = {
    "noops_dropout": dict(both=GONE),
    "noops_dropout_mask_unused": dict(both=GONE),
    "noops_dropout_training_false": dict(both=GONE),
    "noops_dropout_training_true": dict(both=STAYS),
    "noops_dropout_mask_used": dict(both=STAYS),
    # onnxruntime has no Dropout-6 kernel: the output of the first (two
    # Relus) is compared with numpy, the second (kept) is not run
    "noops_dropout_opset6_test": dict(both=GONE, reference=lambda f: {"Y": _relu(_f64(f, "X"))}),
    "noops_dropout_opset6_train": dict(both=STAYS, no_numbers="onnxruntime has no Dropout-6"),
    "noops_cast_same": dict(both=GONE),
    "noops_cast_other": dict(both=STAYS),
    "noops_castlike_same": dict(both=GONE),
    "noops_reshape_same": dict(both=GONE),
    "noops_reshape_zero_minus": dict(both=GONE),
    "noops_reshape_changes": dict(both=STAYS),
    "noops_reshape_symbolic": dict(both=GONE, default=[no_op("Shape"), no_op("Concat")]),
    "noops_reshape_pair": dict(both=[removed("rs0"), node_input("op0", 0, "r"),
                                     folded_input("op0", 1, lambda I: I("s1"))]),
    "noops_reshape_pair_zero": dict(both=[unchanged("rs0", "op0")]),
    "noops_reshape1_same": dict(both=GONE1),
    "noops_reshape1_zero_minus": dict(both=GONE1),
    "noops_reshape1_changes": dict(both=STAYS),
    "noops_reshape1_pair": dict(both=[removed("rs0"), node_input("op0", 0, "r"),
                                      unchanged("rs1", "op1")]),
    "noops_flatten_rank2": dict(both=GONE),
    "noops_flatten_changes": dict(both=STAYS),
    "noops_squeeze_none": dict(both=GONE),
    "noops_squeeze_one": dict(both=STAYS),
    "noops_squeeze_symbolic": dict(both=STAYS),
    "noops_transpose_identity": dict(both=GONE),
    "noops_transpose_pair_identity": dict(both=[removed("tr0", "op0"),
                                                node_input("relu1", 0, "r")]),
    "noops_transpose_pair_compose": dict(both=[removed("tr0"), node_input("op0", 0, "r"),
                                               composed_perm("tr0", "op0", "op0")]),
    "noops_transpose_pair_shared": dict(both=[unchanged("tr0", "op0")]),
    "noops_expand_same": dict(both=GONE),
    "noops_expand_up": dict(both=STAYS),
    "noops_tile_ones": dict(both=GONE),
    "noops_slice_whole": dict(both=GONE),
    "noops_slice_part": dict(both=STAYS),
    "noops_pad_zero": dict(both=GONE),
    "noops_add_zero": dict(both=GONE),
    "noops_add_zero_first": dict(both=GONE),
    "noops_add_zero_broadcast": dict(both=STAYS),
    "noops_sub_zero": dict(both=GONE),
    "noops_sub_from_zero": dict(both=STAYS),
    "noops_mul_one": dict(both=GONE),
    "noops_mul_not_one": dict(both=STAYS),
    "noops_div_one": dict(both=GONE),
    "noops_concat_one": dict(both=GONE),
    "noops_split_one": dict(both=GONE),
    "noops_split_two_unused": dict(both=STAYS),
    "noops_output": dict(both=[removed("op0"), node_output("relu0", 0, "Y")]),
    "noops_output_kept": dict(both=STAYS, warns=["op0"]),
    "noops_in_if": dict(both=[removed("then_rs", "else_add"), node_input("then_relu1", 0, "t0"),
                              node_input("else_relu1", 0, "e0"), kept("if0")]),
}
SPECS.update(NOOPS_SPECS)

# file-name prefix (up to the first '_') -> the pass the model is about
PASS_NAMES = {
    "constant": "constant", "identity": "identity", "isolated": "isolated",
    "splitparams": "split-params", "fusebias": "fuse-bias", "fusebn": "fuse-bn",
    "bntoconv": "bn-to-conv", "deinplace": "de-inplace", "fold": "fold",
    "fusepad": "fuse-pad", "fusescale": "fuse-conv-scale", "fusebnfwd": "fuse-bn-forward", "fusemm": "fuse-matmul-add",
    "fusemmnd": "fuse-matmul-add-nd",
    "fuseln": "fuse-layernorm", "fusegelu": "fuse-gelu", "noops": "eliminate-noops",
}


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


def test_run(model, run, opts, specs, src, workdir, reference=None, no_numbers=None,
             plain_checker=None, not_ssa=None, opsets=None):
    """Format src with opts, then run the generic and the structural checks.
    reference: see SPECS (numpy meaning of a model onnxruntime refuses);
    no_numbers: why onnxruntime cannot run the model at all (no numbers check);
    plain_checker: why the checker runs without shape inference;
    not_ssa: why the output stays not SSA (neither the checker nor onnxruntime
    take it; the idempotence check still loads it into ppqfmt);
    opsets: the opset imports this run sets ({domain: version})."""
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
    if not_ssa:
        no_numbers = not_ssa
    elif plain_checker:  # python3-onnx cannot run shape inference on it
        check("%s: checker (no shape inference: %s)" % (tag, plain_checker), check_full, dst,
              False)
    else:
        check("%s: full checker" % tag, check_full, dst)
    check("%s: graph inputs/outputs unchanged" % tag, testlib.check_interface, inp, out)
    check("%s: model fields kept" % tag, check_model_fields, inp, out, opsets)
    check("%s: surviving node order kept" % tag, check_order, inp, out)
    for label, fn in specs:
        check("%s: %s" % (tag, label), fn, inp, out)
    if no_numbers:
        pass  # onnxruntime cannot run such models: structure and checker only
    elif reference is None:
        check("%s: onnxruntime equivalent" % tag, check_equiv, src, dst, inp)
    else:
        check("%s: onnxruntime matches the numpy reference" % tag, check_reference,
              src, dst, inp, reference)

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


def test_model(model, folder, workdir):
    """Every run and check of one model (see the module doc)."""
    spec = SPECS.get(model)
    if spec is None:
        report("%s: has expectations" % model, "no entry in SPECS of tests/test_passes.py")
        return
    src = os.path.join(folder, model + ".onnx")
    both = spec.get("both", [])
    extra = (spec.get("reference"), spec.get("no_numbers"), spec.get("plain_checker"))
    opsets = spec.get("opsets", {})
    test_run(model, "default", [], both + spec.get("default", []), src, workdir,
             *extra, opsets=opsets.get("default"))
    pname = PASS_NAMES.get(model.split("_")[0])
    if pname:
        test_run(model, pname, ["--passes=" + pname],
                 both + spec.get("single", []), src, workdir, *extra,
                 not_ssa=spec.get("single_not_ssa"), opsets=opsets.get("single"))
        if spec.get("warns"):
            check("%s/%s: warns about %s" % (model, pname, ",".join(spec["warns"])),
                  check_warns, ["--passes=" + pname], src, workdir, spec["warns"])
        if spec.get("reports"):
            check("%s/%s: --report says %s" % (model, pname, "; ".join(spec["reports"])),
                  check_warns, ["--report", "--passes=" + pname], src, workdir, spec["reports"])
    test_none(model, src, workdir)
    if model == "sample":
        check("sample: --report=json is JSON on stderr", test_report, src, workdir)


def test_shared(models, workdir, jobs):
    """Worker k of jobs (a forked process) tests models k, k+jobs, ...; its
    lines go to a file and its counts to another, which the parent prints and
    adds up. The models are independent: each writes only its own outputs.
    Under valgrind (make check-valgrind) this halves the wall time on two cores."""
    kids = []
    for k in range(jobs):
        lines = tempfile.NamedTemporaryFile(mode="w+", prefix="test_passes_out", delete=False)
        sys.stdout.flush()
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                sys.stdout = lines
                T.passed = T.failed = 0
                for model, folder in models[k::jobs]:
                    test_model(model, folder, workdir)
                lines.write("\n%d %d\n" % (T.passed, T.failed))
                lines.close()
                code = 0
            finally:
                os._exit(code)
        kids.append((pid, lines.name))
    for pid, path in kids:
        _, status = os.waitpid(pid, 0)
        with open(path) as f:
            text = f.read().rstrip("\n").split("\n")
        os.unlink(path)
        if status != 0 or not text or len(text[-1].split()) != 2:
            report("worker %d" % pid, "ended with status %d before its counts" % status)
            continue
        sys.stdout.write("".join(x + "\n" for x in text[:-2]))
        passed, failed = map(int, text[-1].split())
        T.passed += passed
        T.failed += failed


def main(argv):
    keep, patterns = None, []
    jobs = len(os.sched_getaffinity(0))
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--keep" and args:
            keep = args.pop(0)
        elif a == "--jobs" and args:
            jobs = max(1, int(args.pop(0)))
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            patterns.append(a)

    # (name, folder): testdata/ and its noops/ folder
    models = [(m, TESTDATA) for m in testlib.models_in(TESTDATA, patterns)] + \
        [(m, NOOPS_DIR) for m in testlib.models_in(NOOPS_DIR, patterns)]

    if not (os.path.isfile(PPQFMT) and os.access(PPQFMT, os.X_OK)):
        report("setup", "ppqfmt not found at %s (build it, or set PPQFMT)" % PPQFMT)
    elif not models:
        report("setup", "no models in %s (run scripts/make_testdata.py)" % TESTDATA)
    else:
        workdir = keep or tempfile.mkdtemp(prefix="test_passes_")
        os.makedirs(workdir, exist_ok=True)
        try:
            if jobs > 1 and len(models) > 1:
                test_shared(models, workdir, min(jobs, len(models)))
            else:
                for model, folder in models:
                    test_model(model, folder, workdir)
            missing = sorted(set(SPECS) - set(m for m, _ in models))
            if missing and not patterns:
                report("testdata complete", "models missing from %s: %s" % (TESTDATA, missing))
        finally:
            if keep is None:
                shutil.rmtree(workdir, ignore_errors=True)

    return T.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
