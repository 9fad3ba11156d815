"""build.py - what the pass modules' model builders share: the registry
(Models, whose @model registers a builder), the seeded weights, the small
graph-building helpers, and write(), which checks and saves the models
(scripts/make_testdata.py calls it).

Each model exercises one rule of one pass and lives in testdata/<pass>/<case>.onnx;
the docstring of its builder says what it tests and what ppqfmt must produce
(it becomes the model's graph doc_string). Everything is deterministic: fixed
names, fixed producer fields, and weights from a numpy RandomState seeded from
the model's name, so regenerating gives the same bytes. A model's name is
<prefix>_<case>, the prefix its module gives to Models (fusebn for fuse_bn,
noops for eliminate_noops, ...): the file name the model had before the models
moved to testdata/<pass>/, kept as its graph name and its seed so that the
models stayed byte-identical.

Every model must pass onnx.checker.check_model(full_check=True) before it is
written, except the de-inplace models registered with ssa=False
(deliberately not SSA): for them an SSA-renamed copy must pass; and the
sparse_initializer models registered with full_check=False, checked without
shape inference (python3-onnx 1.12's inference types a sparse initializer as
sparse_tensor, which no standard operator takes; onnxruntime runs them).

Run with Debian's python (/usr/bin/python3, python3-onnx 1.12: IR <= 8,
opset <= 17). Most models use opset 13 (value_float & co. need opset >= 12).
"""
import collections
import os
import zlib

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

# one registered model: name (<prefix>_<case>: graph name and seed), case,
# path (relative to testdata/), build(r) -> ModelProto, ssa, full_check, doc (what
# the graph doc_string is: "strip" the builder's docstring, "words" the same on one
# line, None what the builder set)
Case = collections.namedtuple("Case", "name case path build ssa full_check doc")


class Models:
    """The test models of one pass module, in testdata/<folder>/. prefix: the
    old file-name prefix (see the module doc); output_types: builders may
    declare graph outputs without a shape (the pattern fusions), which
    with_output_types fills in; one_line_doc: the graph doc_string is the
    builder's docstring with its whitespace runs made single spaces (the
    legacy-form models); by_name: builders take the model's name instead of
    rng(name) and set the doc_string themselves (target_opset)."""

    def __init__(self, folder, prefix="", output_types=False, one_line_doc=False,
                 by_name=False):
        self.folder, self.prefix, self.output_types = folder, prefix, output_types
        self.doc = None if by_name else "words" if one_line_doc else "strip"
        self.by_name = by_name
        self.cases = []

    def model(self, case, ssa=True, full_check=True, path=None):
        """Register a builder fn(r) -> ModelProto (r: rng(name)) for
        testdata/<folder>/<case>.onnx, or testdata/<path>.  ssa=False marks a
        model that is deliberately not SSA (a name written by two nodes, for
        the de-inplace pass): onnx.checker refuses it, so write() checks an
        SSA-renamed copy of it instead.  full_check=False: the model is checked
        without shape inference, which python3-onnx 1.12 cannot run on it (a
        sparse_initializer read by a standard operator)."""
        def register(fn):
            name = "%s_%s" % (self.prefix, case) if self.prefix else case
            build = with_output_types(fn) if self.output_types else fn
            if self.by_name:
                def build(r, fn=fn, name=name):
                    return fn(name)
            self.cases.append(Case(name, case, path or os.path.join(self.folder, case + ".onnx"),
                                   build, ssa, full_check, self.doc))
            return fn
        return register


OPSET = 13


IR = 8


FLOAT = TP.FLOAT


def rng(name):
    """A RandomState seeded from the model name (order-independent)."""
    return np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)


def rand(r, *shape):
    return r.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def fvi(name, shape):
    return vi(name, FLOAT, shape)


def node(op, inputs, outputs, name, **attrs):
    return helper.make_node(op, inputs, outputs, name=name, **attrs)


def const(name, out, **attrs):
    return helper.make_node("Constant", [], [out], name=name, **attrs)


def raw_tensor(name, arr):
    """TensorProto with the data in raw_data."""
    return numpy_helper.from_array(arr, name)


def typed_tensor(name, arr, dtype):
    """TensorProto with the data in the typed field (float_data, int64_data, ...)."""
    return helper.make_tensor(name, dtype, list(arr.shape),
                              arr.flatten().tolist(), raw=False)


