"""fuse-bn: fold BatchNormalization into the Conv/ConvTranspose/Gemm before it
(formatter/fuse_bn.c).

Its test models (builders registered with @model; testdata/fuse_bn/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper

from passes.build import (bn, bn_inits, f16vi, finish, fvi, graph, if_node, Models, node, rand,
                          raw_tensor, sparse_dense, sparse_tensor, vi)
from passes.common import (bn_as_conv, folded, graph_input_kept, init_count, kept, NBN, NI,
                           node_input, node_output, ONCE, op_count, sparse_kept, unchanged,
                           vi_removed)

PASS = "fuse-bn"

MODELS = Models("fuse_bn", "fusebn")
model = MODELS.model


# ---------------------------------------------------------------------------
# the test models (testdata/fuse_bn/)
# ---------------------------------------------------------------------------

def float32_big_weight_gemm(r, name, big_column, scales, rows=3, big_row=1):
    """float32: X [2,rows] -> Mul(0.001) -> Gemm (transB 0, W [rows,C] in
    [-1,1] except W[big_row, big_column] = 2e37) -> BN (scale `scales`, var 1,
    eps 0: the factor of column c is scales[c]) -> Y.  The input scaling
    keeps every value of the unfused model finite."""
    c = len(scales)
    w = r.uniform(-1, 1, (rows, c)).astype(np.float32)
    w[big_row, big_column] = 2e37
    stats = [raw_tensor("bn0_scale", np.array(scales, np.float32)),
             raw_tensor("bn0_bias", r.normal(0.0, 0.5, c).astype(np.float32)),
             raw_tensor("bn0_mean", r.normal(0.0, 0.5, c).astype(np.float32)),
             raw_tensor("bn0_var", np.ones(c, np.float32))]
    return finish(graph(
        [node("Mul", ["X", "milli"], ["xs"], "mul0"),
         node("Gemm", ["xs", "W"], ["g"], "gemm0"),
         bn("g", "Y", "bn0", "bn0", epsilon=0.0)],
        name, [fvi("X", [2, rows])], [fvi("Y", [2, c])],
        inits=[raw_tensor("milli", np.array(0.001, np.float32)), raw_tensor("W", w)] + stats))


# ---------------------------------------------------------------------------
# fuse-bn: Conv/ConvTranspose/Gemm -> BatchNormalization folds into the weights
# ---------------------------------------------------------------------------

@model("conv_bias")
def _(r):
    """Conv (bias) -> BN (epsilon 0.1) -> Relu.
    Expect: no BN; conv0 writes b (BN's output), weight W*s and bias
    (B-mean)*s+beta with s = scale/sqrt(var+eps); relu0 reads b."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "b", "bn0", "bn0", epsilon=0.1),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_conv_bias", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b] + bn_inits(r, "bn0", 4)))


@model("overridable_var")
def _(r):
    """Conv (bias) -> BN -> Relu in an IR 8 model whose BN variance is also a
    graph input: a default the caller may feed, so not the model's to fold.
    Expect: no fold (a warning naming bn0) and, by default, no bn-to-conv
    either: conv0 and bn0 unchanged, bn0_var still an input."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "b", "bn0", "bn0", epsilon=0.1),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_overridable_var", [fvi("X", [1, 3, 6, 6]), fvi("bn0_var", [4])],
        [fvi("Y", [1, 4, 6, 6])], inits=[w, b] + bn_inits(r, "bn0", 4)))


@model("overridable_weight")
def _(r):
    """Conv -> BN whose Conv weight W is also a graph input (IR 8).
    Expect with fuse-bn: no fold (a warning naming bn0), conv0 and bn0
    unchanged.  Default: bn-to-conv still makes bn0 a depthwise Conv (its
    own statistics are constants); W stays an input."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_overridable_weight", [fvi("X", [1, 3, 6, 6]), fvi("W", [4, 3, 3, 3])],
        [fvi("Y", [1, 4, 4, 4])], inits=[w] + bn_inits(r, "bn0", 4)))


