#!/usr/bin/python3
"""Generate the small ONNX models in testdata/ that tests/test_passes.py uses.

Usage: scripts/make_testdata.py [OUTDIR]      (default: testdata/ next to scripts/)

Each model exercises one rule of one pass and is named <pass>_<case>.onnx; the
docstring of its builder says what it tests and what ppqfmt must produce.
Everything is deterministic: fixed names, fixed producer fields, and weights
from a numpy RandomState seeded from the model name, so running the script
twice gives the same bytes.  Every model must pass
onnx.checker.check_model(full_check=True) before it is written, except the
de-inplace models registered with ssa=False (deliberately not SSA): for them
an SSA-renamed copy must pass; and the sparse_initializer models registered
with full_check=False, checked without shape inference (python3-onnx 1.12's
inference types a sparse initializer as sparse_tensor, which no standard
operator takes; onnxruntime runs them).

Run with Debian's python (/usr/bin/python3, python3-onnx 1.12: IR <= 8,
opset <= 17).  Most models use opset 13 (value_float & co. need opset >= 12).
"""
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

OPSET = 13
IR = 8
FLOAT = TP.FLOAT

BUILDERS = []


NON_SSA = set()
PLAIN_CHECK = set()


def model(name, ssa=True, full_check=True):
    """Register a builder for testdata/<name>.onnx.  ssa=False marks a model
    that is deliberately not SSA (a name written by two nodes, for the
    de-inplace pass): onnx.checker refuses it, so main() checks an
    SSA-renamed copy of it instead.  full_check=False: the model is checked
    without shape inference, which python3-onnx 1.12 cannot run on it (a
    sparse_initializer read by a standard operator)."""
    def register(fn):
        BUILDERS.append((name, fn))
        if not ssa:
            NON_SSA.add(name)
        if not full_check:
            PLAIN_CHECK.add(name)
        return fn
    return register


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
# constant: Constant nodes become parameters (initializers) of their graph
# ---------------------------------------------------------------------------

