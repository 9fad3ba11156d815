"""eliminate-noops: remove nodes passing their input on unchanged (Dropout, x*1, ...)
(formatter/eliminate_noops.c).

Its test models (builders registered with @model; testdata/eliminate_noops/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP

from passes.build import (finish, fvi, graph, i64, if_node, INT64_MAX, IR, Models, node, OPSET,
                          raw_tensor, vi)
from passes.common import (_f64, _relu, attr, find_scoped, folded_input, kept, no_op, node_input,
                           node_output, removed, unchanged)

PASS = "eliminate-noops"

MODELS = Models("eliminate_noops", "noops")
model = MODELS.model


# ---------------------------------------------------------------------------
# the test models (testdata/eliminate_noops/)
# ---------------------------------------------------------------------------

def f32(name, value):
    return raw_tensor(name, np.array(value, np.float32))


def chain(name, op, extra_inputs=(), inits=(), xshape=(2, 3, 4), yshape=None, opset=OPSET,
          ir=IR, outputs=None, extra_graph_outputs=(), **attrs):
    """X -> relu0 -> op0(r, *extra_inputs) -> relu1 -> Y."""
    nodes = [node("Relu", ["X"], ["r"], "relu0"),
             node(op, ["r"] + list(extra_inputs), outputs or ["m"], "op0", **attrs),
             node("Relu", ["m"], ["Y"], "relu1")]
    outs = [fvi("Y", list(yshape or xshape))] + list(extra_graph_outputs)
    return finish(graph(nodes, name, [fvi("X", list(xshape))], outs, inits=inits), opset, ir)


def chain1(name, yshape, **attrs):
    """X -> sm0 -> op0 = Reshape-1(r) -> sm1 -> Y at opset 4. onnxruntime has
    no Relu before opset 6, but a Softmax-1 (of the last dim here)."""
    nodes = [node("Softmax", ["X"], ["r"], "sm0", axis=2),
             node("Reshape", ["r"], ["m"], "op0", **attrs),
             node("Softmax", ["m"], ["Y"], "sm1", axis=len(yshape) - 1)]
    # onnx infers no shape through Reshape-1: m is declared
    return finish(graph(nodes, name, [fvi("X", [2, 3, 4])], [fvi("Y", yshape)],
                        value_info=[fvi("m", yshape)]), 4, 3)


def transpose_pair(name, p1, p2, shared=False):
    """relu0 -> tr0(p1) -> op0(p2) -> relu1 -> Y; shared: relu2 reads tr0's
    output too (graph output Z)."""
    xshape = [2, 3, 4]
    mid = [xshape[i] for i in p1]
    nodes = [node("Relu", ["X"], ["r"], "relu0"),
             node("Transpose", ["r"], ["t"], "tr0", perm=p1),
             node("Transpose", ["t"], ["m"], "op0", perm=p2),
             node("Relu", ["m"], ["Y"], "relu1")]
    outs = [fvi("Y", [mid[i] for i in p2])]
    if shared:
        nodes.append(node("Relu", ["t"], ["Z"], "relu2"))
        outs.append(fvi("Z", mid))
    return finish(graph(nodes, name, [fvi("X", xshape)], outs))


# -- Dropout -------------------------------------------------------------------

@model("dropout")
def _(r):
    """Dropout(r), one output. Expect: op0 removed, relu1 reads r."""
    return chain("noops_dropout", "Dropout")


@model("dropout_mask_unused")
def _(r):
    """Dropout(r) -> (m, mask), mask read by nobody. Expect: op0 removed."""
    return chain("noops_dropout_mask_unused", "Dropout", outputs=["m", "mask"])


@model("dropout_training_false")
def _(r):
    """Dropout(r, ratio 0.5, training_mode false). Expect: op0 removed."""
    return chain("noops_dropout_training_false", "Dropout", ["ratio", "train"],
                 [f32("ratio", 0.5), raw_tensor("train", np.array(False))])


@model("dropout_training_true")
def _(r):
    """Dropout(r, ratio 0, training_mode true), as torch exports Dropout(p=0): it keeps
    every element, scaled by 1/(1-0). Expect: removed (it was kept)."""
    return chain("noops_dropout_training_true", "Dropout", ["ratio", "train"],
                 [f32("ratio", 0.0), raw_tensor("train", np.array(True))])


@model("dropout_training_ratio")
def _(r):
    """Dropout(r, ratio 0.5, training_mode true): it drops elements at random. Expect:
    kept."""
    return chain("noops_dropout_training_ratio", "Dropout", ["ratio", "train"],
                 [f32("ratio", 0.5), raw_tensor("train", np.array(True))])


@model("dropout_mask_used")
def _(r):
    """Dropout(r) -> (m, mask), mask a graph output. Expect: kept."""
    return chain("noops_dropout_mask_used", "Dropout", outputs=["m", "mask"],
                 extra_graph_outputs=[vi("mask", TP.BOOL, [2, 3, 4])])


@model("dropout_opset6_test")
def _(r):
    """Opset 6 Dropout is_test=1 (inference). Expect: op0 removed."""
    return chain("noops_dropout_opset6_test", "Dropout", opset=6, ir=3, is_test=1)


@model("dropout_opset6_train")
def _(r):
    """Opset 6 Dropout without is_test (training form). Expect: kept."""
    return chain("noops_dropout_opset6_train", "Dropout", opset=6, ir=3)


# -- Cast ----------------------------------------------------------------------

@model("cast_same")
def _(r):
    """Cast(r, to FLOAT) of a float. Expect: op0 removed."""
    return chain("noops_cast_same", "Cast", to=TP.FLOAT)


@model("cast_other")
def _(r):
    """Cast(r, to DOUBLE) -> Y (double). Expect: kept."""
    nodes = [node("Relu", ["X"], ["r"], "relu0"), node("Cast", ["r"], ["Y"], "op0", to=TP.DOUBLE)]
    return finish(graph(nodes, "noops_cast_other", [fvi("X", [2, 3])],
                        [vi("Y", TP.DOUBLE, [2, 3])]))


@model("castlike_same")
def _(r):
    """CastLike(r, a float constant), opset 15. Expect: op0 removed."""
    return chain("noops_castlike_same", "CastLike", ["like"], [f32("like", 1.0)], opset=15)


# -- Reshape, Flatten, Squeeze, Unsqueeze ----------------------------------------

@model("reshape_same")
def _(r):
    """Reshape(r [2,3,4], [2,3,4]). Expect: op0 removed."""
    return chain("noops_reshape_same", "Reshape", ["s"], [i64("s", [2, 3, 4])])


@model("reshape_zero_minus")
def _(r):
    """Reshape(r [2,3,4], [0,-1,4]). Expect: op0 removed."""
    return chain("noops_reshape_zero_minus", "Reshape", ["s"], [i64("s", [0, -1, 4])])


@model("reshape_changes")
def _(r):
    """Reshape(r [2,3,4], [6,4]). Expect: kept."""
    return chain("noops_reshape_changes", "Reshape", ["s"], [i64("s", [6, 4])], yshape=[6, 4])


@model("reshape_symbolic")
def _(r):
    """X [N,3,4]: Reshape(r, Concat(Unsqueeze(Gather(Shape(r), 0)), [3,4])):
    the target's first entry is the symbolic N. Expect: op0 removed."""
    nodes = [node("Relu", ["X"], ["r"], "relu0"),
             node("Shape", ["r"], ["sh"], "shape0"),
             node("Gather", ["sh", "zero"], ["n"], "gather0", axis=0),
             node("Unsqueeze", ["n", "ax0"], ["n1"], "unsq0"),
             node("Concat", ["n1", "tail"], ["s"], "concat0", axis=0),
             node("Reshape", ["r", "s"], ["m"], "op0"),
             node("Relu", ["m"], ["Y"], "relu1")]
    inits = [raw_tensor("zero", np.array(0, np.int64)), i64("ax0", [0]), i64("tail", [3, 4])]
    return finish(graph(nodes, "noops_reshape_symbolic", [fvi("X", ["N", 3, 4])],
                        [fvi("Y", ["N", 3, 4])], inits=inits))


