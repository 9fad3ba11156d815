"""fuse-bias: fold Add(constant) after Conv/ConvTranspose/Gemm into the bias
(formatter/fuse_bias.c).

Its test models (builders registered with @model; testdata/fuse_bias/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np

from passes.build import (f16vi, finish, fvi, graph, Models, node, rand, raw_tensor,
                          with_default_input)
from passes.common import (folded, graph_input_kept, init_count, NADD, node_input, node_output,
                           op_count, unchanged, vi_removed)

PASS = "fuse-bias"

MODELS = Models("fuse_bias", "fusebias")
model = MODELS.model


# ---------------------------------------------------------------------------
# fuse-bias: Conv/ConvTranspose/Gemm -> Add(per-channel param) folds the add
# ---------------------------------------------------------------------------

@model("conv_nobias")
def _(r):
    """Conv without bias -> Add(A [1,4,1,1]) -> Relu.
    Expect: no Add; conv0 writes a, has bias = A; relu0 reads a."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["a"], "add0"),
         node("Relu", ["a"], ["Y"], "relu0")],
        "fusebias_conv_nobias", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, a]))


@model("conv_bias")
def _(r):
    """Conv with bias B -> Add(A [4,1,1]) -> graph output Y.
    Expect: no Add; conv0 writes Y with bias B + A (summed, not replaced)."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv_bias", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, a]))


@model("addend_first")
def _(r):
    """Add(A [1,4,1,1], conv_out): the parameter is the Add's first operand.
    Expect: fused as if commuted: no Add; conv0 writes Y, bias B + A."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["A", "c"], ["Y"], "add0")],
        "fusebias_addend_first", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, a]))


@model("conv_scalar")
def _(r):
    """Conv with bias -> Add(A [1]) (one value for every channel).
    Expect: no Add; conv0 writes Y with bias B + A[0]."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv_scalar", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, a]))


@model("conv1d")
def _(r):
    """Conv1d (W [4,3,3]) without bias -> Add(A [1,4,1]).
    Expect: no Add; conv0 writes Y with bias = A."""
    w = raw_tensor("W", rand(r, 4, 3, 3))
    a = raw_tensor("A", rand(r, 1, 4, 1))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv1d", [fvi("X", [1, 3, 10])], [fvi("Y", [1, 4, 8])],
        inits=[w, a]))


@model("convtranspose")
def _(r):
    """ConvTranspose (group 2, W [4,3,3,3], B [6], stride 2) -> Add(A [1,6,1,1]).
    Expect: no Add; convt0 writes Y with bias B + A."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 6))
    a = raw_tensor("A", rand(r, 1, 6, 1, 1))
    return finish(graph(
        [node("ConvTranspose", ["X", "W", "B"], ["c"], "convt0", group=2, strides=[2, 2]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_convtranspose", [fvi("X", [1, 4, 3, 3])], [fvi("Y", [1, 6, 7, 7])],
        inits=[w, b, a]))


@model("gemm")
def _(r):
    """Gemm (transB 1, alpha 0.5, beta 2, C [4]) -> Add(A [4]).
    Expect: no Add; gemm0 writes Y; its effective bias beta*C equals
    2*C + A and its effective weight alpha*B' is unchanged."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", rand(r, 4))
    a = raw_tensor("A", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1, alpha=0.5, beta=2.0),
         node("Add", ["g", "A"], ["Y"], "add0")],
        "fusebias_gemm", [fvi("X", [2, 5])], [fvi("Y", [2, 4])], inits=[w, c, a]))


@model("gemm_noc")
def _(r):
    """Gemm (transB 0, no C) -> Add(A [1,4]) -> Relu.
    Expect: no Add; gemm0 writes a with effective bias beta*C = A."""
    w = raw_tensor("W", rand(r, 5, 4))
    a = raw_tensor("A", rand(r, 1, 4))
    return finish(graph(
        [node("Gemm", ["X", "W"], ["g"], "gemm0"),
         node("Add", ["g", "A"], ["a"], "add0"),
         node("Relu", ["a"], ["Y"], "relu0")],
        "fusebias_gemm_noc", [fvi("X", [2, 5])], [fvi("Y", [2, 4])], inits=[w, a]))


@model("gemm_scalar")
def _(r):
    """Gemm (transB 1, alpha 1.5, beta 0.5, C [4]) -> Add(A scalar []).
    Expect: no Add; gemm0 writes Y; effective bias beta*C = 0.5*C + A."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", rand(r, 4))
    a = raw_tensor("A", np.array(r.uniform(-1, 1), np.float32))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1, alpha=1.5, beta=0.5),
         node("Add", ["g", "A"], ["Y"], "add0")],
        "fusebias_gemm_scalar", [fvi("X", [2, 5])], [fvi("Y", [2, 4])], inits=[w, c, a]))


