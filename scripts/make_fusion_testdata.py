#!/usr/bin/python3
"""Generate the testdata/ models of the pattern fusions (fuse-pad,
fuse-conv-scale, fuse-bn-forward, fuse-matmul-add, fuse-layernorm,
fuse-gelu) that
tests/test_passes.py uses, in the style of scripts/make_testdata.py (whose
helpers it imports): one model per pattern, variant and reason not to fuse,
named <pass>_<case>.onnx, the builder's docstring saying what ppqfmt must
produce, weights from a RandomState seeded from the model name.

Usage: scripts/make_fusion_testdata.py [OUTDIR]   (default: testdata/)
Run with Debian's python (/usr/bin/python3, python3-onnx 1.12).
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_testdata as mt  # noqa: E402
from make_testdata import (bn, bn_inits, finish, finish_with, fvi, graph, if_node,  # noqa: E402
                           node, rand, raw_tensor, vi)

# Builders register with make_testdata's list; main() below writes only ours.
FIRST = len(mt.BUILDERS)
model = mt.model


def scalar(name, value, dtype=np.float32):
    return raw_tensor(name, np.array(value, dtype))


def i64(name, values):
    return raw_tensor(name, np.array(values, np.int64))


# ---------------------------------------------------------------------------
# fuse-pad: a constant Pad of spatial axes folds into Conv/AveragePool/MaxPool
# ---------------------------------------------------------------------------

def pad_model(name, consumer, pad_pads, value=None, mode=None, xshape=(1, 2, 6, 6),
              extra_outputs=(), **cattrs):
    """X -> Pad(pads, value) -> consumer (kernel 3x3) -> Y."""
    r = mt.rng(name)
    inits = [i64("P", pad_pads)]
    pin = ["X", "P"]
    if value is not None:
        inits.append(scalar("V", value))
        pin.append("V")
    pattrs = {"mode": mode} if mode else {}
    nodes = [node("Pad", pin, ["p"], "pad0", **pattrs)]
    cin = ["p"]
    if consumer == "Conv":
        cin_count = xshape[1] + pad_pads[1] + pad_pads[len(xshape) + 1]
        inits.append(raw_tensor("W", rand(r, 3, cin_count, 3, 3)))
        cin.append("W")
    nodes.append(node(consumer, cin, ["Y"], "op0", kernel_shape=[3, 3], **cattrs))
    nodes += [node("Relu", ["p"], ["Z"], "relu0")] if "Z" in extra_outputs else []
    outs = [fvi("Y", None)] + [fvi(o, None) for o in extra_outputs]
    return finish(graph(nodes, name, [fvi("X", list(xshape))], outs, inits=inits))


@model("fusepad_conv")
def _(r):
    """Pad [0,0,1,2, 0,0,2,1] (no value input: 0) -> Conv pads [1,1,1,1].
    Expect: pad0 removed; op0 reads X with pads [2,3,3,2]."""
    return pad_model("fusepad_conv", "Conv", [0, 0, 1, 2, 0, 0, 2, 1], pads=[1, 1, 1, 1])


@model("fusepad_conv_value")
def _(r):
    """Pad value 0.5 -> Conv. Expect: kept (Conv pads with 0)."""
    return pad_model("fusepad_conv_value", "Conv", [0, 0, 1, 1, 0, 0, 1, 1], value=0.5)


@model("fusepad_conv_channels")
def _(r):
    """Pad on the channel axis [0,1,1,1, 0,0,1,1] -> Conv. Expect: kept."""
    return pad_model("fusepad_conv_channels", "Conv", [0, 1, 1, 1, 0, 0, 1, 1],
                     xshape=(1, 1, 6, 6))


@model("fusepad_conv_negative")
def _(r):
    """Pad with a negative (cropping) pad [0,0,-1,1, 0,0,1,1] -> Conv.
    Expect: kept."""
    return pad_model("fusepad_conv_negative", "Conv", [0, 0, -1, 1, 0, 0, 1, 1])


@model("fusepad_reflect")
def _(r):
    """Pad mode reflect -> Conv. Expect: kept."""
    return pad_model("fusepad_reflect", "Conv", [0, 0, 1, 1, 0, 0, 1, 1], mode="reflect")


@model("fusepad_two_consumers")
def _(r):
    """Pad output p read by the Conv and by Relu -> Z. Expect: kept."""
    return pad_model("fusepad_two_consumers", "Conv", [0, 0, 1, 1, 0, 0, 1, 1],
                     extra_outputs=("Z",))


@model("fusepad_avgpool_include")
def _(r):
    """Pad 0 -> AveragePool count_include_pad=1 pads [1,0,0,1].
    Expect: pad0 removed; op0 pads [2,1,1,2], count_include_pad 1."""
    return pad_model("fusepad_avgpool_include", "AveragePool", [0, 0, 1, 1, 0, 0, 1, 1],
                     value=0.0, pads=[1, 0, 0, 1], count_include_pad=1)


@model("fusepad_avgpool_exclude")
def _(r):
    """Pad 0 -> AveragePool count_include_pad=0 without pads of its own.
    Expect: pad0 removed; op0 pads [1,2,2,1] and count_include_pad=1 (the
    Pad's zeros were counted as data)."""
    return pad_model("fusepad_avgpool_exclude", "AveragePool", [0, 0, 1, 2, 0, 0, 2, 1])


@model("fusepad_avgpool_exclude_pads")
def _(r):
    """Pad 0 -> AveragePool count_include_pad=0 with pads [1,1,1,1] of its
    own (those must stay uncounted). Expect: kept."""
    return pad_model("fusepad_avgpool_exclude_pads", "AveragePool", [0, 0, 1, 1, 0, 0, 1, 1],
                     pads=[1, 1, 1, 1])


@model("fusepad_avgpool_ceil")
def _(r):
    """Pad 0 -> AveragePool count_include_pad=1, ceil_mode=1, strides 2.
    Expect: kept."""
    return pad_model("fusepad_avgpool_ceil", "AveragePool", [0, 0, 1, 1, 0, 0, 1, 1],
                     count_include_pad=1, ceil_mode=1, strides=[2, 2])


@model("fusepad_maxpool_zero")
def _(r):
    """Pad 0 -> MaxPool. Expect: kept (MaxPool's padding acts as -inf: a 0
    pad changes the maximum of windows of negative values)."""
    return pad_model("fusepad_maxpool_zero", "MaxPool", [0, 0, 1, 1, 0, 0, 1, 1])


@model("fusepad_maxpool_neginf")
def _(r):
    """Pad -inf -> MaxPool pads [0,1,0,1]. Expect: pad0 removed; op0 pads
    [1,2,1,2]."""
    return pad_model("fusepad_maxpool_neginf", "MaxPool", [0, 0, 1, 1, 0, 0, 1, 1],
                     value=-np.inf, pads=[0, 1, 0, 1])


@model("fusepad_attr_form")
def _(r):
    """Opset 10, Pad-2 (attributes pads [0,0,1,1, 0,0,0,1], value 0) -> Conv.
    Expect with fuse-pad alone: pad0 removed; op0 pads [1,1,0,1]; opset
    stays 10."""
    w = raw_tensor("W", rand(r, 3, 2, 3, 3))
    return finish(graph(
        [node("Pad", ["X"], ["p"], "pad0", pads=[0, 0, 1, 1, 0, 0, 0, 1], value=0.0),
         node("Conv", ["p", "W"], ["Y"], "op0", kernel_shape=[3, 3])],
        "fusepad_attr_form", [fvi("X", [1, 2, 6, 6])], [fvi("Y", None)], inits=[w]),
        opset=10, ir=5)


@model("fusepad_in_if")
def _(r):
    """Inside the If then branch: Pad [0,0,1,1,0,0,1,1] (branch initializer)
    -> Conv. Expect: then_pad removed; then_conv pads [1,1,1,1]."""
    then_g = graph([node("Pad", ["X", "Pt"], ["tp"], "then_pad"),
                    node("Conv", ["tp", "W"], ["then_out"], "then_conv", kernel_shape=[3, 3])],
                   "then_branch", [], [fvi("then_out", None)],
                   inits=[i64("Pt", [0, 0, 1, 1, 0, 0, 1, 1])])
    else_g = graph([node("Conv", ["X", "W"], ["else_out"], "else_conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1])], "else_branch", [], [fvi("else_out", None)])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)], "fusepad_in_if",
        [vi("cond", TP.BOOL, []), fvi("X", [1, 2, 5, 5])], [fvi("Y", None)],
        inits=[raw_tensor("W", rand(r, 3, 2, 3, 3))]))


# ---------------------------------------------------------------------------
# fuse-conv-scale: Conv/ConvTranspose/Gemm -> Mul(per-channel constant)
# ---------------------------------------------------------------------------

def conv_mul(name, kshape, w, b, k, mul_first=False, op="Conv", xshape=(1, 3, 5, 5),
             extra=(), dtype=TP.FLOAT, **attrs):
    inits = [raw_tensor("W", w), raw_tensor("K", k)]
    cin = ["X", "W"]
    if b is not None:
        inits.append(raw_tensor("B", b))
        cin.append("B")
    if kshape:
        attrs["kernel_shape"] = kshape
    nodes = [node(op, cin, ["c"], "conv0", **attrs),
             node("Mul", ["K", "c"] if mul_first else ["c", "K"], ["Y"], "mul0")]
    nodes += [node("Relu", ["c"], ["Z"], "relu0")] if extra else []
    outs = [vi("Y", dtype, None)] + ([vi("Z", dtype, None)] if extra else [])
    return finish(graph(nodes, name, [vi("X", dtype, list(xshape))], outs, inits=inits))


@model("fusescale_conv")
def _(r):
    """Conv (bias) -> Mul(K [1,4,1,1]). Expect: mul0 removed; conv0 writes
    Y with weight W*k and bias B*k per output channel."""
    return conv_mul("fusescale_conv", [3, 3], rand(r, 4, 3, 3, 3), rand(r, 4),
                    rand(r, 1, 4, 1, 1))


@model("fusescale_conv_nobias")
def _(r):
    """Conv (no bias) -> Mul(K [4,1,1], K first). Expect: mul0 removed;
    conv0 weight W*k, still no bias input."""
    return conv_mul("fusescale_conv_nobias", [3, 3], rand(r, 4, 3, 3, 3), None,
                    rand(r, 4, 1, 1), mul_first=True)


@model("fusescale_scalar")
def _(r):
    """Conv1d (bias) -> Mul(K scalar -2.5). Expect: mul0 removed; W, B
    scaled by -2.5."""
    return conv_mul("fusescale_scalar", [3], rand(r, 4, 3, 3), rand(r, 4),
                    np.array(-2.5, np.float32), xshape=(1, 3, 7))


@model("fusescale_convtranspose")
def _(r):
    """ConvTranspose group 2 (W [4,3,2,2]: 6 output channels) -> Mul(K
    [1,6,1,1]). Expect: mul0 removed; weight of output channel c scaled by
    k[c] (channel g*3+j)."""
    return conv_mul("fusescale_convtranspose", [2, 2], rand(r, 4, 3, 2, 2), rand(r, 6),
                    rand(r, 1, 6, 1, 1), op="ConvTranspose", xshape=(1, 4, 3, 3), group=2)


@model("fusescale_gemm")
def _(r):
    """Gemm transB=1 beta=0.5 (C [5]) -> Mul(K [5]). Expect: mul0 removed;
    alpha*B and beta*C of output column n scaled by k[n]."""
    return conv_mul("fusescale_gemm", None, rand(r, 5, 3), rand(r, 5), rand(r, 5),
                    op="Gemm", xshape=(2, 3), transB=1, beta=0.5)


@model("fusescale_conv_vector")
def _(r):
    """Conv -> Mul(K [4]): broadcasts over the last spatial axis (width 4),
    not the channels. Expect: kept."""
    return conv_mul("fusescale_conv_vector", [3, 3], rand(r, 4, 3, 3, 3), rand(r, 4),
                    rand(r, 4), xshape=(1, 3, 6, 6))


@model("fusescale_two_consumers")
def _(r):
    """Conv output c read by Mul and by Relu -> Z. Expect: kept."""
    return conv_mul("fusescale_two_consumers", [3, 3], rand(r, 4, 3, 3, 3), rand(r, 4),
                    rand(r, 1, 4, 1, 1), extra=True)


@model("fusescale_float16_overflow")
def _(r):
    """float16 Conv 1x1 (W = 1000, 0.5) -> Mul(K [1,2,1,1] = 100, 2): the
    folded weight 100000 overflows float16. Expect: kept, with a warning."""
    return conv_mul("fusescale_float16_overflow", [1, 1],
                    np.array([1000, 0.5], np.float16).reshape(2, 1, 1, 1), None,
                    np.array([100, 2], np.float16).reshape(1, 2, 1, 1),
                    xshape=(1, 1, 2, 2), dtype=TP.FLOAT16)


@model("fusescale_in_if")
def _(r):
    """Inside the If then branch: Conv (branch W, B) -> Mul(branch K).
    Expect: then_mul removed; then_conv writes then_out, scaled."""
    then_g = graph([node("Conv", ["X", "Wt", "Bt"], ["tc"], "then_conv", kernel_shape=[3, 3]),
                    node("Mul", ["tc", "Kt"], ["then_out"], "then_mul")],
                   "then_branch", [], [fvi("then_out", None)],
                   inits=[raw_tensor("Wt", rand(r, 4, 3, 3, 3)), raw_tensor("Bt", rand(r, 4)),
                          raw_tensor("Kt", rand(r, 1, 4, 1, 1))])
    else_g = graph([node("Conv", ["X", "We"], ["else_out"], "else_conv", kernel_shape=[3, 3])],
                   "else_branch", [], [fvi("else_out", None)],
                   inits=[raw_tensor("We", rand(r, 4, 3, 3, 3))])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)], "fusescale_in_if",
        [vi("cond", TP.BOOL, []), fvi("X", [1, 3, 5, 5])], [fvi("Y", None)]))