@model("reshape_pair")
def _(r):
    """Reshape(Reshape(r [2,3,4], [6,4]) -> rs0, [4,6]) -> op0.
    Expect: rs0 removed, op0 reads r with its own shape."""
    nodes = [node("Relu", ["X"], ["r"], "relu0"),
             node("Reshape", ["r", "s0"], ["a"], "rs0"),
             node("Reshape", ["a", "s1"], ["m"], "op0"),
             node("Relu", ["m"], ["Y"], "relu1")]
    return finish(graph(nodes, "noops_reshape_pair", [fvi("X", [2, 3, 4])], [fvi("Y", [4, 6])],
                        inits=[i64("s0", [6, 4]), i64("s1", [4, 6])]))


@model("reshape_pair_zero")
def _(r):
    """Reshape(Reshape(r [2,3,4], [6,4]), [0,2,2]): the 0 copies a dim of
    the first Reshape's output. Expect: both kept."""
    nodes = [node("Relu", ["X"], ["r"], "relu0"),
             node("Reshape", ["r", "s0"], ["a"], "rs0"),
             node("Reshape", ["a", "s1"], ["m"], "op0"),
             node("Relu", ["m"], ["Y"], "relu1")]
    return finish(graph(nodes, "noops_reshape_pair_zero", [fvi("X", [2, 3, 4])],
                        [fvi("Y", [6, 2, 2])], inits=[i64("s0", [6, 4]), i64("s1", [0, 2, 2])]))


