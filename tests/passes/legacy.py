"""legacy: the legacy-form passes (slice, clip, pad, resize) together: the other
nodes adapted when they raise the opset (formatter/opset.c; each next to a
Clip-6 that triggers it), mixtures of legacy forms, and models that cannot
be adapted.

Its test models (builders registered with @model; testdata/legacy/<case>.onnx,
run by tests/test_legacy.py) and what test_legacy must see (EXPECT)."""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper

from passes.build import (BOOL, dynamic_scales, finish_at, fvi, init, INT32_MAX, INT64, INT64_MAX,
                          Models, node, out_dims, vi)

MODELS = Models("legacy", one_line_doc=True)
model = MODELS.model


def bn_params(r, prefix, c, dtype=np.float32):
    return [init(prefix + "_scale", r.uniform(0.5, 1.5, c).astype(dtype)),
            init(prefix + "_bias", r.uniform(-0.5, 0.5, c).astype(dtype)),
            init(prefix + "_mean", r.uniform(-0.2, 0.2, c).astype(dtype)),
            init(prefix + "_var", r.uniform(0.5, 2.0, c).astype(dtype))]


# ---------------------------------------------------------------------------
# other nodes adapted when the opset is raised (each next to a Clip-6 that triggers it)
# ---------------------------------------------------------------------------

@model("upsample7_nearest_clip")
def _(r):
    """Upsample-7 nearest, scales attribute [1,1,2,1.5], then Clip-6, opset 7 (IR 3).
    Expect: opset 11; up0 becomes Resize-11 (x, roi, scales=[1,1,2,1.5]) asymmetric + floor."""
    shape, sc = [1, 2, 3, 4], [1.0, 1.0, 2.0, 1.5]
    return finish_at("upsample7_nearest_clip", 7,
                     [node("Upsample", ["x"], ["u"], "up0", scales=sc),
                   node("Clip", ["u"], ["y"], "clip0", min=-0.5, max=0.5)],
                     [fvi("x", shape)], [fvi("y", out_dims(shape, sc))])


@model("upsample7_linear_clip")
def _(r):
    """Upsample-7 linear, scales attribute [1,1,1.5,2], then Clip-6, opset 8 (IR 3).
    Expect: opset 11; up0 becomes Resize-11 linear, asymmetric."""
    shape, sc = [1, 2, 3, 4], [1.0, 1.0, 1.5, 2.0]
    return finish_at("upsample7_linear_clip", 8,
                     [node("Upsample", ["x"], ["u"], "up0", mode="linear", scales=sc),
                   node("Clip", ["u"], ["y"], "clip0", min=-0.5, max=0.5)],
                     [fvi("x", shape)], [fvi("y", out_dims(shape, sc))])


@model("upsample9_nearest_clip")
def _(r):
    """Upsample-9 nearest, scales initializer [1,1,1.5,3], then Clip-6, opset 9.
    Expect: opset 11; up0 becomes Resize-11 (x, roi, scales) asymmetric + floor."""
    shape, sc = [1, 2, 3, 4], [1.0, 1.0, 1.5, 3.0]
    return finish_at("upsample9_nearest_clip", 9,
                     [node("Upsample", ["x", "up_scales"], ["u"], "up0", mode="nearest"),
                   node("Clip", ["u"], ["y"], "clip0", min=-0.5, max=0.5)],
                     [fvi("x", shape)], [fvi("y", out_dims(shape, sc))],
                     [init("up_scales", np.array(sc, np.float32))])


@model("upsample9_linear_clip")
def _(r):
    """Upsample-9 linear, scales initializer [1,1,1.5,1.5], then Clip-6 (max only), opset 9.
    Expect: opset 11; up0 becomes Resize-11 linear, asymmetric."""
    shape, sc = [1, 2, 4, 5], [1.0, 1.0, 1.5, 1.5]
    return finish_at("upsample9_linear_clip", 9,
                     [node("Upsample", ["x", "up_scales"], ["u"], "up0", mode="linear"),
                   node("Clip", ["u"], ["y"], "clip0", max=0.25)],
                     [fvi("x", shape)], [fvi("y", out_dims(shape, sc))],
                     [init("up_scales", np.array(sc, np.float32))])