@model("chain")
def _(r):
    """Six Conv (bias) -> BN -> Relu layers, each with weights of its own.
    Expect: every BN folded into its Conv (six folds written one after the
    other, each weight and bias computed while the output is written; also
    tests/test_cli.py's short-writes check)."""
    nodes, inits, x = [], [], "X"
    for i in range(6):
        p = "l%d" % i
        y = "Y" if i == 5 else p + "_r"
        nodes += [node("Conv", [x, p + "_W", p + "_B"], [p + "_c"], p + "_conv", kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1]),
                  bn(p + "_c", p + "_b", p + "_bn", p + "_bn"),
                  node("Relu", [p + "_b"], [y], p + "_relu")]
        inits += [raw_tensor(p + "_W", rand(r, 4, 4 if i else 3, 3, 3)), raw_tensor(p + "_B", rand(r, 4))]
        inits += bn_inits(r, p + "_bn", 4)
        x = y
    return finish(graph(nodes, "fusebn_chain", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
                        inits=inits))


@model("identity_params")
def _(r):
    """Conv -> BN whose mean and var come through Identity nodes of other
    initializers, as torch exports equal tensors (bn0_m = Identity(bn0_b),
    bn0_v = Identity(bn0_s)). Expect: BN folded all the same; no Identity."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    s = raw_tensor("bn0_s", r.uniform(0.5, 1.5, 4).astype(np.float32))
    b = raw_tensor("bn0_b", r.normal(0, 0.5, 4).astype(np.float32))
    return finish(graph(
        [node("Identity", ["bn0_b"], ["bn0_m"], "id_mean"),
         node("Identity", ["bn0_s"], ["bn0_v"], "id_var"),
         node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3]),
         node("BatchNormalization", ["c", "bn0_s", "bn0_b", "bn0_m", "bn0_v"], ["Y"], "bn0")],
        "fusebn_identity_params", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 4, 4])],
        inits=[w, s, b]))


@model("conv_nobias")
def _(r):
    """Conv (no bias, stride 2) -> BN -> graph output Y.
    Expect: no BN; conv0 writes Y, now with a bias."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], strides=[2, 2]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_nobias", [fvi("X", [1, 3, 7, 7])], [fvi("Y", [1, 4, 3, 3])],
        inits=[w] + bn_inits(r, "bn0", 4)))


@model("conv_grouped")
def _(r):
    """Grouped Conv (group 2, W [6,2,3,3]) -> BN.
    Expect: no BN; conv0 (group 2 kept) writes Y with folded weights."""
    w = raw_tensor("W", rand(r, 6, 2, 3, 3))
    b = raw_tensor("B", rand(r, 6))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], group=2,
              pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_grouped", [fvi("X", [1, 4, 5, 5])], [fvi("Y", [1, 6, 5, 5])],
        inits=[w, b] + bn_inits(r, "bn0", 6)))


@model("conv_depthwise")
def _(r):
    """Depthwise Conv (group 4, W [4,1,3,3], bias) -> BN.
    Expect: no BN; conv0 (group 4 kept) writes Y with folded weights."""
    w = raw_tensor("W", rand(r, 4, 1, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], group=4,
              pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_depthwise", [fvi("X", [1, 4, 5, 5])], [fvi("Y", [1, 4, 5, 5])],
        inits=[w, b] + bn_inits(r, "bn0", 4)))


@model("conv1d")
def _(r):
    """Conv1d (W [5,3,3], no bias) -> BN on a rank-3 value.
    Expect: no BN; conv0 writes Y with folded weights and a bias."""
    w = raw_tensor("W", rand(r, 5, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv1d", [fvi("X", [1, 3, 10])], [fvi("Y", [1, 5, 8])],
        inits=[w] + bn_inits(r, "bn0", 5)))


@model("conv3d")
def _(r):
    """Conv3d (W [3,2,3,3,3], bias) -> BN on a rank-5 value.
    Expect: no BN; conv0 writes Y with folded weights."""
    w = raw_tensor("W", rand(r, 3, 2, 3, 3, 3))
    b = raw_tensor("B", rand(r, 3))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3, 3],
              pads=[1, 1, 1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv3d", [fvi("X", [1, 2, 3, 4, 4])], [fvi("Y", [1, 3, 3, 4, 4])],
        inits=[w, b] + bn_inits(r, "bn0", 3)))