@model("reshape1_same")
def _(r):
    """Reshape-1 (opset 4, the target an attribute) of r [2,3,4] to [2,3,4].
    Expect: op0 removed."""
    return chain1("noops_reshape1_same", [2, 3, 4], shape=[2, 3, 4])


@model("reshape1_zero_minus")
def _(r):
    """Reshape-1 of r [2,3,4] to [0,-1,4] (0 copies, -1 is 3). Expect: op0 removed."""
    return chain1("noops_reshape1_zero_minus", [2, 3, 4], shape=[0, -1, 4])


@model("reshape1_changes")
def _(r):
    """Reshape-1 of r [2,3,4] to [6,4]. Expect: kept."""
    return chain1("noops_reshape1_changes", [6, 4], shape=[6, 4])


@model("reshape1_pair")
def _(r):
    """Reshape-1(Reshape-1(r [2,3,4], [6,4]) -> rs0, [4,6]) -> op0 (opset 4,
    Softmax-1 around as in chain1); and a
    second pair whose target [0,2,2] copies a dim of the first's output.
    Expect: rs0 removed, op0 reads r; rs1 and op1 kept."""
    nodes = [node("Softmax", ["X"], ["r"], "sm0", axis=2),
             node("Reshape", ["r"], ["a"], "rs0", shape=[6, 4]),
             node("Reshape", ["a"], ["m"], "op0", shape=[4, 6]),
             node("Softmax", ["m"], ["Y"], "sm1"),
             node("Reshape", ["r"], ["b"], "rs1", shape=[6, 4]),
             node("Reshape", ["b"], ["n"], "op1", shape=[0, 2, 2]),
             node("Softmax", ["n"], ["Z"], "sm2", axis=2)]
    return finish(graph(nodes, "noops_reshape1_pair", [fvi("X", [2, 3, 4])],
                        [fvi("Y", [4, 6]), fvi("Z", [6, 2, 2])],
                        value_info=[fvi("a", [6, 4]), fvi("m", [4, 6]), fvi("b", [6, 4]),
                                    fvi("n", [6, 2, 2])]), 4, 3)


@model("flatten_rank2")
def _(r):
    """Flatten(r [2,6], axis 1). Expect: op0 removed."""
    return chain("noops_flatten_rank2", "Flatten", xshape=(2, 6), axis=1)


@model("flatten_changes")
def _(r):
    """Flatten(r [2,3,4], axis 1) -> [2,12]. Expect: kept."""
    return chain("noops_flatten_changes", "Flatten", yshape=[2, 12], axis=1)


@model("squeeze_none")
def _(r):
    """Squeeze(r [2,3,4]) without axes: no dim is 1. Expect: op0 removed."""
    return chain("noops_squeeze_none", "Squeeze")


@model("squeeze_one")
def _(r):
    """Squeeze(r [2,1,4]) without axes drops the 1. Expect: kept."""
    return chain("noops_squeeze_one", "Squeeze", xshape=(2, 1, 4), yshape=[2, 4])


@model("squeeze_symbolic")
def _(r):
    """Squeeze(r [N,3,4]) without axes: N may be 1 when the model runs, so
    it is not known to keep the shape. Expect: kept."""
    return chain("noops_squeeze_symbolic", "Squeeze", xshape=("N", 3, 4), yshape=[None, 3, 4])


# -- Transpose -------------------------------------------------------------------