@model("constant_value_raw")
def _(r):
    """Constant `value` (float [2,3], raw_data) -> Add.
    Expect: no Constant; Add input 1 is an initializer equal to the tensor."""
    c = raw_tensor("c_value", rand(r, 2, 3))
    return finish(graph(
        [const("const0", "c", value=c), node("Add", ["X", "c"], ["Y"], "add0")],
        "constant_value_raw", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("constant_rewritten", ssa=False)
def _(r):
    """Not SSA: const0: c = Constant; add0: c = Add(X, c); const1: k =
    Constant; mul0: m = Mul(c, k); const2: k = Constant; add1: Y = Add(m, k).
    Expect: with de-inplace (default) no Constant; without it (--passes=
    constant) const0, const1 and const2 kept with a warning each (an
    initializer c or k would also be written by a node), and the output
    is a model ppqfmt loads again.  Y = (X + c) * k1 + k2."""
    f32 = lambda name, v: raw_tensor(name, np.array(v, np.float32))
    return finish(graph(
        [const("const0", "c", value=f32("c_value", [1.5, -2.0, 0.25])),
         node("Add", ["X", "c"], ["c"], "add0"),
         const("const1", "k", value=f32("k1_value", [2.0, 0.5, -1.0])),
         node("Mul", ["c", "k"], ["m"], "mul0"),
         const("const2", "k", value=f32("k2_value", [0.125, 4.0, -3.0])),
         node("Add", ["m", "k"], ["Y"], "add1")],
        "constant_rewritten", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("constant_value_info")
def _(r):
    """Slice of X [2,3,8,4] with `axes` = [0,2] from Constant const0, whose
    value_info `axes` declares int64 without a shape, and `steps` = [1,2]
    from Constant const1, whose value_info `steps` declares int64 [2].
    Expect: no Constant; value_info axes gone (a shapeless entry makes
    onnx's shape inference ignore the initializer's values), value_info
    steps (exactly the tensor's type) kept."""
    i64 = lambda name, v: raw_tensor(name, np.array(v, np.int64))
    return finish(graph(
        [const("const0", "axes", value=i64("axes_value", [0, 2])),
         const("const1", "steps", value=i64("steps_value", [1, 2])),
         node("Slice", ["X", "starts", "ends", "axes", "steps"], ["Y"], "slice0")],
        "constant_value_info", [fvi("X", [2, 3, 8, 4])], [fvi("Y", [1, 3, 3, 4])],
        inits=[i64("starts", [0, 1]), i64("ends", [1, 7])],
        value_info=[vi("axes", TP.INT64, None), vi("steps", TP.INT64, [2])]))


@model("constant_value_float_data")
def _(r):
    """Constant `value` (float [2,3] in float_data, not raw) -> Mul.
    Expect: no Constant; Mul input 1 is an initializer with the same floats."""
    c = typed_tensor("c_value", rand(r, 2, 3), FLOAT)
    return finish(graph(
        [const("const0", "c", value=c), node("Mul", ["X", "c"], ["Y"], "mul0")],
        "constant_value_float_data", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("constant_value_int64")
def _(r):
    """Constant `value` (int64 [2] in int64_data) as Reshape's shape.
    Expect: no Constant; Reshape input 1 is an int64 initializer [3, 2]."""
    s = typed_tensor("shape_value", np.array([3, 2], np.int64), TP.INT64)
    return finish(graph(
        [const("const0", "shape", value=s),
         node("Reshape", ["X", "shape"], ["Y"], "reshape0")],
        "constant_value_int64", [fvi("X", [2, 3])], [fvi("Y", [3, 2])]))


@model("constant_value_float")
def _(r):
    """Constant `value_float` = 2.5 -> Mul.
    Expect: no Constant; Mul input 1 is a float32 scalar initializer 2.5."""
    return finish(graph(
        [const("const0", "k", value_float=2.5), node("Mul", ["X", "k"], ["Y"], "mul0")],
        "constant_value_float", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("constant_value_floats")
def _(r):
    """Constant `value_floats` = [0.5, -1.25, 3] -> Add (broadcast over [2,3]).
    Expect: no Constant; Add input 1 is a float32 [3] initializer."""
    return finish(graph(
        [const("const0", "b", value_floats=[0.5, -1.25, 3.0]),
         node("Add", ["X", "b"], ["Y"], "add0")],
        "constant_value_floats", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("constant_value_int")
def _(r):
    """Constant `value_int` = 1 as Gather's (scalar) index.
    Expect: no Constant; Gather input 1 is an int64 scalar initializer 1."""
    return finish(graph(
        [const("const0", "idx", value_int=1),
         node("Gather", ["X", "idx"], ["Y"], "gather0", axis=0)],
        "constant_value_int", [fvi("X", [2, 3])], [fvi("Y", [3])]))


@model("constant_value_ints")
def _(r):
    """Constant `value_ints` = [0, 3] as Unsqueeze-13's axes.
    Expect: no Constant; Unsqueeze input 1 is an int64 [2] initializer."""
    return finish(graph(
        [const("const0", "axes", value_ints=[0, 3]),
         node("Unsqueeze", ["X", "axes"], ["Y"], "unsqueeze0")],
        "constant_value_ints", [fvi("X", [2, 3])], [fvi("Y", [1, 2, 3, 1])]))


@model("constant_value_string")
def _(r):
    """Two Constant `value_string` scalars feed Where(X > 0, "pos", "neg").
    Expect: no Constant; Where inputs 1 and 2 are string scalar initializers;
    graph output Y (string [3]) unchanged."""
    zero = raw_tensor("zero", np.array(0.0, np.float32))
    return finish(graph(
        [const("const_pos", "pos", value_string="pos"),
         const("const_neg", "neg", value_string="neg"),
         node("Greater", ["X", "zero"], ["gt"], "greater0"),
         node("Where", ["gt", "pos", "neg"], ["Y"], "where0")],
        "constant_value_string", [fvi("X", [3])], [vi("Y", TP.STRING, [3])],
        inits=[zero]))


@model("constant_value_strings")
def _(r):
    """Two Constant `value_strings` [3] feed Where(X > 0, a, b).
    Expect: no Constant; Where inputs 1 and 2 are string [3] initializers."""
    zero = raw_tensor("zero", np.array(0.0, np.float32))
    return finish(graph(
        [const("const_a", "sa", value_strings=["alpha", "beta", "gamma"]),
         const("const_b", "sb", value_strings=["x", "yy", ""]),
         node("Greater", ["X", "zero"], ["gt"], "greater0"),
         node("Where", ["gt", "sa", "sb"], ["Y"], "where0")],
        "constant_value_strings", [fvi("X", [3])], [vi("Y", TP.STRING, [3])],
        inits=[zero]))


@model("constant_graph_output")
def _(r):
    """A Constant whose output C is directly the first graph output.
    Expect: no Constant; outputs still [C, Y]; C is still valid and holds
    the constant's value (an initializer named C, or fed from one)."""
    c = raw_tensor("c_value", rand(r, 2, 2))
    return finish(graph(
        [const("const0", "C", value=c), node("Relu", ["X"], ["Y"], "relu0")],
        "constant_graph_output", [fvi("X", [2, 3])],
        [fvi("C", [2, 2]), fvi("Y", [2, 3])]))


@model("constant_two_consumers")
def _(r):
    """One Constant feeding Add and Mul.
    Expect: no Constant; both consumers read an initializer with its value."""
    c = raw_tensor("c_value", rand(r, 2, 3))
    return finish(graph(
        [const("const0", "c", value=c),
         node("Add", ["X", "c"], ["a"], "add0"),
         node("Mul", ["a", "c"], ["Y"], "mul0")],
        "constant_two_consumers", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("constant_in_if")
def _(r):
    """Constants inside both If branches, used there (X is outer scope).
    Expect: no Constant in any graph; each branch consumer reads an
    initializer of that branch with the constant's value."""
    t = raw_tensor("t_value", rand(r, 2, 3))
    then_g = graph([const("then_const", "t_c", value=t),
                    node("Add", ["X", "t_c"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([const("else_const", "e_c", value_float=3.0),
                    node("Mul", ["X", "e_c"], ["else_out"], "else_mul")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "constant_in_if", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])]))


@model("constant_weights")
def _(r):
    """Converter style: every weight is a Constant node (Conv W, B; Add A).
    Expect: no Constant; Conv inputs 1, 2 and Add input 1 are initializers
    with the constants' values; Conv/Add/Relu kept."""
    w = raw_tensor("w_value", rand(r, 4, 3, 3, 3))
    b = raw_tensor("b_value", rand(r, 4))
    a = raw_tensor("a_value", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [const("const_w", "W", value=w),
         const("const_b", "B", value=b),
         const("const_a", "A", value=a),
         node("Conv", ["X", "W", "B"], ["conv_out"], "conv0",
              kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["conv_out", "A"], ["add_out"], "add0"),
         node("Relu", ["add_out"], ["Y"], "relu0")],
        "constant_weights", [fvi("X", [1, 3, 8, 8])], [fvi("Y", [1, 4, 8, 8])]))


# ---------------------------------------------------------------------------
# identity: Identity nodes removed, graph output names never change
# ---------------------------------------------------------------------------

@model("identity_middle")
def _(r):
    """Relu -> Identity -> Sigmoid.
    Expect: Identity removed; Sigmoid reads Relu's output r."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["i"], "id0"),
         node("Sigmoid", ["i"], ["Y"], "sig0")],
        "identity_middle", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("identity_graph_output")
def _(r):
    """Relu -> Identity -> graph output Y.
    Expect: Identity removed; Relu now writes Y directly (output name kept)."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["Y"], "id0")],
        "identity_graph_output", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("identity_shared_output")
def _(r):
    """Relu output r feeds Identity -> Y (graph output) and Sigmoid -> Z.
    Expect: Identity removed; Relu writes Y; Sigmoid reads Y."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["Y"], "id0"),
         node("Sigmoid", ["r"], ["Z"], "sig0")],
        "identity_shared_output", [fvi("X", [2, 3])],
        [fvi("Y", [2, 3]), fvi("Z", [2, 3])]))


@model("identity_input_to_output")
def _(r):
    """Identity from graph input X straight to graph output Y.
    Expect: Identity kept (neither name may change)."""
    return finish(graph(
        [node("Identity", ["X"], ["Y"], "id0"),
         node("Relu", ["X"], ["Z"], "relu0")],
        "identity_input_to_output", [fvi("X", [2, 3])],
        [fvi("Y", [2, 3]), fvi("Z", [2, 3])]))


@model("identity_initializer_to_output")
def _(r):
    """Identity from initializer W to graph output Y (W also used by Add).
    Expect: Identity kept; W kept."""
    w = raw_tensor("W", rand(r, 2, 3))
    return finish(graph(
        [node("Identity", ["W"], ["Y"], "id0"),
         node("Add", ["X", "W"], ["Z"], "add0")],
        "identity_initializer_to_output", [fvi("X", [2, 3])],
        [fvi("Y", [2, 3]), fvi("Z", [2, 3])], inits=[w]))


@model("identity_chain")
def _(r):
    """Relu -> Identity -> Identity -> Sigmoid.
    Expect: both Identities removed; Sigmoid reads r."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["i0"], "id0"),
         node("Identity", ["i0"], ["i1"], "id1"),
         node("Sigmoid", ["i1"], ["Y"], "sig0")],
        "identity_chain", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("identity_chain_output")
def _(r):
    """Relu -> Identity -> Identity -> graph output Y.
    Expect: both Identities removed; Relu writes Y."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["i0"], "id0"),
         node("Identity", ["i0"], ["Y"], "id1")],
        "identity_chain_output", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("identity_output_input")
def _(r):
    """Relu writes graph output r; Identity(r) writes graph output Y.
    Expect: both output names survive, so one Identity must stay."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["Y"], "id0")],
        "identity_output_input", [fvi("X", [2, 3])],
        [fvi("r", [2, 3]), fvi("Y", [2, 3])]))


@model("identity_in_if")
def _(r):
    """Identities inside If branches.
    then: Relu(X) -> t -> Identity -> then_out (branch output).
    else: Identity(X) -> e -> Sigmoid -> else_out (X is outer scope).
    Expect: both removed; then_relu writes then_out; else_sig reads X."""
    then_g = graph([node("Relu", ["X"], ["t"], "then_relu"),
                    node("Identity", ["t"], ["then_out"], "then_id")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Identity", ["X"], ["e"], "else_id"),
                    node("Sigmoid", ["e"], ["else_out"], "else_sig")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "identity_in_if", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])]))


@model("identity_if_outer_output")
def _(r):
    """then branch: Identity(X) -> then_out, X from the outer scope.
    Expect: that Identity kept (an outer name can't become a branch output
    name); else branch (Neg) untouched."""
    then_g = graph([node("Identity", ["X"], ["then_out"], "then_id")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Neg", ["X"], ["else_out"], "else_neg")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "identity_if_outer_output", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])]))


@model("identity_in_loop")
def _(r):
    """Loop (3 iterations) body: Identity(cond_in) -> cond_out and
    Identity(v_in) -> t -> Add(t, one) -> v_out.
    Expect: body_id_v removed (body_add reads v_in); body_id_cond kept
    (body input to body output); body initializer `one` kept."""
    one = raw_tensor("one", np.ones((2, 3), np.float32))
    body = graph([node("Identity", ["cond_in"], ["cond_out"], "body_id_cond"),
                  node("Identity", ["v_in"], ["t"], "body_id_v"),
                  node("Add", ["t", "one"], ["v_out"], "body_add")],
                 "loop_body",
                 [vi("iter", TP.INT64, []), vi("cond_in", TP.BOOL, []),
                  fvi("v_in", [2, 3])],
                 [vi("cond_out", TP.BOOL, []), fvi("v_out", [2, 3])],
                 inits=[one])
    m_trip = raw_tensor("M", np.array(3, np.int64))
    c_init = raw_tensor("cond_init", np.array(True))
    return finish(graph(
        [helper.make_node("Loop", ["M", "cond_init", "X"], ["Y"], name="loop0",
                          body=body)],
        "identity_in_loop", [fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        inits=[m_trip, c_init]))


@model("mixed_loop_body")
def _(r):
    """Loop (2 iterations) whose body holds a Constant (the BN epsilon-free
    shift added at the end), an Identity, and Conv -> BN whose weight W comes
    from the outer scope and is also used by the main graph's conv_out.
    Expect (default pipeline): no Constant, Identity or BN anywhere; the two
    Convs read separate copies of W (the first use in file order, the body's,
    which sits at the Loop node, keeps the name); outputs unchanged."""
    w = raw_tensor("W", rand(r, 3, 3, 3, 3))
    c = r.uniform(0.5, 1.5, 3).astype(np.float32)
    bn_init = [raw_tensor("bs", c), raw_tensor("bb", rand(r, 3)), raw_tensor("bm", rand(r, 3)),
               raw_tensor("bv", r.uniform(0.5, 2, 3).astype(np.float32))]
    body = graph([node("Identity", ["v_in"], ["t"], "body_id"),
                  node("Conv", ["t", "W"], ["c"], "body_conv", kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1]),
                  node("BatchNormalization", ["c", "bs", "bb", "bm", "bv"], ["b"], "body_bn"),
                  const("body_const", "k", value=raw_tensor("kv", np.full((1, 3, 1, 1), 0.25,
                                                                       np.float32))),
                  node("Add", ["b", "k"], ["v_out"], "body_add"),
                  node("Identity", ["cond_in"], ["cond_out"], "body_id_cond")],
                 "loop_body",
                 [vi("iter", TP.INT64, []), vi("cond_in", TP.BOOL, []),
                  fvi("v_in", [1, 3, 5, 5])],
                 [vi("cond_out", TP.BOOL, []), fvi("v_out", [1, 3, 5, 5])],
                 inits=bn_init)
    m_trip = raw_tensor("M", np.array(2, np.int64))
    c_init = raw_tensor("cond_init", np.array(True))
    return finish(graph(
        [helper.make_node("Loop", ["M", "cond_init", "X"], ["L"], name="loop0", body=body),
         node("Conv", ["L", "W"], ["Y"], "conv_out", kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        "mixed_loop_body", [fvi("X", [1, 3, 5, 5])], [fvi("Y", [1, 3, 5, 5])],
        inits=[w, m_trip, c_init]))


# ---------------------------------------------------------------------------
# isolated: remove what reaches no graph output (outer-scope uses count)
# ---------------------------------------------------------------------------

@model("isolated_dead_chain")
def _(r):
    """Dead chain Sigmoid -> Tanh beside the live Relu.
    Expect: dead0, dead1 removed; relu0 kept."""
    return finish(graph(
        [node("Sigmoid", ["X"], ["d0"], "dead0"),
         node("Relu", ["X"], ["Y"], "relu0"),
         node("Tanh", ["d0"], ["d1"], "dead1")],
        "isolated_dead_chain", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("isolated_unused_initializer")
def _(r):
    """Initializer U is used by nothing, W by add0.
    Expect: U removed, W kept with its values."""
    w = raw_tensor("W", rand(r, 2, 3))
    u = raw_tensor("U", rand(r, 4))
    return finish(graph(
        [node("Add", ["X", "W"], ["Y"], "add0")],
        "isolated_unused_initializer", [fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        inits=[u, w]))


@model("isolated_value_info")
def _(r):
    """value_info for live r and for dead d0 (made by dead0).
    Expect: dead0 removed; value_info d0 removed; value_info r kept."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Tanh", ["X"], ["d0"], "dead0"),
         node("Sigmoid", ["r"], ["Y"], "sig0")],
        "isolated_value_info", [fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        value_info=[fvi("d0", [2, 3]), fvi("r", [2, 3])]))


@model("isolated_outer_scope_use")
def _(r):
    """outer0 (Sigmoid) and outer1 (Neg) outputs are used only inside the
    If branches (outer-scope names).
    Expect: outer0, outer1, if0 and the branch nodes all kept."""
    then_g = graph([node("Add", ["s", "X"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Mul", ["n", "X"], ["else_out"], "else_mul")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [node("Sigmoid", ["X"], ["s"], "outer0"),
         node("Neg", ["X"], ["n"], "outer1"),
         if_node("if0", "cond", ["Y"], then_g, else_g)],
        "isolated_outer_scope_use", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])]))


@model("isolated_outer_initializer")
def _(r):
    """Main-graph initializer K is used only inside the If then branch.
    Expect: K kept with its values."""
    k = raw_tensor("K", rand(r, 2, 3))
    then_g = graph([node("Add", ["X", "K"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Neg", ["X"], ["else_out"], "else_neg")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "isolated_outer_initializer", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])], inits=[k]))


@model("isolated_dead_in_subgraph")
def _(r):
    """then branch has a dead node sub_dead0 (Sigmoid of outer f); f comes
    from feed_dead, which nothing else uses.
    Expect: sub_dead0 removed, then feed_dead too (it reached only a dead
    node); then_relu, else_neg, if0 kept."""
    then_g = graph([node("Relu", ["X"], ["then_out"], "then_relu"),
                    node("Sigmoid", ["f"], ["dead"], "sub_dead0")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Neg", ["X"], ["else_out"], "else_neg")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [node("Tanh", ["X"], ["f"], "feed_dead"),
         if_node("if0", "cond", ["Y"], then_g, else_g)],
        "isolated_dead_in_subgraph", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])]))


@model("isolated_dead_if")
def _(r):
    """If node dead_if whose output nothing uses; its then branch reads outer
    value f from feed_if, which nothing else uses.
    Expect: dead_if (with both branches) and feed_if removed; relu0 kept."""
    then_g = graph([node("Sigmoid", ["f"], ["then_out"], "then_sig")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Neg", ["X"], ["else_out"], "else_neg")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [node("Tanh", ["X"], ["f"], "feed_if"),
         if_node("dead_if", "cond", ["unused"], then_g, else_g),
         node("Relu", ["X"], ["Y"], "relu0")],
        "isolated_dead_if", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])]))


@model("isolated_unused_input")
def _(r):
    """Graph input Z is used by nothing.
    Expect: graph inputs still [X, Z] (the model's interface)."""
    return finish(graph(
        [node("Relu", ["X"], ["Y"], "relu0")],
        "isolated_unused_input", [fvi("X", [2, 3]), fvi("Z", [4])],
        [fvi("Y", [2, 3])]))


@model("isolated_initializer_input")
def _(r):
    """Old IR style (ir 3, opset 9): initializers W and B are also graph
    inputs; B is used by no node.
    Expect: graph inputs still [X, W, B]; initializer B kept (it is B's
    default value, part of the interface); W kept."""
    w = raw_tensor("W", rand(r, 2, 3))
    b = raw_tensor("B", rand(r, 2, 3))
    return finish(graph(
        [node("Add", ["X", "W"], ["Y"], "add0")],
        "isolated_initializer_input",
        [fvi("X", [2, 3]), fvi("W", [2, 3]), fvi("B", [2, 3])],
        [fvi("Y", [2, 3])], inits=[w, b]), opset=9, ir=3)


@model("isolated_dead_constant")
def _(r):
    """A Constant node whose output nothing uses.
    Expect: with isolated only: dead_const removed.  With the default passes:
    no Constant and no initializer left for it (constant then isolated)."""
    c = raw_tensor("c_value", rand(r, 5))
    return finish(graph(
        [const("dead_const", "c", value=c), node("Relu", ["X"], ["Y"], "relu0")],
        "isolated_dead_constant", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


# ---------------------------------------------------------------------------
# helpers for the split-params, fuse-bias, fuse-bn, bn-to-conv and de-inplace
# models
# ---------------------------------------------------------------------------

F16 = TP.FLOAT16


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
# split-params: a parameter with more than one use gets one copy per use
# ---------------------------------------------------------------------------

@model("splitparams_two_convs")
def _(r):
    """conv0 and conv1 both read W and B (X -> conv0 -> relu0 -> conv1 -> Y).
    Expect: conv0 keeps W and B; conv1 reads distinct copies (same dtype,
    dims, values); 4 initializers, none used twice."""
    w = raw_tensor("W", rand(r, 4, 4, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c0"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Relu", ["c0"], ["r"], "relu0"),
         node("Conv", ["r", "W", "B"], ["Y"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
        "splitparams_two_convs", [fvi("X", [1, 4, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b]))


@model("splitparams_same_node")
def _(r):
    """Y = Mul(Sum(X, s, s), s): sum0 reads s twice, mul0 once (3 uses).
    Expect: sum0 input 1 keeps s; sum0 input 2 and mul0 input 1 read
    distinct copies; 3 initializers, none used twice."""
    s = raw_tensor("s", rand(r, 2, 3))
    return finish(graph(
        [node("Sum", ["X", "s", "s"], ["a"], "sum0"),
         node("Mul", ["a", "s"], ["Y"], "mul0")],
        "splitparams_same_node", [fvi("X", [2, 3])], [fvi("Y", [2, 3])], inits=[s]))


@model("splitparams_main_and_if")
def _(r):
    """Main-graph initializer W is read by conv0 (main graph, first) and by
    then_conv inside the If then branch (outer-scope use).
    Expect: conv0 keeps W; then_conv reads a distinct copy in scope (in the
    branch or the main graph); no initializer used twice."""
    w = raw_tensor("W", rand(r, 4, 4, 3, 3))
    then_g = graph([node("Conv", ["c", "W"], ["then_out"], "then_conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                   "then_branch", [], [fvi("then_out", [1, 4, 6, 6])])
    else_g = graph([node("Relu", ["c"], ["else_out"], "else_relu")],
                   "else_branch", [], [fvi("else_out", [1, 4, 6, 6])])
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         if_node("if0", "cond", ["Y"], then_g, else_g)],
        "splitparams_main_and_if", [vi("cond", TP.BOOL, []), fvi("X", [1, 4, 6, 6])],
        [fvi("Y", [1, 4, 6, 6])], inits=[w]))


@model("splitparams_if_branches")
def _(r):
    """Main-graph initializer K is read only inside the If: by then_add and
    by else_mul (two subgraph uses).
    Expect: the two uses read distinct initializers equal to K, one of them
    still called K."""
    k = raw_tensor("K", rand(r, 2, 3))
    then_g = graph([node("Add", ["X", "K"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Mul", ["X", "K"], ["else_out"], "else_mul")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "splitparams_if_branches", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])], inits=[k]))


@model("splitparams_initializer_input")
def _(r):
    """Old IR style (ir 3, opset 9): initializer W_in is also a graph input
    (a user may override it), read by add0 and mul0.
    Expect: not split (a copy would ignore an overriding feed): both still
    read W_in, 1 initializer; a warning naming W_in."""
    w = raw_tensor("W_in", rand(r, 2, 3))
    return finish(graph(
        [node("Add", ["X", "W_in"], ["a"], "add0"),
         node("Mul", ["a", "W_in"], ["Y"], "mul0")],
        "splitparams_initializer_input", [fvi("X", [2, 3]), fvi("W_in", [2, 3])],
        [fvi("Y", [2, 3])], inits=[w]), opset=9, ir=3)


@model("splitparams_sparse", full_check=False)
def _(r):
    """Sparse initializers: S [2,3] read by add0 (X + S) and mul0 (a * S);
    U read by nothing.
    Expect: S split like a dense initializer, the copy sparse too (same
    values, indices and dims, under a new name): every use reads its own
    sparse initializer; S itself keeps its bytes.  Default: U removed by
    isolated."""
    return finish(graph(
        [node("Add", ["X", "S"], ["a"], "add0"), node("Mul", ["a", "S"], ["Y"], "mul0")],
        "splitparams_sparse", [fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        sparse=[sparse_tensor("S", sparse_dense(r, 2, 3)),
                sparse_tensor("U", sparse_dense(r, 4))]))


@model("splitparams_single_uses")
def _(r):
    """Every initializer (W, B, M) has exactly one use.
    Expect: nothing changes: 3 initializers with their names and values."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    m = raw_tensor("M", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Mul", ["c", "M"], ["Y"], "mul0")],
        "splitparams_single_uses", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, m]))


# ---------------------------------------------------------------------------
# fuse-bias: Conv/ConvTranspose/Gemm -> Add(per-channel param) folds the add
# ---------------------------------------------------------------------------

@model("fusebias_conv_nobias")
def _(r):
    """Conv without bias -> Add(A [1,4,1,1]) -> Relu.
    Expect: no Add; conv0 writes a, has bias = A; relu0 reads a."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["a"], "add0"),
         node("Relu", ["a"], ["Y"], "relu0")],
        "fusebias_conv_nobias", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, a]))


@model("fusebias_conv_bias")
def _(r):
    """Conv with bias B -> Add(A [4,1,1]) -> graph output Y.
    Expect: no Add; conv0 writes Y with bias B + A (summed, not replaced)."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv_bias", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, a]))


@model("fusebias_addend_first")
def _(r):
    """Add(A [1,4,1,1], conv_out): the parameter is the Add's first operand.
    Expect: fused as if commuted: no Add; conv0 writes Y, bias B + A."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["A", "c"], ["Y"], "add0")],
        "fusebias_addend_first", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, a]))


@model("fusebias_conv_scalar")
def _(r):
    """Conv with bias -> Add(A [1]) (one value for every channel).
    Expect: no Add; conv0 writes Y with bias B + A[0]."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv_scalar", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, a]))


@model("fusebias_conv1d")
def _(r):
    """Conv1d (W [4,3,3]) without bias -> Add(A [1,4,1]).
    Expect: no Add; conv0 writes Y with bias = A."""
    w = raw_tensor("W", rand(r, 4, 3, 3))
    a = raw_tensor("A", rand(r, 1, 4, 1))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv1d", [fvi("X", [1, 3, 10])], [fvi("Y", [1, 4, 8])],
        inits=[w, a]))


@model("fusebias_convtranspose")
def _(r):
    """ConvTranspose (group 2, W [4,3,3,3], B [6], stride 2) -> Add(A [1,6,1,1]).
    Expect: no Add; convt0 writes Y with bias B + A."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 6))
    a = raw_tensor("A", rand(r, 1, 6, 1, 1))
    return finish(graph(
        [node("ConvTranspose", ["X", "W", "B"], ["c"], "convt0", group=2, strides=[2, 2]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_convtranspose", [fvi("X", [1, 4, 3, 3])], [fvi("Y", [1, 6, 7, 7])],
        inits=[w, b, a]))


@model("fusebias_gemm")
def _(r):
    """Gemm (transB 1, alpha 0.5, beta 2, C [4]) -> Add(A [4]).
    Expect: no Add; gemm0 writes Y; its effective bias beta*C equals
    2*C + A and its effective weight alpha*B' is unchanged."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", rand(r, 4))
    a = raw_tensor("A", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1, alpha=0.5, beta=2.0),
         node("Add", ["g", "A"], ["Y"], "add0")],
        "fusebias_gemm", [fvi("X", [2, 5])], [fvi("Y", [2, 4])], inits=[w, c, a]))


@model("fusebias_gemm_noc")
def _(r):
    """Gemm (transB 0, no C) -> Add(A [1,4]) -> Relu.
    Expect: no Add; gemm0 writes a with effective bias beta*C = A."""
    w = raw_tensor("W", rand(r, 5, 4))
    a = raw_tensor("A", rand(r, 1, 4))
    return finish(graph(
        [node("Gemm", ["X", "W"], ["g"], "gemm0"),
         node("Add", ["g", "A"], ["a"], "add0"),
         node("Relu", ["a"], ["Y"], "relu0")],
        "fusebias_gemm_noc", [fvi("X", [2, 5])], [fvi("Y", [2, 4])], inits=[w, a]))


@model("fusebias_gemm_scalar")
def _(r):
    """Gemm (transB 1, alpha 1.5, beta 0.5, C [4]) -> Add(A scalar []).
    Expect: no Add; gemm0 writes Y; effective bias beta*C = 0.5*C + A."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", rand(r, 4))
    a = raw_tensor("A", np.array(r.uniform(-1, 1), np.float32))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1, alpha=1.5, beta=0.5),
         node("Add", ["g", "A"], ["Y"], "add0")],
        "fusebias_gemm_scalar", [fvi("X", [2, 5])], [fvi("Y", [2, 4])], inits=[w, c, a]))


@model("fusebias_gemm_c_value_info")
def _(r):
    """Gemm (transB 1, C [1,4] with value_info C [1,4]) -> Add(A [4]).
    Expect: no Add; gemm0's bias holds C + A as [4], still named C, and the
    value_info C [1,4] (now wrong: the checker refuses it) is gone."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", rand(r, 1, 4))
    a = raw_tensor("A", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1),
         node("Add", ["g", "A"], ["Y"], "add0")],
        "fusebias_gemm_c_value_info", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w, c, a], value_info=[fvi("C", [1, 4])]))


@model("fusebias_conv_vector")
def _(r):
    """Conv2d (out [1,4,6,4]) -> Add(A [4]): A broadcasts over the WIDTH
    (last axis), not over the channels.
    Expect: not fused: add0 kept, conv0 and its B unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv_vector", [fvi("X", [1, 3, 6, 4])], [fvi("Y", [1, 4, 6, 4])],
        inits=[w, b, a]))


@model("fusebias_spatial")
def _(r):
    """Conv -> Add(A [1,4,6,6]): the addend varies over space.
    Expect: not fused: add0 kept, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1, 4, 6, 6))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_spatial", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, a]))


@model("fusebias_rank_raising")
def _(r):
    """Conv2d (out [1,4,6,6]) -> Add(A [1,1,4,1,1]): per-channel values, but
    the Add's output has rank 5 ([1,1,4,6,6]).
    Expect: not fused (the Conv can't make a rank-5 value): add0 kept."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    a = raw_tensor("A", rand(r, 1, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_rank_raising", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 1, 4, 6, 6])],
        inits=[w, a]))


@model("fusebias_addend_input")
def _(r):
    """Conv -> Add(A) where A [1,4,1,1] is a graph input, not a parameter.
    Expect: not fused: add0 kept, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_addend_input", [fvi("X", [1, 3, 6, 6]), fvi("A", [1, 4, 1, 1])],
        [fvi("Y", [1, 4, 6, 6])], inits=[w, b]))


@model("fusebias_two_consumers")
def _(r):
    """Conv output c feeds Add(A [1,4,1,1]) -> Y and Relu -> Z.
    Expect: not fused (Z needs c without A): add0 kept, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0"),
         node("Relu", ["c"], ["Z"], "relu0")],
        "fusebias_two_consumers", [fvi("X", [1, 3, 6, 6])],
        [fvi("Y", [1, 4, 6, 6]), fvi("Z", [1, 4, 6, 6])], inits=[w, b, a]))


@model("fusebias_conv_output")
def _(r):
    """Conv output c is a graph output and also feeds Add(A [1,4,1,1]) -> Y.
    Expect: not fused: add0 kept, conv0 unchanged, c still made by conv0."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv_output", [fvi("X", [1, 3, 6, 6])],
        [fvi("c", [1, 4, 6, 6]), fvi("Y", [1, 4, 6, 6])], inits=[w, b, a]))


@model("fusebias_float16_overflow")
def _(r):
    """float16: X [1,1,4,4] -> Sub(50) -> Conv 1x1 (W [2,1,1,1] = 1000, 0.5;
    B = 50000, 0.25) -> Add(A [1,2,1,1] = 30000, 0.5) -> Y.  Channel 0 of
    the Conv is 1000*(x-50) + 50000, within +-1000, so Y stays near 30000;
    but the folded bias B+A = 80000 overflows float16 (max 65504) to inf.
    Expect: not fused (a warning naming add0): conv0 and add0 unchanged."""
    return finish(graph(
        [node("Sub", ["X", "fifty"], ["xs"], "sub0"),
         node("Conv", ["xs", "W", "B"], ["c"], "conv0", kernel_shape=[1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_float16_overflow", [f16vi("X", [1, 1, 4, 4])], [f16vi("Y", [1, 2, 4, 4])],
        inits=[raw_tensor("fifty", np.array(50, np.float16)),
               raw_tensor("W", np.array([1000, 0.5], np.float16).reshape(2, 1, 1, 1)),
               raw_tensor("B", np.array([50000, 0.25], np.float16)),
               raw_tensor("A", np.array([30000, 0.5], np.float16).reshape(1, 2, 1, 1))]))


# ---------------------------------------------------------------------------
# fuse-bn: Conv/ConvTranspose/Gemm -> BatchNormalization folds into the weights
# ---------------------------------------------------------------------------

@model("fusebn_conv_bias")
def _(r):
    """Conv (bias) -> BN (epsilon 0.1) -> Relu.
    Expect: no BN; conv0 writes b (BN's output), weight W*s and bias
    (B-mean)*s+beta with s = scale/sqrt(var+eps); relu0 reads b."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "b", "bn0", "bn0", epsilon=0.1),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_conv_bias", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b] + bn_inits(r, "bn0", 4)))


@model("fusebn_identity_params")
def _(r):
    """Conv -> BN whose mean and var come through Identity nodes of other
    initializers, as torch exports equal tensors (bn0_m = Identity(bn0_b),
    bn0_v = Identity(bn0_s)). Expect: BN folded all the same; no Identity."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    s = raw_tensor("bn0_s", r.uniform(0.5, 1.5, 4).astype(np.float32))
    b = raw_tensor("bn0_b", r.normal(0, 0.5, 4).astype(np.float32))
    return finish(graph(
        [node("Identity", ["bn0_b"], ["bn0_m"], "id_mean"),
         node("Identity", ["bn0_s"], ["bn0_v"], "id_var"),
         node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3]),
         node("BatchNormalization", ["c", "bn0_s", "bn0_b", "bn0_m", "bn0_v"], ["Y"], "bn0")],
        "fusebn_identity_params", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 4, 4])],
        inits=[w, s, b]))


@model("fusebn_conv_nobias")
def _(r):
    """Conv (no bias, stride 2) -> BN -> graph output Y.
    Expect: no BN; conv0 writes Y, now with a bias."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], strides=[2, 2]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_nobias", [fvi("X", [1, 3, 7, 7])], [fvi("Y", [1, 4, 3, 3])],
        inits=[w] + bn_inits(r, "bn0", 4)))


@model("fusebn_conv_grouped")
def _(r):
    """Grouped Conv (group 2, W [6,2,3,3]) -> BN.
    Expect: no BN; conv0 (group 2 kept) writes Y with folded weights."""
    w = raw_tensor("W", rand(r, 6, 2, 3, 3))
    b = raw_tensor("B", rand(r, 6))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], group=2,
              pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_grouped", [fvi("X", [1, 4, 5, 5])], [fvi("Y", [1, 6, 5, 5])],
        inits=[w, b] + bn_inits(r, "bn0", 6)))


@model("fusebn_conv_depthwise")
def _(r):
    """Depthwise Conv (group 4, W [4,1,3,3], bias) -> BN.
    Expect: no BN; conv0 (group 4 kept) writes Y with folded weights."""
    w = raw_tensor("W", rand(r, 4, 1, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], group=4,
              pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_depthwise", [fvi("X", [1, 4, 5, 5])], [fvi("Y", [1, 4, 5, 5])],
        inits=[w, b] + bn_inits(r, "bn0", 4)))