@model("convtranspose")
def _(r):
    """ConvTranspose (group 2, W [4,3,3,3] = [Cin, Cout/group, k, k], B [6],
    stride 2) -> BN over its 6 output channels.
    Expect: no BN; convt0 writes Y; W[i, j] scaled by s[g*3+j] (g = group
    of input channel i), bias folded."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 6))
    return finish(graph(
        [node("ConvTranspose", ["X", "W", "B"], ["c"], "convt0", group=2, strides=[2, 2]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_convtranspose", [fvi("X", [1, 4, 3, 3])], [fvi("Y", [1, 6, 7, 7])],
        inits=[w, b] + bn_inits(r, "bn0", 6)))


@model("convtranspose_nobias")
def _(r):
    """ConvTranspose (group 1, W [3,5,2,2], no bias) -> BN -> Relu.
    Expect: no BN; convt0 writes b with folded weights and a bias."""
    w = raw_tensor("W", rand(r, 3, 5, 2, 2))
    return finish(graph(
        [node("ConvTranspose", ["X", "W"], ["c"], "convt0"),
         bn("c", "b", "bn0", "bn0"),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_convtranspose_nobias", [fvi("X", [1, 3, 4, 4])], [fvi("Y", [1, 5, 5, 5])],
        inits=[w] + bn_inits(r, "bn0", 5)))


@model("gemm_transb1")
def _(r):
    """Gemm (transB 1, W [4,5], C [4], alpha 0.5, beta 2) -> BN on [2,4].
    Expect: no BN; gemm0 writes Y; effective weight alpha*B' scaled per
    output column, effective bias beta*C folded (alpha/beta honoured)."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1, alpha=0.5, beta=2.0),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_transb1", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4)))


@model("gemm_transb0")
def _(r):
    """Gemm (transB 0, W [5,4], no C, alpha 1.5) -> BN.
    Expect: no BN; gemm0 writes Y with folded weight and a bias."""
    w = raw_tensor("W", rand(r, 5, 4))
    return finish(graph(
        [node("Gemm", ["X", "W"], ["g"], "gemm0", alpha=1.5),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_transb0", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w] + bn_inits(r, "bn0", 4)))


@model("gemm_c2d")
def _(r):
    """Gemm (transA 1, transB 0, W [5,4], C [1,4], beta 0.25) -> BN -> Relu.
    Expect: no BN; gemm0 writes b with folded weight and bias."""
    w = raw_tensor("W", rand(r, 5, 4))
    c = raw_tensor("C", rand(r, 1, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transA=1, beta=0.25),
         bn("g", "b", "bn0", "bn0"),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_gemm_c2d", [fvi("X", [5, 2])], [fvi("Y", [2, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4)))


@model("gemm_beta0_inf")
def _(r):
    """Gemm (beta 0, C [4] = inf, NaN, 0.5, -inf: not read) -> BN.
    Expect: no BN; gemm0's new C is the BN's shift (beta 1), never NaN."""
    w = raw_tensor("W", rand(r, 5, 4))
    c = raw_tensor("C", np.array([np.inf, np.nan, 0.5, -np.inf], np.float32))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", beta=0.0),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_beta0_inf", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4)))


@model("conv_inf_weight_zero_scale")
def _(r):
    """Conv 1x1 whose weight holds inf for output channel 1 -> BN whose scale
    is 0 for channel 1: the BN makes that channel NaN (0 * inf), and so does
    the folded weight (inf * 0). Expect: no BN; folded, the same outputs."""
    w = rand(r, 3, 2, 1, 1)
    w[1, 0, 0, 0] = np.inf
    stats = bn_inits(r, "bn0", 3)
    stats[0] = raw_tensor("bn0_scale", np.array([0.8, 0.0, 1.2], np.float32))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_inf_weight_zero_scale", [fvi("X", [1, 2, 3, 3])], [fvi("Y", [1, 3, 3, 3])],
        inits=[raw_tensor("W", w)] + stats))


@model("gemm_c_value_info")
def _(r):
    """Gemm (C [1,4] with value_info C [1,4]) -> BN.
    Expect: no BN; gemm0's bias is the folded [4], and the value_info C
    [1,4] (now wrong: the checker refuses it) is gone."""
    w = raw_tensor("W", rand(r, 5, 4))
    c = raw_tensor("C", rand(r, 1, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0"),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_c_value_info", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4), value_info=[fvi("C", [1, 4])]))