def graph(nodes, name, inputs, outputs, inits=(), value_info=(), sparse=()):
    return helper.make_graph(nodes, name, inputs, outputs,
                             initializer=list(inits), value_info=list(value_info),
                             sparse_initializer=list(sparse))


def sparse_tensor(name, dense):
    """SparseTensorProto of dense's non-zero elements (linear int64 indices)."""
    flat = dense.reshape(-1)
    idx = np.flatnonzero(flat).astype(np.int64)
    return helper.make_sparse_tensor(raw_tensor(name, flat[idx]), raw_tensor(name + "_idx", idx),
                                     list(dense.shape))


def sparse_dense(r, *shape):
    """A float weight with about half of its elements zero."""
    return rand(r, *shape) * (r.uniform(size=shape) < 0.5)


def finish(g, opset=OPSET, ir=IR):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="ppqfmt-make_testdata",
                          producer_version="1")
    m.ir_version = ir
    return m


def with_default_input(m, name):
    """m with its initializer `name` also listed as a graph input: in an IR >= 4
    model, a default a caller may feed, so no pass may fold its value."""
    t = next(t for t in m.graph.initializer if t.name == name)
    m.graph.input.append(vi(name, t.data_type, list(t.dims)))
    return m


def finish_with(g, opsets):
    """finish() with several opset imports: (domain, version) pairs."""
    m = finish(g)
    del m.opset_import[:]
    m.opset_import.extend(helper.make_opsetid(d, v) for d, v in opsets)
    return m


def if_node(name, cond, outputs, then_g, else_g):
    return helper.make_node("If", [cond], outputs, name=name,
                            then_branch=then_g, else_branch=else_g)


# ---------------------------------------------------------------------------
# BatchNormalization helpers (fuse-bn, bn-to-conv, the fusions, ...)
# ---------------------------------------------------------------------------

F16 = TP.FLOAT16
INT64, BOOL = TP.INT64, TP.BOOL


def f16vi(name, shape):
    return vi(name, F16, shape)


def bn_inits(r, prefix, c, dtype=np.float32):
    """Inference BatchNormalization parameters with non-trivial statistics:
    scale ~U(0.5,1.5), bias ~N(0,0.5), mean ~N(0,0.5), var ~U(0.5,2), so a
    wrong fold shows in the numbers.  Names: <prefix>_scale/_bias/_mean/_var."""
    return [raw_tensor(prefix + "_scale", r.uniform(0.5, 1.5, c).astype(dtype)),
            raw_tensor(prefix + "_bias", r.normal(0.0, 0.5, c).astype(dtype)),
            raw_tensor(prefix + "_mean", r.normal(0.0, 0.5, c).astype(dtype)),
            raw_tensor(prefix + "_var", r.uniform(0.5, 2.0, c).astype(dtype))]


def bn(x, y, name, prefix, outputs=None, **attrs):
    """BatchNormalization node reading the <prefix>_* parameters of bn_inits."""
    return node("BatchNormalization",
                [x, prefix + "_scale", prefix + "_bias", prefix + "_mean", prefix + "_var"],
                outputs or [y], name, **attrs)


# ---------------------------------------------------------------------------
# tensors of several passes' models
# ---------------------------------------------------------------------------

def i64(name, values):
    return raw_tensor(name, np.array(values, np.int64))


def scalar(name, value, dtype=np.float32):
    return raw_tensor(name, np.array(value, dtype))


# ---------------------------------------------------------------------------
# fuse-matmul-add and fuse-matmul-add-nd: MatMul(x, W) + Add(b) -> Gemm
# ---------------------------------------------------------------------------

def matmul_add(name, xshape, w, b, add_first=False, extra=False, w_input=False):
    inits = [raw_tensor("B", b)] + ([] if w_input else [raw_tensor("W", w)])
    inputs = [fvi("X", list(xshape))] + ([fvi("W", list(w.shape))] if w_input else [])
    nodes = [node("MatMul", ["X", "W"], ["m"], "mm0"),
             node("Add", ["B", "m"] if add_first else ["m", "B"], ["Y"], "add0")]
    nodes += [node("Relu", ["m"], ["Z"], "relu0")] if extra else []
    outs = [fvi("Y", None)] + ([fvi("Z", None)] if extra else [])
    return finish(graph(nodes, name, inputs, outs, inits=inits))


# ---------------------------------------------------------------------------
# legacy-form models (clip, pad, slice, resize, legacy; tests/test_legacy.py):
# each at an old opset with that opset's IR version
# ---------------------------------------------------------------------------