@model("fusebn_conv1d")
def _(r):
    """Conv1d (W [5,3,3], no bias) -> BN on a rank-3 value.
    Expect: no BN; conv0 writes Y with folded weights and a bias."""
    w = raw_tensor("W", rand(r, 5, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv1d", [fvi("X", [1, 3, 10])], [fvi("Y", [1, 5, 8])],
        inits=[w] + bn_inits(r, "bn0", 5)))


@model("fusebn_conv3d")
def _(r):
    """Conv3d (W [3,2,3,3,3], bias) -> BN on a rank-5 value.
    Expect: no BN; conv0 writes Y with folded weights."""
    w = raw_tensor("W", rand(r, 3, 2, 3, 3, 3))
    b = raw_tensor("B", rand(r, 3))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3, 3],
              pads=[1, 1, 1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv3d", [fvi("X", [1, 2, 3, 4, 4])], [fvi("Y", [1, 3, 3, 4, 4])],
        inits=[w, b] + bn_inits(r, "bn0", 3)))


@model("fusebn_convtranspose")
def _(r):
    """ConvTranspose (group 2, W [4,3,3,3] = [Cin, Cout/group, k, k], B [6],
    stride 2) -> BN over its 6 output channels.
    Expect: no BN; convt0 writes Y; W[i, j] scaled by s[g*3+j] (g = group
    of input channel i), bias folded."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 6))
    return finish(graph(
        [node("ConvTranspose", ["X", "W", "B"], ["c"], "convt0", group=2, strides=[2, 2]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_convtranspose", [fvi("X", [1, 4, 3, 3])], [fvi("Y", [1, 6, 7, 7])],
        inits=[w, b] + bn_inits(r, "bn0", 6)))


@model("fusebn_convtranspose_nobias")
def _(r):
    """ConvTranspose (group 1, W [3,5,2,2], no bias) -> BN -> Relu.
    Expect: no BN; convt0 writes b with folded weights and a bias."""
    w = raw_tensor("W", rand(r, 3, 5, 2, 2))
    return finish(graph(
        [node("ConvTranspose", ["X", "W"], ["c"], "convt0"),
         bn("c", "b", "bn0", "bn0"),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_convtranspose_nobias", [fvi("X", [1, 3, 4, 4])], [fvi("Y", [1, 5, 5, 5])],
        inits=[w] + bn_inits(r, "bn0", 5)))


@model("fusebn_gemm_transb1")
def _(r):
    """Gemm (transB 1, W [4,5], C [4], alpha 0.5, beta 2) -> BN on [2,4].
    Expect: no BN; gemm0 writes Y; effective weight alpha*B' scaled per
    output column, effective bias beta*C folded (alpha/beta honoured)."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1, alpha=0.5, beta=2.0),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_transb1", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4)))