NONFINITE = np.array([np.inf, np.nan, 0.5, -np.inf], np.float32)


@model("gemm_beta0_inf")
def _(r):
    """Gemm (transB 1, beta 0, C [4] = inf, NaN, 0.5, -inf) -> Add(A [4]):
    beta 0, so the Gemm does not read C. Expect: no Add; gemm0's new C is A
    (beta 1), never 0 * inf = NaN."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", NONFINITE)
    a = raw_tensor("A", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1, beta=0.0),
         node("Add", ["g", "A"], ["Y"], "add0")],
        "fusebias_gemm_beta0_inf", [fvi("X", [2, 5])], [fvi("Y", [2, 4])], inits=[w, c, a]))


@model("gemm_beta0_c2d")
def _(r):
    """Gemm (beta 0, C [2,4] holding NaN: not one value per column, but not
    read) -> Add(A [1,4]). Expect: no Add; gemm0's C is A (beta 1)."""
    w = raw_tensor("W", rand(r, 5, 4))
    c = raw_tensor("C", np.full((2, 4), np.nan, np.float32))
    a = raw_tensor("A", rand(r, 1, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", beta=0.0),
         node("Add", ["g", "A"], ["Y"], "add0")],
        "fusebias_gemm_beta0_c2d", [fvi("X", [2, 5])], [fvi("Y", [2, 4])], inits=[w, c, a]))


@model("gemm_c_value_info")
def _(r):
    """Gemm (transB 1, C [1,4] with value_info C [1,4]) -> Add(A [4]).
    Expect: no Add; gemm0's bias holds C + A as [4], still named C, and the
    value_info C [1,4] (now wrong: the checker refuses it) is gone."""
    w = raw_tensor("W", rand(r, 4, 5))
    c = raw_tensor("C", rand(r, 1, 4))
    a = raw_tensor("A", rand(r, 4))
    return finish(graph(
        [node("Gemm", ["X", "W", "C"], ["g"], "gemm0", transB=1),
         node("Add", ["g", "A"], ["Y"], "add0")],
        "fusebias_gemm_c_value_info", [fvi("X", [2, 5])], [fvi("Y", [2, 4])],
        inits=[w, c, a], value_info=[fvi("C", [1, 4])]))


@model("conv_vector")
def _(r):
    """Conv2d (out [1,4,6,4]) -> Add(A [4]): A broadcasts over the WIDTH
    (last axis), not over the channels.
    Expect: not fused: add0 kept, conv0 and its B unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv_vector", [fvi("X", [1, 3, 6, 4])], [fvi("Y", [1, 4, 6, 4])],
        inits=[w, b, a]))


@model("spatial")
def _(r):
    """Conv -> Add(A [1,4,6,6]): the addend varies over space.
    Expect: not fused: add0 kept, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1, 4, 6, 6))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_spatial", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[w, b, a]))