# the IR version of each opset's ONNX release (also target_opset's models)
from testlib import IR_OF_OPSET  # noqa: E402  (tests/, on the path with passes/)


INT64_MAX = 2 ** 63 - 1


INT32_MAX = 2 ** 31 - 1


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def finish_at(name, opset, nodes, inputs, outputs, inits=(), value_info=()):
    """Model at `opset` with its era's IR version (IR 3: initializers are graph inputs too)."""
    ir = IR_OF_OPSET[opset]
    inputs = list(inputs)
    if ir < 4:
        inputs += [vi(t.name, t.data_type, list(t.dims)) for t in inits]
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits),
                          value_info=list(value_info))
    # the producer names the script these models came from first: kept, byte for byte
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="ppqfmt-make_legacy_testdata", producer_version="1")
    m.ir_version = ir
    return m


def out_dims(shape, scales):
    """Resize-10/Upsample output dims as onnxruntime computes them: floor(float32 product)."""
    return [int(np.float32(s) * np.float32(d)) for d, s in zip(shape, scales)]


def dynamic_scales(prefix, offset):
    """Nodes computing scales [1, 1, offset+|s0|, offset+|s1|] from graph input s (float [2])."""
    return [node("Abs", ["s"], [prefix + "_abs"], prefix + "_abs"),
            node("Add", [prefix + "_abs", prefix + "_off"], [prefix + "_hw"], prefix + "_add"),
            node("Concat", [prefix + "_ones", prefix + "_hw"], [prefix + "_scales"],
                 prefix + "_concat", axis=0)], \
        [init(prefix + "_off", np.array([offset], np.float32)),
         init(prefix + "_ones", np.array([1, 1], np.float32))]


def with_output_types(build):
    """build, with graph outputs declared without a shape (fvi(name, None))
    given the type and shape onnx's shape inference finds (the checker wants
    one)."""
    def wrapped(r):
        m = build(r)
        inferred = onnx.shape_inference.infer_shapes(m).graph
        known = {v.name: v for v in list(inferred.value_info) + list(inferred.output)
                 if v.type.tensor_type.HasField("shape")}
        for o in m.graph.output:
            if not o.type.tensor_type.HasField("shape") and o.name in known:
                o.CopyFrom(known[o.name])
        return m
    wrapped.__doc__ = build.__doc__
    return wrapped


def _is_ssa(g, outer=()):
    """True if no name in g (or its subgraphs) is defined twice."""
    seen = set(outer) | {i.name for i in g.input} | {t.name for t in g.initializer}
    for n in g.node:
        for o in n.output:
            if o in seen:
                return False
            seen.add(o)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH and not _is_ssa(a.g, seen):
                return False
    return True


def _ssa_copy(m):
    """A copy of m with every re-definition of a name renamed (name__vN) and
    its later readers (and graph outputs) following: only to prove that a
    non-SSA test model is otherwise valid ONNX."""
    m = onnx.ModelProto.FromString(m.SerializeToString())

    def fix(g, cur):
        cur = dict(cur)
        count = {}
        for n in g.node:
            for i, x in enumerate(n.input):
                n.input[i] = cur.get(x, x)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    fix(a.g, cur)
            for i, o in enumerate(n.output):
                k = count.get(o, 0)
                count[o] = k + 1
                cur[o] = n.output[i] = o if k == 0 else "%s__v%d" % (o, k)
        for o in g.output:
            o.name = cur.get(o.name, o.name)

    fix(m.graph, {})
    return m


def write(models, outdir):
    """Build, check and write each Case of models under outdir; the count."""
    for c in models:
        m = c.build(rng(c.name))
        doc = c.build.__doc__ or ""
        if c.doc:
            m.graph.doc_string = " ".join(doc.split()) if c.doc == "words" else doc.strip()
        if not c.ssa:
            assert not _is_ssa(m.graph), "%s is marked ssa=False but is SSA" % c.name
            # valid apart from the repeated names
            onnx.checker.check_model(_ssa_copy(m), full_check=True)
        else:
            onnx.checker.check_model(m, full_check=c.full_check)
        data = m.SerializeToString()
        # the test runner expects these to round-trip byte for byte
        assert onnx.load_from_string(data).SerializeToString() == data, c.name
        path = os.path.join(outdir, c.path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return len(models)
