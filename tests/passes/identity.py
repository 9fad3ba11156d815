"""identity: remove Identity nodes, rewiring their consumers (formatter/identity.c).

Its test models (builders registered with @model; testdata/identity/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper

from passes.build import (finish, fvi, graph, if_node, Models, node, rand, raw_tensor, vi)
from passes.common import (init_kept, kept, NI, node_input, node_output, op_count, output_param,
                           removed)

PASS = "identity"

MODELS = Models("identity", "identity")
model = MODELS.model


# ---------------------------------------------------------------------------
# identity: Identity nodes removed, graph output names never change
# ---------------------------------------------------------------------------

@model("middle")
def _(r):
    """Relu -> Identity -> Sigmoid.
    Expect: Identity removed; Sigmoid reads Relu's output r."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["i"], "id0"),
         node("Sigmoid", ["i"], ["Y"], "sig0")],
        "identity_middle", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("graph_output")
def _(r):
    """Relu -> Identity -> graph output Y.
    Expect: Identity removed; Relu now writes Y directly (output name kept)."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["Y"], "id0")],
        "identity_graph_output", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("shared_output")
def _(r):
    """Relu output r feeds Identity -> Y (graph output) and Sigmoid -> Z.
    Expect: Identity removed; Relu writes Y; Sigmoid reads Y."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["Y"], "id0"),
         node("Sigmoid", ["r"], ["Z"], "sig0")],
        "identity_shared_output", [fvi("X", [2, 3])],
        [fvi("Y", [2, 3]), fvi("Z", [2, 3])]))


@model("input_to_output")
def _(r):
    """Identity from graph input X straight to graph output Y.
    Expect: Identity kept (neither name may change)."""
    return finish(graph(
        [node("Identity", ["X"], ["Y"], "id0"),
         node("Relu", ["X"], ["Z"], "relu0")],
        "identity_input_to_output", [fvi("X", [2, 3])],
        [fvi("Y", [2, 3]), fvi("Z", [2, 3])]))


@model("initializer_to_output")
def _(r):
    """Identity from initializer W to graph output Y (W also used by Add).
    Expect: Identity kept; W kept."""
    w = raw_tensor("W", rand(r, 2, 3))
    return finish(graph(
        [node("Identity", ["W"], ["Y"], "id0"),
         node("Add", ["X", "W"], ["Z"], "add0")],
        "identity_initializer_to_output", [fvi("X", [2, 3])],
        [fvi("Y", [2, 3]), fvi("Z", [2, 3])], inits=[w]))


@model("chain")
def _(r):
    """Relu -> Identity -> Identity -> Sigmoid.
    Expect: both Identities removed; Sigmoid reads r."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["i0"], "id0"),
         node("Identity", ["i0"], ["i1"], "id1"),
         node("Sigmoid", ["i1"], ["Y"], "sig0")],
        "identity_chain", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("chain_output")
def _(r):
    """Relu -> Identity -> Identity -> graph output Y.
    Expect: both Identities removed; Relu writes Y."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["i0"], "id0"),
         node("Identity", ["i0"], ["Y"], "id1")],
        "identity_chain_output", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("output_input")
def _(r):
    """Relu writes graph output r; Identity(r) writes graph output Y.
    Expect: both output names survive, so one Identity must stay."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Identity", ["r"], ["Y"], "id0")],
        "identity_output_input", [fvi("X", [2, 3])],
        [fvi("r", [2, 3]), fvi("Y", [2, 3])]))


@model("in_if")
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


@model("if_outer_output")
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


@model("in_loop")
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
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

SPECS = {
    "middle": dict(both=[NI, kept("relu0", "sig0"), node_input("sig0", 0, "r")]),
    "graph_output": dict(both=[NI, node_output("relu0", 0, "Y")]),
    "shared_output": dict(both=[
        NI, node_output("relu0", 0, "Y"), node_input("sig0", 0, "Y")]),
    "input_to_output": dict(both=[
        op_count("Identity", 1), kept("id0", "relu0"),
        node_input("id0", 0, "X"), node_output("id0", 0, "Y")]),
    "initializer_to_output": dict(
        single=[op_count("Identity", 1), kept("id0", "add0"), init_kept("W")],
        default=[NI, kept("add0"), output_param("Y", lambda I: I("W"))]),
    "chain": dict(both=[NI, node_input("sig0", 0, "r")]),
    "chain_output": dict(both=[NI, node_output("relu0", 0, "Y")]),
    "output_input": dict(both=[op_count("Identity", 1), kept("relu0")]),
    "in_if": dict(both=[
        NI, kept("if0", "then_relu", "else_sig"),
        node_output("then_relu", 0, "then_out"), node_input("else_sig", 0, "X")]),
    "if_outer_output": dict(both=[
        op_count("Identity", 1), kept("then_id", "else_neg"),
        node_input("then_id", 0, "X"), node_output("then_id", 0, "then_out")]),
    "in_loop": dict(both=[
        op_count("Identity", 1), kept("loop0", "body_id_cond", "body_add"),
        removed("body_id_v"), node_input("body_add", 0, "v_in"), init_kept("one")]),
}