# ---------------------------------------------------------------------------
# fuse-bn-forward: BatchNormalization -> unpadded Conv
# ---------------------------------------------------------------------------

def bn_conv(name, w, b=None, xshape=(1, 3, 6, 6), extra=False, op="Conv", stats=None,
            dtype=TP.FLOAT, **attrs):
    """X -> BN (bn0) -> op (conv0, weight W, bias B when given) -> Y."""
    r = mt.rng(name)
    c = xshape[1]
    inits = [raw_tensor("W", w)] + (stats or bn_inits(r, "bn0", c))
    cin = ["y", "W"]
    if b is not None:
        inits.append(raw_tensor("B", b))
        cin.append("B")
    attrs.setdefault("kernel_shape", list(w.shape[2:]))
    nodes = [bn("X", "y", "bn0", "bn0"), node(op, cin, ["Y"], "conv0", **attrs)]
    nodes += [node("Relu", ["y"], ["Z"], "relu0")] if extra else []
    outs = [vi("Y", dtype, None)] + ([vi("Z", dtype, None)] if extra else [])
    return finish(graph(nodes, name, [vi("X", dtype, list(xshape))], outs, inits=inits))


@model("fusebnfwd_conv")
def _(r):
    """X [1,3,6,6] -> BN -> Conv 3x3 (bias, no pads). Expect: bn0 removed;
    conv0 reads X with W[o,c] * s[c] and B[o] + sum W[o,c,k] * shift[c]."""
    return bn_conv("fusebnfwd_conv", rand(r, 4, 3, 3, 3), rand(r, 4))


