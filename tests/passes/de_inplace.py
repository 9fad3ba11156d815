"""de-inplace: rename values written by more than one node (restore SSA)
(formatter/de_inplace.c).

Its test models (builders registered with @model; testdata/de_inplace/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper

from passes.build import (finish, fvi, graph, if_node, Models, node, raw_tensor, vi)
from passes.common import (_f64, _relu, kept, need_node, node_input, node_output, SSA,
                           subgraph_output)

PASS = "de-inplace"

MODELS = Models("de_inplace", "deinplace")
model = MODELS.model


# ---------------------------------------------------------------------------
# de-inplace: a name written by more than one node is versioned.  These models
# are NOT valid ONNX (not SSA): @model(..., ssa=False) skips the checker for
# them (build.write() checks an SSA-renamed copy instead).
# ---------------------------------------------------------------------------

@model("chain", ssa=False)
def _(r):
    """relu0: x = Relu(X); sig0: x = Sigmoid(x); neg0: Y = Neg(x).
    Expect: SSA; relu0 writes a fresh name read by sig0; sig0 (the last
    writer) writes x; neg0 reads x.  Y = -sigmoid(relu(X))."""
    return finish(graph(
        [node("Relu", ["X"], ["x"], "relu0"),
         node("Sigmoid", ["x"], ["x"], "sig0"),
         node("Neg", ["x"], ["Y"], "neg0")],
        "deinplace_chain", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("output", ssa=False)
def _(r):
    """relu0: Y = Relu(X); tanh0: Y = Tanh(Y); Y is the graph output.
    Expect: tanh0 still writes Y (the output keeps its name), reading
    relu0's renamed output.  Y = tanh(relu(X))."""
    return finish(graph(
        [node("Relu", ["X"], ["Y"], "relu0"),
         node("Tanh", ["Y"], ["Y"], "tanh0")],
        "deinplace_output", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("readers", ssa=False)
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


@model("three_writes", ssa=False)
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


@model("multi_output", ssa=False)
def _(r):
    """split0: a, b = Split(X, axis 1); add0: b = Add(a, b); relu0: Y = Relu(b).
    Expect: split0's second output renamed, read by add0; add0 writes b;
    relu0 reads b.  Y = relu(X[:, :2] + X[:, 2:])."""
    return finish(graph(
        [node("Split", ["X"], ["a", "b"], "split0", axis=1),
         node("Add", ["a", "b"], ["b"], "add0"),
         node("Relu", ["b"], ["Y"], "relu0")],
        "deinplace_multi_output", [fvi("X", [2, 4])], [fvi("Y", [2, 2])]))


@model("same_node_twice", ssa=False)
def _(r):
    """split0: x, x = Split(X, axis 1) (one node writing x twice);
    relu0: Y = Relu(x).
    Expect: split0's first output renamed; relu0 reads its second, the
    last write of x before it.  Y = relu(X[:, 2:])."""
    return finish(graph(
        [node("Split", ["X"], ["x", "x"], "split0", axis=1),
         node("Relu", ["x"], ["Y"], "relu0")],
        "deinplace_same_node_twice", [fvi("X", [2, 4])], [fvi("Y", [2, 2])]))


@model("in_if", ssa=False)
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


@model("outer_scope", ssa=False)
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


@model("outer_output", ssa=False)
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
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

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


def _sig(v):
    return 1.0 / (1.0 + np.exp(-v))


SPECS = {
    # -- de-inplace (inputs are not SSA: onnxruntime refuses them, so the
    #    output is compared with a numpy reference) ----------------------------
    "chain": dict(
        both=[SSA, kept("relu0", "sig0", "neg0"), reads_output("sig0", 0, "relu0"),
              node_output("sig0", 0, "x"), node_input("neg0", 0, "x")],
        reference=lambda f: {"Y": -_sig(_relu(_f64(f, "X")))}),
    "output": dict(
        both=[SSA, kept("relu0", "tanh0"), reads_output("tanh0", 0, "relu0"),
              node_output("tanh0", 0, "Y")],
        reference=lambda f: {"Y": np.tanh(_relu(_f64(f, "X")))}),
    "readers": dict(
        both=[SSA, kept("relu0", "neg0", "sig0", "add0"), reads_output("neg0", 0, "relu0"),
              reads_output("sig0", 0, "relu0"), node_output("sig0", 0, "x"),
              node_input("add0", 0, "a"), node_input("add0", 1, "x")],
        reference=lambda f: {"Y": -_relu(_f64(f, "X")) + _sig(_relu(_f64(f, "X")))}),
    "three_writes": dict(
        both=[SSA, kept("relu0", "neg0", "mul0", "sig0", "add0"),
              reads_output("neg0", 0, "relu0"), reads_output("mul0", 0, "neg0"),
              reads_output("mul0", 1, "neg0"), reads_output("sig0", 0, "neg0"),
              node_output("sig0", 0, "x"), node_input("add0", 0, "m"),
              node_input("add0", 1, "x")],
        reference=lambda f: {"Y": _relu(_f64(f, "X")) ** 2 + _sig(-_relu(_f64(f, "X")))}),
    "multi_output": dict(
        both=[SSA, kept("split0", "add0", "relu0"), node_output("split0", 0, "a"),
              reads_output("add0", 0, "split0", 0), reads_output("add0", 1, "split0", 1),
              node_output("add0", 0, "b"), node_input("relu0", 0, "b")],
        reference=lambda f: {"Y": _relu(_f64(f, "X")[:, :2] + _f64(f, "X")[:, 2:])}),
    "same_node_twice": dict(
        both=[SSA, kept("split0", "relu0"), node_output("split0", 1, "x"),
              reads_output("relu0", 0, "split0", 1)],
        reference=lambda f: {"Y": _relu(_f64(f, "X")[:, 2:])}),
    "in_if": dict(
        both=[SSA, kept("if0", "then_relu", "then_neg", "then_sig", "else_neg"),
              reads_output("then_neg", 0, "then_relu"), node_output("then_neg", 0, "t"),
              node_input("then_sig", 0, "t")],
        reference=lambda f: {"Y": _sig(-_relu(_f64(f, "X"))) if f["cond"] else -_f64(f, "X")}),

    # an If and a Loop read the first t from the outer scope; t is written again
    # after them
    "outer_scope": dict(
        both=[SSA, kept("relu0", "if0", "then_neg", "else_sig", "loop0", "body_add", "neg0",
                        "add1"),
              reads_output("then_neg", 0, "relu0"), reads_output("else_sig", 0, "relu0"),
              reads_output("body_add", 1, "relu0"), reads_output("neg0", 0, "relu0"),
              node_output("neg0", 0, "t"), node_input("add1", 1, "t")],
        reference=lambda f: {"Y": (-_relu(_f64(f, "X")) if f["cond"]
                                   else _sig(_relu(_f64(f, "X"))))
                             + _f64(f, "X") + 2 * _relu(_f64(f, "X")) - _relu(_f64(f, "X"))}),
    "outer_output": dict(
        both=[SSA, kept("relu0", "if0", "then_neg", "neg0", "add0"),
              reads_output("then_neg", 0, "relu0"),
              subgraph_output("if0", "else_branch", 0, "relu0"),
              reads_output("neg0", 0, "relu0"), node_output("neg0", 0, "t")],
        no_numbers="onnxruntime refuses a subgraph returning an outer value directly"),
}
