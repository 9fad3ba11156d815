#!/usr/bin/python3
"""Generate the testdata/fold_if_*.onnx models of pass fold's If rule (an If
whose condition is a constant is replaced by its chosen branch) that
tests/test_passes.py uses, in the style of scripts/make_noops_testdata.py
(make_testdata's helpers): one model per case, the builder's docstring
saying what ppqfmt must produce.

Most models read X [2,3], run an If (if0) whose then branch is Relu ->
Add(W) and whose else branch is Neg, and read its output r in mul0. The
conditions are initializers (bool, one element) unless the case is about
a condition that is not constant.

Usage: scripts/make_fold_if_testdata.py [OUTDIR]   (default: testdata/)
Run with Debian's python (/usr/bin/python3, python3-onnx 1.12).
"""
import os
import sys

import numpy as np
from onnx import TensorProto as TP
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_testdata as mt  # noqa: E402
from make_testdata import finish, fvi, graph, if_node, node, rand, raw_tensor, vi  # noqa: E402

# Builders register with make_testdata's list; main() below writes only ours.
FIRST = len(mt.BUILDERS)
model = mt.model
XS = [2, 3]


def cond(name, value, shape=()):
    return raw_tensor(name, np.array(value, dtype=bool).reshape(shape))


def branches(prefix=""):
    """then: relu (then_relu) -> Add(W) (then_add) -> then_out, with
    value_info for t0 and then_out; else: Neg (else_neg) -> else_out. Both
    read X and W of the main graph."""
    then_g = graph([node("Relu", ["X"], [prefix + "t0"], prefix + "then_relu"),
                    node("Add", [prefix + "t0", "W"], [prefix + "then_out"], prefix + "then_add")],
                   prefix + "then_branch", [], [fvi(prefix + "then_out", XS)],
                   value_info=[fvi(prefix + "t0", XS), fvi(prefix + "then_out", XS)])
    else_g = graph([node("Neg", ["X"], [prefix + "else_out"], prefix + "else_neg")],
                   prefix + "else_branch", [], [fvi(prefix + "else_out", XS)])
    return then_g, else_g


def neg_else(outputs=1):
    """An else branch returning Neg(X) (else_neg) `outputs` times."""
    return graph([node("Neg", ["X"], ["else_out"], "else_neg")], "else_branch", [],
                 [fvi("else_out", XS)] * outputs)


def simple(name, value, shape=()):
    """X -> if0(c) -> r -> mul0(r, X) -> Y."""
    then_g, else_g = branches()
    return finish(graph([if_node("if0", "c", ["r"], then_g, else_g),
                         node("Mul", ["r", "X"], ["Y"], "mul0")],
                        name, [fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("c", value, shape), raw_tensor("W", rand(mt.rng(name), *XS))]))


@model("fold_if_then_scalar")
def _(r):
    """if0's condition is the scalar true. Expect: no If; then_relu and
    then_add in the main graph, then_add writing r (read by mul0);
    else_neg gone; the branch's value_info entry for t0 in the main graph,
    the one for then_out (now r) gone."""
    return simple("fold_if_then_scalar", True)


@model("fold_if_else_scalar")
def _(r):
    """if0's condition is the scalar false. Expect: no If; else_neg in the
    main graph writing r; then_relu and then_add gone."""
    return simple("fold_if_else_scalar", False)


@model("fold_if_cond_shape1")
def _(r):
    """Two Ifs whose conditions are one-element tensors of shape [1]: ift
    (true) and iff (false), branches named a_* and b_*; Add(rt, rf) -> Y.
    Expect: no If; a_then_add writes rt, b_else_neg writes rf; a_else_neg,
    b_then_relu and b_then_add gone."""
    at, ae = branches("a_")
    bt, be = branches("b_")
    return finish(graph([if_node("ift", "ct", ["rt"], at, ae),
                         if_node("iff", "cf", ["rf"], bt, be),
                         node("Add", ["rt", "rf"], ["Y"], "add0")],
                        "fold_if_cond_shape1", [fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("ct", [True], [1]), cond("cf", [False], [1]),
                               raw_tensor("W", rand(r, *XS))]))