@model("conv_grouped_k1")
def _(r):
    """Grouped Conv1d with a 1-element kernel (group 5, W [15,1,1], bias) ->
    BN: each output channel owns exactly one weight element.
    Expect: no BN; conv0 writes Y; W[c] scaled by s[c] (its own channel's
    factor, not channel 0's), bias folded."""
    w = raw_tensor("W", rand(r, 15, 1, 1))
    b = raw_tensor("B", rand(r, 15))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[1], group=5),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_grouped_k1", [fvi("X", [1, 5, 4])], [fvi("Y", [1, 15, 4])],
        inits=[w, b] + bn_inits(r, "bn0", 15)))


@model("convtranspose_k1")
def _(r):
    """ConvTranspose1d with a 1-element kernel (group 3, W [6,2,1] = [Cin,
    Cout/group, 1], no bias) -> BN over its 6 output channels.
    Expect: no BN; convt0 writes Y; W[i, j] scaled by s[g*2+j] (g = group
    of input channel i, not always group 0), bias added."""
    w = raw_tensor("W", rand(r, 6, 2, 1))
    return finish(graph(
        [node("ConvTranspose", ["X", "W"], ["c"], "convt0", group=3),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_convtranspose_k1", [fvi("X", [1, 6, 4])], [fvi("Y", [1, 6, 4])],
        inits=[w] + bn_inits(r, "bn0", 6)))


@model("gemm_transb1_k1")
def _(r):
    """Gemm (transB 1, K 1: W [4,1], C [4]) -> BN on [3,4]: one weight
    element per output row.
    Expect: no BN; gemm0 writes Y; W[n] scaled by s[n], bias folded."""
    w = raw_tensor("W", rand(r, 4, 1))
    c = raw_tensor("C", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1),
         bn("g", "Y", "bn0", "bn0")],
        "fusebn_gemm_transb1_k1", [fvi("X", [3, 1])], [fvi("Y", [3, 4])],
        inits=[w, c] + bn_inits(r, "bn0", 4)))