@model("upsample9_dynamic_scales_clip")
def _(r):
    """Upsample-9 nearest with run-time scales (1, 1, 1+|s|) (Upsample scales are >= 1, so floor
    is always right) -> Clip-6, opset 9.
    Expect: opset 11; up0 becomes Resize-11 (x, roi, up_scales) asymmetric + floor."""
    pre, inits = dynamic_scales("up", 1.0)
    return finish_at("upsample9_dynamic_scales_clip", 9,
                     pre + [node("Upsample", ["x", "up_scales"], ["u"], "up0", mode="nearest"),
                         node("Clip", ["u"], ["y"], "clip0", min=-0.5, max=0.5)],
                     [fvi("x", [1, 2, 3, 4]), fvi("s", [2])], [fvi("y", [1, 2, "h", "w"])], inits)


@model("topk1_clip")
def _(r):
    """TopK-1 k=3 (default axis -1) and TopK-1 k=2 axis=1, next to a Clip-6, opset 9.
    Expect: opset 11; topk0/topk1 inputs [x, K] with K int64 [1] = [3] / [2]; axis kept."""
    return finish_at("topk1_clip", 9,
                     [node("TopK", ["x"], ["v", "i"], "topk0", k=3),
                   node("Clip", ["v"], ["y"], "clip0", min=-0.5, max=0.5),
                   node("TopK", ["x"], ["v2", "i2"], "topk1", k=2, axis=1)],
                     [fvi("x", [2, 4, 6])],
                     [fvi("y", [2, 4, 3]), vi("i", INT64, [2, 4, 3]),
                   fvi("v2", [2, 2, 6]), vi("i2", INT64, [2, 2, 6])])


@model("topk1_no_trigger")
def _(r):
    """TopK-1 alone at opset 9: no slice/clip/pad/resize rewrite, so no reason to raise the opset.
    Expect: nothing changes (opset 9, topk0 keeps its k attribute)."""
    return finish_at("topk1_no_trigger", 9,
                     [node("TopK", ["x"], ["v", "i"], "topk0", k=2)],
                     [fvi("x", [3, 5])], [fvi("v", [3, 2]), vi("i", INT64, [3, 2])])