@model("fusebn_gemm_transb0")
def _(r):
    """Gemm (transB 0, W [5,4], no C, alpha 1.5) -> BN.
    Expect: no BN; gemm0 writes Y with folded weight and a bias."""
    w = raw_tensor("W", rand(r, 5, 4))
    return finish(graph(
        [node("Gemm", ["X", "W"], ["g"], "gemm0", alpha=1.5),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_transb0", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w] + bn_inits(r, "bn0", 4)))


@model("fusebn_gemm_c2d")
def _(r):
    """Gemm (transA 1, transB 0, W [5,4], C [1,4], beta 0.25) -> BN -> Relu.
    Expect: no BN; gemm0 writes b with folded weight and bias."""
    w = raw_tensor("W", rand(r, 5, 4))
    c = raw_tensor("C", rand(r, 1, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transA=1, beta=0.25),
         bn("g", "b", "bn0", "bn0"),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_gemm_c2d", [fvi("X", [5, 2])], [fvi("Y", [2, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4)))


@model("fusebn_gemm_c_value_info")
def _(r):
    """Gemm (C [1,4] with value_info C [1,4]) -> BN.
    Expect: no BN; gemm0's bias is the folded [4], and the value_info C
    [1,4] (now wrong: the checker refuses it) is gone."""
    w = raw_tensor("W", rand(r, 5, 4))
    c = raw_tensor("C", rand(r, 1, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0"),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_c_value_info", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4), value_info=[fvi("C", [1, 4])]))


@model("fusebn_conv_grouped_k1")
def _(r):
    """Grouped Conv1d with a 1-element kernel (group 5, W [15,1,1], bias) ->
    BN: each output channel owns exactly one weight element.
    Expect: no BN; conv0 writes Y; W[c] scaled by s[c] (its own channel's
    factor, not channel 0's), bias folded."""
    w = raw_tensor("W", rand(r, 15, 1, 1))
    b = raw_tensor("B", rand(r, 15))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[1], group=5),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_grouped_k1", [fvi("X", [1, 5, 4])], [fvi("Y", [1, 15, 4])],
        inits=[w, b] + bn_inits(r, "bn0", 15)))


@model("fusebn_convtranspose_k1")
def _(r):
    """ConvTranspose1d with a 1-element kernel (group 3, W [6,2,1] = [Cin,
    Cout/group, 1], no bias) -> BN over its 6 output channels.
    Expect: no BN; convt0 writes Y; W[i, j] scaled by s[g*2+j] (g = group
    of input channel i, not always group 0), bias added."""
    w = raw_tensor("W", rand(r, 6, 2, 1))
    return finish(graph(
        [node("ConvTranspose", ["X", "W"], ["c"], "convt0", group=3),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_convtranspose_k1", [fvi("X", [1, 6, 4])], [fvi("Y", [1, 6, 4])],
        inits=[w] + bn_inits(r, "bn0", 6)))


@model("fusebn_gemm_transb1_k1")
def _(r):
    """Gemm (transB 1, K 1: W [4,1], C [4]) -> BN on [3,4]: one weight
    element per output row.
    Expect: no BN; gemm0 writes Y; W[n] scaled by s[n], bias folded."""
    w = raw_tensor("W", rand(r, 4, 1))
    c = raw_tensor("C", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_transb1_k1", [fvi("X", [3, 1])], [fvi("Y", [3, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4)))


@model("fusebn_float16")
def _(r):
    """float16 throughout: Conv (W, B float16) -> BN (float16 parameters).
    Expect: no BN; conv0 writes Y; its weight and bias stay float16 and hold
    the fold (computed in double, rounded to float16)."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3).astype(np.float16))
    b = raw_tensor("B", rand(r, 4).astype(np.float16))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_float16", [f16vi("X", [1, 3, 5, 5])], [f16vi("Y", [1, 4, 5, 5])],
        inits=[w, b] + bn_inits(r, "bn0", 4, np.float16)))


@model("fusebn_float16_overflow")
def _(r):
    """float16: X [1,2,4,4] -> Mul(0.001) -> Conv 1x1 (W [2,2,1,1] of
    magnitude ~100) -> BN (scale 1000, var 1: factor ~1000) -> Y.  The Conv
    output stays below 1 and Y near 200, but the folded weight 100 * 1000
    overflows float16 (max 65504) to inf.
    Expect with fuse-bn: not fused (a warning naming bn0): conv0 and bn0
    unchanged.  Default: bn-to-conv makes bn0 a depthwise 1x1 Conv (its
    factors fit float16)."""
    w = (r.uniform(90, 110, (2, 2, 1, 1)) * r.choice([-1, 1], (2, 2, 1, 1))).astype(np.float16)
    stats = [raw_tensor("bn0_scale", np.array([1000, 800], np.float16)),
             raw_tensor("bn0_bias", np.array([0.5, -0.5], np.float16)),
             raw_tensor("bn0_mean", np.array([0.01, -0.02], np.float16)),
             raw_tensor("bn0_var", np.array([1, 1], np.float16))]
    return finish(graph(
        [node("Mul", ["X", "milli"], ["xs"], "mul0"),
         node("Conv", ["xs", "W"], ["c"], "conv0", kernel_shape=[1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_float16_overflow", [f16vi("X", [1, 2, 4, 4])], [f16vi("Y", [1, 2, 4, 4])],
        inits=[raw_tensor("milli", np.array(0.001, np.float16)), raw_tensor("W", w)] + stats))


def float32_big_weight_gemm(r, name, big_column, scales, rows=3, big_row=1):
    """float32: X [2,rows] -> Mul(0.001) -> Gemm (transB 0, W [rows,C] in
    [-1,1] except W[big_row, big_column] = 2e37) -> BN (scale `scales`, var 1,
    eps 0: the factor of column c is scales[c]) -> Y.  The input scaling
    keeps every value of the unfused model finite."""
    c = len(scales)
    w = r.uniform(-1, 1, (rows, c)).astype(np.float32)
    w[big_row, big_column] = 2e37
    stats = [raw_tensor("bn0_scale", np.array(scales, np.float32)),
             raw_tensor("bn0_bias", r.normal(0.0, 0.5, c).astype(np.float32)),
             raw_tensor("bn0_mean", r.normal(0.0, 0.5, c).astype(np.float32)),
             raw_tensor("bn0_var", np.ones(c, np.float32))]
    return finish(graph(
        [node("Mul", ["X", "milli"], ["xs"], "mul0"),
         node("Gemm", ["xs", "W"], ["g"], "gemm0"),
         bn("g", "Y", "bn0", "bn0", epsilon=0.0)],
        name, [fvi("X", [2, rows])], [fvi("Y", [2, c])],
        inits=[raw_tensor("milli", np.array(0.001, np.float32)), raw_tensor("W", w)] + stats))


@model("fusebn_float32_overflow_gemm")
def _(r):
    """float32 Gemm weight scaled by column (see float32_big_weight_gemm):
    column 2 holds 2e37 and its factor is 100, so the folded weight 2e39
    would overflow float32 (max 3.4e38) to inf.
    Expect with fuse-bn: not fused (a warning naming bn0): gemm0 and bn0
    unchanged."""
    return float32_big_weight_gemm(r, "fusebn_float32_overflow_gemm", 2, [1, 1, 100, 1])


@model("fusebn_float32_large_gemm")
def _(r):
    """The same weight, but the large factor (100) is column 1's and column
    2's (holding 2e37) is 5: every folded element is finite (at most 1e38).
    A check that mixed up rows and columns (W's row 1 holds the 2e37) would
    refuse it.  Expect: no BN; gemm0 writes Y with the folded weight."""
    return float32_big_weight_gemm(r, "fusebn_float32_large_gemm", 2, [1, 100, 5, 1])


@model("fusebn_float32_overflow_gemm_block2")
def _(r):
    """As fusebn_float32_overflow_gemm with W [900,300] (1.08 MB, more than
    the 1 MiB ppqfmt reads at a time) and the 2e37 at row 890, column 7, in
    the second block read; column 7's factor is 100.
    Expect with fuse-bn: not fused (a warning naming bn0)."""
    scales = [1.0] * 300
    scales[7] = 100.0
    return float32_big_weight_gemm(r, "fusebn_float32_overflow_gemm_block2", 7, scales,
                                   rows=900, big_row=890)


@model("fusebn_float32_overflow_conv")
def _(r):
    """float32: X [1,3,4,4] -> Mul(0.001) -> Conv 1x1 (W [2,3,1,1] in [-1,1]
    except W[1,2] = 2e37) -> BN (factor 1 for channel 0, 100 for channel 1)
    -> Y.  Channel 1's folded weight 2e39 would overflow float32.
    Expect with fuse-bn: not fused (a warning naming bn0): conv0 and bn0
    unchanged."""
    w = r.uniform(-1, 1, (2, 3, 1, 1)).astype(np.float32)
    w[1, 2] = 2e37
    stats = [raw_tensor("bn0_scale", np.array([1, 100], np.float32)),
             raw_tensor("bn0_bias", np.array([0.5, -0.5], np.float32)),
             raw_tensor("bn0_mean", np.array([0.01, -0.02], np.float32)),
             raw_tensor("bn0_var", np.ones(2, np.float32))]
    return finish(graph(
        [node("Mul", ["X", "milli"], ["xs"], "mul0"),
         node("Conv", ["xs", "W"], ["c"], "conv0", kernel_shape=[1, 1]),
         bn("c", "Y", "bn0", "bn0", epsilon=0.0)],
        "fusebn_float32_overflow_conv", [fvi("X", [1, 3, 4, 4])], [fvi("Y", [1, 2, 4, 4])],
        inits=[raw_tensor("milli", np.array(0.001, np.float32)), raw_tensor("W", w)] + stats))


@model("fusebn_sparse_weight", full_check=False)
def _(r):
    """Conv whose weight Wsp is a sparse_initializer (dense bias B) -> BN -> Y.
    Expect with fuse-bn: not folded (a warning naming conv0: the fold needs
    Wsp's values), conv0 and bn0 unchanged, Wsp still a sparse_initializer
    with the same bytes.  Default: bn-to-conv makes bn0 a depthwise 1x1 Conv
    writing Y; Wsp unchanged."""
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "Wsp", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_sparse_weight", [fvi("X", [1, 3, 5, 5])], [fvi("Y", [1, 4, 5, 5])],
        inits=[b] + bn_inits(r, "bn0", 4), sparse=[sparse_tensor("Wsp", sparse_dense(r, 4, 3, 3, 3))]))


@model("fusebn_in_if")
def _(r):
    """Inside the If then branch: then_conv (branch initializers Wt, Bt) ->
    then_bn (branch BN parameters) -> then_out.  else: else_conv (We).
    Expect: then_bn removed; then_conv writes then_out with folded weights;
    else branch untouched."""
    wt = raw_tensor("Wt", rand(r, 4, 3, 3, 3))
    bt = raw_tensor("Bt", rand(r, 4))
    we = raw_tensor("We", rand(r, 4, 3, 3, 3))
    then_g = graph([node("Conv", ["X", "Wt", "Bt"], ["tc"], "then_conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                    bn("tc", "then_out", "then_bn", "tbn")],
                   "then_branch", [], [fvi("then_out", [1, 4, 5, 5])],
                   inits=[wt, bt] + bn_inits(r, "tbn", 4))
    else_g = graph([node("Conv", ["X", "We"], ["else_out"], "else_conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                   "else_branch", [], [fvi("else_out", [1, 4, 5, 5])], inits=[we])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "fusebn_in_if", [vi("cond", TP.BOOL, []), fvi("X", [1, 3, 5, 5])],
        [fvi("Y", [1, 4, 5, 5])]))


@model("fusebn_two_consumers")
def _(r):
    """Conv output c feeds BN -> Y and Relu -> Z (no value_info anywhere).
    Expect with fuse-bn: not fused (Z needs c): bn0 kept, conv0 unchanged.
    With the default passes: bn-to-conv turns bn0 into a depthwise 1x1 Conv
    (rank 4, known from conv0's weight) writing Y from c."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0"),
         node("Relu", ["c"], ["Z"], "relu0")],
        "fusebn_two_consumers", [fvi("X", [1, 3, 5, 5])],
        [fvi("Y", [1, 4, 5, 5]), fvi("Z", [1, 4, 5, 5])],
        inits=[w, b] + bn_inits(r, "bn0", 4)))


@model("fusebn_conv_output")
def _(r):
    """Conv output c is a graph output and feeds BN -> Y.
    Expect with fuse-bn: not fused: bn0 kept, conv0 unchanged.  Default:
    bn-to-conv makes bn0 a depthwise 1x1 Conv writing Y."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_output", [fvi("X", [1, 3, 5, 5])],
        [fvi("c", [1, 4, 5, 5]), fvi("Y", [1, 4, 5, 5])],
        inits=[w] + bn_inits(r, "bn0", 4)))


@model("fusebn_weight_input")
def _(r):
    """Conv whose weight W is a graph input (not a parameter) -> BN.
    Expect with fuse-bn: not fused: bn0 kept, conv0 unchanged.  Default:
    bn-to-conv makes bn0 a depthwise 1x1 Conv writing Y."""
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_weight_input", [fvi("X", [1, 3, 5, 5]), fvi("W", [4, 3, 3, 3])],
        [fvi("Y", [1, 4, 5, 5])], inits=bn_inits(r, "bn0", 4)))


@model("fusebn_training_mode")
def _(r):
    """Opset 15: Conv -> BN with training_mode=1 and outputs Y, running_mean,
    running_var (all graph outputs).
    Expect: neither fused nor turned into a Conv (training BN uses the batch
    statistics): bn0 kept with its 3 outputs, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", None, "bn0", "bn0", outputs=["Y", "running_mean", "running_var"],
            training_mode=1)],
        "fusebn_training_mode", [fvi("X", [2, 3, 5, 5])],
        [fvi("Y", [2, 4, 5, 5]), fvi("running_mean", [4]), fvi("running_var", [4])],
        inits=[w, b] + bn_inits(r, "bn0", 4)), opset=15)