@model("float16")
def _(r):
    """float16 throughout: Conv (W, B float16) -> BN (float16 parameters).
    Expect: no BN; conv0 writes Y; its weight and bias stay float16 and hold
    the fold (computed in double, rounded to float16)."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3).astype(np.float16))
    b = raw_tensor("B", rand(r, 4).astype(np.float16))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_float16", [f16vi("X", [1, 3, 5, 5])], [f16vi("Y", [1, 4, 5, 5])],
        inits=[w, b] + bn_inits(r, "bn0", 4, np.float16)))


@model("float16_overflow")
def _(r):
    """float16: X [1,2,4,4] -> Mul(0.001) -> Conv 1x1 (W [2,2,1,1] of
    magnitude ~100) -> BN (scale 1000, var 1: factor ~1000) -> Y.  The Conv
    output stays below 1 and Y near 200, but the folded weight 100 * 1000
    overflows float16 (max 65504) to inf.
    Expect with fuse-bn: not fused (a warning naming bn0): conv0 and bn0
    unchanged.  Default: bn-to-conv makes bn0 a depthwise 1x1 Conv (its
    factors fit float16)."""
    w = (r.uniform(90, 110, (2, 2, 1, 1)) * r.choice([-1, 1], (2, 2, 1, 1))).astype(np.float16)
    stats = [raw_tensor("bn0_scale", np.array([1000, 800], np.float16)),
             raw_tensor("bn0_bias", np.array([0.5, -0.5], np.float16)),
             raw_tensor("bn0_mean", np.array([0.01, -0.02], np.float16)),
             raw_tensor("bn0_var", np.array([1, 1], np.float16))]
    return finish(graph(
        [node("Mul", ["X", "milli"], ["xs"], "mul0"),
         node("Conv", ["xs", "W"], ["c"], "conv0", kernel_shape=[1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_float16_overflow", [f16vi("X", [1, 2, 4, 4])], [f16vi("Y", [1, 2, 4, 4])],
        inits=[raw_tensor("milli", np.array(0.001, np.float16)), raw_tensor("W", w)] + stats))


@model("float32_overflow_gemm")
def _(r):
    """float32 Gemm weight scaled by column (see float32_big_weight_gemm):
    column 2 holds 2e37 and its factor is 100, so the folded weight 2e39
    would overflow float32 (max 3.4e38) to inf.
    Expect with fuse-bn: not fused (a warning naming bn0): gemm0 and bn0
    unchanged."""
    return float32_big_weight_gemm(r, "fusebn_float32_overflow_gemm", 2, [1, 1, 100, 1])


@model("float32_large_gemm")
def _(r):
    """The same weight, but the large factor (100) is column 1's and column
    2's (holding 2e37) is 5: every folded element is finite (at most 1e38).
    A check that mixed up rows and columns (W's row 1 holds the 2e37) would
    refuse it.  Expect: no BN; gemm0 writes Y with the folded weight."""
    return float32_big_weight_gemm(r, "fusebn_float32_large_gemm", 2, [1, 100, 5, 1])


@model("float32_overflow_gemm_block2")
def _(r):
    """As fusebn_float32_overflow_gemm with W [900,300] (1.08 MB, more than
    the 1 MiB ppqfmt reads at a time) and the 2e37 at row 890, column 7, in
    the second block read; column 7's factor is 100.
    Expect with fuse-bn: not fused (a warning naming bn0)."""
    scales = [1.0] * 300
    scales[7] = 100.0
    return float32_big_weight_gemm(r, "fusebn_float32_overflow_gemm_block2", 7, scales,
                                   rows=900, big_row=890)


@model("float32_overflow_conv")
def _(r):
    """float32: X [1,3,4,4] -> Mul(0.001) -> Conv 1x1 (W [2,3,1,1] in [-1,1]
    except W[1,2] = 2e37) -> BN (factor 1 for channel 0, 100 for channel 1)
    -> Y.  Channel 1's folded weight 2e39 would overflow float32.
    Expect with fuse-bn: not fused (a warning naming bn0): conv0 and bn0
    unchanged."""
    w = r.uniform(-1, 1, (2, 3, 1, 1)).astype(np.float32)
    w[1, 2] = 2e37
    stats = [raw_tensor("bn0_scale", np.array([1, 100], np.float32)),
             raw_tensor("bn0_bias", np.array([0.5, -0.5], np.float32)),
             raw_tensor("bn0_mean", np.array([0.01, -0.02], np.float32)),
             raw_tensor("bn0_var", np.ones(2, np.float32))]
    return finish(graph(
        [node("Mul", ["X", "milli"], ["xs"], "mul0"),
         node("Conv", ["xs", "W"], ["c"], "conv0", kernel_shape=[1, 1]),
         bn("c", "Y", "bn0", "bn0", epsilon=0.0)],
        "fusebn_float32_overflow_conv", [fvi("X", [1, 3, 4, 4])], [fvi("Y", [1, 2, 4, 4])],
        inits=[raw_tensor("milli", np.array(0.001, np.float32)), raw_tensor("W", w)] + stats))


@model("sparse_weight", full_check=False)
def _(r):
    """Conv whose weight Wsp is a sparse_initializer (dense bias B) -> BN -> Y.
    Expect with fuse-bn: not folded (a warning naming conv0: the fold needs
    Wsp's values), conv0 and bn0 unchanged, Wsp still a sparse_initializer
    with the same bytes.  Default: bn-to-conv makes bn0 a depthwise 1x1 Conv
    writing Y; Wsp unchanged."""
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "Wsp", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_sparse_weight", [fvi("X", [1, 3, 5, 5])], [fvi("Y", [1, 4, 5, 5])],
        inits=[b] + bn_inits(r, "bn0", 4), sparse=[sparse_tensor("Wsp", sparse_dense(r, 4, 3, 3, 3))]))


@model("in_if")
def _(r):
    """Inside the If then branch: then_conv (branch initializers Wt, Bt) ->
    then_bn (branch BN parameters) -> then_out.  else: else_conv (We).
    Expect: then_bn removed; then_conv writes then_out with folded weights;
    else branch untouched."""
    wt = raw_tensor("Wt", rand(r, 4, 3, 3, 3))
    bt = raw_tensor("Bt", rand(r, 4))
    we = raw_tensor("We", rand(r, 4, 3, 3, 3))
    then_g = graph([node("Conv", ["X", "Wt", "Bt"], ["tc"], "then_conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                    bn("tc", "then_out", "then_bn", "tbn")],
                   "then_branch", [], [fvi("then_out", [1, 4, 5, 5])],
                   inits=[wt, bt] + bn_inits(r, "tbn", 4))
    else_g = graph([node("Conv", ["X", "We"], ["else_out"], "else_conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
                   "else_branch", [], [fvi("else_out", [1, 4, 5, 5])], inits=[we])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "fusebn_in_if", [vi("cond", TP.BOOL, []), fvi("X", [1, 3, 5, 5])],
        [fvi("Y", [1, 4, 5, 5])]))


@model("two_consumers")
def _(r):
    """Conv output c feeds BN -> Y and Relu -> Z (no value_info anywhere).
    Expect with fuse-bn: not fused (Z needs c): bn0 kept, conv0 unchanged.
    With the default passes: bn-to-conv turns bn0 into a depthwise 1x1 Conv
    (rank 4, known from conv0's weight) writing Y from c."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0"),
         node("Relu", ["c"], ["Z"], "relu0")],
        "fusebn_two_consumers", [fvi("X", [1, 3, 5, 5])],
        [fvi("Y", [1, 4, 5, 5]), fvi("Z", [1, 4, 5, 5])],
        inits=[w, b] + bn_inits(r, "bn0", 4)))