@model("fusebnfwd_conv_nobias")
def _(r):
    """BN -> Conv 3x3 without bias, strides 2, explicit pads [0,0,0,0].
    Expect: bn0 removed; conv0 gets a bias input (the shift's sums)."""
    return bn_conv("fusebnfwd_conv_nobias", rand(r, 4, 3, 3, 3), xshape=(1, 3, 7, 7),
                   strides=[2, 2], pads=[0, 0, 0, 0])


@model("fusebnfwd_grouped")
def _(r):
    """BN (4 channels) -> Conv group 2 (W [6,2,3,3], bias), dilations 2.
    Expect: bn0 removed; output o's weights scaled by the factors of the
    input channels of its group (group(o) * 2 + j)."""
    return bn_conv("fusebnfwd_grouped", rand(r, 6, 2, 3, 3), rand(r, 6), xshape=(1, 4, 8, 8),
                   group=2, dilations=[2, 2])


@model("fusebnfwd_pointwise_grouped")
def _(r):
    """BN (6 channels) -> Conv 1x1 group 3 (W [9,2,1,1], bias): the factor
    changes with every weight element. Expect: bn0 removed; W[o,j] scaled by
    s[group(o) * 2 + j]."""
    return bn_conv("fusebnfwd_pointwise_grouped", rand(r, 9, 2, 1, 1), rand(r, 9),
                   xshape=(1, 6, 4, 4), group=3)


@model("fusebnfwd_valid_1d")
def _(r):
    """BN -> Conv1d kernel 3, auto_pad VALID. Expect: bn0 removed, folded."""
    return bn_conv("fusebnfwd_valid_1d", rand(r, 2, 3, 3), rand(r, 2), xshape=(1, 3, 9),
                   auto_pad="VALID")


@model("fusebnfwd_padded")
def _(r):
    """BN -> Conv 3x3 pads [1,1,1,1]: the padded zeros are not normalized.
    Expect with fuse-bn-forward: kept (no warning). Default: bn-to-conv makes
    bn0 a depthwise Conv."""
    return bn_conv("fusebnfwd_padded", rand(r, 4, 3, 3, 3), rand(r, 4), pads=[1, 1, 1, 1])


@model("fusebnfwd_padded_no_shift")
def _(r):
    """BN with bias 0 and mean 0 (shift 0: zeros stay zeros) -> Conv pads
    [1,1,1,1]. Expect: bn0 removed; conv0 weight scaled, bias unchanged."""
    stats = [raw_tensor("bn0_scale", r.uniform(0.5, 1.5, 3).astype(np.float32)),
             raw_tensor("bn0_bias", np.zeros(3, np.float32)),
             raw_tensor("bn0_mean", np.zeros(3, np.float32)),
             raw_tensor("bn0_var", r.uniform(0.5, 2.0, 3).astype(np.float32))]
    return bn_conv("fusebnfwd_padded_no_shift", rand(r, 4, 3, 3, 3), rand(r, 4),
                   pads=[1, 1, 1, 1], stats=stats)