@model("fusebn_extra_outputs")
def _(r):
    """Opset 13 (BatchNormalization-9): Conv -> BN with all 5 outputs (Y,
    mean, var, saved_mean, saved_var: the training form); Y -> Relu.
    Expect: not fused and not turned into a Conv: bn0 kept with its 5
    outputs, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", None, "bn0", "bn0", outputs=["b", "bn_mean", "bn_var", "bn_saved_mean",
                                               "bn_saved_var"]),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_extra_outputs", [fvi("X", [2, 3, 5, 5])], [fvi("Y", [2, 4, 5, 5])],
        inits=[w] + bn_inits(r, "bn0", 4)))


@model("fusebn_shared_weight")
def _(r):
    """conv0 and conv1 share W, each followed by its own BN:
    X -> conv0 -> bn0 -> relu0 -> conv1 -> bn1 -> Y.
    Expect with fuse-bn alone: the same function (folding bn0 into the
    shared W must not change conv1): the numbers decide.  Default (after
    split-params): no BN; conv0 holds W folded with bn0, conv1 holds W
    folded with bn1; no initializer used twice."""
    w = raw_tensor("W", rand(r, 4, 4, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c0"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c0", "b0", "bn0", "bn0"),
         node("Relu", ["b0"], ["r"], "relu0"),
         node("Conv", ["r", "W"], ["c1"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c1", "Y", "bn1", "bn1")],
        "fusebn_shared_weight", [fvi("X", [1, 4, 5, 5])], [fvi("Y", [1, 4, 5, 5])],
        inits=[w] + bn_inits(r, "bn0", 4) + bn_inits(r, "bn1", 4)))


@model("fusebn_loop_ir3")
def _(r):
    """IR 3 (every initializer is also a graph input, so a subgraph can hold
    none): a Loop body Conv -> BN -> Conv -> Add(per-channel k), all their
    parameters from the outer scope. Folding would need a new initializer in
    the body, which IR 3 cannot have (found by the fuzzer: it was an internal
    error). Expect: every body node kept, fuse-bn warns about body_bn,
    outputs unchanged, the output passes the checker."""
    inits = [raw_tensor("W", rand(r, 3, 3, 3, 3)), raw_tensor("W2", rand(r, 3, 3, 1, 1)),
             raw_tensor("bs", r.uniform(0.5, 1.5, 3).astype(np.float32)),
             raw_tensor("bb", rand(r, 3)), raw_tensor("bm", rand(r, 3)),
             raw_tensor("bv", r.uniform(0.5, 2, 3).astype(np.float32)),
             raw_tensor("k", rand(r, 1, 3, 1, 1)),
             raw_tensor("M", np.array(2, np.int64)), raw_tensor("cond_init", np.array(True))]
    body = graph([node("Conv", ["v_in", "W"], ["c"], "body_conv", kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1]),
                  node("BatchNormalization", ["c", "bs", "bb", "bm", "bv"], ["b"], "body_bn"),
                  node("Conv", ["b", "W2"], ["c2"], "body_conv2", kernel_shape=[1, 1]),
                  node("Add", ["c2", "k"], ["v_out"], "body_add"),
                  node("Identity", ["cond_in"], ["cond_out"], "body_id_cond")],
                 "loop_body",
                 [vi("iter", TP.INT64, []), vi("cond_in", TP.BOOL, []), fvi("v_in", [1, 3, 5, 5])],
                 [vi("cond_out", TP.BOOL, []), fvi("v_out", [1, 3, 5, 5])])
    as_inputs = [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    return finish(graph(
        [helper.make_node("Loop", ["M", "cond_init", "X"], ["Y"], name="loop0", body=body)],
        "fusebn_loop_ir3", [fvi("X", [1, 3, 5, 5])] + as_inputs, [fvi("Y", [1, 3, 5, 5])],
        inits=inits), opset=9, ir=3)


# ---------------------------------------------------------------------------
# bn-to-conv: an isolated BN becomes a depthwise 1x...x1 Conv (group = C)
# ---------------------------------------------------------------------------

@model("bntoconv_rank3")
def _(r):
    """BN on graph input X [2,3,7] (rank 3).
    Expect: no BN; Y made by a Conv reading X, group 3, kernel_shape [1],
    weight [3,1,1] = s, bias = beta - mean*s."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_rank3", [fvi("X", [2, 3, 7])], [fvi("Y", [2, 3, 7])],
        inits=bn_inits(r, "bn0", 3)))


@model("bntoconv_rank4")
def _(r):
    """BN (epsilon 0.1) on graph input X [1,4,5,5] -> Relu.
    Expect: no BN; b made by a Conv reading X, group 4, kernel_shape [1,1];
    relu0 reads b."""
    return finish(graph(
        [bn("X", "b", "bn0", "bn0", epsilon=0.1),
         node("Relu", ["b"], ["Y"], "relu0")],
        "bntoconv_rank4", [fvi("X", [1, 4, 5, 5])], [fvi("Y", [1, 4, 5, 5])],
        inits=bn_inits(r, "bn0", 4)))


@model("bntoconv_rank5")
def _(r):
    """BN on graph input X [1,3,2,4,4] (rank 5).
    Expect: no BN; Y made by a Conv, group 3, kernel_shape [1,1,1]."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_rank5", [fvi("X", [1, 3, 2, 4, 4])], [fvi("Y", [1, 3, 2, 4, 4])],
        inits=bn_inits(r, "bn0", 3)))


@model("bntoconv_symbolic")
def _(r):
    """BN on graph input X [N,3,H,W] (symbolic dims, rank 4 known).
    Expect: no BN; Y made by a Conv, group 3, kernel_shape [1,1]."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_symbolic", [fvi("X", ["N", 3, "H", "W"])], [fvi("Y", ["N", 3, "H", "W"])],
        inits=bn_inits(r, "bn0", 3)))


@model("bntoconv_value_info")
def _(r):
    """X [1,3,4,4] -> Reshape(shape [1,3,16]) -> t -> BN -> Y; the rank of t
    is declared only by value_info t [1,3,16].
    Expect: no BN; Y made by a Conv reading t, group 3, kernel_shape [1]."""
    shp = raw_tensor("shape", np.array([1, 3, 16], np.int64))
    return finish(graph(
        [node("Reshape", ["X", "shape"], ["t"], "reshape0"),
         bn("t", "Y", "bn0", "bn0")],
        "bntoconv_value_info", [fvi("X", [1, 3, 4, 4])], [fvi("Y", [1, 3, 16])],
        inits=[shp] + bn_inits(r, "bn0", 3), value_info=[fvi("t", [1, 3, 16])]))


@model("bntoconv_unknown_rank")
def _(r):
    """BN on the output u of an If whose branches give rank 3 (then: Reshape
    to [1,3,16]) or rank 4 (else: Relu of X [1,3,4,4]): u's rank can't be
    known; BN -> bn_out -> Flatten -> Y [1,48].
    Expect: bn0 kept (a warning naming it); flatten0 reads bn_out."""
    shp = raw_tensor("shape", np.array([1, 3, 16], np.int64))
    then_g = graph([node("Reshape", ["X", "shape"], ["then_out"], "then_reshape")],
                   "then_branch", [], [fvi("then_out", None)])
    else_g = graph([node("Relu", ["X"], ["else_out"], "else_relu")],
                   "else_branch", [], [fvi("else_out", None)])
    return finish(graph(
        [if_node("if0", "cond", ["u"], then_g, else_g),
         bn("u", "bn_out", "bn0", "bn0"),
         node("Flatten", ["bn_out"], ["Y"], "flatten0", axis=1)],
        "bntoconv_unknown_rank", [vi("cond", TP.BOOL, []), fvi("X", [1, 3, 4, 4])],
        [fvi("Y", [1, 48])], inits=[shp] + bn_inits(r, "bn0", 3)))