@model("fold_if_in_loop")
def _(r):
    """A Loop (2 iterations) body: body_add = Add(acc, X) -> a, then body_if
    (condition c, a true scalar of the main graph) whose then branch
    then_mul = Mul(a, W) reads a value of its parent (the body's a) and one
    of its grandparent (the main graph's W); else Neg(a).
    Expect: no If; then_mul in the Loop body writing acc_out; else_neg gone."""
    then_g = graph([node("Mul", ["a", "W"], ["then_out"], "then_mul")], "then_branch", [],
                   [fvi("then_out", XS)])
    else_g = graph([node("Neg", ["a"], ["else_out"], "else_neg")], "else_branch", [],
                   [fvi("else_out", XS)])
    body = graph([node("Identity", ["cond_in"], ["cond_out"], "body_id_cond"),
                  node("Add", ["acc", "X"], ["a"], "body_add"),
                  if_node("body_if", "c", ["acc_out"], then_g, else_g)],
                 "loop_body", [vi("iter", TP.INT64, []), vi("cond_in", TP.BOOL, []), fvi("acc", XS)],
                 [vi("cond_out", TP.BOOL, []), fvi("acc_out", XS)])
    return finish(graph(
        [helper.make_node("Loop", ["M", "keep_going", "X"], ["Y"], name="loop0", body=body)],
        "fold_if_in_loop", [fvi("X", XS)], [fvi("Y", XS)],
        inits=[raw_tensor("M", np.array(2, np.int64)), cond("keep_going", True), cond("c", True),
               raw_tensor("W", rand(r, *XS))]))


@model("fold_if_nested")
def _(r):
    """if0 (condition c, true) whose then branch holds then_relu -> t0 and
    an If if1 on the graph input `cond` reading t0 (inner_add = Add(t0, X)
    or inner_neg = Neg(t0)) -> then_out.
    Expect: if0 gone; if1 kept in the main graph writing r, inner_add still
    reading t0; else_neg gone."""
    inner_t = graph([node("Add", ["t0", "X"], ["in_t"], "inner_add")], "inner_then", [],
                    [fvi("in_t", XS)])
    inner_e = graph([node("Neg", ["t0"], ["in_e"], "inner_neg")], "inner_else", [],
                    [fvi("in_e", XS)])
    then_g = graph([node("Relu", ["X"], ["t0"], "then_relu"),
                    if_node("if1", "cond", ["then_out"], inner_t, inner_e)],
                   "then_branch", [], [fvi("then_out", XS)])
    else_g = neg_else()
    return finish(graph([if_node("if0", "c", ["r"], then_g, else_g),
                         node("Mul", ["r", "X"], ["Y"], "mul0")],
                        "fold_if_nested", [vi("cond", TP.BOOL, []), fvi("X", XS)],
                        [fvi("Y", XS)], inits=[cond("c", True)]))


def clash_model(name, then_g):
    """if0 (c true; then then_g, else neg_else) -> r, then the main graph's
    own relu0 = Relu(r) -> a and add0 = Add(a, r) -> Y; `cond` a graph input
    for the Ifs nested in then_g."""
    return finish(graph([if_node("if0", "c", ["r"], then_g, neg_else()),
                         node("Relu", ["r"], ["a"], "relu0"),
                         node("Add", ["a", "r"], ["Y"], "add0")],
                        name, [vi("cond", TP.BOOL, []), fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("c", True)]))