@model("fusebnfwd_two_consumers")
def _(r):
    """BN output y read by the Conv and by Relu -> Z. Expect: kept."""
    return bn_conv("fusebnfwd_two_consumers", rand(r, 4, 3, 3, 3), rand(r, 4), extra=True)


@model("fusebnfwd_convtranspose")
def _(r):
    """BN -> ConvTranspose (no pads): border outputs sum fewer inputs.
    Expect with fuse-bn-forward: kept."""
    return bn_conv("fusebnfwd_convtranspose", rand(r, 3, 4, 2, 2), rand(r, 4),
                   op="ConvTranspose", strides=[2, 2])


@model("fusebnfwd_float16_overflow")
def _(r):
    """float16 BN with factor ~1000 (scale 1000, var 1) -> Conv 1x1 with
    weights ~100: the scaled weight overflows float16. Expect with
    fuse-bn-forward: kept, with a warning naming bn0."""
    h = np.float16
    w = (r.uniform(90, 110, (2, 2, 1, 1)) * r.choice([-1, 1], (2, 2, 1, 1))).astype(h)
    stats = [raw_tensor("bn0_scale", np.array([1000, 800], h)),
             raw_tensor("bn0_bias", np.array([0.5, -0.5], h)),
             raw_tensor("bn0_mean", np.array([0.01, -0.02], h)),
             raw_tensor("bn0_var", np.array([1, 1], h))]
    return bn_conv("fusebnfwd_float16_overflow", w, xshape=(1, 2, 4, 4), stats=stats,
                   dtype=TP.FLOAT16)


@model("fusebnfwd_float16")
def _(r):
    """float16 BN -> Conv 3x3 (float16 W, B). Expect: bn0 removed; weight and
    bias stay float16."""
    h = np.float16
    return bn_conv("fusebnfwd_float16", rand(r, 4, 3, 3, 3).astype(h), rand(r, 4).astype(h),
                   stats=bn_inits(r, "bn0", 3, h), dtype=TP.FLOAT16)


@model("fusebnfwd_in_if")
def _(r):
    """Inside the If then branch: BN (main-graph statistics) -> Conv (branch
    W, B). Expect: then_bn removed; then_conv reads X, folded."""
    then_g = graph([bn("X", "ty", "then_bn", "bn0"),
                    node("Conv", ["ty", "Wt", "Bt"], ["then_out"], "then_conv",
                         kernel_shape=[3, 3])],
                   "then_branch", [], [fvi("then_out", None)],
                   inits=[raw_tensor("Wt", rand(r, 4, 3, 3, 3)), raw_tensor("Bt", rand(r, 4))])
    else_g = graph([node("Conv", ["X", "We"], ["else_out"], "else_conv", kernel_shape=[3, 3])],
                   "else_branch", [], [fvi("else_out", None)],
                   inits=[raw_tensor("We", rand(r, 4, 3, 3, 3))])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)], "fusebnfwd_in_if",
        [vi("cond", TP.BOOL, []), fvi("X", [1, 3, 6, 6])], [fvi("Y", None)],
        inits=bn_inits(r, "bn0", 3)))


# ---------------------------------------------------------------------------
# fuse-matmul-add: MatMul(x, W) + Add(b) -> Gemm
# ---------------------------------------------------------------------------

def matmul_add(name, xshape, w, b, add_first=False, extra=False, w_input=False):
    inits = [raw_tensor("B", b)] + ([] if w_input else [raw_tensor("W", w)])
    inputs = [fvi("X", list(xshape))] + ([fvi("W", list(w.shape))] if w_input else [])
    nodes = [node("MatMul", ["X", "W"], ["m"], "mm0"),
             node("Add", ["B", "m"] if add_first else ["m", "B"], ["Y"], "add0")]
    nodes += [node("Relu", ["m"], ["Z"], "relu0")] if extra else []
    outs = [fvi("Y", None)] + ([fvi("Z", None)] if extra else [])
    return finish(graph(nodes, name, inputs, outs, inits=inits))


@model("fusemm_rank2")
def _(r):
    """X [3,4] -> MatMul(W [4,5]) -> Add(B [5]). Expect: mm0 and add0 become
    one Gemm(X, W, B) writing Y (alpha, beta 1, no transposes)."""
    return matmul_add("fusemm_rank2", (3, 4), rand(r, 4, 5), rand(r, 5))


@model("fusemm_row_bias")
def _(r):
    """X [3,4] -> MatMul(W [4,5]) -> Add(B [1,5], m) (B first).
    Expect: Gemm(X, W, B)."""
    return matmul_add("fusemm_row_bias", (3, 4), rand(r, 4, 5), rand(r, 1, 5), add_first=True)


@model("fusemm_scalar_bias")
def _(r):
    """X [3,4] -> MatMul(W [4,5]) -> Add(B scalar). Expect: Gemm(X, W, B)."""
    return matmul_add("fusemm_scalar_bias", (3, 4), rand(r, 4, 5), np.array(0.25, np.float32))


@model("fusemm_rank3")
def _(r):
    """X [2,3,4] -> MatMul(W [4,5]) -> Add(B [5]). Expect: kept (Gemm is 2-D)."""
    return matmul_add("fusemm_rank3", (2, 3, 4), rand(r, 4, 5), rand(r, 5))


@model("fusemm_full_bias")
def _(r):
    """X [3,4] -> MatMul(W [4,5]) -> Add(B [3,5]): not one value per column.
    Expect: kept."""
    return matmul_add("fusemm_full_bias", (3, 4), rand(r, 4, 5), rand(r, 3, 5))


@model("fusemm_weight_input")
def _(r):
    """MatMul(X, W) with W a graph input (not constant) -> Add(B).
    Expect: kept."""
    return matmul_add("fusemm_weight_input", (3, 4), rand(r, 4, 5), rand(r, 5), w_input=True)


@model("fusemm_two_consumers")
def _(r):
    """MatMul output m read by Add and by Relu -> Z. Expect: kept."""
    return matmul_add("fusemm_two_consumers", (3, 4), rand(r, 4, 5), rand(r, 5), extra=True)


