#!/usr/bin/python3
"""Generate the small ONNX models in testdata/ that tests/test_passes.py uses.

Usage: scripts/make_testdata.py [OUTDIR]      (default: testdata/ next to scripts/)

Each model exercises one rule of one pass and is named <pass>_<case>.onnx; the
docstring of its builder says what it tests and what ppqfmt must produce.
Everything is deterministic: fixed names, fixed producer fields, and weights
from a numpy RandomState seeded from the model name, so running the script
twice gives the same bytes.  Every model must pass
onnx.checker.check_model(full_check=True) before it is written.

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


def model(name):
    """Register a builder for testdata/<name>.onnx."""
    def register(fn):
        BUILDERS.append((name, fn))
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


def graph(nodes, name, inputs, outputs, inits=(), value_info=()):
    return helper.make_graph(nodes, name, inputs, outputs,
                             initializer=list(inits), value_info=list(value_info))


def finish(g, opset=OPSET, ir=IR):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="ppqfmt-make_testdata",
                          producer_version="1")
    m.ir_version = ir
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


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    outdir = argv[1] if len(argv) > 1 else os.path.join(here, "..", "testdata")
    os.makedirs(outdir, exist_ok=True)
    for name, build in BUILDERS:
        m = build(rng(name))
        m.graph.doc_string = (build.__doc__ or "").strip()
        onnx.checker.check_model(m, full_check=True)
        data = m.SerializeToString()
        # the test runner expects these to round-trip byte for byte
        assert onnx.load_from_string(data).SerializeToString() == data, name
        with open(os.path.join(outdir, name + ".onnx"), "wb") as f:
            f.write(data)
    print("make_testdata: wrote %d models to %s" % (len(BUILDERS), os.path.normpath(outdir)))


if __name__ == "__main__":
    main(sys.argv)
