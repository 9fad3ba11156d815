"""bn-to-conv: turn a remaining BatchNormalization into a depthwise 1x1 Conv
(formatter/bn_to_conv.c).

Its test models (builders registered with @model; testdata/bn_to_conv/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP

from passes.build import (bn, bn_inits, f16vi, finish, finish_with, fvi, graph, if_node, Models,
                          node, raw_tensor, vi)
from passes.common import (bn_as_conv, init_count, kept, NBN, node_input, op_count, unchanged)

PASS = "bn-to-conv"

MODELS = Models("bn_to_conv", "bntoconv")
model = MODELS.model


# ---------------------------------------------------------------------------
# bn-to-conv: an isolated BN becomes a depthwise 1x...x1 Conv (group = C)
# ---------------------------------------------------------------------------

@model("rank3")
def _(r):
    """BN on graph input X [2,3,7] (rank 3).
    Expect: no BN; Y made by a Conv reading X, group 3, kernel_shape [1],
    weight [3,1,1] = s, bias = beta - mean*s."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_rank3", [fvi("X", [2, 3, 7])], [fvi("Y", [2, 3, 7])],
        inits=bn_inits(r, "bn0", 3)))


@model("rank4")
def _(r):
    """BN (epsilon 0.1) on graph input X [1,4,5,5] -> Relu.
    Expect: no BN; b made by a Conv reading X, group 4, kernel_shape [1,1];
    relu0 reads b."""
    return finish(graph(
        [bn("X", "b", "bn0", "bn0", epsilon=0.1),
         node("Relu", ["b"], ["Y"], "relu0")],
        "bntoconv_rank4", [fvi("X", [1, 4, 5, 5])], [fvi("Y", [1, 4, 5, 5])],
        inits=bn_inits(r, "bn0", 4)))


@model("new_node")
def _(r):
    """BN with a doc_string, epsilon and momentum on X [1,2,3,3].
    Expect: a Conv written as a new node: the BN's name, no doc_string (it
    described the BatchNormalization), only group and kernel_shape."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0", doc_string="normalizes the batch", epsilon=1e-3, momentum=0.8)],
        "bntoconv_new_node", [fvi("X", [1, 2, 3, 3])], [fvi("Y", [1, 2, 3, 3])],
        inits=bn_inits(r, "bn0", 2)))


def conv_as_new_node(name):
    """The Conv named `name` keeps no field of the node it replaced."""
    def fn(inp, out):
        n = next((n for n in out.graph.node if n.name == name), None)
        if n is None or n.op_type != "Conv":
            return "no Conv named %s" % name
        attrs = sorted(a.name for a in n.attribute)
        if n.doc_string or n.domain or attrs != ["group", "kernel_shape"]:
            return "Conv %s: doc_string %r, domain %r, attributes %s" % (name, n.doc_string, n.domain, attrs)
        return None
    return ("%s is written as a new node" % name, fn)


@model("rank5")
def _(r):
    """BN on graph input X [1,3,2,4,4] (rank 5).
    Expect: no BN; Y made by a Conv, group 3, kernel_shape [1,1,1]."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_rank5", [fvi("X", [1, 3, 2, 4, 4])], [fvi("Y", [1, 3, 2, 4, 4])],
        inits=bn_inits(r, "bn0", 3)))


@model("symbolic")
def _(r):
    """BN on graph input X [N,3,H,W] (symbolic dims, rank 4 known).
    Expect: no BN; Y made by a Conv, group 3, kernel_shape [1,1]."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_symbolic", [fvi("X", ["N", 3, "H", "W"])], [fvi("Y", ["N", 3, "H", "W"])],
        inits=bn_inits(r, "bn0", 3)))


@model("value_info")
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


@model("unknown_rank")
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


@model("rank2")
def _(r):
    """BN on graph input X [3,4] (rank 2: no Conv form).
    Expect: bn0 kept (a warning naming it)."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_rank2", [fvi("X", [3, 4])], [fvi("Y", [3, 4])],
        inits=bn_inits(r, "bn0", 4)))


@model("float16")
def _(r):
    """float16 BN on graph input X [1,3,4,4].
    Expect: no BN; Y made by a depthwise 1x1 Conv whose weight and bias
    are float16."""
    return finish(graph(
        [bn("X", "Y", "bn0", "bn0")],
        "bntoconv_float16", [f16vi("X", [1, 3, 4, 4])], [f16vi("Y", [1, 3, 4, 4])],
        inits=bn_inits(r, "bn0", 3, np.float16)))


@model("float16_data")
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


@model("unknown_dtype")
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


@model("float16_overflow")
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


@model("in_if")
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
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

SPECS = {
    # -- bn-to-conv ------------------------------------------------------------
    "rank3": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 3)], default=[init_count(2)]),
    "rank4": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4), node_input("relu0", 0, "b")],
        default=[init_count(2)]),
    "new_node": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4), conv_as_new_node("bn0")],
        default=[init_count(2)]),
    "rank5": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 5)], default=[init_count(2)]),
    "symbolic": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4)], default=[init_count(2)]),
    "value_info": dict(
        both=[NBN, op_count("Conv", 1), kept("reshape0"), bn_as_conv("bn0", 3)],
        default=[init_count(3)]),
    "float16": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4)], default=[init_count(2)]),
    # float16 data, float32 statistics: the Conv takes the data's type
    "float16_data": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("bn0", 4, np.float16)],
        default=[init_count(2)]),
    "unknown_dtype": dict(
        both=[op_count("Conv", 0), unchanged("bn0")], warns=["bn0", "element type"],
        no_numbers="onnxruntime has no com.example:Opaque"),
    # a factor of 1e5 is inf as a float16 weight
    "float16_overflow": dict(
        both=[op_count("Conv", 0), unchanged("bn0", "mul0")], warns=["bn0"]),
    "in_if": dict(
        both=[NBN, op_count("Conv", 1), bn_as_conv("then_bn", 4), kept("if0", "else_neg")],
        default=[init_count(2)]),
    "unknown_rank": dict(
        both=[op_count("Conv", 0), unchanged("bn0", "flatten0")], warns=["bn0"]),
    "rank2": dict(both=[op_count("Conv", 0), unchanged("bn0")], warns=["bn0"]),
}