@model("fusemm_in_if")
def _(r):
    """Inside the If then branch: MatMul(X, W) -> Add(Bt) (W from the main
    graph). Expect: then_mm and then_add become a Gemm writing then_out."""
    then_g = graph([node("MatMul", ["X", "W"], ["tm"], "then_mm"),
                    node("Add", ["tm", "Bt"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", None)],
                   inits=[raw_tensor("Bt", rand(r, 5))])
    else_g = graph([node("MatMul", ["X", "W"], ["else_out"], "else_mm")],
                   "else_branch", [], [fvi("else_out", None)])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)], "fusemm_in_if",
        [vi("cond", TP.BOOL, []), fvi("X", [3, 4])], [fvi("Y", None)],
        inits=[raw_tensor("W", rand(r, 4, 5))]))


@model("fusemmnd_rank3")
def _(r):
    """X [2,3,4] -> MatMul(W [4,5]) -> Add(B [5]). Expect with
    fuse-matmul-add-nd: Reshape(X, [-1,4]) -> Gemm(W, B) -> Reshape([2,3,5])
    writing Y; by default (off): kept."""
    return matmul_add("fusemmnd_rank3", (2, 3, 4), rand(r, 4, 5), rand(r, 5))


@model("fusemmnd_symbolic_batch")
def _(r):
    """X ['N',3,2,4] (one unknown dim) -> MatMul(W [4,5]) -> Add(B [1,5]).
    Expect with fuse-matmul-add-nd: Reshape [-1,4] -> Gemm -> Reshape
    [-1,3,2,5]."""
    return matmul_add("fusemmnd_symbolic_batch", ("N", 3, 2, 4), rand(r, 4, 5), rand(r, 1, 5))


@model("fusemmnd_two_unknown")
def _(r):
    """X ['N','T',4] (two unknown dims) -> MatMul(W [4,5]) -> Add(B [5]).
    Expect: kept (the output shape cannot be written)."""
    return matmul_add("fusemmnd_two_unknown", ("N", "T", 4), rand(r, 4, 5), rand(r, 5))


# ---------------------------------------------------------------------------
# fuse-layernorm: the decomposed layer norm -> LayerNormalization (opset 17)
# ---------------------------------------------------------------------------

def ln_nodes(x, y, axes, prefix="", gamma="G", beta="Bt", reciprocal=False, two_subs=False,
             square_mul=False, swap=False, eps="eps"):
    """The decomposition; node names prefix+{mean,sub,sq,var,add,sqrt,...}."""
    p = prefix
    n = [node("ReduceMean", [x], [p + "m"], p + "mean", axes=axes),
         node("Sub", [x, p + "m"], [p + "d"], p + "sub")]
    d2 = p + "d"
    if two_subs:
        n.append(node("Sub", [x, p + "m"], [p + "d2"], p + "sub2"))
        d2 = p + "d2"
    if square_mul:
        n.append(node("Mul", [p + "d", p + "d"], [p + "s"], p + "sq"))
    else:
        n.append(node("Pow", [p + "d", "two"], [p + "s"], p + "sq"))
    n += [node("ReduceMean", [p + "s"], [p + "v"], p + "var", axes=axes),
          node("Add", [p + "v", eps], [p + "e"], p + "add"),
          node("Sqrt", [p + "e"], [p + "r"], p + "sqrt")]
    if reciprocal:
        n += [node("Reciprocal", [p + "r"], [p + "ri"], p + "recip"),
              node("Mul", [d2, p + "ri"], [p + "n"], p + "norm")]
    else:
        n.append(node("Div", [d2, p + "r"], [p + "n"], p + "norm"))
    last = p + "n"
    if gamma:
        n.append(node("Mul", [gamma, last] if swap else [last, gamma], [p + "g"], p + "gamma"))
        last = p + "g"
    if beta:
        n.append(node("Add", [beta, last] if swap else [last, beta], [p + "b"], p + "beta"))
        last = p + "b"
    n[-1].output[0] = y
    return n


def ln_model(name, xshape, axes, gshape=None, bshape=None, opset=17, eps=1e-5, x="X", **kw):
    r = mt.rng(name)
    inits = [scalar("two", 2.0), scalar("eps", eps)]
    if gshape is not None:
        inits.append(raw_tensor("G", rand(r, *gshape) + 1.5))
    if bshape is not None:
        inits.append(raw_tensor("Bt", rand(r, *bshape)))
    nodes = ln_nodes(x, "Y", axes, gamma="G" if gshape is not None else None,
                     beta="Bt" if bshape is not None else None, **kw)
    return finish(graph(nodes, name, [fvi("X", list(xshape))], [fvi("Y", None)], inits=inits),
                  opset=opset)


def ln_tf_model(name, xshape, gshape=None, bshape=None, eps=1e-3, square_pow=False):
    """TensorFlow's layer norm (keras LayerNormalization through
    tf.nn.batch_normalization, as tf2onnx writes it): mean = ReduceMean(X);
    d = Sub(X, mean); var = ReduceMean(Mul(d, d)) (or Pow(d, 2));
    a = Reciprocal(Sqrt(var + eps)) [* G]; Y = X * a + (Bt - mean * a)
    (without Bt: + Neg(mean * a)). Node names mean, sub, sq, var, add, sqrt,
    recip, gamma, mul_x, mul_m, shift, out."""
    r = mt.rng(name)
    inits = [scalar("eps", eps)] + ([scalar("two", 2.0)] if square_pow else [])
    n = [node("ReduceMean", ["X"], ["m"], "mean", axes=[-1]),
         node("Sub", ["X", "m"], ["d"], "sub"),
         node("Pow", ["d", "two"], ["s"], "sq") if square_pow else
         node("Mul", ["d", "d"], ["s"], "sq"),
         node("ReduceMean", ["s"], ["v"], "var", axes=[-1]),
         node("Add", ["v", "eps"], ["e"], "add"),
         node("Sqrt", ["e"], ["r"], "sqrt"),
         node("Reciprocal", ["r"], ["a"], "recip")]
    a = "a"
    if gshape is not None:
        inits.append(raw_tensor("G", rand(r, *gshape) + 1.5))
        n.append(node("Mul", ["a", "G"], ["ag"], "gamma"))
        a = "ag"
    n += [node("Mul", ["X", a], ["xa"], "mul_x"), node("Mul", ["m", a], ["ma"], "mul_m")]
    if bshape is not None:
        inits.append(raw_tensor("Bt", rand(r, *bshape)))
        n.append(node("Sub", ["Bt", "ma"], ["sh"], "shift"))
    else:
        n.append(node("Neg", ["ma"], ["sh"], "shift"))
    n.append(node("Add", ["xa", "sh"], ["Y"], "out"))
    return finish(graph(n, name, [fvi("X", list(xshape))], [fvi("Y", None)], inits=inits),
                  opset=17)