@model("fold_if_name_clash")
def _(r):
    """if0 (true) whose then branch has a node relu0 writing a, read by
    then_add and, from the outer scope, by inner_add in if1 (on the graph
    input `cond`) nested in the branch: the main graph, after if0, has its
    own node relu0 writing a (onnx.checker accepts a branch defining a name
    that the enclosing graph defines later, not earlier).
    Expect: no if0; the main graph's relu0 still writes a; the branch's
    Relu (renamed) writes another name, which then_add and inner_add read
    (and the branch's value_info entry for a names); every name defined
    once and every node name used once."""
    inner_t = graph([node("Add", ["a", "X"], ["in_t"], "inner_add")], "inner_then", [],
                    [fvi("in_t", XS)])
    inner_e = graph([node("Neg", ["X"], ["in_e"], "inner_neg")], "inner_else", [],
                    [fvi("in_e", XS)])
    then_g = graph([node("Relu", ["X"], ["a"], "relu0"),
                    if_node("if1", "cond", ["n"], inner_t, inner_e),
                    node("Add", ["a", "n"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", XS)], value_info=[fvi("a", XS)])
    return clash_model("fold_if_name_clash", then_g)


@model("fold_if_nested_outer_output")
def _(r):
    """As fold_if_name_clash, but the then branch of if1 returns the branch
    value a itself (an outer value, no node), and then_relu writes a.
    onnxruntime refuses a subgraph returning an outer value (no numbers).
    Expect: no if0; if1's then branch returns then_relu's output under
    its new name; the main graph's relu0 still writes a."""
    inner_t = graph([], "inner_then", [], [fvi("a", XS)])
    inner_e = graph([node("Neg", ["a"], ["in_e"], "inner_neg")], "inner_else", [],
                    [fvi("in_e", XS)])
    then_g = graph([node("Relu", ["X"], ["a"], "then_relu"),
                    if_node("if1", "cond", ["then_out"], inner_t, inner_e)],
                   "then_branch", [], [fvi("then_out", XS)])
    return clash_model("fold_if_nested_outer_output", then_g)


@model("fold_if_graph_output")
def _(r):
    """if0 (true) writes the graph output Y. Expect: no If; then_add writes
    Y (no Identity)."""
    then_g, else_g = branches()
    return finish(graph([if_node("if0", "c", ["Y"], then_g, else_g)],
                        "fold_if_graph_output", [fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("c", True), raw_tensor("W", rand(r, *XS))]))


@model("fold_if_outer_output")
def _(r):
    """if0 (true) returns the graph input X from its then branch, which has
    no node, as two outputs: r (read by relu_r -> Y) and Z (a graph output);
    else Neg(X) twice. onnxruntime refuses a subgraph returning an outer
    value: the output is checked against numpy. Expect: no If; relu_r
    reads X; Z kept by an Identity reading X."""
    then_g = graph([], "then_branch", [], [fvi("X", XS), fvi("X", XS)])
    else_g = neg_else(2)
    return finish(graph([if_node("if0", "c", ["r", "Z"], then_g, else_g),
                         node("Relu", ["r"], ["Y"], "relu_r")],
                        "fold_if_outer_output", [fvi("X", XS)], [fvi("Y", XS), fvi("Z", XS)],
                        inits=[cond("c", True)]))


@model("fold_if_init_output")
def _(r):
    """if0 (true) returns K and K2, initializers of its then branch (which
    has no node), as r (read by add_k = Add(X, r) -> Y) and as the graph
    output Z; else Neg(X) twice. (onnxruntime 1.30 computes Y wrong when
    the branch returns K for both outputs: r reads as zeros.)
    Expect: no If; K an initializer of the main graph read by add_k; Z
    holds K2's value."""
    then_g = graph([], "then_branch", [], [fvi("K", XS), fvi("K2", XS)],
                   inits=[raw_tensor("K", rand(r, *XS)), raw_tensor("K2", rand(r, *XS))])
    else_g = neg_else(2)
    return finish(graph([if_node("if0", "c", ["r", "Z"], then_g, else_g),
                         node("Add", ["X", "r"], ["Y"], "add_k")],
                        "fold_if_init_output", [fvi("X", XS)], [fvi("Y", XS), fvi("Z", XS)],
                        inits=[cond("c", True)]))


@model("fold_if_multi_output")
def _(r):
    """if0 (true) with four outputs: then_relu's a as r0, then_neg's b as
    r1, a again as r2 and as the graph output Z; add0 = Add(r0, r1),
    mul0 = Mul(add0's, r2) -> Y. Else Neg(X) four times.
    Expect: no If; then_relu writes r0, then_neg writes r1, mul0 reads r0;
    Z written from r0 (an Identity with fold alone, then_relu itself once
    pass identity ran)."""
    then_g = graph([node("Relu", ["X"], ["a"], "then_relu"),
                    node("Neg", ["X"], ["b"], "then_neg")],
                   "then_branch", [], [fvi("a", XS), fvi("b", XS), fvi("a", XS), fvi("a", XS)])
    else_g = neg_else(4)
    return finish(graph([if_node("if0", "c", ["r0", "r1", "r2", "Z"], then_g, else_g),
                         node("Add", ["r0", "r1"], ["s"], "add0"),
                         node("Mul", ["s", "r2"], ["Y"], "mul0")],
                        "fold_if_multi_output", [fvi("X", XS)], [fvi("Y", XS), fvi("Z", XS)],
                        inits=[cond("c", True)]))


@model("fold_if_dynamic_cond")
def _(r):
    """Conditions that are not constants: if0 on the graph input `cond`,
    if1 on Greater(ReduceSum(X), 0) computed at run time. Expect: both
    Ifs kept, their branches as they were."""
    t0, e0 = branches()
    t1, e1 = branches("k_")
    return finish(graph([if_node("if0", "cond", ["r0"], t0, e0),
                         node("ReduceSum", ["X"], ["sx"], "sum0", keepdims=0),
                         node("Greater", ["sx", "zero"], ["c1"], "greater0"),
                         if_node("if1", "c1", ["r1"], t1, e1),
                         node("Add", ["r0", "r1"], ["Y"], "add0")],
                        "fold_if_dynamic_cond", [vi("cond", TP.BOOL, []), fvi("X", XS)],
                        [fvi("Y", XS)],
                        inits=[raw_tensor("zero", np.array(0.0, np.float32)),
                               raw_tensor("W", rand(r, *XS))]))


@model("fold_if_shape_folds")
def _(r):
    """if0 (true): then Relu(X) [2,3], else Reshape(X, [3,2]): inference
    cannot tell r's dims while the If stands. shape0 = Shape(r) is the
    target of reshape0 = Reshape(V [6], .) -> Y; mul0 = Mul(r, X) -> Y2.
    Expect: no If and no Shape: once then_relu writes r its shape is
    known and shape0 folds in the same run of fold; reshape0 reads [2,3]."""
    then_g = graph([node("Relu", ["X"], ["then_out"], "then_relu")], "then_branch", [],
                   [fvi("then_out", XS)])
    else_g = graph([node("Reshape", ["X", "s32"], ["else_out"], "else_rs")], "else_branch", [],
                   [fvi("else_out", [3, 2])])
    return finish(graph([if_node("if0", "c", ["r"], then_g, else_g),
                         node("Shape", ["r"], ["s"], "shape0"),
                         node("Reshape", ["V", "s"], ["Y"], "reshape0"),
                         node("Mul", ["r", "X"], ["Y2"], "mul0")],
                        "fold_if_shape_folds", [fvi("X", XS), fvi("V", [6])],
                        [fvi("Y", XS), fvi("Y2", XS)],
                        inits=[cond("c", True),
                               raw_tensor("s32", np.array([3, 2], np.int64))]))


def main(argv):
    outdir = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "testdata")
    del mt.BUILDERS[:FIRST]  # make_testdata's own models: its own script writes them
    mt.main([argv[0], outdir])


if __name__ == "__main__":
    main(sys.argv)