@model("transpose_identity")
def _(r):
    """Transpose(r, perm [0,1,2]). Expect: op0 removed."""
    return chain("noops_transpose_identity", "Transpose", perm=[0, 1, 2])


@model("transpose_pair_identity")
def _(r):
    """Transpose [1,0,2] twice. Expect: tr0 and op0 removed."""
    return transpose_pair("noops_transpose_pair_identity", [1, 0, 2], [1, 0, 2])


@model("transpose_pair_compose")
def _(r):
    """Transpose [0,2,1] then [2,0,1]. Expect: tr0 removed, op0 reads r with
    the composed perm."""
    return transpose_pair("noops_transpose_pair_compose", [0, 2, 1], [2, 0, 1])


@model("transpose_pair_shared")
def _(r):
    """Transpose [1,0,2] twice, the middle value also read by relu2.
    Expect: both kept."""
    return transpose_pair("noops_transpose_pair_shared", [1, 0, 2], [1, 0, 2], shared=True)


# -- Expand, Tile, Slice, Pad ------------------------------------------------------

@model("expand_same")
def _(r):
    """Expand(r [2,3,4], [3,1]). Expect: op0 removed."""
    return chain("noops_expand_same", "Expand", ["s"], [i64("s", [3, 1])])


@model("expand_up")
def _(r):
    """Expand(r [2,3,4], [2,2,3,4]). Expect: kept."""
    return chain("noops_expand_up", "Expand", ["s"], [i64("s", [2, 2, 3, 4])],
                 yshape=[2, 2, 3, 4])


@model("tile_ones")
def _(r):
    """Tile(r, [1,1,1]). Expect: op0 removed."""
    return chain("noops_tile_ones", "Tile", ["s"], [i64("s", [1, 1, 1])])


@model("slice_whole")
def _(r):
    """Slice(r [2,3,4], starts [0,-5], ends [INT64_MAX,3], axes [0,1]).
    Expect: op0 removed."""
    return chain("noops_slice_whole", "Slice", ["st", "en", "ax"],
                 [i64("st", [0, -5]), i64("en", [INT64_MAX, 3]), i64("ax", [0, 1])])


@model("slice_part")
def _(r):
    """Slice(r [2,3,4], starts [0], ends [2], axes [2]). Expect: kept."""
    return chain("noops_slice_part", "Slice", ["st", "en", "ax"],
                 [i64("st", [0]), i64("en", [2]), i64("ax", [2])], yshape=[2, 3, 2])


@model("pad_zero")
def _(r):
    """Pad(r, pads all 0, mode reflect). Expect: op0 removed."""
    return chain("noops_pad_zero", "Pad", ["p"], [i64("p", [0] * 6)], mode="reflect")


# -- Add 0, Sub 0, Mul 1, Div 1 ----------------------------------------------------

@model("add_zero")
def _(r):
    """Add(r [2,3,4], zeros [4]). Expect: op0 removed."""
    return chain("noops_add_zero", "Add", ["c"], [f32("c", np.zeros(4))])


@model("add_zero_first")
def _(r):
    """Add(zeros [3,1], r): the constant first. Expect: op0 removed."""
    nodes = [node("Relu", ["X"], ["r"], "relu0"), node("Add", ["c", "r"], ["m"], "op0"),
             node("Relu", ["m"], ["Y"], "relu1")]
    return finish(graph(nodes, "noops_add_zero_first", [fvi("X", [2, 3, 4])],
                        [fvi("Y", [2, 3, 4])], inits=[f32("c", np.zeros((3, 1)))]))


@model("add_zero_broadcast")
def _(r):
    """Add(r [3,4], zeros [2,3,4]) broadcasts r up. Expect: kept."""
    return chain("noops_add_zero_broadcast", "Add", ["c"], [f32("c", np.zeros((2, 3, 4)))],
                 xshape=(3, 4), yshape=[2, 3, 4])


@model("sub_zero")
def _(r):
    """Sub(r, 0 scalar). Expect: op0 removed."""
    return chain("noops_sub_zero", "Sub", ["c"], [f32("c", 0.0)])


@model("sub_neg_zero")
def _(r):
    """Sub(r, -0.0): x - (-0) is x + 0, which gives +0 for x = -0. Expect: kept."""
    return chain("noops_sub_neg_zero", "Sub", ["c"], [f32("c", [0.0, -0.0, 0.0, 0.0])])