@model("bntoconv_rank2")
def _(r):
    """BN on graph input X [3,4] (rank 2: no Conv form).
    Expect: bn0 kept (a warning naming it)."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_rank2", [fvi("X", [3, 4])], [fvi("Y", [3, 4])],
        inits=bn_inits(r, "bn0", 4)))


@model("bntoconv_float16")
def _(r):
    """float16 BN on graph input X [1,3,4,4].
    Expect: no BN; Y made by a depthwise 1x1 Conv whose weight and bias
    are float16."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_float16", [f16vi("X", [1, 3, 4, 4])], [f16vi("Y", [1, 3, 4, 4])],
        inits=bn_inits(r, "bn0", 3, np.float16)))


@model("bntoconv_float16_data")
def _(r):
    """Opset 15: float16 X [1,3,4,4] -> Relu -> r (no value_info: its type
    comes from X through the Relu) -> BN whose scale/bias/mean/var are
    float32 (BatchNormalization-15 allows it) -> Y float16.
    Expect: no BN; Y made by a depthwise 1x1 Conv whose weight and bias are
    float16, the data's type (float32 ones would not type-check)."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"), bn("r", "Y", "bn0", "bn0")],
        "bntoconv_float16_data", [f16vi("X", [1, 3, 4, 4])], [f16vi("Y", [1, 3, 4, 4])],
        inits=bn_inits(r, "bn0", 3)), opset=15)


@model("bntoconv_unknown_dtype")
def _(r):
    """Opset 15: float X [1,3,4,4] -> com.example:Opaque (an op of a domain
    shape inference has no rule for, no value_info) -> u -> BN with float16
    statistics (BatchNormalization-15 allows them to differ from the data) -> Y
    float. The data's type is not known to ppqfmt.
    Expect: bn0 kept, with a warning naming it and saying that the element
    type is unknown: a Conv's weight must have the data's type, and guessing
    the statistics' float16 would be invalid."""
    return finish_with(graph(
        [node("Opaque", ["X"], ["u"], "opaque0", domain="com.example"), bn("u", "Y", "bn0", "bn0")],
        "bntoconv_unknown_dtype", [fvi("X", [1, 3, 4, 4])], [fvi("Y", [1, 3, 4, 4])],
        inits=bn_inits(r, "bn0", 3, np.float16)), [("", 15), ("com.example", 1)])


@model("bntoconv_float16_overflow")
def _(r):
    """Opset 15: float16 X [1,3,4,4] -> Mul(0.0001) -> xs (value_info: float16
    [1,3,4,4]) -> BN with float32 statistics whose factor scale/sqrt(var+eps) is 1e5 for channel 0: Y stays
    within +-10, but 1e5 as a float16 Conv weight is inf.
    Expect: bn0 kept (a warning naming it)."""
    stats = [raw_tensor("bn0_scale", np.array([1e5, 2, 3], np.float32)),
             raw_tensor("bn0_bias", np.array([0.5, -0.5, 0.25], np.float32)),
             raw_tensor("bn0_mean", np.array([0, 0.1, -0.1], np.float32)),
             raw_tensor("bn0_var", np.array([1, 1, 1], np.float32))]
    return finish(graph(
        [node("Mul", ["X", "tiny"], ["xs"], "mul0"), bn("xs", "Y", "bn0", "bn0")],
        "bntoconv_float16_overflow", [f16vi("X", [1, 3, 4, 4])], [f16vi("Y", [1, 3, 4, 4])],
        inits=[raw_tensor("tiny", np.array(0.0001, np.float16))] + stats,
        value_info=[f16vi("xs", [1, 3, 4, 4])]), opset=15)


@model("bntoconv_in_if")
def _(r):
    """then branch: then_bn (branch parameters) on outer X [1,3,4,4] ->
    then_out.  else: Neg.
    Expect: no BN; then_out made by a depthwise 1x1 Conv (group 3) reading X
    inside the then branch."""
    then_g = graph([bn("X", "then_out", "then_bn", "tbn")],
                   "then_branch", [], [fvi("then_out", [1, 3, 4, 4])],
                   inits=bn_inits(r, "tbn", 3))
    else_g = graph([node("Neg", ["X"], ["else_out"], "else_neg")],
                   "else_branch", [], [fvi("else_out", [1, 3, 4, 4])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "bntoconv_in_if", [vi("cond", TP.BOOL, []), fvi("X", [1, 3, 4, 4])],
        [fvi("Y", [1, 3, 4, 4])]))


# ---------------------------------------------------------------------------
# de-inplace: a name written by more than one node is versioned.  These models
# are NOT valid ONNX (not SSA): @model(..., ssa=False) skips the checker for
# them (main() checks an SSA-renamed copy instead).
# ---------------------------------------------------------------------------