@model("bn7_clip")
def _(r):
    """BatchNormalization-7 spatial=1 epsilon=1e-3 momentum=0.8 -> Clip-6(0, 6), opset 7 (IR 3).
    Expect: opset 11; a BatchNormalization left has no spatial attribute (epsilon kept);
    clip0 inputs [., min, max]."""
    return finish_at("bn7_clip", 7,
                     [node("BatchNormalization", ["x", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                        ["b"], "bn0", spatial=1, epsilon=1e-3, momentum=0.8),
                   node("Clip", ["b"], ["y"], "clip0", min=0.0, max=6.0)],
                     [fvi("x", [1, 3, 4, 4])], [fvi("y", [1, 3, 4, 4])],
                     bn_params(r, "bn", 3))


@model("bn7_spatial0_clip")
def _(r):
    """BatchNormalization-7 spatial=0 (per-activation: scale/bias/mean/var of shape [C,H,W]),
    -> Clip-6, opset 7 (IR 3).  BN-9 has no such form: dropping `spatial` would be wrong.
    Expect either: the BN rewritten into something computing the same (Mul/Add ...), or
    nothing legacy rewritten and a warning naming BatchNormalization."""
    c, h, w = 2, 3, 3
    params = [init("bn_scale", r.uniform(0.5, 1.5, (c, h, w)).astype(np.float32)),
              init("bn_bias", r.uniform(-0.5, 0.5, (c, h, w)).astype(np.float32)),
              init("bn_mean", r.uniform(-0.2, 0.2, (c, h, w)).astype(np.float32)),
              init("bn_var", r.uniform(0.5, 2.0, (c, h, w)).astype(np.float32))]
    return finish_at("bn7_spatial0_clip", 7,
                     [node("BatchNormalization", ["x", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                        ["b"], "bn0", spatial=0, epsilon=1e-3),
                   node("Clip", ["b"], ["y"], "clip0", min=-1.0, max=1.0)],
                     [fvi("x", [1, c, h, w])], [fvi("y", [1, c, h, w])], params)


@model("dropout7_clip")
def _(r):
    """Dropout-7 ratio=0.3 (inference: identity) -> Clip-6, opset 8 (IR 3).
    Expect: opset 11; drop0 keeps ratio, no legacy attributes; clip0 in input form."""
    return finish_at("dropout7_clip", 8,
                     [node("Dropout", ["x"], ["d"], "drop0", ratio=0.3),
                   node("Clip", ["d"], ["y"], "clip0", min=-0.2, max=0.3)],
                     [fvi("x", [2, 5])], [fvi("y", [2, 5])])


@model("dropout7_mask_clip")
def _(r):
    """Dropout-7 whose mask (float in Dropout-7, bool from Dropout-10 on) is a graph output,
    -> Clip-6, opset 8 (IR 3).
    Expect either: converted with the float mask kept (e.g. Cast of the bool mask), computing the
    same, or nothing legacy rewritten and a warning naming Dropout."""
    return finish_at("dropout7_mask_clip", 8,
                     [node("Dropout", ["x"], ["d", "mask"], "drop0", ratio=0.3),
                   node("Clip", ["d"], ["y"], "clip0", min=-0.2, max=0.3)],
                     [fvi("x", [2, 5])], [fvi("y", [2, 5]), fvi("mask", [2, 5])])


@model("scatter9_clip")
def _(r):
    """Scatter-9 axis=1 (deprecated in 11) -> Clip-6, opset 9.
    Expect: opset 11; scatter0 becomes ScatterElements with the same inputs and axis."""
    idx = np.array([[0, 3], [2, 1], [4, 0]], np.int64)
    upd = r.uniform(-2, 2, (3, 2)).astype(np.float32)
    return finish_at("scatter9_clip", 9,
                     [node("Scatter", ["x", "sc_idx", "sc_upd"], ["s"], "scatter0", axis=1),
                   node("Clip", ["s"], ["y"], "clip0", min=-1.0, max=1.0)],
                     [fvi("x", [3, 5])], [fvi("y", [3, 5])],
                     [init("sc_idx", idx), init("sc_upd", upd)])


@model("opset6_bn_dropout_gemm_clip")
def _(r):
    """Opset 6 (IR 3): BatchNormalization-6 (is_test=1, spatial=1) -> Dropout-6 (is_test=1)
    -> Flatten -> Gemm-6 (broadcast=1, transB=1, alpha, beta) -> Clip-6.
    onnxruntime has no kernels for BN-6/Dropout-6/Gemm-6: the test uses a numpy reference.
    Expect: opset 11; no is_test/spatial/consumed_inputs/broadcast attributes left."""
    w = r.uniform(-1, 1, (5, 12)).astype(np.float32)
    c = r.uniform(-1, 1, (5,)).astype(np.float32)
    return finish_at("opset6_bn_dropout_gemm_clip", 6,
                     [node("BatchNormalization", ["x", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
                        ["b"], "bn0", is_test=1, spatial=1, epsilon=1e-5),
                   node("Dropout", ["b"], ["d"], "drop0", is_test=1, ratio=0.25),
                   node("Flatten", ["d"], ["f"], "flat0", axis=1),
                   node("Gemm", ["f", "gemm_w", "gemm_c"], ["g"], "gemm0", broadcast=1,
                        transB=1, alpha=0.5, beta=2.0),
                   node("Clip", ["g"], ["y"], "clip0", min=-1.0, max=1.5)],
                     [fvi("x", [2, 3, 2, 2])], [fvi("y", [2, 5])],
                     bn_params(r, "bn", 3) + [init("gemm_w", w), init("gemm_c", c)])


@model("benign_opset9_clip")
def _(r):
    """A torchvision-like opset-9 net: Conv, BatchNormalization-9, Clip-6 (ReLU6), MaxPool-8,
    AveragePool-7, Pad-2, Concat, Shape/Gather/Unsqueeze/Reshape, ReduceMean, Flatten, Gemm-9,
    Softmax, Transpose, Squeeze, Cast, Sigmoid, Mul.  None of them needs more than the opset bump
    (their later versions only add negative axes, types or optional inputs).
    Expect: opset 11, converted Clip/Pad, the rest untouched, same numbers."""
    w = r.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32)
    cb = r.uniform(-0.1, 0.1, (4,)).astype(np.float32)
    gw = r.uniform(-0.5, 0.5, (6, 8)).astype(np.float32)
    gb = r.uniform(-0.1, 0.1, (6,)).astype(np.float32)
    nodes = [
        node("Conv", ["x", "conv_w", "conv_b"], ["c"], "conv0", pads=[1, 1, 1, 1],
             kernel_shape=[3, 3]),
        node("BatchNormalization", ["c", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["b"],
             "bn0", epsilon=1e-5),
        node("Clip", ["b"], ["r"], "relu6", min=0.0, max=6.0),
        node("Pad", ["r"], ["p"], "pad0", pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.0),
        node("MaxPool", ["p"], ["mp"], "maxpool0", kernel_shape=[2, 2], strides=[2, 2]),
        node("AveragePool", ["r"], ["ap"], "avgpool0", kernel_shape=[3, 3]),
        node("Concat", ["mp", "ap"], ["cat"], "concat0", axis=1),
        node("ReduceMean", ["cat"], ["rm"], "reducemean0", axes=[2, 3], keepdims=1),
        node("Shape", ["rm"], ["shp"], "shape0"),
        node("Gather", ["shp", "idx0"], ["n"], "gather0", axis=0),
        node("Unsqueeze", ["n"], ["n1"], "unsqueeze0", axes=[0]),
        node("Concat", ["n1", "minus1"], ["newshape"], "concat1", axis=0),
        node("Reshape", ["rm", "newshape"], ["flat"], "reshape0"),
        node("Flatten", ["flat"], ["flat2"], "flatten0", axis=1),
        node("Gemm", ["flat2", "fc_w", "fc_b"], ["logits"], "fc0", transB=1),
        node("Softmax", ["logits"], ["prob"], "softmax0", axis=1),
        node("Transpose", ["prob"], ["pt"], "transpose0", perm=[1, 0]),
        node("Squeeze", ["pt"], ["ps"], "squeeze0", axes=[1]),
        node("Sigmoid", ["ps"], ["sg"], "sigmoid0"),
        node("Cast", ["sg"], ["sg64"], "cast0", to=TP.DOUBLE),
        node("Cast", ["sg64"], ["sg32"], "cast1", to=TP.FLOAT),
        node("Mul", ["sg32", "ps"], ["y"], "mul0"),
    ]
    # x [1,3,6,6] -> conv [1,4,6,6] -> pad [1,4,8,8] -> maxpool [1,4,4,4]; avgpool [1,4,4,4]
    # -> concat [1,8,4,4] -> reducemean [1,8,1,1] -> reshape [1,8] -> gemm [1,6] -> ... [6]
    inits = [init("conv_w", w), init("conv_b", cb)] + bn_params(r, "bn", 4) + [
        init("idx0", np.array(0, np.int64)), init("minus1", np.array([-1], np.int64)),
        init("fc_w", gw), init("fc_b", gb)]
    return finish_at("benign_opset9_clip", 9, nodes, [fvi("x", [1, 3, 6, 6])], [fvi("y", [6])],
                     inits)


# ---------------------------------------------------------------------------
# mixtures
# ---------------------------------------------------------------------------

@model("mixed_opset8")
def _(r):
    """Opset 8 (IR 3): Pad-2 reflect -> Slice-1 (huge end, no axes) -> BatchNormalization-7
    (spatial=1) -> Clip-6 -> Upsample-7 nearest [1,1,2,2] and Upsample-7 linear [1,1,1.5,1.5]
    -> Dropout-7; MaxPool-8; TopK-1 on the flattened result.
    Expect: opset 11; every legacy node in its opset-11 form; same numbers."""
    nodes = [
        node("Pad", ["x"], ["p"], "pad0", mode="reflect", pads=[0, 0, 1, 1, 0, 0, 1, 1]),
        node("Slice", ["p"], ["s"], "slice0", starts=[0, 0, 1], ends=[1, INT64_MAX, -1]),
        node("BatchNormalization", ["s", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["b"],
             "bn0", spatial=1, epsilon=1e-5),
        node("Clip", ["b"], ["c"], "clip0", min=-1.0, max=1.0),
        node("Upsample", ["c"], ["u1"], "up_nearest", mode="nearest", scales=[1.0, 1.0, 2.0, 2.0]),
        node("Upsample", ["c"], ["u2"], "up_linear", mode="linear", scales=[1.0, 1.0, 1.5, 1.5]),
        node("Dropout", ["u1"], ["y1"], "drop0", ratio=0.1),
        node("MaxPool", ["u2"], ["y2"], "maxpool0", kernel_shape=[2, 2], strides=[2, 2]),
        node("Flatten", ["y2"], ["f"], "flatten0", axis=1),
        node("TopK", ["f"], ["tv", "ti"], "topk0", k=4),
    ]
    # x [1,2,4,4] -> pad [1,2,6,6] -> slice [1,2,4,6] -> up nearest [1,2,8,12],
    # up linear [1,2,6,9] -> maxpool [1,2,3,4] -> flatten [1,24] -> topk [1,4]
    return finish_at("mixed_opset8", 8, nodes, [fvi("x", [1, 2, 4, 4])],
                     [fvi("y1", [1, 2, 8, 12]), fvi("tv", [1, 4]), vi("ti", INT64, [1, 4])],
                     bn_params(r, "bn", 2))


@model("mixed_opset9")
def _(r):
    """Opset 9: Slice-1 (negative starts, axes) -> Pad-2 constant 0.5 -> Upsample-9 nearest
    (scales initializer) -> Clip-6 min only -> Dropout-7 -> Scatter-9 -> TopK-1; a second
    branch Pad-2 edge -> Upsample-9 linear -> Clip-6 max only.
    Expect: opset 11; every legacy node in its opset-11 form; same numbers."""
    idx = np.array([[[[0, 2, 1]]]], np.int64).repeat(2, axis=1).repeat(3, axis=2)
    upd = r.uniform(-2, 2, idx.shape).astype(np.float32)
    nodes = [
        node("Slice", ["x"], ["s"], "slice0", starts=[-3, 1], ends=[INT32_MAX, -1], axes=[3, 2]),
        node("Pad", ["s"], ["p"], "pad0", mode="constant", value=0.5,
             pads=[0, 0, 0, 1, 0, 0, 0, 0]),
        node("Upsample", ["p", "up_scales_n"], ["u"], "up_nearest", mode="nearest"),
        node("Clip", ["u"], ["c"], "clip0", min=-0.1),
        node("Dropout", ["c"], ["d"], "drop0", ratio=0.5),
        node("Scatter", ["d", "sc_idx", "sc_upd"], ["sc"], "scatter0", axis=3),
        node("TopK", ["sc"], ["tv", "ti"], "topk0", k=2, axis=3),
        node("Pad", ["x"], ["pe"], "pad1", mode="edge", pads=[0, 0, 1, 0, 0, 0, 0, 1]),
        node("Upsample", ["pe", "up_scales_l"], ["ul"], "up_linear", mode="linear"),
        node("Clip", ["ul"], ["y2"], "clip1", max=0.2),
    ]
    # x [1,2,4,5] -> slice [1,2,2,3] -> pad [1,2,2,4] -> up nearest [1,1,1.5,1] -> [1,2,3,4]
    # -> scatter (idx [1,2,3,3]) -> topk axis 3 k 2 -> [1,2,3,2]
    # x -> pad edge [1,2,5,6] -> up linear [1,1,2,1.5] -> [1,2,10,9]
    return finish_at("mixed_opset9", 9, nodes, [fvi("x", [1, 2, 4, 5])],
                     [fvi("tv", [1, 2, 3, 2]), vi("ti", INT64, [1, 2, 3, 2]),
                   fvi("y2", [1, 2, 10, 9])],
                     [init("up_scales_n", np.array([1, 1, 1.5, 1], np.float32)),
                   init("up_scales_l", np.array([1, 1, 2, 1.5], np.float32)),
                   init("sc_idx", idx), init("sc_upd", upd)])


@model("mixed_opset10")
def _(r):
    """Opset 10 (IR 5): Resize-10 nearest up -> Clip-6 -> Pad-2 edge -> Resize-10 linear down;
    Slice-10 (already input form) -> Resize-10 nearest down; TopK-10 (k input); Scatter-10;
    Dropout-10.
    Expect: opset 11; all Resize in (X, roi, scales) form with Resize-10's numbers; Scatter
    -> ScatterElements; Slice-10 and TopK-10 keep their inputs; same numbers."""
    nodes = [
        node("Resize", ["x", "rs_up"], ["r1"], "resize_up", mode="nearest"),
        node("Clip", ["r1"], ["c"], "clip0", min=-0.6, max=0.6),
        node("Pad", ["c"], ["p"], "pad0", mode="edge", pads=[0, 0, 1, 0, 0, 0, 2, 1]),
        node("Resize", ["p", "rs_down_l"], ["y1"], "resize_down_linear", mode="linear"),
        node("Slice", ["x", "sl_starts", "sl_ends", "sl_axes", "sl_steps"], ["s"], "slice10"),
        node("Resize", ["s", "rs_down_n"], ["r3"], "resize_down_nearest", mode="nearest"),
        node("Scatter", ["r3", "sc_idx", "sc_upd"], ["sc"], "scatter0", axis=2),
        node("Dropout", ["sc"], ["d"], "drop0", ratio=0.2),
        node("TopK", ["d", "topk_k"], ["tv", "ti"], "topk10", axis=3),
    ]
    # x [1,2,5,6] -> resize up [1,1,2,1.5] -> [1,2,10,9] -> pad [1,2,13,10]
    #   -> resize linear [1,1,0.5,0.6] -> [1,2,6,6]
    # x -> slice axis 3 step 2 from 0 -> [1,2,5,3] -> resize nearest [1,1,0.6,1] -> [1,2,3,3]
    #   -> scatter axis 2 (idx [1,2,1,3]) -> topk axis 3 k 2 -> [1,2,3,2]
    idx = np.array([[[[2, 0, 1]]]], np.int64).repeat(2, axis=1)
    upd = r.uniform(-2, 2, idx.shape).astype(np.float32)
    inits = [init("rs_up", np.array([1, 1, 2, 1.5], np.float32)),
             init("rs_down_l", np.array([1, 1, 0.5, 0.6], np.float32)),
             init("rs_down_n", np.array([1, 1, 0.6, 1], np.float32)),
             init("sl_starts", np.array([0], np.int64)),
             init("sl_ends", np.array([INT64_MAX], np.int64)),
             init("sl_axes", np.array([3], np.int64)),
             init("sl_steps", np.array([2], np.int64)),
             init("sc_idx", idx), init("sc_upd", upd),
             init("topk_k", np.array([2], np.int64))]
    return finish_at("mixed_opset10", 10, nodes, [fvi("x", [1, 2, 5, 6])],
                     [fvi("y1", [1, 2, 6, 6]), fvi("tv", [1, 2, 3, 2]), vi("ti", INT64, [1, 2, 3, 2])],
                     inits)


@model("if_subgraph_opset9")
def _(r):
    """Opset 9, If: then branch Pad-2 constant 0.25 -> Clip-6 (both bounds) -> TopK-1 k=6 on the
    last axis; else branch Upsample-9 nearest with a scales initializer of the branch -> Clip-6
    (max only) -> Slice-1.  The legacy nodes sit only in subgraphs.
    Expect: opset 11 (the import is model-wide); subgraph nodes converted, their new
    initializers in the branch (or outer) graph; same numbers for cond false and true."""
    then_g = helper.make_graph(
        [node("Pad", ["x"], ["tp"], "then_pad", pads=[0, 0, 1, 1, 0, 0, 1, 1], value=0.25),
         node("Clip", ["tp"], ["tc"], "then_clip", min=-0.3, max=0.3),
         node("TopK", ["tc"], ["tv", "ti"], "then_topk", k=6)],
        "then_branch", [], [fvi("tv", [1, 2, 6, 6])])
    else_g = helper.make_graph(
        [node("Upsample", ["x", "else_scales"], ["eu"], "else_up", mode="nearest"),
         node("Clip", ["eu"], ["ec"], "else_clip", max=0.1),
         node("Slice", ["ec"], ["es"], "else_slice", starts=[1], ends=[INT64_MAX], axes=[3])],
        "else_branch", [], [fvi("es", [1, 2, 6, 6])],
        initializer=[init("else_scales", np.array([1, 1, 1.5, 1.75], np.float32))])
    return finish_at("if_subgraph_opset9", 9,
                     [node("If", ["cond"], ["y"], "if0", then_branch=then_g, else_branch=else_g)],
                     [vi("cond", BOOL, []), fvi("x", [1, 2, 4, 4])], [fvi("y", [1, 2, 6, 6])])


@model("cannot_adapt_scan8")
def _(r):
    """Opset 8 (IR 3): Scan-8 with a batch axis and variable sequence_lens [3, 1] (Scan-9 has
    neither: can't be adapted) next to Clip-6, Pad-2, Slice-1 and Upsample-7.
    Expect: NOTHING legacy rewritten: opset 8 and IR 3 kept, Clip/Pad/Slice/Upsample still in
    attribute form, a warning in --report=json naming Scan; same numbers."""
    body = helper.make_graph(
        [node("Add", ["st", "xt"], ["st_out"], "body_add"),
         node("Identity", ["st_out"], ["yt"], "body_id")],
        "scan_body", [fvi("st", [2]), fvi("xt", [2])], [fvi("st_out", [2]), fvi("yt", [2])])
    nodes = [
        node("Scan", ["seq_lens", "s0", "xs"], ["s_final", "ys"], "scan0", body=body,
             num_scan_inputs=1),
        node("Clip", ["x"], ["c"], "clip0", min=-0.5, max=0.5),
        node("Pad", ["c"], ["p"], "pad0", pads=[0, 1, 0, 1], value=1.0),
        node("Slice", ["p"], ["s"], "slice0", starts=[1], ends=[INT64_MAX], axes=[1]),
        node("Upsample", ["s"], ["y"], "up0", scales=[2.0, 2.0]),
    ]
    return finish_at("cannot_adapt_scan8", 8, nodes,
                     [fvi("s0", [2, 2]), fvi("xs", [2, 3, 2]), fvi("x", [2, 3])],
                     [fvi("s_final", [2, 2]), fvi("ys", [2, 3, 2]), fvi("y", [4, 8])],
                     [init("seq_lens", np.array([3, 1], np.int64))])


@model("names_collide")
def _(r):
    """Values already named like the parameters a pass might create (clip0_min, clip0_max,
    pad0_pads -- a graph input --, pad0_value, slice0_starts, up0_roi, up0_scales), opset 9.
    Expect: opset 11; new initializers get fresh names (the full checker catches duplicates),
    same numbers."""
    nodes = [
        node("Relu", ["x"], ["clip0_min"], "relu0"),
        node("Clip", ["clip0_min"], ["clip0_max"], "clip0", min=-0.2, max=0.3),
        node("Pad", ["clip0_max"], ["pad0_value"], "pad0", pads=[0, 1, 0, 1], value=0.125),
        node("Add", ["pad0_value", "pad0_pads"], ["slice0_starts"], "add0"),
        node("Slice", ["slice0_starts"], ["up0_roi"], "slice0", starts=[1], ends=[3]),
        node("Upsample", ["up0_roi", "up0_scales"], ["y"], "up0"),
    ]
    # x [3,4] -> clip [3,4] -> pad [3,6] -> add [3,6] -> slice [2,6] -> upsample [1,2] -> [2,12]
    return finish_at("names_collide", 9, nodes,
                     [fvi("x", [3, 4]), fvi("pad0_pads", [3, 6])], [fvi("y", [2, 12])],
                     [init("up0_scales", np.array([1, 2], np.float32))])


@model("unnamed_nodes")
def _(r):
    """Old-exporter style: no node has a name.  Clip-6 x2, Pad-2, Slice-1, Upsample-9, opset 9.
    Expect: opset 11; every node converted (found by its output), new initializers uniquely
    named, same numbers."""
    nodes = [
        helper.make_node("Clip", ["x"], ["a"], min=-0.5, max=0.5),
        helper.make_node("Pad", ["a"], ["b"], pads=[0, 0, 1, 1, 0, 0, 1, 1], mode="edge"),
        helper.make_node("Clip", ["b"], ["c"], max=0.25),
        helper.make_node("Slice", ["c"], ["d"], starts=[1, 1], ends=[-1, INT64_MAX], axes=[2, 3]),
        helper.make_node("Upsample", ["d", "scales"], ["y"], mode="nearest"),
    ]
    # x [1,2,3,4] -> pad [1,2,5,6] -> slice [1,2,3,5] -> upsample [1,1,2,2] -> [1,2,6,10]
    return finish_at("unnamed_nodes", 9, nodes, [fvi("x", [1, 2, 3, 4])],
                     [fvi("y", [1, 2, 6, 10])],
                     [init("scales", np.array([1, 1, 2, 2], np.float32))])


# what tests/test_legacy.py must see (see its EXPECT): every other model is
# converted
EXPECT = {
    "cannot_adapt_scan8": ('cannot', 'Scan'),
    "topk1_no_trigger": ('keep', None),
    "bn7_spatial0_clip": ('either', 'BatchNormalization'),
    "dropout7_mask_clip": ('either', 'Dropout'),
}
