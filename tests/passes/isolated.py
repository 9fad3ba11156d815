"""isolated: remove nodes that reach no output, unused initializers and value_info
(formatter/isolated.c).

Its test models (builders registered with @model; testdata/isolated/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
from onnx import TensorProto as TP

from passes.build import (const, finish, fvi, graph, if_node, Models, node, rand, raw_tensor, vi)
from passes.common import (graph_input_kept, init_count, init_kept, init_removed, kept, NC,
                           removed, vi_kept, vi_removed)

PASS = "isolated"

MODELS = Models("isolated", "isolated")
model = MODELS.model


# ---------------------------------------------------------------------------
# isolated: remove what reaches no graph output (outer-scope uses count)
# ---------------------------------------------------------------------------

@model("dead_chain")
def _(r):
    """Dead chain Sigmoid -> Tanh beside the live Relu.
    Expect: dead0, dead1 removed; relu0 kept."""
    return finish(graph(
        [node("Sigmoid", ["X"], ["d0"], "dead0"),
         node("Relu", ["X"], ["Y"], "relu0"),
         node("Tanh", ["d0"], ["d1"], "dead1")],
        "isolated_dead_chain", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("unused_initializer")
def _(r):
    """Initializer U is used by nothing, W by add0.
    Expect: U removed, W kept with its values."""
    w = raw_tensor("W", rand(r, 2, 3))
    u = raw_tensor("U", rand(r, 4))
    return finish(graph(
        [node("Add", ["X", "W"], ["Y"], "add0")],
        "isolated_unused_initializer", [fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        inits=[u, w]))


@model("value_info")
def _(r):
    """value_info for live r and for dead d0 (made by dead0).
    Expect: dead0 removed; value_info d0 removed; value_info r kept."""
    return finish(graph(
        [node("Relu", ["X"], ["r"], "relu0"),
         node("Tanh", ["X"], ["d0"], "dead0"),
         node("Sigmoid", ["r"], ["Y"], "sig0")],
        "isolated_value_info", [fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        value_info=[fvi("d0", [2, 3]), fvi("r", [2, 3])]))


@model("outer_scope_use")
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


@model("outer_initializer")
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


@model("dead_in_subgraph")
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


@model("dead_if")
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


@model("unused_input")
def _(r):
    """Graph input Z is used by nothing.
    Expect: graph inputs still [X, Z] (the model's interface)."""
    return finish(graph(
        [node("Relu", ["X"], ["Y"], "relu0")],
        "isolated_unused_input", [fvi("X", [2, 3]), fvi("Z", [4])],
        [fvi("Y", [2, 3])]))


@model("initializer_input")
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


@model("dead_constant")
def _(r):
    """A Constant node whose output nothing uses.
    Expect: with isolated only: dead_const removed.  With the default passes:
    no Constant and no initializer left for it (constant then isolated)."""
    c = raw_tensor("c_value", rand(r, 5))
    return finish(graph(
        [const("dead_const", "c", value=c), node("Relu", ["X"], ["Y"], "relu0")],
        "isolated_dead_constant", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

SPECS = {
    "dead_chain": dict(both=[removed("dead0", "dead1"), kept("relu0")]),
    "unused_initializer": dict(both=[init_removed("U"), init_kept("W"), kept("add0")]),
    "value_info": dict(both=[
        removed("dead0"), kept("relu0", "sig0"), vi_removed("d0"), vi_kept("r")]),
    "outer_scope_use": dict(both=[
        kept("outer0", "outer1", "if0", "then_add", "else_mul")]),
    "outer_initializer": dict(both=[kept("if0", "then_add"), init_kept("K")]),
    "dead_in_subgraph": dict(both=[
        removed("sub_dead0"), removed("feed_dead"), kept("if0", "then_relu", "else_neg")]),
    "dead_if": dict(both=[removed("dead_if", "feed_if"), kept("relu0")]),
    "unused_input": dict(both=[graph_input_kept("Z"), kept("relu0")]),
    "initializer_input": dict(both=[
        graph_input_kept("B"), init_kept("B"), init_kept("W"), kept("add0")]),
    "dead_constant": dict(
        single=[removed("dead_const")],
        default=[NC, init_count(0), kept("relu0")]),
}