@model("fuseln_tf_keras")
def _(r):
    """TensorFlow's form with gamma [8] and beta [8], eps 1e-3, the variance
    of Mul(d, d). Expect: one LayerNormalization(X, G, Bt), axis -1, epsilon
    1e-3, writing Y; no ReduceMean left."""
    return ln_tf_model("fuseln_tf_keras", (2, 5, 8), (8,), (8,))


@model("fuseln_tf_no_affine")
def _(r):
    """TensorFlow's form without gamma and beta (Neg(mean * a)), the variance
    of Pow(d, 2); X [3,6]. Expect: LayerNormalization(X, ones [6])."""
    return ln_tf_model("fuseln_tf_no_affine", (3, 6), square_pow=True)


@model("fuseln_tf_shared_scale")
def _(r):
    """TensorFlow's form whose a = Reciprocal(..) * G is also a graph output.
    Expect: kept."""
    m = ln_tf_model("fuseln_tf_shared_scale", (2, 5, 8), (8,), (8,))
    m.graph.output.append(fvi("ag", None))
    return m


LN_ALL = ["mean", "sub", "sq", "var", "add", "sqrt", "norm"]


@model("fuseln_torch")
def _(r):
    """torch LayerNorm(8) at opset 17: ReduceMean(-1), Sub, Pow 2,
    ReduceMean, Add(1e-5), Sqrt, Div, Mul(G [8]), Add(Bt [8]).
    Expect: one LayerNormalization(X, G, Bt), axis -1, epsilon 1e-5,
    writing Y; no ReduceMean left."""
    return ln_model("fuseln_torch", (2, 5, 8), [-1], (8,), (8,))


@model("fuseln_reciprocal")
def _(r):
    """Mul by Reciprocal(Sqrt), Mul(G, n) and Add(Bt, g) (constants first),
    epsilon 1e-6. Expect: LayerNormalization(X, G, Bt), axis -1, eps 1e-6."""
    return ln_model("fuseln_reciprocal", (3, 6), [-1], (6,), (6,), eps=1e-6,
                    reciprocal=True, swap=True)


@model("fuseln_two_subs")
def _(r):
    """Two Subs of (X, mean) (one for the variance, one for the division),
    the square as Mul(d, d). Expect: LayerNormalization(X, G, Bt)."""
    return ln_model("fuseln_two_subs", (2, 4, 6), [-1], (6,), (6,), two_subs=True,
                    square_mul=True)


@model("fuseln_no_affine")
def _(r):
    """No gamma, no beta; X declared [2,4,6]. Expect: LayerNormalization
    whose Scale is ones [6] and no B."""
    return ln_model("fuseln_no_affine", (2, 4, 6), [-1])


@model("fuseln_two_axes")
def _(r):
    """Axes [-2,-1] of X [2,3,4]; gamma [4] (broadcast over axis -2), beta
    [3,4]. Expect: LayerNormalization axis -2, Scale = gamma broadcast to
    [3,4], B = Bt."""
    return ln_model("fuseln_two_axes", (2, 3, 4), [-2, -1], (4,), (3, 4))


@model("fuseln_positive_axes")
def _(r):
    """Axes [2] of X [2,3,4] (declared rank 3). Expect: LayerNormalization
    axis -1."""
    return ln_model("fuseln_positive_axes", (2, 3, 4), [2], (4,), (4,))


@model("fuseln_undeclared_gamma")
def _(r):
    """X [2,5,8] -> Relu -> h (no declared shape: the normalized size is not
    known from h) -> the pattern over h with gamma [8], beta [8].
    Expect: LayerNormalization(h, G, Bt) (the size from gamma)."""
    m = ln_model("fuseln_undeclared_gamma", (2, 5, 8), [-1], (8,), (8,), x="h")
    m.graph.node.insert(0, node("Relu", ["X"], ["h"], "relu0"))
    return m


@model("fuseln_symbolic_no_gamma")
def _(r):
    """X ['B','T','C'] and no gamma: the size of the ones to write is
    unknown. Expect: kept, with a warning."""
    return ln_model("fuseln_symbolic_no_gamma", ("B", "T", "C"), [-1])


@model("fuseln_float16")
def _(r):
    """The torch pattern on a float16 X [2,5,8] with float16 constants (eps
    1e-3 in float16, 2 in float16), gamma and beta. Expect:
    LayerNormalization(X, G, Bt), epsilon the float16 eps, gamma/beta kept
    float16."""
    h = np.float16
    inits = [scalar("two", 2.0, h), scalar("eps", 1e-3, h),
             raw_tensor("G", (rand(r, 8) + 1.5).astype(h)), raw_tensor("Bt", rand(r, 8).astype(h))]
    return finish(graph(ln_nodes("X", "Y", [-1]), "fuseln_float16",
                        [vi("X", TP.FLOAT16, [2, 5, 8])], [vi("Y", TP.FLOAT16, [2, 5, 8])],
                        inits=inits), opset=17)


@model("fuseln_not_trailing")
def _(r):
    """Axes [1] of X [2,3,4]: not the trailing axes. Expect: kept."""
    return ln_model("fuseln_not_trailing", (2, 3, 4), [1], (3, 1), (3, 1))


@model("fuseln_opset13")
def _(r):
    """The torch pattern at opset 13 (no LayerNormalization there).
    Expect: kept."""
    return ln_model("fuseln_opset13", (2, 5, 8), [-1], (8,), (8,), opset=13)


@model("fuseln_shared_variance")
def _(r):
    """The variance v is also a graph output. Expect: kept."""
    m = ln_model("fuseln_shared_variance", (2, 5, 8), [-1], (8,), (8,))
    m.graph.output.append(fvi("v", None))
    return m


