"""cse: merge nodes computing the same operator on the same inputs (formatter/cse.c).

Its test models (builders registered with @model; testdata/cse/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP

from passes.build import (finish, fvi, graph, i64, if_node, Models, node, rand, raw_tensor, vi)
from passes.common import kept, node_input, op_count, removed

PASS = "cse"

MODELS = Models("cse", "cse")
model = MODELS.model


@model("twin_relu")
def _(r):
    """relu0(X), relu1(X) -> add0(a, b) -> Y.
    Expect: relu1 merged into relu0; add0 reads a twice."""
    return finish(graph(
        [node("Relu", ["X"], ["a"], "relu0"), node("Relu", ["X"], ["b"], "relu1"),
         node("Add", ["a", "b"], ["Y"], "add0")],
        "cse_twin_relu", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("shape_chain")
def _(r):
    """Two Shape -> Gather(index) -> Unsqueeze chains of a dynamic X (the exporters'
    repeated size lookups), each index its own initializer of equal value, feeding a
    Concat that a Reshape reads. Expect: the second chain merged node by node."""
    chain = []
    for k in (0, 1):
        chain += [node("Shape", ["X"], ["s%d" % k], "shape%d" % k),
                  node("Gather", ["s%d" % k, "i%d" % k], ["g%d" % k], "gather%d" % k, axis=0),
                  node("Unsqueeze", ["g%d" % k, "ax%d" % k], ["u%d" % k], "unsq%d" % k)]
    inits = [i64("i0", np.array(0)), i64("i1", np.array(0)), i64("ax0", [0]), i64("ax1", [0]),
             i64("rest", [-1])]
    return finish(graph(
        chain + [node("Concat", ["u0", "u1", "rest"], ["shape"], "cat0", axis=0),
                 node("Reshape", ["X", "shape"], ["Y"], "reshape0")],
        "cse_shape_chain", [fvi("X", ["N", 4, 4])], [fvi("Y", ["N", "N", "M"])], inits=inits))


@model("other_attrs")
def _(r):
    """Two Transposes of X with different perms. Expect: both kept."""
    return finish(graph(
        [node("Transpose", ["X"], ["a"], "tr0", perm=[1, 0, 2]),
         node("Transpose", ["X"], ["b"], "tr1", perm=[0, 2, 1]),
         node("Add", ["a", "b"], ["Y"], "add0")],
        "cse_other_attrs", [fvi("X", [3, 3, 3])], [fvi("Y", [3, 3, 3])]))


@model("shared_weight_conv")
def _(r):
    """conv0 and conv1, equal attributes, both reading X and the one weight W (4.5 KiB,
    compared as the same value, not by bytes). Expect: conv1 merged into conv0."""
    w = raw_tensor("W", rand(r, 16, 8, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["a"], "conv0", pads=[1, 1, 1, 1]),
         node("Conv", ["X", "W"], ["b"], "conv1", pads=[1, 1, 1, 1]),
         node("Mul", ["a", "b"], ["Y"], "mul0")],
        "cse_shared_weight_conv", [fvi("X", [1, 8, 5, 5])], [fvi("Y", [1, 16, 5, 5])],
        inits=[w]))


@model("big_equal_weights")
def _(r):
    """Like shared_weight_conv, but each Conv with its own copy of a weight over 4 KiB:
    large weights are compared by identity (reading them would page them in). Expect:
    both kept."""
    w = rand(r, 16, 8, 3, 3)
    return finish(graph(
        [node("Conv", ["X", "W0"], ["a"], "conv0", pads=[1, 1, 1, 1]),
         node("Conv", ["X", "W1"], ["b"], "conv1", pads=[1, 1, 1, 1]),
         node("Mul", ["a", "b"], ["Y"], "mul0")],
        "cse_big_equal_weights", [fvi("X", [1, 8, 5, 5])], [fvi("Y", [1, 16, 5, 5])],
        inits=[raw_tensor("W0", w), raw_tensor("W1", w.copy())]))


@model("qdq_pairs")
def _(r):
    """X -> two equal QuantizeLinear -> DequantizeLinear pairs -> Add. Expect: all kept
    (a quantized model's Q/DQ nodes stay as the quantizer wrote them)."""
    inits = [raw_tensor("s", np.array(0.05, np.float32)), raw_tensor("z", np.array(0, np.uint8))]
    nodes = []
    for k in (0, 1):
        nodes += [node("QuantizeLinear", ["X", "s", "z"], ["q%d" % k], "q%d" % k),
                  node("DequantizeLinear", ["q%d" % k, "s", "z"], ["d%d" % k], "dq%d" % k)]
    return finish(graph(nodes + [node("Add", ["d0", "d1"], ["Y"], "add0")],
                        "cse_qdq_pairs", [fvi("X", [2, 3])], [fvi("Y", [2, 3])], inits=inits))


@model("random_twins")
def _(r):
    """Two RandomUniformLike(X) with one seed -> Sub. Expect: both kept (a random op is
    never merged)."""
    return finish(graph(
        [node("RandomUniformLike", ["X"], ["a"], "rnd0", seed=1.0),
         node("RandomUniformLike", ["X"], ["b"], "rnd1", seed=1.0),
         node("Sub", ["a", "b"], ["Y"], "sub0")],
        "cse_random_twins", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("twin_outputs")
def _(r):
    """relu0(X) -> Y0 and relu1(X) -> Y1, both graph outputs. Expect: both kept (an
    output name must stay)."""
    return finish(graph(
        [node("Relu", ["X"], ["Y0"], "relu0"), node("Relu", ["X"], ["Y1"], "relu1")],
        "cse_twin_outputs", [fvi("X", [2, 3])], [fvi("Y0", [2, 3]), fvi("Y1", [2, 3])]))


@model("in_if")
def _(r):
    """then branch: two Sigmoid(X) of the outer X -> Mul. Expect: the second merged."""
    then_g = graph([node("Sigmoid", ["X"], ["a"], "then_sig0"),
                    node("Sigmoid", ["X"], ["b"], "then_sig1"),
                    node("Mul", ["a", "b"], ["then_out"], "then_mul")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Neg", ["X"], ["else_out"], "else_neg")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "cse_in_if", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


SPECS = {
    "twin_relu": dict(both=[removed("relu1"), node_input("add0", 1, "a")]),
    "shape_chain": dict(single=[removed("shape1", "gather1", "unsq1"),
                                node_input("cat0", 1, "u0"), op_count("Shape", 1)]),
    "other_attrs": dict(both=[kept("tr0", "tr1")]),
    "shared_weight_conv": dict(both=[removed("conv1"), node_input("mul0", 1, "a")]),
    "big_equal_weights": dict(both=[kept("conv0", "conv1")]),
    "qdq_pairs": dict(both=[kept("q0", "q1", "dq0", "dq1")]),
    "random_twins": dict(both=[kept("rnd0", "rnd1")],
                         no_numbers="random outputs: two runs never agree"),
    "twin_outputs": dict(both=[kept("relu0", "relu1")]),
    "in_if": dict(both=[removed("then_sig1"), node_input("then_mul", 1, "a")]),
}
