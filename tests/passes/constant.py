"""constant: turn Constant nodes into initializers (formatter/constant.c).

Its test models (builders registered with @model; testdata/constant/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP
from onnx import numpy_helper

from passes.build import (const, finish, FLOAT, fvi, graph, if_node, Models, node, rand,
                          raw_tensor, typed_tensor, vi)
from passes.common import (_f64, fed_by_param, initializer, input_constant, kept, NC, op_count,
                           producer, same_array, vi_kept, vi_removed)

PASS = "constant"

MODELS = Models("constant", "constant")
model = MODELS.model


# ---------------------------------------------------------------------------
# constant: Constant nodes become parameters (initializers) of their graph
# ---------------------------------------------------------------------------

@model("value_raw")
def _(r):
    """Constant `value` (float [2,3], raw_data) -> Add.
    Expect: no Constant; Add input 1 is an initializer equal to the tensor."""
    c = raw_tensor("c_value", rand(r, 2, 3))
    return finish(graph(
        [const("const0", "c", value=c), node("Add", ["X", "c"], ["Y"], "add0")],
        "constant_value_raw", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("rewritten", ssa=False)
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


@model("value_info")
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


@model("value_float_data")
def _(r):
    """Constant `value` (float [2,3] in float_data, not raw) -> Mul.
    Expect: no Constant; Mul input 1 is an initializer with the same floats."""
    c = typed_tensor("c_value", rand(r, 2, 3), FLOAT)
    return finish(graph(
        [const("const0", "c", value=c), node("Mul", ["X", "c"], ["Y"], "mul0")],
        "constant_value_float_data", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("value_int64")
def _(r):
    """Constant `value` (int64 [2] in int64_data) as Reshape's shape.
    Expect: no Constant; Reshape input 1 is an int64 initializer [3, 2]."""
    s = typed_tensor("shape_value", np.array([3, 2], np.int64), TP.INT64)
    return finish(graph(
        [const("const0", "shape", value=s),
         node("Reshape", ["X", "shape"], ["Y"], "reshape0")],
        "constant_value_int64", [fvi("X", [2, 3])], [fvi("Y", [3, 2])]))


@model("value_float")
def _(r):
    """Constant `value_float` = 2.5 -> Mul.
    Expect: no Constant; Mul input 1 is a float32 scalar initializer 2.5."""
    return finish(graph(
        [const("const0", "k", value_float=2.5), node("Mul", ["X", "k"], ["Y"], "mul0")],
        "constant_value_float", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("value_floats")
def _(r):
    """Constant `value_floats` = [0.5, -1.25, 3] -> Add (broadcast over [2,3]).
    Expect: no Constant; Add input 1 is a float32 [3] initializer."""
    return finish(graph(
        [const("const0", "b", value_floats=[0.5, -1.25, 3.0]),
         node("Add", ["X", "b"], ["Y"], "add0")],
        "constant_value_floats", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("value_int")
def _(r):
    """Constant `value_int` = 1 as Gather's (scalar) index.
    Expect: no Constant; Gather input 1 is an int64 scalar initializer 1."""
    return finish(graph(
        [const("const0", "idx", value_int=1),
         node("Gather", ["X", "idx"], ["Y"], "gather0", axis=0)],
        "constant_value_int", [fvi("X", [2, 3])], [fvi("Y", [3])]))


@model("value_ints")
def _(r):
    """Constant `value_ints` = [0, 3] as Unsqueeze-13's axes.
    Expect: no Constant; Unsqueeze input 1 is an int64 [2] initializer."""
    return finish(graph(
        [const("const0", "axes", value_ints=[0, 3]),
         node("Unsqueeze", ["X", "axes"], ["Y"], "unsqueeze0")],
        "constant_value_ints", [fvi("X", [2, 3])], [fvi("Y", [1, 2, 3, 1])]))


@model("value_string")
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


@model("value_strings")
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


@model("graph_output")
def _(r):
    """A Constant whose output C is directly the first graph output.
    Expect: no Constant; outputs still [C, Y]; C is still valid and holds
    the constant's value (an initializer named C, or fed from one)."""
    c = raw_tensor("c_value", rand(r, 2, 2))
    return finish(graph(
        [const("const0", "C", value=c), node("Relu", ["X"], ["Y"], "relu0")],
        "constant_graph_output", [fvi("X", [2, 3])],
        [fvi("C", [2, 2]), fvi("Y", [2, 3])]))