@model("conv_output")
def _(r):
    """Conv output c is a graph output and feeds BN -> Y.
    Expect with fuse-bn: not fused: bn0 kept, conv0 unchanged.  Default:
    bn-to-conv makes bn0 a depthwise 1x1 Conv writing Y."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_conv_output", [fvi("X", [1, 3, 5, 5])],
        [fvi("c", [1, 4, 5, 5]), fvi("Y", [1, 4, 5, 5])],
        inits=[w] + bn_inits(r, "bn0", 4)))


@model("weight_input")
def _(r):
    """Conv whose weight W is a graph input (not a parameter) -> BN.
    Expect with fuse-bn: not fused: bn0 kept, conv0 unchanged.  Default:
    bn-to-conv makes bn0 a depthwise 1x1 Conv writing Y."""
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", "Y", "bn0", "bn0")],
        "fusebn_weight_input", [fvi("X", [1, 3, 5, 5]), fvi("W", [4, 3, 3, 3])],
        [fvi("Y", [1, 4, 5, 5])], inits=bn_inits(r, "bn0", 4)))


@model("training_mode")
def _(r):
    """Opset 15: Conv -> BN with training_mode=1 and outputs Y, running_mean,
    running_var (all graph outputs).
    Expect: neither fused nor turned into a Conv (training BN uses the batch
    statistics): bn0 kept with its 3 outputs, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", None, "bn0", "bn0", outputs=["Y", "running_mean", "running_var"],
            training_mode=1)],
        "fusebn_training_mode", [fvi("X", [2, 3, 5, 5])],
        [fvi("Y", [2, 4, 5, 5]), fvi("running_mean", [4]), fvi("running_var", [4])],
        inits=[w, b] + bn_inits(r, "bn0", 4)), opset=15)


