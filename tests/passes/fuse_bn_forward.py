"""fuse-bn-forward: fold BatchNormalization into the unpadded Conv after it
(formatter/fuse_bn_forward.c).

Its test models (builders registered with @model; testdata/fuse_bn_forward/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP

from passes.build import (bn, bn_inits, finish, fvi, graph, if_node, Models, node, rand,
                          raw_tensor, rng, vi, with_default_input)
from passes.common import (affine, bn_affine, bn_as_conv, close, find_scoped, graph_input_kept, NBN,
                           op_count, same_attrs, unchanged)

PASS = "fuse-bn-forward"

MODELS = Models("fuse_bn_forward", "fusebnfwd", output_types=True)
model = MODELS.model


# ---------------------------------------------------------------------------
# fuse-bn-forward: BatchNormalization -> unpadded Conv
# ---------------------------------------------------------------------------

def bn_conv(name, w, b=None, xshape=(1, 3, 6, 6), extra=False, op="Conv", stats=None,
            dtype=TP.FLOAT, **attrs):
    """X -> BN (bn0) -> op (conv0, weight W, bias B when given) -> Y."""
    r = rng(name)
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


@model("conv")
def _(r):
    """X [1,3,6,6] -> BN -> Conv 3x3 (bias, no pads). Expect: bn0 removed;
    conv0 reads X with W[o,c] * s[c] and B[o] + sum W[o,c,k] * shift[c]."""
    return bn_conv("fusebnfwd_conv", rand(r, 4, 3, 3, 3), rand(r, 4))


@model("conv_nobias")
def _(r):
    """BN -> Conv 3x3 without bias, strides 2, explicit pads [0,0,0,0].
    Expect: bn0 removed; conv0 gets a bias input (the shift's sums)."""
    return bn_conv("fusebnfwd_conv_nobias", rand(r, 4, 3, 3, 3), xshape=(1, 3, 7, 7),
                   strides=[2, 2], pads=[0, 0, 0, 0])


@model("grouped")
def _(r):
    """BN (4 channels) -> Conv group 2 (W [6,2,3,3], bias), dilations 2.
    Expect: bn0 removed; output o's weights scaled by the factors of the
    input channels of its group (group(o) * 2 + j)."""
    return bn_conv("fusebnfwd_grouped", rand(r, 6, 2, 3, 3), rand(r, 6), xshape=(1, 4, 8, 8),
                   group=2, dilations=[2, 2])


@model("pointwise_grouped")
def _(r):
    """BN (6 channels) -> Conv 1x1 group 3 (W [9,2,1,1], bias): the factor
    changes with every weight element. Expect: bn0 removed; W[o,j] scaled by
    s[group(o) * 2 + j]."""
    return bn_conv("fusebnfwd_pointwise_grouped", rand(r, 9, 2, 1, 1), rand(r, 9),
                   xshape=(1, 6, 4, 4), group=3)


@model("valid_1d")
def _(r):
    """BN -> Conv1d kernel 3, auto_pad VALID. Expect: bn0 removed, folded."""
    return bn_conv("fusebnfwd_valid_1d", rand(r, 2, 3, 3), rand(r, 2), xshape=(1, 3, 9),
                   auto_pad="VALID")


@model("padded")
def _(r):
    """BN -> Conv 3x3 pads [1,1,1,1]: the padded zeros are not normalized.
    Expect with fuse-bn-forward: kept (no warning). Default: bn-to-conv makes
    bn0 a depthwise Conv."""
    return bn_conv("fusebnfwd_padded", rand(r, 4, 3, 3, 3), rand(r, 4), pads=[1, 1, 1, 1])


@model("padded_no_shift")
def _(r):
    """BN with bias 0 and mean 0 (shift 0: zeros stay zeros) -> Conv pads
    [1,1,1,1]. Expect: bn0 removed; conv0 weight scaled, bias unchanged."""
    stats = [raw_tensor("bn0_scale", r.uniform(0.5, 1.5, 3).astype(np.float32)),
             raw_tensor("bn0_bias", np.zeros(3, np.float32)),
             raw_tensor("bn0_mean", np.zeros(3, np.float32)),
             raw_tensor("bn0_var", r.uniform(0.5, 2.0, 3).astype(np.float32))]
    return bn_conv("fusebnfwd_padded_no_shift", rand(r, 4, 3, 3, 3), rand(r, 4),
                   pads=[1, 1, 1, 1], stats=stats)


@model("two_consumers")
def _(r):
    """BN output y read by the Conv and by Relu -> Z. Expect: kept."""
    return bn_conv("fusebnfwd_two_consumers", rand(r, 4, 3, 3, 3), rand(r, 4), extra=True)


@model("convtranspose")
def _(r):
    """BN -> ConvTranspose (no pads): border outputs sum fewer inputs.
    Expect with fuse-bn-forward: kept."""
    return bn_conv("fusebnfwd_convtranspose", rand(r, 3, 4, 2, 2), rand(r, 4),
                   op="ConvTranspose", strides=[2, 2])


@model("float16_overflow")
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


@model("float16")
def _(r):
    """float16 BN -> Conv 3x3 (float16 W, B). Expect: bn0 removed; weight and
    bias stay float16."""
    h = np.float16
    return bn_conv("fusebnfwd_float16", rand(r, 4, 3, 3, 3).astype(h), rand(r, 4).astype(h),
                   stats=bn_inits(r, "bn0", 3, h), dtype=TP.FLOAT16)


@model("in_if")
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


@model("overridable_weight")
def _(r):
    """BN -> Conv 3x3 whose weight W is also a graph input (IR 8): a default
    the caller may feed. Expect with fuse-bn-forward: bn0 not folded (a
    warning naming conv0 and W), bn0 and conv0 unchanged."""
    return with_default_input(bn_conv("fusebnfwd_overridable_weight", rand(r, 4, 3, 3, 3), rand(r, 4)), "W")


@model("overridable_mean")
def _(r):
    """BN whose mean is also a graph input (IR 8) -> Conv 3x3. Expect: bn0
    not folded (a warning naming bn0 and bn0_mean)."""
    return with_default_input(bn_conv("fusebnfwd_overridable_mean", rand(r, 4, 3, 3, 3), rand(r, 4)),
                              "bn0_mean")


def bn_conv_bn(name, w, b, xshape, dtype=np.float32):
    """X -> BN (bn0) -> Conv (conv0, W, B, no pads) -> BN (bn1) -> Y: fuse-bn
    folds bn1 back into conv0 first (its weight then computed while written),
    and fuse-bn-forward folds bn0 into that weight."""
    r = rng(name)
    cin, cout = xshape[1], w.shape[0]
    et = TP.FLOAT16 if dtype == np.float16 else TP.FLOAT
    inits = [raw_tensor("W", w.astype(dtype)), raw_tensor("B", b.astype(dtype))]
    inits += bn_inits(r, "bn0", cin, dtype) + bn_inits(r, "bn1", cout, dtype)
    nodes = [bn("X", "y", "bn0", "bn0"),
             node("Conv", ["y", "W", "B"], ["z"], "conv0", kernel_shape=list(w.shape[2:])),
             bn("z", "Y", "bn1", "bn1")]
    return finish(graph(nodes, name, [vi("X", et, list(xshape))], [vi("Y", et, None)],
                        inits=inits))


@model("between_bns")
def _(r):
    """BN -> Conv 3x3 (W [6,4,3,3], bias) -> BN. Expect: both BNs removed
    (default); conv0 reads X; fuse-bn-forward alone: bn0 folded, bn1 kept."""
    return bn_conv_bn("fusebnfwd_between_bns", rand(r, 6, 4, 3, 3), rand(r, 6), (1, 4, 5, 5))


@model("between_bns_pointwise")
def _(r):
    """As between_bns with a 1x1 Conv (W [5,3,1,1]): the forward factor
    changes with every element of the weight being scaled."""
    return bn_conv_bn("fusebnfwd_between_bns_pointwise", rand(r, 5, 3, 1, 1), rand(r, 5),
                      (1, 3, 4, 4))


@model("between_bns_float16")
def _(r):
    """As between_bns in float16 (W [4,3,3,3]): the weights are converted
    element by element."""
    return bn_conv_bn("fusebnfwd_between_bns_float16", rand(r, 4, 3, 3, 3), rand(r, 4),
                      (1, 3, 5, 5), np.float16)


@model("between_bns_large")
def _(r):
    """As between_bns with W [200,160,3,3] (1.15 MB, more than the 1 MiB
    ppqfmt reads of a weight at a time) on X [1,160,3,3]."""
    return bn_conv_bn("fusebnfwd_between_bns_large", rand(r, 200, 160, 3, 3), rand(r, 200),
                      (1, 160, 3, 3))


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

def bn_forward(bn, conv):
    """BatchNormalization `bn` folded into the Conv `conv` reading it: conv
    reads bn's input, with W'[o,j] = W[o,j] * s[c] and
    b'[o] = b[o] + sum_{j,k} W[o,j,k] * shift[c], c = group(o) * (Cin/G) + j
    the input channel W[o,j] reads; weight (and bias) of the weight's dtype;
    attributes unchanged."""
    def fn(inp, out):
        a = affine(inp, conv)
        s, shift, _ = bn_affine(inp, bn)
        W, G = a["W"], a["group"]
        cout, cg = W.shape[:2]
        chan = (np.arange(cout)[:, None] // (cout // G)) * cg + np.arange(cg)[None, :]
        spread = lambda v: v[chan].reshape(W.shape[:2] + (1,) * (W.ndim - 2))
        expW = W * spread(s)
        expb = a["b"] + (W * spread(shift)).reshape(cout, -1).sum(axis=1)
        o = affine(out, conv)
        dt = a["wdtype"]
        errs = [e for e in (close("weight", o["W"], expW, dt), close("bias", o["b"], expb, dt))
                if e]
        _, bn_node = find_scoped(inp, bn)
        if o["node"].input[0] != bn_node.input[0]:
            errs.append("%s reads %s, expected %s" % (conv, o["node"].input[0], bn_node.input[0]))
        if o["wdtype"] != dt or (o["bdtype"] is not None and o["bdtype"] != dt):
            errs.append("weight/bias dtype %s/%s, expected %s" % (o["wdtype"], o["bdtype"], dt))
        if not same_attrs(a["node"], o["node"]):
            errs.append("attributes changed")
        return "; ".join(errs) or None
    return ("%s holds the forward fold of %s" % (conv, bn), fn)


SPECS = {
    # -- fuse-bn-forward -----------------------------------------------------
    # a parameter that is also a graph input (IR >= 4): see fuse_bias.py
    "overridable_weight": dict(
        single=[unchanged("bn0", "conv0"), graph_input_kept("W")], warns=["conv0", "'W'"]),
    "overridable_mean": dict(
        single=[unchanged("bn0", "conv0"), graph_input_kept("bn0_mean")], warns=["bn0", "'bn0_mean'"]),
    "conv": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "conv_nobias": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "grouped": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "pointwise_grouped": dict(both=[NBN, op_count("Conv", 1),
                                              bn_forward("bn0", "conv0")]),
    "valid_1d": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "padded_no_shift": dict(both=[NBN, op_count("Conv", 1),
                                            bn_forward("bn0", "conv0")]),
    "float16": dict(both=[NBN, op_count("Conv", 1), bn_forward("bn0", "conv0")]),
    "in_if": dict(both=[NBN, bn_forward("then_bn", "then_conv"),
                                  unchanged("else_conv")]),
    # BN -> Conv -> BN: the default run folds both, bn1 first (fuse-bn)
    **{case: dict(single=[op_count("BatchNormalization", 1), unchanged("bn1"),
                          bn_forward("bn0", "conv0")],
                  default=[NBN, op_count("Conv", 1)])
       for case in ("between_bns", "between_bns_pointwise", "between_bns_float16",
                    "between_bns_large")},
    # not exact (padding, ConvTranspose) or not the BN's only reader: kept;
    # the default run turns the BN into a depthwise Conv (bn-to-conv)
    "padded": dict(single=[unchanged("bn0", "conv0")],
                             default=[NBN, unchanged("conv0"), bn_as_conv("bn0", 4)]),
    "two_consumers": dict(single=[unchanged("bn0", "conv0", "relu0")],
                                    default=[NBN, unchanged("conv0"), bn_as_conv("bn0", 4)]),
    "convtranspose": dict(single=[unchanged("bn0", "conv0")],
                                    default=[NBN, unchanged("conv0"), bn_as_conv("bn0", 4)]),
    "float16_overflow": dict(single=[unchanged("bn0", "conv0")],
                                       default=[NBN, unchanged("conv0"), bn_as_conv("bn0", 4)],
                                       warns=["bn0"]),
}