@model("two_consumers")
def _(r):
    """One Constant feeding Add and Mul.
    Expect: no Constant; both consumers read an initializer with its value."""
    c = raw_tensor("c_value", rand(r, 2, 3))
    return finish(graph(
        [const("const0", "c", value=c),
         node("Add", ["X", "c"], ["a"], "add0"),
         node("Mul", ["a", "c"], ["Y"], "mul0")],
        "constant_two_consumers", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("in_if")
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


@model("weights")
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
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

def output_holds(out_name, const_name):
    """Main graph output out_name still carries the Constant's value: it is an
    initializer, or an Identity chain from one."""
    def fn(inp, out):
        exp = input_constant(inp, const_name)
        g, name = out.graph, out_name
        for _ in range(16):
            t = initializer(g, name)
            if t is not None:
                err = same_array(numpy_helper.to_array(t), exp)
                return ("initializer %s: %s" % (name, err)) if err else None
            p = producer(g, name)
            if p is None:
                return "%s is neither an initializer nor produced by a node" % name
            if p.op_type != "Identity":
                return "%s is made by %s node %s" % (name, p.op_type, p.name)
            name = p.input[0]
        return "Identity chain too long"
    return ("output %s holds the value of %s" % (out_name, const_name), fn)


SPECS = {
    "value_raw": dict(both=[NC, fed_by_param("add0", 1, "const0")]),
    "rewritten": dict(
        single=[op_count("Constant", 3)], default=[NC], warns=["const0", "const1", "const2"],
        single_not_ssa="c and k are written twice and de-inplace does not run",
        reference=lambda f: {"Y": (_f64(f, "X") + np.array([1.5, -2.0, 0.25])) *
                             np.array([2.0, 0.5, -1.0]) + np.array([0.125, 4.0, -3.0])}),
    "value_info": dict(
        both=[NC, fed_by_param("slice0", 3, "const0"), fed_by_param("slice0", 4, "const1"),
              vi_removed("axes"), vi_kept("steps")]),
    "value_float_data": dict(both=[NC, fed_by_param("mul0", 1, "const0")]),
    "value_int64": dict(both=[NC, fed_by_param("reshape0", 1, "const0")]),
    "value_float": dict(both=[NC, fed_by_param("mul0", 1, "const0")]),
    "value_floats": dict(both=[NC, fed_by_param("add0", 1, "const0")]),
    "value_int": dict(both=[NC, fed_by_param("gather0", 1, "const0")]),
    "value_ints": dict(both=[NC, fed_by_param("unsqueeze0", 1, "const0")]),
    "value_string": dict(both=[
        NC, fed_by_param("where0", 1, "const_pos"), fed_by_param("where0", 2, "const_neg")]),
    "value_strings": dict(both=[
        NC, fed_by_param("where0", 1, "const_a"), fed_by_param("where0", 2, "const_b")]),
    "graph_output": dict(both=[NC, output_holds("C", "const0"), kept("relu0")]),
    "two_consumers": dict(both=[
        NC, fed_by_param("add0", 1, "const0"), fed_by_param("mul0", 1, "const0")]),
    "in_if": dict(both=[
        NC, kept("if0"), fed_by_param("then_add", 1, "then_const"),
        fed_by_param("else_mul", 1, "else_const")]),
    # other default passes (fuse-bias) may legitimately fold add0 into the
    # Conv bias, so B and A are only checked with --passes=constant
    "weights": dict(
        both=[NC, kept("conv0", "relu0"), fed_by_param("conv0", 1, "const_w")],
        single=[kept("add0"), fed_by_param("conv0", 2, "const_b"),
                fed_by_param("add0", 1, "const_a")]),
}