@model("deinplace_chain", ssa=False)
def _(r):
    """relu0: x = Relu(X); sig0: x = Sigmoid(x); neg0: Y = Neg(x).
    Expect: SSA; relu0 writes a fresh name read by sig0; sig0 (the last
    writer) writes x; neg0 reads x.  Y = -sigmoid(relu(X))."""
    return finish(graph(
        [node("Relu", ["X"], ["x"], "relu0"),
         node("Sigmoid", ["x"], ["x"], "sig0"),
         node("Neg", ["x"], ["Y"], "neg0")],
        "deinplace_chain", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("deinplace_output", ssa=False)
def _(r):
    """relu0: Y = Relu(X); tanh0: Y = Tanh(Y); Y is the graph output.
    Expect: tanh0 still writes Y (the output keeps its name), reading
    relu0's renamed output.  Y = tanh(relu(X))."""
    return finish(graph(
        [node("Relu", ["X"], ["Y"], "relu0"),
         node("Tanh", ["Y"], ["Y"], "tanh0")],
        "deinplace_output", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("deinplace_readers", ssa=False)
def _(r):
    """relu0: x = Relu(X); neg0: a = Neg(x); sig0: x = Sigmoid(x);
    add0: Y = Add(a, x).
    Expect: neg0 and sig0 read relu0's (renamed) output; sig0 writes x;
    add0 reads a and x.  Y = -relu(X) + sigmoid(relu(X))."""
    return finish(graph(
        [node("Relu", ["X"], ["x"], "relu0"),
         node("Neg", ["x"], ["a"], "neg0"),
         node("Sigmoid", ["x"], ["x"], "sig0"),
         node("Add", ["a", "x"], ["Y"], "add0")],
        "deinplace_readers", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("deinplace_three_writes", ssa=False)
def _(r):
    """relu0: x = Relu(X); neg0: x = Neg(x); mul0: m = Mul(x, x);
    sig0: x = Sigmoid(x); add0: Y = Add(m, x).
    Expect: three distinct names; neg0 reads relu0's, mul0 reads neg0's
    (twice), sig0 reads neg0's and writes x; add0 reads m and x.
    Y = relu(X)^2 + sigmoid(-relu(X))."""
    return finish(graph(
        [node("Relu", ["X"], ["x"], "relu0"),
         node("Neg", ["x"], ["x"], "neg0"),
         node("Mul", ["x", "x"], ["m"], "mul0"),
         node("Sigmoid", ["x"], ["x"], "sig0"),
         node("Add", ["m", "x"], ["Y"], "add0")],
        "deinplace_three_writes", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("deinplace_multi_output", ssa=False)
def _(r):
    """split0: a, b = Split(X, axis 1); add0: b = Add(a, b); relu0: Y = Relu(b).
    Expect: split0's second output renamed, read by add0; add0 writes b;
    relu0 reads b.  Y = relu(X[:, :2] + X[:, 2:])."""
    return finish(graph(
        [node("Split", ["X"], ["a", "b"], "split0", axis=1),
         node("Add", ["a", "b"], ["b"], "add0"),
         node("Relu", ["b"], ["Y"], "relu0")],
        "deinplace_multi_output", [fvi("X", [2, 4])], [fvi("Y", [2, 2])]))


@model("deinplace_in_if", ssa=False)
def _(r):
    """then branch: t = Relu(X); t = Neg(t); then_out = Sigmoid(t).
    else branch: else_out = Neg(X).
    Expect: the then branch is SSA; then_neg reads then_relu's renamed
    output and writes t; then_sig reads t.  Y = sigmoid(-relu(X)) if cond
    else -X."""
    then_g = graph([node("Relu", ["X"], ["t"], "then_relu"),
                    node("Neg", ["t"], ["t"], "then_neg"),
                    node("Sigmoid", ["t"], ["then_out"], "then_sig")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Neg", ["X"], ["else_out"], "else_neg")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "deinplace_in_if", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])]))


@model("deinplace_outer_scope", ssa=False)
def _(r):
    """relu0: t = Relu(X); if0 reads t from the outer scope (then: then_neg
    = Neg(t); else: else_sig = Sigmoid(t)); loop0 (2 iterations) body:
    v_out = Add(v_in, t); then neg0: t = Neg(t) writes t again;
    add0: a = Add(u, L); add1: Y = Add(a, t).
    The If and the Loop read the t visible at their node: relu0's.
    Expect: SSA; relu0's output renamed, and then_neg, else_sig, body_add
    and neg0 all read the new name; neg0 keeps t, read by add1.
    Y = (-relu(X) if cond else sigmoid(relu(X))) + (X + 2 relu(X)) - relu(X)."""
    then_g = graph([node("Neg", ["t"], ["then_out"], "then_neg")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Sigmoid", ["t"], ["else_out"], "else_sig")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    body = graph([node("Add", ["v_in", "t"], ["v_out"], "body_add"),
                  node("Identity", ["cond_in"], ["cond_out"], "body_id_cond")],
                 "loop_body",
                 [vi("iter", TP.INT64, []), vi("cond_in", TP.BOOL, []), fvi("v_in", [2, 3])],
                 [vi("cond_out", TP.BOOL, []), fvi("v_out", [2, 3])])
    return finish(graph(
        [node("Relu", ["X"], ["t"], "relu0"),
         if_node("if0", "cond", ["u"], then_g, else_g),
         helper.make_node("Loop", ["M", "keep_going", "X"], ["L"], name="loop0", body=body),
         node("Neg", ["t"], ["t"], "neg0"),
         node("Add", ["u", "L"], ["a"], "add0"),
         node("Add", ["a", "t"], ["Y"], "add1")],
        "deinplace_outer_scope", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        inits=[raw_tensor("M", np.array(2, np.int64)),
               raw_tensor("keep_going", np.array(True))]))


@model("deinplace_outer_output", ssa=False)
def _(r):
    """relu0: t = Relu(X); if0's else branch returns t itself (an outer-scope
    value as a subgraph output; then: then_neg = Neg(t)); then neg0:
    t = Neg(t); add0: Y = Add(u, t).
    Expect: SSA; relu0's output renamed, and the else branch's output and
    then_neg follow it; neg0 reads it and keeps t.  (onnxruntime refuses a
    subgraph that returns an outer value directly, so only structure and
    the checker are tested.)"""
    then_g = graph([node("Neg", ["t"], ["then_out"], "then_neg")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([], "else_branch", [], [fvi("t", [2, 3])])
    return finish(graph(
        [node("Relu", ["X"], ["t"], "relu0"),
         if_node("if0", "cond", ["u"], then_g, else_g),
         node("Neg", ["t"], ["t"], "neg0"),
         node("Add", ["u", "t"], ["Y"], "add0")],
        "deinplace_outer_output", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])],
        [fvi("Y", [2, 3])]))


# ---------------------------------------------------------------------------
# fold: nodes whose inputs are all constants become initializers
# ---------------------------------------------------------------------------

def i64(name, values):
    return raw_tensor(name, np.array(values, np.int64))


@model("fold_shape_chain")
def _(r):
    """W [2,3,4] -> Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> the
    shape of Reshape(X); also Size(W) -> Cast(float) -> Mul(Y).
    Expect: shape0, gather0, unsq0, concat0, size0, cast0 gone; reshape0
    reads an initializer [2, -1]; mul0 reads 24.0."""
    w = raw_tensor("W", rand(r, 2, 3, 4))
    return finish(graph(
        [node("Shape", ["W"], ["s"], "shape0"),
         node("Gather", ["s", "zero"], ["s0"], "gather0", axis=0),
         node("Unsqueeze", ["s0", "axes0"], ["s0u"], "unsq0"),
         node("Concat", ["s0u", "minus1"], ["shape"], "concat0", axis=0),
         node("Reshape", ["X", "shape"], ["xr"], "reshape0"),
         node("Size", ["W"], ["n"], "size0"),
         node("Cast", ["n"], ["nf"], "cast0", to=TP.FLOAT),
         node("Mul", ["xr", "nf"], ["Y"], "mul0")],
        "fold_shape_chain", [fvi("X", [2, 12])], [fvi("Y", [2, 12])],
        inits=[w, i64("zero", 0), i64("axes0", [0]), i64("minus1", [-1])]))


@model("fold_weight_transform")
def _(r):
    """W [4,3] -> Transpose -> Mul(scale) -> Cast(float16) -> Cast(float) ->
    MatMul(X, .); the weight of conv0 is Reshape(Wc flat).
    Expect: tr0, mul0, cast0, cast1, reshape0 gone; matmul0 reads
    float32(float16(W.T * s)); conv0 reads Wc reshaped."""
    wc = raw_tensor("Wc", rand(r, 2 * 3 * 3 * 3))
    return finish(graph(
        [node("Transpose", ["W"], ["wt"], "tr0", perm=[1, 0]),
         node("Mul", ["wt", "s"], ["ws"], "mul0"),
         node("Cast", ["ws"], ["wh"], "cast0", to=TP.FLOAT16),
         node("Cast", ["wh"], ["wf"], "cast1", to=TP.FLOAT),
         node("MatMul", ["X", "wf"], ["Y"], "matmul0"),
         node("Reshape", ["Wc", "cshape"], ["wcr"], "reshape0"),
         node("Conv", ["Z", "wcr"], ["C"], "conv0", kernel_shape=[3, 3])],
        "fold_weight_transform", [fvi("X", [2, 3]), fvi("Z", [1, 3, 5, 5])],
        [fvi("Y", [2, 4]), fvi("C", [1, 2, 3, 3])],
        inits=[raw_tensor("W", rand(r, 4, 3)), raw_tensor("s", rand(r, 1, 4)), wc,
               i64("cshape", [2, 3, 3, 3])]))


@model("fold_int_arith")
def _(r):
    """int64 and int32 arithmetic on constants: Div (truncates), Mod (sign
    of the divisor), Pow, Neg, Sub, Abs, Min/Max, then Add(X).
    Expect: every node but add0 gone; add0 reads the numpy value."""
    a = i64("a", [7, -7, 9, -9, 100, 3])
    b = i64("b", [2, 2, -4, -4, 7, 5])
    return finish(graph(
        [node("Div", ["a", "b"], ["q"], "div0"),
         node("Mod", ["a", "b"], ["m"], "mod0"),
         node("Pow", ["b", "two"], ["p"], "pow0"),
         node("Neg", ["q"], ["nq"], "neg0"),
         node("Sub", ["nq", "m"], ["d"], "sub0"),
         node("Abs", ["d"], ["ad"], "abs0"),
         node("Max", ["ad", "p", "m"], ["mx"], "max0"),
         node("Min", ["mx", "hundred"], ["mn"], "min0"),
         node("Add", ["X", "mn"], ["Y"], "add0")],
        "fold_int_arith", [vi("X", TP.INT64, [6])], [vi("Y", TP.INT64, [6])],
        inits=[a, b, i64("two", 2), i64("hundred", [50])]))


@model("fold_mask")
def _(r):
    """An attention mask: Range(0, 4) -> Unsqueeze -> Less (broadcast) ->
    Not -> Where(0, -1e4) -> Add(scores X); Trilu and ConstantOfShape of a
    small shape -> Mul(Y2).
    Expect: every node but add0 and mul1 gone; add0 reads the numpy mask."""
    cos = helper.make_tensor("v", TP.FLOAT, [1], [2.0])
    return finish(graph(
        [node("Range", ["start", "limit", "delta"], ["rg"], "range0"),
         node("Unsqueeze", ["rg", "axes1"], ["col"], "unsq0"),
         node("Less", ["rg", "col"], ["lt"], "less0"),
         node("Not", ["lt"], ["keep"], "not0"),
         node("Where", ["keep", "zero_f", "neg_f"], ["mask"], "where0"),
         node("Add", ["X", "mask"], ["Y"], "add0"),
         node("ConstantOfShape", ["shape44"], ["twos"], "cos0", value=cos),
         node("Trilu", ["twos"], ["tri"], "trilu0", upper=0),
         node("Mul", ["X", "tri"], ["Y2"], "mul1")],
        "fold_mask", [fvi("X", [4, 4])], [fvi("Y", [4, 4]), fvi("Y2", [4, 4])],
        inits=[i64("start", 0), i64("limit", 4), i64("delta", 1), i64("axes1", [1]),
               raw_tensor("zero_f", np.array(0.0, np.float32)),
               raw_tensor("neg_f", np.array(-1e4, np.float32)), i64("shape44", [4, 4])]),
        opset=14)


@model("fold_reduce_matmul")
def _(r):
    """ReduceSum, ReduceMean (keepdims 0), ReduceMax, CumSum and MatMul of
    small constants, combined with Sqrt/Reciprocal/Exp and added to X.
    Expect: every node but add0 gone; add0 reads the numpy value."""
    return finish(graph(
        [node("ReduceSum", ["A", "ax1"], ["rs"], "rsum0", keepdims=1),
         node("ReduceMean", ["B"], ["rm"], "rmean0", axes=[0], keepdims=0),
         node("ReduceMax", ["A"], ["rx"], "rmax0", axes=[1], keepdims=1),
         node("MatMul", ["A", "B"], ["ab"], "matmul0"),
         node("CumSum", ["ab", "axis1"], ["cs"], "cumsum0"),
         node("Add", ["rs", "rx"], ["s1"], "add1"),
         node("Mul", ["s1", "s1"], ["sq"], "mul0"),
         node("Sqrt", ["sq"], ["rt"], "sqrt0"),
         node("Exp", ["rm"], ["e"], "exp0"),
         node("Reciprocal", ["e"], ["re"], "recip0"),
         node("Add", ["cs", "rt"], ["t1"], "add2"),
         node("Add", ["t1", "re"], ["t2"], "add3"),
         node("Add", ["X", "t2"], ["Y"], "add0")],
        "fold_reduce_matmul", [fvi("X", [3, 4])], [fvi("Y", [3, 4])],
        inits=[raw_tensor("A", rand(r, 3, 5)), raw_tensor("B", rand(r, 5, 4)),
               i64("ax1", [1]), i64("axis1", 1)]))


@model("fold_split_gather")
def _(r):
    """Split a constant in two, Slice (negative step), Gather, GatherElements,
    Tile and Expand (small), Concat, Flatten/Squeeze, then Add(X).
    Expect: every node but add0 gone; add0 reads the numpy value."""
    c = raw_tensor("C", rand(r, 4, 6))
    return finish(graph(
        [node("Split", ["C"], ["c0", "c1"], "split0", axis=1, split=[2, 4]),
         node("Slice", ["c1", "st", "en", "sax", "sstep"], ["sl"], "slice0"),
         node("Gather", ["c0", "gidx"], ["g"], "gather0", axis=0),
         node("GatherElements", ["g", "geidx"], ["ge"], "gathere0", axis=1),
         node("Tile", ["ge", "reps"], ["ti"], "tile0"),
         node("Expand", ["ti", "eshape"], ["ex"], "expand0"),
         node("Concat", ["sl", "ex"], ["cc"], "concat0", axis=1),
         node("Flatten", ["cc"], ["fl"], "flatten0", axis=1),
         node("Unsqueeze", ["fl"], ["un"], "unsq0", axes=[0]),
         node("Squeeze", ["un"], ["sq"], "squeeze0", axes=[0]),
         node("Add", ["X", "sq"], ["Y"], "add0")],
        "fold_split_gather", [fvi("X", [4, 4])], [fvi("Y", [4, 4])],
        inits=[c, i64("st", [-1]), i64("en", [-100]), i64("sax", [1]), i64("sstep", [-2]),
               i64("gidx", [3, 0, 1, 1]), i64("geidx", [[1], [0], [1], [0]]),
               i64("reps", [1, 2]), i64("eshape", [4, 2])]), opset=12)


@model("fold_in_if")
def _(r):
    """Inside the then branch, Transpose(W) reads W of the main graph (an
    outer-scope constant) and Mul(X) uses the result; the else branch
    computes Neg(K) of its own initializer K.
    Expect: then_tr and else_neg gone; then_mul and else_add read
    initializers of their branch with W.T and -K."""
    then_g = graph([node("Transpose", ["W"], ["wt"], "then_tr", perm=[1, 0]),
                    node("Mul", ["X", "wt"], ["then_out"], "then_mul")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Neg", ["K"], ["nk"], "else_neg"),
                    node("Add", ["X", "nk"], ["else_out"], "else_add")],
                   "else_branch", [], [fvi("else_out", [2, 3])],
                   inits=[raw_tensor("K", rand(r, 2, 3))])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "fold_in_if", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        inits=[raw_tensor("W", rand(r, 3, 2))]))


@model("fold_nn_opset10")
def _(r):
    """The network kernels at opset 10, where Softmax/LogSoftmax coerce the
    input to 2-D at axis, and Clip's bounds and Pad's pads are attributes:
    Softmax, LogSoftmax (axis 0), Clip, Pad (reflect), ArgMax, Gemm
    (transA, alpha, beta, vector C), EyeLike (k=-1), OneHot (axis 0), each
    added to an input. Expect: only the Adds left; each reads the numpy value."""
    outs = [("sm", "X1", [2, 3, 4]), ("ls", "X1", [2, 3, 4]), ("cl", "X1", [2, 3, 4]),
            ("pd", "X2", [3, 6]), ("am", "XI", [2, 4]), ("gm", "X3", [3, 5]),
            ("ey", "X4", [3, 4]), ("oh", "X5", [3, 3])]
    adds = [node("Add", [x, v], ["Y_" + v], "add_" + v) for v, x, _ in outs]
    shapes = {x: sh for _, x, sh in outs}
    return finish(graph(
        [node("Softmax", ["A"], ["sm"], "softmax0", axis=1),
         node("LogSoftmax", ["A"], ["ls"], "logsoftmax0", axis=0),
         node("Clip", ["A"], ["cl"], "clip0", min=-0.5, max=0.25),
         node("Pad", ["P"], ["pd"], "pad0", pads=[1, 2, 0, 1], mode="reflect"),
         node("ArgMax", ["A"], ["am"], "argmax0", axis=1, keepdims=0),
         node("Gemm", ["G1", "G2", "C"], ["gm"], "gemm0", transA=1, alpha=0.5, beta=2.0),
         node("EyeLike", ["E"], ["ey"], "eyelike0", k=-1),
         node("OneHot", ["OI", "OD", "OV"], ["oh"], "onehot0", axis=0)] + adds,
        "fold_nn_opset10",
        [vi(x, TP.INT64 if x == "XI" else FLOAT, sh) for x, sh in shapes.items()],
        [vi("Y_" + v, TP.INT64 if x == "XI" else FLOAT, sh) for v, x, sh in outs],
        inits=[raw_tensor("A", rand(r, 2, 3, 4) * 3), raw_tensor("P", rand(r, 2, 3)),
               raw_tensor("G1", rand(r, 4, 3)), raw_tensor("G2", rand(r, 4, 5)),
               raw_tensor("C", rand(r, 5)), raw_tensor("E", rand(r, 3, 4)),
               i64("OI", [0, 2, 1]), i64("OD", [3]),
               raw_tensor("OV", np.array([0.5, 2.0], np.float32))]),
        opset=10)


@model("fold_nn_opset13")
def _(r):
    """The kernels at opset 13: Softmax on one axis (not the 2-D coercion),
    LogSoftmax (default axis), integer Clip with only a min input, Pad with
    pads and value inputs (a negative pad crops) and in edge mode, GatherND
    with batch_dims 1 and a negative index, OneHot with a negative index and
    a float depth, ArgMin with ties and select_last_index, each added to an
    input. Expect: only the Adds left; each reads the numpy value."""
    outs = [("sm", "X1", FLOAT, [2, 3, 4]), ("ls", "X1", FLOAT, [2, 3, 4]),
            ("cl", "XC", TP.INT32, [5]), ("pc", "X2", FLOAT, [3, 3]),
            ("pe", "X3", FLOAT, [2, 5]), ("gn", "X4", FLOAT, [2, 1, 2]),
            ("oh", "X5", FLOAT, [2, 4, 2]), ("an", "XI", TP.INT64, [2, 1])]
    adds = [node("Add", [x, v], ["Y_" + v], "add_" + v) for v, x, _, _ in outs]
    ins = {x: (t, sh) for _, x, t, sh in outs}
    return finish(graph(
        [node("Softmax", ["A"], ["sm"], "softmax0", axis=1),
         node("LogSoftmax", ["A"], ["ls"], "logsoftmax0"),
         node("Clip", ["CI", "CLO"], ["cl"], "clip0"),
         node("Pad", ["P", "pads_c", "PV"], ["pc"], "padc0"),
         node("Pad", ["P", "pads_e"], ["pe"], "pade0", mode="edge"),
         node("GatherND", ["D", "DI"], ["gn"], "gathernd0", batch_dims=1),
         node("OneHot", ["OI", "OD", "OV"], ["oh"], "onehot0", axis=1),
         node("ArgMin", ["T"], ["an"], "argmin0", axis=1, select_last_index=1)] + adds,
        "fold_nn_opset13",
        [vi(x, t, sh) for x, (t, sh) in ins.items()],
        [vi("Y_" + v, t, sh) for v, _, t, sh in outs],
        inits=[raw_tensor("A", rand(r, 2, 3, 4) * 3),
               raw_tensor("CI", np.array([-7, -2, 0, 5, 100], np.int32)),
               raw_tensor("CLO", np.array(-3, np.int32)), raw_tensor("P", rand(r, 2, 3)),
               i64("pads_c", [1, -1, 0, 1]), raw_tensor("PV", np.array(9.0, np.float32)),
               i64("pads_e", [0, 1, 0, 1]), raw_tensor("D", rand(r, 2, 3, 2)),
               i64("DI", [[[2]], [[-3]]]), i64("OI", [[1, -1], [3, 0]]),
               raw_tensor("OD", np.array(4.0, np.float32)),
               raw_tensor("OV", np.array([-1.0, 1.5], np.float32)),
               i64("T", [[3, 1, 4, 1], [2, 2, 5, 2]])]))


@model("fold_kept")
def _(r):
    """Nodes with constant inputs that must stay: Expand of one value to
    [64, 64] (more than twice its inputs, above 1 KiB), DequantizeLinear,
    RandomNormal, an integer Div by zero, and Transpose of an initializer
    that is also a graph input (a default the caller may override).
    Expect: expand0, dq0, rnd0, div0 and tr0 kept; warnings for expand0
    and div0."""
    return finish(graph(
        [node("Expand", ["one", "big"], ["ex"], "expand0"),
         node("Add", ["X", "ex"], ["Y"], "add0"),
         node("DequantizeLinear", ["q", "qs"], ["dq"], "dq0"),
         node("RandomNormal", [], ["rn"], "rnd0", shape=[2]),
         node("Add", ["dq", "rn"], ["Y2"], "add1"),
         node("Div", ["a", "zero"], ["Y3"], "div0"),
         node("Transpose", ["D"], ["Y4"], "tr0")],
        "fold_kept", [fvi("X", [64, 64]), fvi("D", [2, 3])],
        [fvi("Y", [64, 64]), fvi("Y2", [2]), vi("Y3", TP.INT64, [2]), fvi("Y4", [3, 2])],
        inits=[raw_tensor("one", np.array([1.5], np.float32)), i64("big", [64, 64]),
               raw_tensor("q", np.array([3, 200], np.uint8)),
               raw_tensor("qs", np.array(0.5, np.float32)), i64("a", [4, 5]),
               i64("zero", [2, 0]), raw_tensor("D", rand(r, 2, 3))]))


@model("fold_static_shape")
def _(r):
    """X [2,3,4] is static, Z [N,3] has a symbolic batch: Shape(X) -> Gather(2)
    -> Unsqueeze -> Concat([-1], .) -> Reshape(X); Size(X) -> Cast -> Mul;
    Shape(Z, start=1) -> Concat([-1], .) -> Reshape(Z); Shape(Z) is output Y3.
    Expect: every Shape/Size but zshape_all gone (and the chains after them);
    reshape0 reads [-1, 4], mul0 reads 24.0, reshape1 reads [-1, 3]."""
    return finish(graph(
        [node("Shape", ["X"], ["s"], "shape0"),
         node("Gather", ["s", "two"], ["s2"], "gather0", axis=0),
         node("Unsqueeze", ["s2", "axes0"], ["s2u"], "unsq0"),
         node("Concat", ["minus1", "s2u"], ["shape"], "concat0", axis=0),
         node("Reshape", ["X", "shape"], ["xr"], "reshape0"),
         node("Size", ["X"], ["n"], "size0"),
         node("Cast", ["n"], ["nf"], "cast0", to=TP.FLOAT),
         node("Mul", ["xr", "nf"], ["Y"], "mul0"),
         node("Shape", ["Z"], ["zs"], "zshape_tail", start=1),
         node("Concat", ["minus1", "zs"], ["zshape"], "zconcat", axis=0),
         node("Reshape", ["Z", "zshape"], ["Y2"], "reshape1"),
         node("Shape", ["Z"], ["Y3"], "zshape_all")],
        "fold_static_shape", [fvi("X", [2, 3, 4]), fvi("Z", ["N", 3])],
        [fvi("Y", [6, 4]), fvi("Y2", ["N", 3]), vi("Y3", TP.INT64, [2])],
        inits=[i64("two", 2), i64("axes0", [0]), i64("minus1", [-1])]), opset=15)


@model("fold_partial_shape")
def _(r):
    """X [N,3,H,W] has symbolic N, H, W; of Shape(X) only dim 1 is static.
    Gather(., 1) -> Unsqueeze and Slice(., 1:2) -> Cast(float) read only that
    dim; Gather(., 0) reads N. Concat(N, 3, -1) -> Reshape(X); Mul(., 3.0).
    Expect: gather1, unsq1, slice0 and cast0 gone (inference knows their
    values); shape0, gather0, unsq0, concat0, reshape0, mul0 kept; concat0
    reads [3] as its second input, mul0 reads [3.0]."""
    return finish(graph(
        [node("Shape", ["X"], ["s"], "shape0"),
         node("Gather", ["s", "zero"], ["n"], "gather0", axis=0),
         node("Unsqueeze", ["n", "axes0"], ["nu"], "unsq0"),
         node("Gather", ["s", "one"], ["c"], "gather1", axis=0),
         node("Unsqueeze", ["c", "axes0"], ["cu"], "unsq1"),
         node("Concat", ["nu", "cu", "minus1"], ["target"], "concat0", axis=0),
         node("Reshape", ["X", "target"], ["xr"], "reshape0"),
         node("Slice", ["s", "one1", "two1"], ["sl"], "slice0"),
         node("Cast", ["sl"], ["slf"], "cast0", to=FLOAT),
         node("Mul", ["xr", "slf"], ["Y"], "mul0")],
        "fold_partial_shape", [fvi("X", ["N", 3, "H", "W"])], [fvi("Y", ["N", 3, None])],
        inits=[i64("zero", 0), i64("one", 1), i64("axes0", [0]), i64("minus1", [-1]),
               i64("one1", [1]), i64("two1", [2])]), opset=15)


@model("fold_large")
def _(r):
    """W [256, 1024] float (1 MiB) -> Transpose -> Cast(float16) ->
    Cast(float) -> MatMul(X, .): the Transpose and the last Cast are results
    of a writer chunk or more, computed while written.
    Expect: tr0, cast0, cast1 gone; matmul0 reads float32(float16(W.T))."""
    w = (np.arange(256 * 1024, dtype=np.float32) % 251 / 251.0 - 0.5).reshape(256, 1024)
    return finish(graph(
        [node("Transpose", ["W"], ["wt"], "tr0"),
         node("Cast", ["wt"], ["wh"], "cast0", to=TP.FLOAT16),
         node("Cast", ["wh"], ["wf"], "cast1", to=TP.FLOAT),
         node("MatMul", ["X", "wf"], ["Y"], "matmul0")],
        "fold_large", [fvi("X", [2, 1024])], [fvi("Y", [2, 256])],
        inits=[raw_tensor("W", w.astype(np.float32))]))


@model("fold_transpose_tiled")
def _(r):
    """W [3, 517, 347] float (2.1 MB, three writer chunks whose edges cut
    output rows) -> Transpose(perm 2,0,1) -> Add(X, .); H [5, 7, 9] float16
    -> Transpose(perm 1,2,0) -> Add(Z, .) (in memory). Both read their last
    output axis with a stride: the tiled copy, partial rows at chunk edges.
    Expect: tr0, tr1 gone; add0 reads W.transpose(2,0,1), add1 reads
    H.transpose(1,2,0)."""
    w = (np.arange(3 * 517 * 347, dtype=np.float32) % 1009 / 1009.0).reshape(3, 517, 347)
    h = (np.arange(5 * 7 * 9) % 17 / 17.0).astype(np.float16).reshape(5, 7, 9)
    return finish(graph(
        [node("Transpose", ["W"], ["wt"], "tr0", perm=[2, 0, 1]),
         node("Add", ["X", "wt"], ["Y"], "add0"),
         node("Transpose", ["H"], ["ht"], "tr1", perm=[1, 2, 0]),
         node("Add", ["Z", "ht"], ["Y2"], "add1")],
        "fold_transpose_tiled", [fvi("X", [347, 3, 517]), vi("Z", TP.FLOAT16, [7, 9, 5])],
        [fvi("Y", [347, 3, 517]), vi("Y2", TP.FLOAT16, [7, 9, 5])],
        inits=[raw_tensor("W", w), raw_tensor("H", h)]))


# ---------------------------------------------------------------------------
# mixed: several rules in one model (default pipeline only)
# ---------------------------------------------------------------------------

@model("mixed_conv_add_bn_shared")
def _(r):
    """X -> conv0(W) -> add0(A [1,4,1,1]) -> bn0 -> relu0 -> conv1(W, B1) ->
    bn1 -> Y; conv0 and conv1 share W.
    Expect (default passes): no Add, no BN; 2 Conv + 1 Relu; conv0 writes
    b0 with W folded with A then bn0; conv1 writes Y with W, B1 folded with
    bn1; no initializer used twice."""
    w = raw_tensor("W", rand(r, 4, 4, 3, 3))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    b1 = raw_tensor("B1", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c0"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c0", "A"], ["a0"], "add0"),
         bn("a0", "b0", "bn0", "bn0"),
         node("Relu", ["b0"], ["r"], "relu0"),
         node("Conv", ["r", "W", "B1"], ["c1"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c1", "Y", "bn1", "bn1")],
        "mixed_conv_add_bn_shared", [fvi("X", [1, 4, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, a, b1] + bn_inits(r, "bn0", 4) + bn_inits(r, "bn1", 4)))


# ---------------------------------------------------------------------------
# sample.onnx: for `make run`
# ---------------------------------------------------------------------------

@model("sample")
def _(r):
    """Small realistic model: Conv (W, B from Constant nodes) -> Identity ->
    Relu -> Y, a dead Sigmoid branch off the Conv and an unused initializer.
    Expect with the default passes: no Constant, no Identity, no dead_sig,
    no unused_scale; W and B initializers; output Y unchanged."""
    w = raw_tensor("w_value", rand(r, 8, 3, 3, 3))
    b = raw_tensor("b_value", rand(r, 8))
    unused = raw_tensor("unused_scale", rand(r, 8))
    return finish(graph(
        [const("const_w", "W", value=w),
         const("const_b", "B", value=b),
         node("Conv", ["X", "W", "B"], ["conv_out"], "conv0",
              kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Identity", ["conv_out"], ["id_out"], "id0"),
         node("Sigmoid", ["conv_out"], ["dead_out"], "dead_sig"),
         node("Relu", ["id_out"], ["Y"], "relu0")],
        "sample", [fvi("X", [1, 3, 16, 16])], [fvi("Y", [1, 8, 16, 16])],
        inits=[unused]))


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


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = argv[1] if len(argv) > 1 else os.path.join(here, "..", "testdata")
    os.makedirs(outdir, exist_ok=True)
    for name, build in BUILDERS:
        m = build(rng(name))
        m.graph.doc_string = (build.__doc__ or "").strip()
        if name in NON_SSA:
            assert not _is_ssa(m.graph), "%s is marked ssa=False but is SSA" % name
            # valid apart from the repeated names
            onnx.checker.check_model(_ssa_copy(m), full_check=True)
        else:
            onnx.checker.check_model(m, full_check=name not in PLAIN_CHECK)
        data = m.SerializeToString()
        # the test runner expects these to round-trip byte for byte
        assert onnx.load_from_string(data).SerializeToString() == data, name
        with open(os.path.join(outdir, name + ".onnx"), "wb") as f:
            f.write(data)
    print("make_testdata: wrote %d models to %s" % (len(BUILDERS), os.path.normpath(outdir)))


if __name__ == "__main__":
    main(sys.argv)