@model("fuseln_in_if")
def _(r):
    """Inside the If then branch: the torch pattern over X (gamma, beta and
    eps from the main graph). Expect: one LayerNormalization in the branch
    writing then_out."""
    then_g = graph(ln_nodes("X", "then_out", [-1], prefix="t_"), "then_branch", [],
                   [fvi("then_out", None)])
    else_g = graph([node("Relu", ["X"], ["else_out"], "else_relu")], "else_branch", [],
                   [fvi("else_out", None)])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)], "fuseln_in_if",
        [vi("cond", TP.BOOL, []), fvi("X", [2, 3, 8])], [fvi("Y", None)],
        inits=[scalar("two", 2.0), scalar("eps", 1e-5), raw_tensor("G", rand(r, 8) + 1.5),
               raw_tensor("Bt", rand(r, 8))]), opset=17)


# ---------------------------------------------------------------------------
# fuse-gelu: erf and tanh GELU -> com.microsoft Gelu / FastGelu
# ---------------------------------------------------------------------------

SQRT2 = math.sqrt(2.0)


def gelu_erf(name, form, div=SQRT2, extra=False):
    """form: 'a' (x*a)*0.5 (torch), 'b' x*(a*0.5) with Mul by 1/sqrt2,
    'c' (0.5*x)*a."""
    inits = [scalar("half", 0.5), scalar("one", 1.0)]
    if form == "b":
        inits.append(scalar("rs", 1.0 / div))
        n = [node("Mul", ["X", "rs"], ["u"], "scale0")]
    else:
        inits.append(scalar("s2", div))
        n = [node("Div", ["X", "s2"], ["u"], "scale0")]
    n += [node("Erf", ["u"], ["e"], "erf0"), node("Add", ["one", "e"], ["a"], "add0")]
    if form == "a":
        n += [node("Mul", ["X", "a"], ["t"], "mul0"), node("Mul", ["t", "half"], ["Y"], "mul1")]
    elif form == "b":
        n += [node("Mul", ["a", "half"], ["t"], "mul0"), node("Mul", ["t", "X"], ["Y"], "mul1")]
    else:
        n += [node("Mul", ["half", "X"], ["t"], "mul0"), node("Mul", ["t", "a"], ["Y"], "mul1")]
    n += [node("Relu", ["e"], ["Z"], "relu0")] if extra else []
    outs = [fvi("Y", None)] + ([fvi("Z", None)] if extra else [])
    return finish(graph(n, name, [fvi("X", [2, 7])], outs, inits=inits))


@model("fusegelu_erf_torch")
def _(r):
    """torch: Div(X, 1.4142135), Erf, Add(1, e), Mul(X, a), Mul(t, 0.5).
    Expect with fuse-gelu: one com.microsoft Gelu(X) writing Y, the
    com.microsoft opset import added; by default: kept."""
    return gelu_erf("fusegelu_erf_torch", "a")


@model("fusegelu_erf_mul")
def _(r):
    """Mul(X, 0.70710677), Erf, Add, Mul(a, 0.5), Mul(t, X).
    Expect with fuse-gelu: Gelu(X)."""
    return gelu_erf("fusegelu_erf_mul", "b")


@model("fusegelu_erf_half_first")
def _(r):
    """Div(X, sqrt2), Erf, Add; Mul(0.5, X) then Mul(t, a).
    Expect with fuse-gelu: Gelu(X)."""
    return gelu_erf("fusegelu_erf_half_first", "c")


@model("fusegelu_erf_wrong_constant")
def _(r):
    """Div(X, 1.5) instead of sqrt2. Expect: kept."""
    return gelu_erf("fusegelu_erf_wrong_constant", "a", div=1.5)


@model("fusegelu_erf_shared")
def _(r):
    """The Erf output is also read by Relu -> Z. Expect: kept."""
    return gelu_erf("fusegelu_erf_shared", "a", extra=True)


@model("fusegelu_untyped_input")
def _(r):
    """X -> Sin -> x (no declared type, and Sin's is not traced) -> the torch
    erf GELU of x. Expect with fuse-gelu: Gelu(x) (float32 told by the
    pattern's constant 1, which ONNX makes x's type)."""
    m = gelu_erf("fusegelu_untyped_input", "a")
    for n in m.graph.node:
        n.input[:] = ["x" if v == "X" else v for v in n.input]
    m.graph.node.insert(0, node("Sin", ["X"], ["x"], "sin0"))
    return m


@model("fusegelu_float16")
def _(r):
    """The torch erf GELU of a float16 X. Expect: kept, with a warning
    (onnxruntime's CPU Gelu takes float32 only)."""
    inits = [scalar("half", 0.5, np.float16), scalar("one", 1.0, np.float16),
             scalar("s2", SQRT2, np.float16)]
    n = [node("Div", ["X", "s2"], ["u"], "scale0"), node("Erf", ["u"], ["e"], "erf0"),
         node("Add", ["e", "one"], ["a"], "add0"), node("Mul", ["X", "a"], ["t"], "mul0"),
         node("Mul", ["t", "half"], ["Y"], "mul1")]
    return finish(graph(n, "fusegelu_float16", [vi("X", TP.FLOAT16, [2, 7])],
                        [vi("Y", TP.FLOAT16, [2, 7])], inits=inits))


def gelu_tanh(name, cube_mul=False, c1=math.sqrt(2.0 / math.pi)):
    """GPT-2 gelu_new: h = X*0.5; p = X^3; q = 0.044715*p; s = X + q;
    t = c1*s; Tanh; a = 1 + tanh; Y = h*a."""
    inits = [scalar("half", 0.5), scalar("one", 1.0), scalar("c1", c1),
             scalar("c2", 0.044715), scalar("three", 3.0)]
    n = [node("Mul", ["X", "half"], ["h"], "half0")]
    if cube_mul:
        n += [node("Mul", ["X", "X"], ["x2"], "sq0"), node("Mul", ["x2", "X"], ["p"], "cube0")]
    else:
        n.append(node("Pow", ["X", "three"], ["p"], "cube0"))
    n += [node("Mul", ["c2", "p"], ["q"], "mulc2"), node("Add", ["X", "q"], ["s"], "add0"),
          node("Mul", ["c1", "s"], ["t"], "mulc1"), node("Tanh", ["t"], ["th"], "tanh0"),
          node("Add", ["th", "one"], ["a"], "add1"), node("Mul", ["h", "a"], ["Y"], "mul1")]
    return finish(graph(n, name, [fvi("X", [2, 7])], [fvi("Y", None)], inits=inits))


