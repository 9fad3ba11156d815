"""common.py - the checks the pass modules' SPECS are made of, and the generic
checks tests/test_passes.py runs on every output.

Structural checks are factories: each returns (label, fn(inp, out) -> None
or an error string). Expected values are read from the INPUT model (the
Constant node's attribute, the input initializer) or computed from it in
float64, never read from ppqfmt's output.
"""
import os
import subprocess

import numpy as np
import onnx
from onnx import helper, numpy_helper

import testlib  # tests/

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))
RUN_TIMEOUT = 60


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


def sval(v):
    return v.decode() if isinstance(v, bytes) else v


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
        # beta 0: Gemm does not read C (onnxruntime skips it; it may hold inf or NaN)
        b = np.zeros(N) if B is None or attr(n, "beta", 1.0) == 0 else \
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
    with np.errstate(invalid="ignore"):  # inf * 0 is NaN, as in the model
        return _scale_channels(a, W, s)


def _scale_channels(a, W, s):
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
    fin = np.isfinite(exp)
    big = np.abs(exp[fin]).max() if fin.any() else 0.0
    with np.errstate(invalid="ignore"):
        # finite values within the tolerance; NaN must meet NaN, inf the same inf
        bad = np.where(fin, ~(np.abs(got - exp) <= rtol * (np.abs(exp) + big) + 1e-12),
                       np.where(np.isnan(exp), ~np.isnan(got), got != exp))
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


def _stderr_of(opts, src, workdir):
    """(None, ppqfmt's stderr) of a run on src, or (what failed, None)."""
    dst = os.path.join(workdir, "stderr.onnx")
    p = subprocess.run([PPQFMT] + opts + [src, "-o", dst], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    err = p.stderr.decode("utf-8", "replace")
    return ("exit %d: %s" % (p.returncode, err.strip()[-300:]), None) if p.returncode else (None, err)


def check_warns(opts, src, workdir, words):
    """ppqfmt's stderr names each of words (a warning says where; --report
    says what each pass did)."""
    failed, err = _stderr_of(opts, src, workdir)
    if failed:
        return failed
    miss = [w for w in words if w not in err]
    return ("stderr does not mention %s: %r" % (miss, err.strip()[:300])) if miss else None


def check_quiet(opts, src, workdir):
    """ppqfmt succeeds and prints nothing on stderr."""
    failed, err = _stderr_of(opts, src, workdir)
    return failed or (("stderr: %r" % err.strip()[:300]) if err.strip() else None)


def _relu(v):
    return np.maximum(v, 0.0)


def _f64(feeds, name):
    return np.asarray(feeds[name], np.float64)


NC, NI = no_op("Constant"), no_op("Identity")


NBN, NADD = no_op("BatchNormalization"), no_op("Add")


ONCE, SSA = params_used_once(), ssa()


# ---------------------------------------------------------------------------
# helpers of the pattern fusions' checks (fuse-pad, fuse-conv-scale,
# fuse-matmul-add, fuse-layernorm, fuse-gelu). Expected attributes and values
# come from the input model.
# ---------------------------------------------------------------------------

def made_by(m, value):
    """(scope chain, node) of the node writing value, in any graph."""
    for chain in scoped_graphs(m):
        for n in chain[-1][1].node:
            if value in n.output:
                return chain, n
    raise LookupError("no node writes %s" % value)


NPAD, NMUL, NMM, NRM = no_op("Pad"), no_op("Mul"), no_op("MatMul"), no_op("ReduceMean")