@model("extra_outputs")
def _(r):
    """Opset 13 (BatchNormalization-9): Conv -> BN with all 5 outputs (Y,
    mean, var, saved_mean, saved_var: the training form); Y -> Relu.
    Expect: not fused and not turned into a Conv: bn0 kept with its 5
    outputs, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c", None, "bn0", "bn0", outputs=["b", "bn_mean", "bn_var", "bn_saved_mean",
                                               "bn_saved_var"]),
         node("Relu", ["b"], ["Y"], "relu0")],
        "fusebn_extra_outputs", [fvi("X", [2, 3, 5, 5])], [fvi("Y", [2, 4, 5, 5])],
        inits=[w] + bn_inits(r, "bn0", 4)))


@model("shared_weight")
def _(r):
    """conv0 and conv1 share W, each followed by its own BN:
    X -> conv0 -> bn0 -> relu0 -> conv1 -> bn1 -> Y.
    Expect with fuse-bn alone: the same function (folding bn0 into the
    shared W must not change conv1): the numbers decide.  Default (after
    split-params): no BN; conv0 holds W folded with bn0, conv1 holds W
    folded with bn1; no initializer used twice."""
    w = raw_tensor("W", rand(r, 4, 4, 3, 3))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c0"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c0", "b0", "bn0", "bn0"),
         node("Relu", ["b0"], ["r"], "relu0"),
         node("Conv", ["r", "W"], ["c1"], "conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         bn("c1", "Y", "bn1", "bn1")],
        "fusebn_shared_weight", [fvi("X", [1, 4, 5, 5])], [fvi("Y", [1, 4, 5, 5])],
        inits=[w] + bn_inits(r, "bn0", 4) + bn_inits(r, "bn1", 4)))


@model("loop_ir3")
def _(r):
    """IR 3 (every initializer is also a graph input, so a subgraph can hold
    none): a Loop body Conv -> BN -> Conv -> Add(per-channel k), all their
    parameters from the outer scope. Folding would need a new initializer in
    the body, which IR 3 cannot have (found by the fuzzer: it was an internal
    error). Expect: every body node kept, fuse-bn warns about body_bn,
    outputs unchanged, the output passes the checker."""
    inits = [raw_tensor("W", rand(r, 3, 3, 3, 3)), raw_tensor("W2", rand(r, 3, 3, 1, 1)),
             raw_tensor("bs", r.uniform(0.5, 1.5, 3).astype(np.float32)),
             raw_tensor("bb", rand(r, 3)), raw_tensor("bm", rand(r, 3)),
             raw_tensor("bv", r.uniform(0.5, 2, 3).astype(np.float32)),
             raw_tensor("k", rand(r, 1, 3, 1, 1)),
             raw_tensor("M", np.array(2, np.int64)), raw_tensor("cond_init", np.array(True))]
    body = graph([node("Conv", ["v_in", "W"], ["c"], "body_conv", kernel_shape=[3, 3],
                       pads=[1, 1, 1, 1]),
                  node("BatchNormalization", ["c", "bs", "bb", "bm", "bv"], ["b"], "body_bn"),
                  node("Conv", ["b", "W2"], ["c2"], "body_conv2", kernel_shape=[1, 1]),
                  node("Add", ["c2", "k"], ["v_out"], "body_add"),
                  node("Identity", ["cond_in"], ["cond_out"], "body_id_cond")],
                 "loop_body",
                 [vi("iter", TP.INT64, []), vi("cond_in", TP.BOOL, []), fvi("v_in", [1, 3, 5, 5])],
                 [vi("cond_out", TP.BOOL, []), fvi("v_out", [1, 3, 5, 5])])
    as_inputs = [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    return finish(graph(
        [helper.make_node("Loop", ["M", "cond_init", "X"], ["Y"], name="loop0", body=body)],
        "fusebn_loop_ir3", [fvi("X", [1, 3, 5, 5])] + as_inputs, [fvi("Y", [1, 3, 5, 5])],
        inits=inits), opset=9, ir=3)


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

SPECS = {
    # -- fuse-bn -------------------------------------------------------------
    "conv_bias": dict(
        both=[NBN, node_output("conv0", 0, "b"), node_input("relu0", 0, "b"),
              folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    # a parameter that is also a graph input (IR >= 4) is a default a caller
    # may override: neither fold uses its value
    "overridable_var": dict(
        both=[unchanged("conv0", "bn0"), graph_input_kept("bn0_var")],
        warns=["bn0"]),
    "overridable_weight": dict(
        single=[unchanged("conv0", "bn0"), graph_input_kept("W")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4),
                 graph_input_kept("W")],
        warns=["bn0"]),
    "chain": dict(
        both=[NBN, op_count("Conv", 6)] + [folded("l%d_conv" % i, bn="l%d_bn" % i) for i in range(6)],
        default=[init_count(12)]),
    "identity_params": dict(
        both=[NBN, node_output("conv0", 0, "Y")], default=[NI]),
    "conv_nobias": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "conv_grouped": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "conv_depthwise": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "conv1d": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "conv3d": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "convtranspose": dict(
        both=[NBN, node_output("convt0", 0, "Y"), folded("convt0", bn="bn0")],
        default=[init_count(2)]),
    "convtranspose_nobias": dict(
        both=[NBN, node_output("convt0", 0, "b"), node_input("relu0", 0, "b"),
              folded("convt0", bn="bn0")],
        default=[init_count(2)]),
    # beta 0: C is not read; it holds inf/NaN, which 0 * C would make NaN
    "gemm_beta0_inf": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")]),
    # a non-finite weight times a zero factor: NaN before and after the fold
    "conv_inf_weight_zero_scale": dict(both=[NBN, folded("conv0", bn="bn0")]),
    "gemm_transb1": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")],
        default=[init_count(2)]),
    "gemm_transb0": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")],
        default=[init_count(2)]),
    # one weight element per output channel: each scaled by its own factor
    "conv_grouped_k1": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    "convtranspose_k1": dict(
        both=[NBN, node_output("convt0", 0, "Y"), folded("convt0", bn="bn0")],
        default=[init_count(2)]),
    "gemm_transb1_k1": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")],
        default=[init_count(2)]),
    "gemm_c_value_info": dict(
        both=[NBN, folded("gemm0", bn="bn0"), vi_removed("C")]),
    "gemm_c2d": dict(
        both=[NBN, node_output("gemm0", 0, "b"), node_input("relu0", 0, "b"),
              folded("gemm0", bn="bn0")],
        default=[init_count(2)]),
    "float16": dict(
        both=[NBN, node_output("conv0", 0, "Y"), folded("conv0", bn="bn0")],
        default=[init_count(2)]),
    # the folded weight would overflow float16: inf where the model gave ~200
    "float16_overflow": dict(
        single=[unchanged("conv0", "bn0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4)],
        warns=["bn0"]),
    # float32 weights are checked too, by column for a Gemm: 2e37 * 100
    # overflows; the same weight with the large factor on another column folds
    "float32_overflow_gemm": dict(
        single=[unchanged("gemm0", "bn0")],
        default=[unchanged("gemm0", "bn0")],
        warns=["bn0"]),
    "float32_overflow_gemm_block2": dict(
        single=[unchanged("gemm0", "bn0")],
        default=[unchanged("gemm0", "bn0")],
        warns=["bn0"]),
    "float32_large_gemm": dict(
        both=[NBN, node_output("gemm0", 0, "Y"), folded("gemm0", bn="bn0")]),
    "float32_overflow_conv": dict(
        single=[unchanged("conv0", "bn0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4)],
        warns=["bn0"]),
    # the fold needs the values of a sparse weight: kept, and kept sparse
    "sparse_weight": dict(
        single=[unchanged("conv0", "bn0"), sparse_kept("Wsp")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4),
                 sparse_kept("Wsp")],
        warns=["conv0", "Wsp"], plain_checker="python3-onnx 1.12 types sparse initializers as sparse_tensor"),
    "in_if": dict(
        both=[NBN, node_output("then_conv", 0, "then_out"), folded("then_conv", bn="then_bn"),
              unchanged("else_conv")],
        default=[init_count(3)]),
    "two_consumers": dict(
        single=[unchanged("conv0", "bn0", "relu0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0", "relu0"), bn_as_conv("bn0", 4)]),
    "conv_output": dict(
        single=[unchanged("conv0", "bn0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4)]),
    "weight_input": dict(
        single=[unchanged("conv0", "bn0")],
        default=[NBN, op_count("Conv", 2), unchanged("conv0"), bn_as_conv("bn0", 4)]),
    # training-form BNs are neither fused nor turned into a Conv
    "training_mode": dict(both=[op_count("Conv", 1), unchanged("conv0", "bn0")]),
    "extra_outputs": dict(both=[op_count("Conv", 1), unchanged("conv0", "bn0")]),
    # fuse-bn alone may fold into private copies of W or leave the BNs: the
    # numbers decide; after split-params (default) both fold
    "loop_ir3": dict(
        both=[op_count("BatchNormalization", 1), op_count("Add", 1), op_count("Conv", 2),
              kept("loop0", "body_conv", "body_bn", "body_conv2", "body_add")],
        warns=["body_bn"]),
    "shared_weight": dict(default=[
        NBN, op_count("Conv", 2), node_output("conv0", 0, "b0"), node_input("relu0", 0, "b0"),
        node_output("conv1", 0, "Y"), folded("conv0", bn="bn0"), folded("conv1", bn="bn1"),
        ONCE, init_count(4)]),
}