@model("sub_from_zero")
def _(r):
    """Sub(0, r) negates. Expect: kept."""
    nodes = [node("Relu", ["X"], ["r"], "relu0"), node("Sub", ["c", "r"], ["m"], "op0"),
             node("Relu", ["m"], ["Y"], "relu1")]
    return finish(graph(nodes, "noops_sub_from_zero", [fvi("X", [2, 3, 4])],
                        [fvi("Y", [2, 3, 4])], inits=[f32("c", 0.0)]))


@model("mul_one")
def _(r):
    """Mul(r, ones [1,3,1]). Expect: op0 removed."""
    return chain("noops_mul_one", "Mul", ["c"], [f32("c", np.ones((1, 3, 1)))])


@model("mul_not_one")
def _(r):
    """Mul(r, [1,1,1,2]). Expect: kept."""
    return chain("noops_mul_not_one", "Mul", ["c"], [f32("c", [1, 1, 1, 2])])


@model("div_one")
def _(r):
    """Div(r, 1). Expect: op0 removed."""
    return chain("noops_div_one", "Div", ["c"], [f32("c", [1.0])])


# -- Concat, Split -------------------------------------------------------------------

@model("concat_one")
def _(r):
    """Concat(r) of one input. Expect: op0 removed."""
    return chain("noops_concat_one", "Concat", axis=1)


@model("split_one")
def _(r):
    """Split(r) into one output. Expect: op0 removed."""
    return chain("noops_split_one", "Split", axis=1)


@model("split_two_unused")
def _(r):
    """Split(r [2,4,4], axis 1) into two halves, the second read by nobody.
    Expect: kept (relu1 reads a [2,2,4] half)."""
    return chain("noops_split_two_unused", "Split", xshape=(2, 4, 4), yshape=[2, 2, 4],
                 outputs=["m", "unused"], axis=1)


# -- graph outputs and subgraphs ---------------------------------------------------------

@model("output")
def _(r):
    """relu0 -> Reshape(same shape) writes graph output Y. Expect: op0
    removed, relu0 writes Y."""
    nodes = [node("Relu", ["X"], ["r"], "relu0"), node("Reshape", ["r", "s"], ["Y"], "op0")]
    return finish(graph(nodes, "noops_output", [fvi("X", [2, 3])], [fvi("Y", [2, 3])],
                        inits=[i64("s", [2, 3])]))


@model("output_kept")
def _(r):
    """Y = Cast(X, to FLOAT), X a graph input: the name Y cannot move.
    Expect: op0 kept, with a warning."""
    nodes = [node("Cast", ["X"], ["Y"], "op0", to=TP.FLOAT)]
    return finish(graph(nodes, "noops_output_kept", [fvi("X", [2, 3])], [fvi("Y", [2, 3])]))


@model("in_if")
def _(r):
    """If: then Relu(X) -> Reshape(outer constant S = X's shape) -> Relu;
    else Relu(X) -> Add(outer zeros Z) -> Relu. Expect: then_rs and else_add
    removed, the rest kept."""
    then_g = graph([node("Relu", ["X"], ["t0"], "then_relu0"),
                    node("Reshape", ["t0", "S"], ["t1"], "then_rs"),
                    node("Relu", ["t1"], ["then_out"], "then_relu1")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Relu", ["X"], ["e0"], "else_relu0"),
                    node("Add", ["e0", "Z"], ["e1"], "else_add"),
                    node("Relu", ["e1"], ["else_out"], "else_relu1")],
                   "else_branch", [], [fvi("else_out", [2, 3])])
    return finish(graph([if_node("if0", "cond", ["Y"], then_g, else_g)], "noops_in_if",
                        [vi("cond", TP.BOOL, []), fvi("X", [2, 3])], [fvi("Y", [2, 3])],
                        inits=[i64("S", [2, 3]), f32("Z", np.zeros(3))]))


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

# ---------------------------------------------------------------------------
# eliminate-noops: most models read X -> relu0 -> op0 -> relu1 -> Y, so a removed
# op0 leaves relu1 reading relu0's output r.
# ---------------------------------------------------------------------------