@model("rank_raising")
def _(r):
    """Conv2d (out [1,4,6,6]) -> Add(A [1,1,4,1,1]): per-channel values, but
    the Add's output has rank 5 ([1,1,4,6,6]).
    Expect: not fused (the Conv can't make a rank-5 value): add0 kept."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    a = raw_tensor("A", rand(r, 1, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_rank_raising", [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 1, 4, 6, 6])],
        inits=[w, a]))


@model("addend_input")
def _(r):
    """Conv -> Add(A) where A [1,4,1,1] is a graph input, not a parameter.
    Expect: not fused: add0 kept, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_addend_input", [fvi("X", [1, 3, 6, 6]), fvi("A", [1, 4, 1, 1])],
        [fvi("Y", [1, 4, 6, 6])], inits=[w, b]))


@model("two_consumers")
def _(r):
    """Conv output c feeds Add(A [1,4,1,1]) -> Y and Relu -> Z.
    Expect: not fused (Z needs c without A): add0 kept, conv0 unchanged."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0"),
         node("Relu", ["c"], ["Z"], "relu0")],
        "fusebias_two_consumers", [fvi("X", [1, 3, 6, 6])],
        [fvi("Y", [1, 4, 6, 6]), fvi("Z", [1, 4, 6, 6])], inits=[w, b, a]))


@model("conv_output")
def _(r):
    """Conv output c is a graph output and also feeds Add(A [1,4,1,1]) -> Y.
    Expect: not fused: add0 kept, conv0 unchanged, c still made by conv0."""
    w = raw_tensor("W", rand(r, 4, 3, 3, 3))
    b = raw_tensor("B", rand(r, 4))
    a = raw_tensor("A", rand(r, 1, 4, 1, 1))
    return finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_conv_output", [fvi("X", [1, 3, 6, 6])],
        [fvi("c", [1, 4, 6, 6]), fvi("Y", [1, 4, 6, 6])], inits=[w, b, a]))


@model("float16_overflow")
def _(r):
    """float16: X [1,1,4,4] -> Sub(50) -> Conv 1x1 (W [2,1,1,1] = 1000, 0.5;
    B = 50000, 0.25) -> Add(A [1,2,1,1] = 30000, 0.5) -> Y.  Channel 0 of
    the Conv is 1000*(x-50) + 50000, within +-1000, so Y stays near 30000;
    but the folded bias B+A = 80000 overflows float16 (max 65504) to inf.
    Expect: not fused (a warning naming add0): conv0 and add0 unchanged."""
    return finish(graph(
        [node("Sub", ["X", "fifty"], ["xs"], "sub0"),
         node("Conv", ["xs", "W", "B"], ["c"], "conv0", kernel_shape=[1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        "fusebias_float16_overflow", [f16vi("X", [1, 1, 4, 4])], [f16vi("Y", [1, 2, 4, 4])],
        inits=[raw_tensor("fifty", np.array(50, np.float16)),
               raw_tensor("W", np.array([1000, 0.5], np.float16).reshape(2, 1, 1, 1)),
               raw_tensor("B", np.array([50000, 0.25], np.float16)),
               raw_tensor("A", np.array([30000, 0.5], np.float16).reshape(1, 2, 1, 1))]))


def conv_bias_add(r, name, default):
    """Conv (bias B) -> Add(A [1,4,1,1]) in an IR 8 model whose initializer
    `default` is also a graph input: a default the caller may feed."""
    return with_default_input(finish(graph(
        [node("Conv", ["X", "W", "B"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "A"], ["Y"], "add0")],
        name, [fvi("X", [1, 3, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[raw_tensor("W", rand(r, 4, 3, 3, 3)), raw_tensor("B", rand(r, 4)),
               raw_tensor("A", rand(r, 1, 4, 1, 1))])), default)


@model("overridable_addend")
def _(r):
    """conv_bias_add with the addend A a graph input. Expect: add0 kept as it
    is, with a warning naming add0 and A; A still an input."""
    return conv_bias_add(r, "fusebias_overridable_addend", "A")


@model("overridable_bias")
def _(r):
    """conv_bias_add with the Conv's bias B a graph input. Expect: the Add
    stays (its fold would replace B), with a warning naming conv0 and B."""
    return conv_bias_add(r, "fusebias_overridable_bias", "B")


@model("overridable_residual")
def _(r):
    """Conv whose weight W is also a graph input (IR 8) -> Add(c, X), a
    residual sum of two activations: nothing to fold. Expect: unchanged and
    no warning (the default does not matter here)."""
    return with_default_input(finish(graph(
        [node("Conv", ["X", "W"], ["c"], "conv0", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         node("Add", ["c", "X"], ["Y"], "add0")],
        "fusebias_overridable_residual", [fvi("X", [1, 4, 6, 6])], [fvi("Y", [1, 4, 6, 6])],
        inits=[raw_tensor("W", rand(r, 4, 4, 3, 3))])), "W")


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

SPECS = {
    # -- fuse-bias ---------------------------------------------------------
    # a parameter that is also a graph input (IR >= 4) is a default a caller
    # may override: no fold uses its value, and the warning says which
    "overridable_addend": dict(
        both=[unchanged("conv0", "add0"), graph_input_kept("A")], warns=["add0", "'A'"]),
    "overridable_bias": dict(
        both=[unchanged("conv0", "add0"), graph_input_kept("B")], warns=["conv0", "'B'"]),
    "overridable_residual": dict(
        both=[unchanged("conv0", "add0"), graph_input_kept("W")],
        quiet="a residual Add has no constant to fold: the default W does not matter"),
    "conv_nobias": dict(
        both=[NADD, node_output("conv0", 0, "a"), node_input("relu0", 0, "a"),
              folded("conv0", add="add0")],
        default=[init_count(2)]),
    "conv_bias": dict(
        both=[NADD, node_output("conv0", 0, "Y"), folded("conv0", add="add0")],
        default=[init_count(2)]),
    "addend_first": dict(
        both=[NADD, node_output("conv0", 0, "Y"), folded("conv0", add="add0")],
        default=[init_count(2)]),
    "conv_scalar": dict(
        both=[NADD, node_output("conv0", 0, "Y"), folded("conv0", add="add0")],
        default=[init_count(2)]),
    "conv1d": dict(
        both=[NADD, node_output("conv0", 0, "Y"), folded("conv0", add="add0")],
        default=[init_count(2)]),
    "convtranspose": dict(
        both=[NADD, node_output("convt0", 0, "Y"), folded("convt0", add="add0")],
        default=[init_count(2)]),
    "gemm": dict(
        both=[NADD, node_output("gemm0", 0, "Y"), folded("gemm0", add="add0")],
        default=[init_count(2)]),
    "gemm_noc": dict(
        both=[NADD, node_output("gemm0", 0, "a"), node_input("relu0", 0, "a"),
              folded("gemm0", add="add0")],
        default=[init_count(2)]),
    "gemm_scalar": dict(
        both=[NADD, node_output("gemm0", 0, "Y"), folded("gemm0", add="add0")],
        default=[init_count(2)]),
    "gemm_c_value_info": dict(
        both=[NADD, folded("gemm0", add="add0"), vi_removed("C")]),
    # beta 0: C is not read; it holds inf/NaN, which 0 * C would make NaN
    "gemm_beta0_inf": dict(
        both=[NADD, node_output("gemm0", 0, "Y"), folded("gemm0", add="add0")]),
    "gemm_beta0_c2d": dict(
        both=[NADD, node_output("gemm0", 0, "Y"), folded("gemm0", add="add0")]),
    "conv_vector": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    "spatial": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    "rank_raising": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    "addend_input": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    "two_consumers": dict(both=[
        op_count("Add", 1), unchanged("conv0", "add0", "relu0")]),
    "conv_output": dict(both=[op_count("Add", 1), unchanged("conv0", "add0")]),
    # the folded bias would overflow float16: inf where the model gave ~30000
    "float16_overflow": dict(
        both=[op_count("Add", 1), unchanged("conv0", "add0")], warns=["add0"]),
}