@model("fusegelu_tanh_gpt2")
def _(r):
    """GPT-2 tanh GELU with Pow(X, 3). Expect with fuse-gelu: one
    com.microsoft FastGelu(X) writing Y; by default: kept."""
    return gelu_tanh("fusegelu_tanh_gpt2")


@model("fusegelu_tanh_cube_mul")
def _(r):
    """Tanh GELU with X^3 as Mul(Mul(X, X), X). Expect with fuse-gelu:
    FastGelu(X)."""
    return gelu_tanh("fusegelu_tanh_cube_mul", cube_mul=True)


@model("fusegelu_tanh_wrong_constant")
def _(r):
    """Tanh GELU with 0.8 instead of sqrt(2/pi). Expect: kept."""
    return gelu_tanh("fusegelu_tanh_wrong_constant", c1=0.8)


def quick_gelu(name, alpha=1.702):
    """CLIP's quick GELU: Y = X * Sigmoid(alpha * X)."""
    n = [node("Mul", ["alpha", "X"], ["u"], "scale0"), node("Sigmoid", ["u"], ["s"], "sig0"),
         node("Mul", ["X", "s"], ["Y"], "mul0")]
    return finish(graph(n, name, [fvi("X", [2, 7])], [fvi("Y", None)],
                        inits=[scalar("alpha", alpha)]))


@model("fusegelu_quick")
def _(r):
    """Mul(1.702, X), Sigmoid, Mul(X, s). Expect with fuse-gelu: one
    com.microsoft QuickGelu(X) with alpha 1.702 writing Y."""
    return quick_gelu("fusegelu_quick")


@model("fusegelu_quick_other_alpha")
def _(r):
    """X * Sigmoid(2 X): not the quick GELU constant. Expect: kept."""
    return quick_gelu("fusegelu_quick_other_alpha", alpha=2.0)


def biased(m, bshape, xshape=(2, 3, 8), extra=False):
    """m's GELU of X made a GELU of x = Add(X, B) (B of bshape); X declared
    xshape; with extra, x is also read by Relu -> Z."""
    r = mt.rng(m.graph.name)
    for n in m.graph.node:
        n.input[:] = ["x" if v == "X" else v for v in n.input]
    m.graph.node.insert(0, node("Add", ["X", "B"], ["x"], "bias0"))
    m.graph.initializer.append(raw_tensor("B", rand(r, *bshape)))
    m.graph.input[0].CopyFrom(fvi("X", list(xshape)))
    m.graph.output[0].CopyFrom(fvi("Y", None))
    if extra:
        m.graph.node.append(node("Relu", ["x"], ["Z"], "relu0"))
        m.graph.output.append(fvi("Z", None))
    return m


@model("fusegelu_bias_erf")
def _(r):
    """X [2,3,8] -> Add(X, B [8]) -> the torch erf GELU. Expect with
    fuse-gelu: one com.microsoft BiasGelu(X, B) writing Y."""
    return biased(gelu_erf("fusegelu_bias_erf", "a"), (8,))


@model("fusegelu_bias_tanh")
def _(r):
    """X [2,3,8] -> Add(X, B [8]) -> the GPT-2 tanh GELU. Expect with
    fuse-gelu: one com.microsoft FastGelu(X, B) writing Y."""
    return biased(gelu_tanh("fusegelu_bias_tanh"), (8,))


@model("fusegelu_bias_read_elsewhere")
def _(r):
    """Add(X, B [8]) output x also read by Relu -> Z. Expect with fuse-gelu:
    Gelu(x); the Add stays."""
    return biased(gelu_erf("fusegelu_bias_read_elsewhere", "a"), (8,), extra=True)


@model("fusegelu_bias_broadcast")
def _(r):
    """X [2,3,1] + B [8]: the bias widens X's last axis, which BiasGelu does
    not do. Expect with fuse-gelu: Gelu(x); the Add stays."""
    return biased(gelu_erf("fusegelu_bias_broadcast", "a"), (8,), xshape=(2, 3, 1))


@model("fusegelu_in_if")
def _(r):
    """Inside the If then branch: the torch erf GELU of X (constants from
    the main graph), with com.microsoft already imported (version 1).
    Expect with fuse-gelu: a Gelu in the branch; the import not repeated."""
    then_g = graph([node("Div", ["X", "s2"], ["u"], "then_div"),
                    node("Erf", ["u"], ["e"], "then_erf"),
                    node("Add", ["e", "one"], ["a"], "then_add"),
                    node("Mul", ["X", "a"], ["t"], "then_mul0"),
                    node("Mul", ["t", "half"], ["then_out"], "then_mul1")],
                   "then_branch", [], [fvi("then_out", None)])
    else_g = graph([node("Relu", ["X"], ["else_out"], "else_relu")], "else_branch", [],
                   [fvi("else_out", None)])
    return finish_with(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)], "fusegelu_in_if",
        [vi("cond", TP.BOOL, []), fvi("X", [2, 7])], [fvi("Y", None)],
        inits=[scalar("half", 0.5), scalar("one", 1.0), scalar("s2", SQRT2)]),
        [("", mt.OPSET), ("com.microsoft", 1)])


def output_types(build):
    """build, with graph outputs declared without a shape (None above) given
    the type and shape onnx's shape inference finds (the checker wants one)."""
    def wrapped(r):
        m = build(r)
        inferred = onnx.shape_inference.infer_shapes(m).graph
        known = {v.name: v for v in list(inferred.value_info) + list(inferred.output)
                 if v.type.tensor_type.HasField("shape")}
        for o in m.graph.output:
            if not o.type.tensor_type.HasField("shape") and o.name in known:
                o.CopyFrom(known[o.name])
        return m
    wrapped.__doc__ = build.__doc__
    return wrapped


def main(argv):
    outdir = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "..", "testdata")
    del mt.BUILDERS[:FIRST]  # make_testdata's own models: its own script writes them
    mt.BUILDERS[:] = [(name, output_types(fn)) for name, fn in mt.BUILDERS]
    mt.main([argv[0], outdir])


if __name__ == "__main__":
    main(sys.argv)