def composed_perm(first, second, node):
    """node's perm is Transpose `first` then `second` of the input model,
    composed here by transposing an index array with numpy."""
    def fn(inp, out):
        _, a = find_scoped(inp, first)
        _, b = find_scoped(inp, second)
        rank = len(attr(a, "perm"))
        x = np.arange(np.prod(range(2, 2 + rank))).reshape(range(2, 2 + rank))
        exp = np.transpose(np.transpose(x, attr(a, "perm")), attr(b, "perm"))
        _, n = find_scoped(out, node)
        got = np.transpose(x, list(attr(n, "perm")))
        return None if got.shape == exp.shape and (got == exp).all() else \
            "%s perm %s is not %s then %s" % (node, list(attr(n, "perm")), first, second)
    return ("%s composes %s and %s" % (node, first, second), fn)


GONE = [removed("op0"), node_input("relu1", 0, "r")]


STAYS = [unchanged("op0")]


GONE1 = [removed("op0"), node_input("sm1", 0, "r")]  # chain1: Softmax-1 for Relu


SPECS = {
    "dropout": dict(both=GONE),
    "dropout_mask_unused": dict(both=GONE),
    "dropout_training_false": dict(both=GONE),
    "dropout_training_true": dict(both=GONE),
    "dropout_training_ratio": dict(both=STAYS, no_numbers="a training-mode Dropout drops elements at random"),
    "dropout_mask_used": dict(both=STAYS),
    # onnxruntime has no Dropout-6 kernel: the output of the first (two
    # Relus) is compared with numpy, the second (kept) is not run
    "dropout_opset6_test": dict(both=GONE, reference=lambda f: {"Y": _relu(_f64(f, "X"))}),
    "dropout_opset6_train": dict(both=STAYS, no_numbers="onnxruntime has no Dropout-6"),
    "cast_same": dict(both=GONE),
    "cast_other": dict(both=STAYS),
    "castlike_same": dict(both=GONE),
    "reshape_same": dict(both=GONE),
    "reshape_zero_minus": dict(both=GONE),
    "reshape_changes": dict(both=STAYS),
    "reshape_symbolic": dict(both=GONE, default=[no_op("Shape"), no_op("Concat")]),
    "reshape_pair": dict(both=[removed("rs0"), node_input("op0", 0, "r"),
                                     folded_input("op0", 1, lambda I: I("s1"))]),
    "reshape_pair_zero": dict(both=[unchanged("rs0", "op0")]),
    "reshape1_same": dict(both=GONE1),
    "reshape1_zero_minus": dict(both=GONE1),
    "reshape1_changes": dict(both=STAYS),
    "reshape1_pair": dict(both=[removed("rs0"), node_input("op0", 0, "r"),
                                      unchanged("rs1", "op1")]),
    "flatten_rank2": dict(both=GONE),
    "flatten_changes": dict(both=STAYS),
    "squeeze_none": dict(both=GONE),
    "squeeze_one": dict(both=STAYS),
    "squeeze_symbolic": dict(both=STAYS),
    "transpose_identity": dict(both=GONE),
    "transpose_pair_identity": dict(both=[removed("tr0", "op0"),
                                                node_input("relu1", 0, "r")]),
    "transpose_pair_compose": dict(both=[removed("tr0"), node_input("op0", 0, "r"),
                                               composed_perm("tr0", "op0", "op0")]),
    "transpose_pair_shared": dict(both=[unchanged("tr0", "op0")]),
    "expand_same": dict(both=GONE),
    "expand_up": dict(both=STAYS),
    "tile_ones": dict(both=GONE),
    "slice_whole": dict(both=GONE),
    "slice_part": dict(both=STAYS),
    "pad_zero": dict(both=GONE),
    "add_zero": dict(both=GONE),
    "add_zero_first": dict(both=GONE),
    "add_zero_broadcast": dict(both=STAYS),
    "sub_zero": dict(both=GONE),
    "sub_neg_zero": dict(both=STAYS),
    "sub_from_zero": dict(both=STAYS),
    "mul_one": dict(both=GONE),
    "mul_not_one": dict(both=STAYS),
    "div_one": dict(both=GONE),
    "concat_one": dict(both=GONE),
    "split_one": dict(both=GONE),
    "split_two_unused": dict(both=STAYS),
    "output": dict(both=[removed("op0"), node_output("relu0", 0, "Y")]),
    "output_kept": dict(both=STAYS, warns=["op0"]),
    "in_if": dict(both=[removed("then_rs", "else_add"), node_input("then_relu1", 0, "t0"),
                              node_input("else_relu1", 0, "e0"), kept("if0")]),
}
