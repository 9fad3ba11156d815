"""fuse-conv-scale: fold Mul(per-channel constant) after Conv/ConvTranspose/Gemm into it
(formatter/fuse_conv_scale.c).

Its test models (builders registered with @model; testdata/fuse_conv_scale/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP

from passes.build import (finish, fvi, graph, if_node, Models, node, rand, raw_tensor, vi,
                          with_default_input)
from passes.common import (find_scoped, folded, graph_input_kept, NMUL, node_output, unchanged)

PASS = "fuse-conv-scale"

MODELS = Models("fuse_conv_scale", "fusescale", output_types=True)
model = MODELS.model


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


@model("conv")
def _(r):
    """Conv (bias) -> Mul(K [1,4,1,1]). Expect: mul0 removed; conv0 writes
    Y with weight W*k and bias B*k per output channel."""
    return conv_mul("fusescale_conv", [3, 3], rand(r, 4, 3, 3, 3), rand(r, 4),
                    rand(r, 1, 4, 1, 1))


@model("conv_nobias")
def _(r):
    """Conv (no bias) -> Mul(K [4,1,1], K first). Expect: mul0 removed;
    conv0 weight W*k, still no bias input."""
    return conv_mul("fusescale_conv_nobias", [3, 3], rand(r, 4, 3, 3, 3), None,
                    rand(r, 4, 1, 1), mul_first=True)


@model("scalar")
def _(r):
    """Conv1d (bias) -> Mul(K scalar -2.5). Expect: mul0 removed; W, B
    scaled by -2.5."""
    return conv_mul("fusescale_scalar", [3], rand(r, 4, 3, 3), rand(r, 4),
                    np.array(-2.5, np.float32), xshape=(1, 3, 7))


@model("convtranspose")
def _(r):
    """ConvTranspose group 2 (W [4,3,2,2]: 6 output channels) -> Mul(K
    [1,6,1,1]). Expect: mul0 removed; weight of output channel c scaled by
    k[c] (channel g*3+j)."""
    return conv_mul("fusescale_convtranspose", [2, 2], rand(r, 4, 3, 2, 2), rand(r, 6),
                    rand(r, 1, 6, 1, 1), op="ConvTranspose", xshape=(1, 4, 3, 3), group=2)


@model("gemm")
def _(r):
    """Gemm transB=1 beta=0.5 (C [5]) -> Mul(K [5]). Expect: mul0 removed;
    alpha*B and beta*C of output column n scaled by k[n]."""
    return conv_mul("fusescale_gemm", None, rand(r, 5, 3), rand(r, 5), rand(r, 5),
                    op="Gemm", xshape=(2, 3), transB=1, beta=0.5)


@model("gemm_beta0_inf")
def _(r):
    """Gemm transB=1 beta=0 (C [5] holding inf and NaN: not read) -> Mul(K
    [5]). Expect: mul0 removed; alpha*B scaled by k, C still unread (beta
    0), never 0 * inf = NaN."""
    c = np.array([np.inf, np.nan, 0.5, -np.inf, 1.0], np.float32)
    return conv_mul("fusescale_gemm_beta0_inf", None, rand(r, 5, 3), c, rand(r, 5),
                    op="Gemm", xshape=(2, 3), transB=1, beta=0.0)


@model("conv_vector")
def _(r):
    """Conv -> Mul(K [4]): broadcasts over the last spatial axis (width 4),
    not the channels. Expect: kept."""
    return conv_mul("fusescale_conv_vector", [3, 3], rand(r, 4, 3, 3, 3), rand(r, 4),
                    rand(r, 4), xshape=(1, 3, 6, 6))


@model("two_consumers")
def _(r):
    """Conv output c read by Mul and by Relu -> Z. Expect: kept."""
    return conv_mul("fusescale_two_consumers", [3, 3], rand(r, 4, 3, 3, 3), rand(r, 4),
                    rand(r, 1, 4, 1, 1), extra=True)


@model("float16_overflow")
def _(r):
    """float16 Conv 1x1 (W = 1000, 0.5) -> Mul(K [1,2,1,1] = 100, 2): the
    folded weight 100000 overflows float16. Expect: kept, with a warning."""
    return conv_mul("fusescale_float16_overflow", [1, 1],
                    np.array([1000, 0.5], np.float16).reshape(2, 1, 1, 1), None,
                    np.array([100, 2], np.float16).reshape(1, 2, 1, 1),
                    xshape=(1, 1, 2, 2), dtype=TP.FLOAT16)


@model("in_if")
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


@model("overridable_scale")
def _(r):
    """Conv (bias) -> Mul(K [1,4,1,1]) in an IR 8 model whose K is also a
    graph input: a default the caller may feed. Expect: mul0 kept, with a
    warning naming mul0 and K."""
    return with_default_input(conv_mul("fusescale_overridable_scale", [3, 3], rand(r, 4, 3, 3, 3),
                                       rand(r, 4), rand(r, 1, 4, 1, 1)), "K")


@model("overridable_weight")
def _(r):
    """Conv whose weight W is also a graph input (IR 8) -> Mul(K [1,4,1,1]).
    Expect: mul0 kept, with a warning naming conv0 and W."""
    return with_default_input(conv_mul("fusescale_overridable_weight", [3, 3], rand(r, 4, 3, 3, 3),
                                       rand(r, 4), rand(r, 1, 4, 1, 1)), "W")


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

SPECS = {
    # -- fuse-conv-scale -----------------------------------------------------
    # a parameter that is also a graph input (IR >= 4): see fuse_bias.py
    "overridable_scale": dict(
        both=[unchanged("conv0", "mul0"), graph_input_kept("K")], warns=["mul0", "'K'"]),
    "overridable_weight": dict(
        both=[unchanged("conv0", "mul0"), graph_input_kept("W")], warns=["conv0", "'W'"]),
    "conv": dict(both=[NMUL, node_output("conv0", 0, "Y"), folded("conv0", mul="mul0")]),
    "conv_nobias": dict(both=[NMUL, folded("conv0", mul="mul0"),
                                        ("conv0 has no bias", lambda i, o: None if len(
                                            find_scoped(o, "conv0")[1].input) == 2
                                            else "conv0 got a bias input")]),
    "scalar": dict(both=[NMUL, folded("conv0", mul="mul0")]),
    "convtranspose": dict(both=[NMUL, folded("conv0", mul="mul0")]),
    "gemm": dict(both=[NMUL, node_output("conv0", 0, "Y"), folded("conv0", mul="mul0")]),
    # beta 0: C is not read; it holds inf/NaN, which 0 * C would make NaN
    "gemm_beta0_inf": dict(both=[NMUL, node_output("conv0", 0, "Y"),
                                 folded("conv0", mul="mul0")]),
    "conv_vector": dict(both=[unchanged("conv0", "mul0")]),
    "two_consumers": dict(both=[unchanged("conv0", "mul0", "relu0")]),
    "float16_overflow": dict(both=[unchanged("conv0", "mul0")], warns=["mul0"]),
    "in_if": dict(both=[NMUL, node_output("then_conv", 0, "then_out"),
                                  folded("then_conv", mul="then_mul"), unchanged("else_conv")]),
}
