"""fold: evaluate nodes whose inputs are all constants into initializers (formatter/fold.c).

Its test models (builders registered with @model; testdata/fold/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import math

import numpy as np
from onnx import TensorProto as TP
from onnx import helper

import testlib
from passes.build import (finish, FLOAT, fvi, graph, i64, if_node, Models, node, rand, raw_tensor,
                          rng, vi)
from passes.common import (_f64, _relu, folded_input, kept, made_by, need_node, no_op, node_input,
                           node_output, op_count, output_param, removed, SSA, subgraph_output,
                           vi_removed)

PASS = "fold"

MODELS = Models("fold", "fold")
model = MODELS.model


# ---------------------------------------------------------------------------
# the test models (testdata/fold/)
# ---------------------------------------------------------------------------

XS = [2, 3]


def cond(name, value, shape=()):
    return raw_tensor(name, np.array(value, dtype=bool).reshape(shape))


def branches(prefix=""):
    """then: relu (then_relu) -> Add(W) (then_add) -> then_out, with
    value_info for t0 and then_out; else: Neg (else_neg) -> else_out. Both
    read X and W of the main graph."""
    then_g = graph([node("Relu", ["X"], [prefix + "t0"], prefix + "then_relu"),
                    node("Add", [prefix + "t0", "W"], [prefix + "then_out"], prefix + "then_add")],
                   prefix + "then_branch", [], [fvi(prefix + "then_out", XS)],
                   value_info=[fvi(prefix + "t0", XS), fvi(prefix + "then_out", XS)])
    else_g = graph([node("Neg", ["X"], [prefix + "else_out"], prefix + "else_neg")],
                   prefix + "else_branch", [], [fvi(prefix + "else_out", XS)])
    return then_g, else_g


def neg_else(outputs=1):
    """An else branch returning Neg(X) (else_neg) `outputs` times."""
    return graph([node("Neg", ["X"], ["else_out"], "else_neg")], "else_branch", [],
                 [fvi("else_out", XS)] * outputs)


def simple(name, value, shape=()):
    """X -> if0(c) -> r -> mul0(r, X) -> Y."""
    then_g, else_g = branches()
    return finish(graph([if_node("if0", "c", ["r"], then_g, else_g),
                         node("Mul", ["r", "X"], ["Y"], "mul0")],
                        name, [fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("c", value, shape), raw_tensor("W", rand(rng(name), *XS))]))


def clash_model(name, then_g):
    """if0 (c true; then then_g, else neg_else) -> r, then the main graph's
    own relu0 = Relu(r) -> a and add0 = Add(a, r) -> Y; `cond` a graph input
    for the Ifs nested in then_g."""
    return finish(graph([if_node("if0", "c", ["r"], then_g, neg_else()),
                         node("Relu", ["r"], ["a"], "relu0"),
                         node("Add", ["a", "r"], ["Y"], "add0")],
                        name, [vi("cond", TP.BOOL, []), fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("c", True)]))


@model("shape_chain")
def _(r):
    """W [2,3,4] -> Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> the
    shape of Reshape(X); also Size(W) -> Cast(float) -> Mul(Y).
    Expect: shape0, gather0, unsq0, concat0, size0, cast0 gone; reshape0
    reads an initializer [2, -1]; mul0 reads 24.0."""
    w = raw_tensor("W", rand(r, 2, 3, 4))
    return finish(graph(
        [node("Shape", ["W"], ["s"], "shape0"),
         node("Gather", ["s", "zero"], ["s0"], "gather0", axis=0),
         node("Unsqueeze", ["s0", "axes0"], ["s0u"], "unsq0"),
         node("Concat", ["s0u", "minus1"], ["shape"], "concat0", axis=0),
         node("Reshape", ["X", "shape"], ["xr"], "reshape0"),
         node("Size", ["W"], ["n"], "size0"),
         node("Cast", ["n"], ["nf"], "cast0", to=TP.FLOAT),
         node("Mul", ["xr", "nf"], ["Y"], "mul0")],
        "fold_shape_chain", [fvi("X", [2, 12])], [fvi("Y", [2, 12])],
        inits=[w, i64("zero", 0), i64("axes0", [0]), i64("minus1", [-1])]))


@model("weight_transform")
def _(r):
    """W [4,3] -> Transpose -> Mul(scale) -> Cast(float16) -> Cast(float) ->
    MatMul(X, .); the weight of conv0 is Reshape(Wc flat).
    Expect: tr0, mul0, cast0, cast1, reshape0 gone; matmul0 reads
    float32(float16(W.T * s)); conv0 reads Wc reshaped."""
    wc = raw_tensor("Wc", rand(r, 2 * 3 * 3 * 3))
    return finish(graph(
        [node("Transpose", ["W"], ["wt"], "tr0", perm=[1, 0]),
         node("Mul", ["wt", "s"], ["ws"], "mul0"),
         node("Cast", ["ws"], ["wh"], "cast0", to=TP.FLOAT16),
         node("Cast", ["wh"], ["wf"], "cast1", to=TP.FLOAT),
         node("MatMul", ["X", "wf"], ["Y"], "matmul0"),
         node("Reshape", ["Wc", "cshape"], ["wcr"], "reshape0"),
         node("Conv", ["Z", "wcr"], ["C"], "conv0", kernel_shape=[3, 3])],
        "fold_weight_transform", [fvi("X", [2, 3]), fvi("Z", [1, 3, 5, 5])],
        [fvi("Y", [2, 4]), fvi("C", [1, 2, 3, 3])],
        inits=[raw_tensor("W", rand(r, 4, 3)), raw_tensor("s", rand(r, 1, 4)), wc,
               i64("cshape", [2, 3, 3, 3])]))


@model("sigmoid_tail")
def _(r):
    """Sigmoid of float32 constants: S1 = [-16, -1, 0, 3], S2 = [-20, 1] (below -17
    onnxruntime's approximation gives 0 or a few 1e-8, the exact value not: seed
    696189314411), S3 the same as double; each added to an input. Expect: sig1 and sig3
    folded (exact values), sig2 kept with a warning naming it."""
    return finish(graph(
        [node("Sigmoid", ["S1"], ["s1"], "sig1"), node("Sigmoid", ["S2"], ["s2"], "sig2"),
         node("Sigmoid", ["S3"], ["s3"], "sig3"),
         node("Add", ["X1", "s1"], ["Y1"], "add1"), node("Add", ["X2", "s2"], ["Y2"], "add2"),
         node("Add", ["X3", "s3"], ["Y3"], "add3")],
        "fold_sigmoid_tail", [fvi("X1", [4]), fvi("X2", [2]), vi("X3", TP.DOUBLE, [2])],
        [fvi("Y1", [4]), fvi("Y2", [2]), vi("Y3", TP.DOUBLE, [2])],
        inits=[raw_tensor("S1", np.array([-16, -1, 0, 3], np.float32)),
               raw_tensor("S2", np.array([-20, 1], np.float32)),
               raw_tensor("S3", np.array([-20, 1], np.float64))]))


@model("step_near")
def _(r):
    """Ops with a step fed by inexact values (eval.h, Exactness; seed 696359904269):
    Floor(CumSum(Softmax(W, axis=1))) whose last column is 1 in double and 0.99999994 on
    some rows in onnxruntime's float32 (floor0); Greater(Exp(Z), ONE) with Exp(0) = 1 (gt3);
    ArgMax of a Softmax row with a tie (argmax4); each added to an input. Away from a
    step: Floor(Exp(E)) (floor1); from an initializer: Floor(ONE) at the step (floor2).
    Expect: floor0, gt3, argmax4 and the inexact nodes feeding them kept, with warnings;
    floor1 and floor2 folded to their numpy values."""
    w = np.array([[0.7770999, 0.11666273, -1.64223], [0.8353945, 0.16535194, 0.62590307],
                  [1.0247554, -0.3445891, 1.4815944], [-1.5909989, -1.174663, -1.0266094],
                  [0.31955901, -1.5125602, -0.57389605]], np.float32)
    return finish(graph(
        [node("Softmax", ["W"], ["sm"], "sm0", axis=1),
         node("CumSum", ["sm", "ax1"], ["cs"], "cs0"),
         node("Floor", ["cs"], ["fl"], "floor0"), node("Add", ["X0", "fl"], ["Y0"], "add0"),
         node("Exp", ["E"], ["e"], "exp1"), node("Floor", ["e"], ["fe"], "floor1"),
         node("Add", ["X1", "fe"], ["Y1"], "add1"),
         node("Floor", ["ONE"], ["fo"], "floor2"), node("Add", ["X2", "fo"], ["Y2"], "add2"),
         node("Exp", ["Z"], ["ez"], "exp3"), node("Greater", ["ez", "ONE"], ["gt"], "gt3"),
         node("Cast", ["gt"], ["gf"], "cast3", to=TP.FLOAT),
         node("Add", ["X2", "gf"], ["Y3"], "add3"),
         node("Softmax", ["T"], ["st"], "sm4", axis=1),
         node("ArgMax", ["st"], ["am"], "argmax4", axis=1),
         node("Add", ["X4", "am"], ["Y4"], "add4")],
        "fold_step_near", [fvi("X0", [5, 3]), fvi("X1", [3]), fvi("X2", [3]),
                           vi("X4", TP.INT64, [2, 1])],
        [fvi("Y0", [5, 3]), fvi("Y1", [3]), fvi("Y2", [3]), fvi("Y3", [3]),
         vi("Y4", TP.INT64, [2, 1])],
        inits=[raw_tensor("W", w), i64("ax1", 1),
               raw_tensor("E", np.array([0.5, 1.5, -0.7], np.float32)),
               raw_tensor("ONE", np.array([1.0, 2.0, 0.99999994], np.float32)),
               raw_tensor("Z", np.array([0.0, 0.0, 0.0], np.float32)),
               raw_tensor("T", np.array([[1, 1, 0], [0, 2, 1]], np.float32))]), opset=13)


def _adds(pairs, dtype_of):
    """An Add(X_i, v) per folded value v: nodes, graph inputs and outputs."""
    nodes, ins, outs = [], [], []
    for i, (v, n) in enumerate(pairs):
        nodes.append(node("Add", ["X%d" % i, v], ["Y%d" % i], "add%d" % i))
        ins.append(vi("X%d" % i, dtype_of[i], [n]))
        outs.append(vi("Y%d" % i, dtype_of[i], [n]))
    return nodes, ins, outs


I32 = np.int32
INT64_MIN, INT32_MIN = -2 ** 63, -2 ** 31


@model("int_pow")
def _(r):
    """Integer Pow as onnxruntime computes it: std::pow in double, converted to the type
    (issue 30): int64 3^39 is 4052555153018976256 (not the exact ...267), 7^22, negative
    exponents (2^-1 = 0, 1^-5 = 1), 0^0 = 1 (pow0); int32 base with an int64 exponent
    (pow1); an int64 base with a float exponent (pow2). Results outside the type (10^19,
    0^-1 = inf, int32 3^20) are undefined in C++ (x86 gives the minimum): pow3, pow4 stay.
    Expect: pow0-pow2 folded to the double values; pow3, pow4 kept with warnings."""
    pw, ins, outs = _adds([("p0", 9), ("p1", 3), ("p2", 3), ("p3", 2), ("p4", 1)],
                          [TP.INT64, TP.INT32, TP.INT64, TP.INT64, TP.INT32])
    return finish(graph(
        [node("Pow", ["B0", "E0"], ["p0"], "pow0"), node("Pow", ["B1", "E1"], ["p1"], "pow1"),
         node("Pow", ["B2", "E2"], ["p2"], "pow2"), node("Pow", ["B3", "E3"], ["p3"], "pow3"),
         node("Pow", ["B4", "E4"], ["p4"], "pow4")] + pw,
        "fold_int_pow", ins, outs,
        inits=[i64("B0", [3, 2, -3, 0, 2, -2, 7, 1, -1]), i64("E0", [39, 62, 39, 0, -1, -3, 22, -5, -5]),
               raw_tensor("B1", np.array([3, 2, -2], I32)), i64("E1", [19, 30, -1]),
               i64("B2", [2, 4, 3]), raw_tensor("E2", np.array([0.5, -0.5, 39.0], np.float32)),
               i64("B3", [10, 0]), i64("E3", [19, -1]),
               raw_tensor("B4", np.array([3], I32)), raw_tensor("E4", np.array([20], I32))]),
        opset=15)


def _pow_as_ort(b, e, dt):
    """C's pow (math.pow; numpy's np.power rounds 7.0**22 otherwise), truncated."""
    return np.array([int(math.pow(float(x), float(y))) for x, y in zip(b, e)], dt)


@model("int_undefined")
def _(r):
    """Div and Mod (fmod 0) of the type's minimum by -1 kill onnxruntime with SIGFPE (div0:
    int32, mod1: int64): undefined in C++, not for fold to decide. Expect: both kept with
    warnings (no numbers: onnxruntime cannot run the model)."""
    tail, ins, outs = _adds([("d", 2), ("m", 1)], [TP.INT32, TP.INT64])
    return finish(graph(
        [node("Div", ["D0", "D1"], ["d"], "div0"), node("Mod", ["M0", "M1"], ["m"], "mod1")]
        + tail, "fold_int_undefined", ins, outs,
        inits=[raw_tensor("D0", np.array([INT32_MIN, 7], I32)),
               raw_tensor("D1", np.array([-1, 2], I32)),
               i64("M0", [INT64_MIN]), i64("M1", [-1])]), opset=13)


@model("int_fmod_wrap")
def _(r):
    """Mod fmod=1 of int64 is onnxruntime's std::fmod in double (mod0: 2^62+1 fmod 3 = 1,
    2^53+1 fmod 2 = 0); Abs, Neg and Add of int32 wrap (abs1, neg2, sum3). Expect: all
    folded to onnxruntime's values."""
    tail, ins, outs = _adds([("f", 3), ("a", 2), ("n", 2), ("s", 1)],
                            [TP.INT64, TP.INT32, TP.INT32, TP.INT32])
    return finish(graph(
        [node("Mod", ["F0", "F1"], ["f"], "mod0", fmod=1), node("Abs", ["A0"], ["a"], "abs1"),
         node("Neg", ["A0"], ["n"], "neg2"), node("Add", ["S0", "S1"], ["s"], "sum3")] + tail,
        "fold_int_fmod_wrap", ins, outs,
        inits=[i64("F0", [2 ** 62 + 1, 2 ** 53 + 1, -7]), i64("F1", [3, 2, 3]),
               raw_tensor("A0", np.array([INT32_MIN, -5], I32)),
               raw_tensor("S0", np.array([2 ** 31 - 1], I32)),
               raw_tensor("S1", np.array([1], I32))]), opset=13)


@model("cast_range")
def _(r):
    """Float to integer Cast: truncation where the value fits (cast0: float32 to int32 of
    2.7, -2.7, 1e9; cast1: to uint8 of 255.9, 0.5); NaN, inf and values outside the type are
    undefined in C++ and onnxruntime gives what the machine does (x86: int32 minimum; 300 to
    uint8 is 44): cast2 (int32 of NaN, 3e9), cast3 (uint8 of 300, -1) and cast4 (int64 of
    -inf) stay. Expect: cast0, cast1 folded; cast2-cast4 kept with warnings."""
    tail, ins, outs = _adds([("c0", 3), ("c2", 2), ("c4", 1)], [TP.INT32, TP.INT32, TP.INT64])
    outs += [vi("c1", TP.UINT8, [2]), vi("c3", TP.UINT8, [2])]  # no uint8 Add before opset 14
    return finish(graph(
        [node("Cast", ["C0"], ["c0"], "cast0", to=TP.INT32),
         node("Cast", ["C1"], ["c1"], "cast1", to=TP.UINT8),
         node("Cast", ["C2"], ["c2"], "cast2", to=TP.INT32),
         node("Cast", ["C3"], ["c3"], "cast3", to=TP.UINT8),
         node("Cast", ["C4"], ["c4"], "cast4", to=TP.INT64)] + tail,
        "fold_cast_range", ins, outs,
        inits=[raw_tensor("C0", np.array([2.7, -2.7, 1e9], np.float32)),
               raw_tensor("C1", np.array([255.9, 0.5], np.float32)),
               raw_tensor("C2", np.array([np.nan, 3e9], np.float32)),
               raw_tensor("C3", np.array([300, -1], np.float32)),
               raw_tensor("C4", np.array([-np.inf], np.float32))]), opset=13)


@model("int_arith")
def _(r):
    """int64 and int32 arithmetic on constants: Div (truncates), Mod (sign
    of the divisor), Pow, Neg, Sub, Abs, Min/Max, then Add(X).
    Expect: every node but add0 gone; add0 reads the numpy value."""
    a = i64("a", [7, -7, 9, -9, 100, 3])
    b = i64("b", [2, 2, -4, -4, 7, 5])
    return finish(graph(
        [node("Div", ["a", "b"], ["q"], "div0"),
         node("Mod", ["a", "b"], ["m"], "mod0"),
         node("Pow", ["b", "two"], ["p"], "pow0"),
         node("Neg", ["q"], ["nq"], "neg0"),
         node("Sub", ["nq", "m"], ["d"], "sub0"),
         node("Abs", ["d"], ["ad"], "abs0"),
         node("Max", ["ad", "p", "m"], ["mx"], "max0"),
         node("Min", ["mx", "hundred"], ["mn"], "min0"),
         node("Add", ["X", "mn"], ["Y"], "add0")],
        "fold_int_arith", [vi("X", TP.INT64, [6])], [vi("Y", TP.INT64, [6])],
        inits=[a, b, i64("two", 2), i64("hundred", [50])]))


@model("mask")
def _(r):
    """An attention mask: Range(0, 4) -> Unsqueeze -> Less (broadcast) ->
    Not -> Where(0, -1e4) -> Add(scores X); Trilu and ConstantOfShape of a
    small shape -> Mul(Y2).
    Expect: every node but add0 and mul1 gone; add0 reads the numpy mask."""
    cos = helper.make_tensor("v", TP.FLOAT, [1], [2.0])
    return finish(graph(
        [node("Range", ["start", "limit", "delta"], ["rg"], "range0"),
         node("Unsqueeze", ["rg", "axes1"], ["col"], "unsq0"),
         node("Less", ["rg", "col"], ["lt"], "less0"),
         node("Not", ["lt"], ["keep"], "not0"),
         node("Where", ["keep", "zero_f", "neg_f"], ["mask"], "where0"),
         node("Add", ["X", "mask"], ["Y"], "add0"),
         node("ConstantOfShape", ["shape44"], ["twos"], "cos0", value=cos),
         node("Trilu", ["twos"], ["tri"], "trilu0", upper=0),
         node("Mul", ["X", "tri"], ["Y2"], "mul1")],
        "fold_mask", [fvi("X", [4, 4])], [fvi("Y", [4, 4]), fvi("Y2", [4, 4])],
        inits=[i64("start", 0), i64("limit", 4), i64("delta", 1), i64("axes1", [1]),
               raw_tensor("zero_f", np.array(0.0, np.float32)),
               raw_tensor("neg_f", np.array(-1e4, np.float32)), i64("shape44", [4, 4])]),
        opset=14)


@model("gemm_beta0_inf")
def _(r):
    """Gemm of constants (alpha 1.5, beta 0, C [2] = inf, NaN: not read)
    added to X. Expect: gemm0 gone; add0 reads 1.5 * GA @ GB, never
    0 * inf = NaN."""
    return finish(graph(
        [node("Gemm", ["GA", "GB", "GC"], ["gm"], "gemm0", alpha=1.5, beta=0.0),
         node("Add", ["X", "gm"], ["Y"], "add0")],
        "fold_gemm_beta0_inf", [fvi("X", [3, 2])], [fvi("Y", [3, 2])],
        inits=[raw_tensor("GA", rand(r, 3, 4)), raw_tensor("GB", rand(r, 4, 2)),
               raw_tensor("GC", np.array([np.inf, np.nan], np.float32))]))


@model("reduce_matmul")
def _(r):
    """ReduceSum, ReduceMean (keepdims 0), ReduceMax, CumSum and MatMul of
    small constants, combined with Sqrt/Reciprocal/Exp and added to X.
    Expect: every node but add0 gone; add0 reads the numpy value."""
    return finish(graph(
        [node("ReduceSum", ["A", "ax1"], ["rs"], "rsum0", keepdims=1),
         node("ReduceMean", ["B"], ["rm"], "rmean0", axes=[0], keepdims=0),
         node("ReduceMax", ["A"], ["rx"], "rmax0", axes=[1], keepdims=1),
         node("MatMul", ["A", "B"], ["ab"], "matmul0"),
         node("CumSum", ["ab", "axis1"], ["cs"], "cumsum0"),
         node("Add", ["rs", "rx"], ["s1"], "add1"),
         node("Mul", ["s1", "s1"], ["sq"], "mul0"),
         node("Sqrt", ["sq"], ["rt"], "sqrt0"),
         node("Exp", ["rm"], ["e"], "exp0"),
         node("Reciprocal", ["e"], ["re"], "recip0"),
         node("Add", ["cs", "rt"], ["t1"], "add2"),
         node("Add", ["t1", "re"], ["t2"], "add3"),
         node("Add", ["X", "t2"], ["Y"], "add0")],
        "fold_reduce_matmul", [fvi("X", [3, 4])], [fvi("Y", [3, 4])],
        inits=[raw_tensor("A", rand(r, 3, 5)), raw_tensor("B", rand(r, 5, 4)),
               i64("ax1", [1]), i64("axis1", 1)]))


@model("split_gather")
def _(r):
    """Split a constant in two, Slice (negative step), Gather, GatherElements,
    Tile and Expand (small), Concat, Flatten/Squeeze, then Add(X).
    Expect: every node but add0 gone; add0 reads the numpy value."""
    c = raw_tensor("C", rand(r, 4, 6))
    return finish(graph(
        [node("Split", ["C"], ["c0", "c1"], "split0", axis=1, split=[2, 4]),
         node("Slice", ["c1", "st", "en", "sax", "sstep"], ["sl"], "slice0"),
         node("Gather", ["c0", "gidx"], ["g"], "gather0", axis=0),
         node("GatherElements", ["g", "geidx"], ["ge"], "gathere0", axis=1),
         node("Tile", ["ge", "reps"], ["ti"], "tile0"),
         node("Expand", ["ti", "eshape"], ["ex"], "expand0"),
         node("Concat", ["sl", "ex"], ["cc"], "concat0", axis=1),
         node("Flatten", ["cc"], ["fl"], "flatten0", axis=1),
         node("Unsqueeze", ["fl"], ["un"], "unsq0", axes=[0]),
         node("Squeeze", ["un"], ["sq"], "squeeze0", axes=[0]),
         node("Add", ["X", "sq"], ["Y"], "add0")],
        "fold_split_gather", [fvi("X", [4, 4])], [fvi("Y", [4, 4])],
        inits=[c, i64("st", [-1]), i64("en", [-100]), i64("sax", [1]), i64("sstep", [-2]),
               i64("gidx", [3, 0, 1, 1]), i64("geidx", [[1], [0], [1], [0]]),
               i64("reps", [1, 2]), i64("eshape", [4, 2])]), opset=12)


@model("in_if")
def _(r):
    """Inside the then branch, Transpose(W) reads W of the main graph (an
    outer-scope constant) and Mul(X) uses the result; the else branch
    computes Neg(K) of its own initializer K.
    Expect: then_tr and else_neg gone; then_mul and else_add read
    initializers of their branch with W.T and -K."""
    then_g = graph([node("Transpose", ["W"], ["wt"], "then_tr", perm=[1, 0]),
                    node("Mul", ["X", "wt"], ["then_out"], "then_mul")],
                   "then_branch", [], [fvi("then_out", [2, 3])])
    else_g = graph([node("Neg", ["K"], ["nk"], "else_neg"),
                    node("Add", ["X", "nk"], ["else_out"], "else_add")],
                   "else_branch", [], [fvi("else_out", [2, 3])],
                   inits=[raw_tensor("K", rand(r, 2, 3))])
    return finish(graph(
        [if_node("if0", "cond", ["Y"], then_g, else_g)],
        "fold_in_if", [vi("cond", TP.BOOL, []), fvi("X", [2, 3])], [fvi("Y", [2, 3])],
        inits=[raw_tensor("W", rand(r, 3, 2))]))


@model("nn_opset10")
def _(r):
    """The network kernels at opset 10, where Softmax/LogSoftmax coerce the
    input to 2-D at axis, and Clip's bounds and Pad's pads are attributes:
    Softmax, LogSoftmax (axis 0), Clip, Pad (reflect), ArgMax, Gemm
    (transA, alpha, beta, vector C), EyeLike (k=-1), OneHot (axis 0), each
    added to an input. Expect: only the Adds left; each reads the numpy value."""
    outs = [("sm", "X1", [2, 3, 4]), ("ls", "X1", [2, 3, 4]), ("cl", "X1", [2, 3, 4]),
            ("pd", "X2", [3, 6]), ("am", "XI", [2, 4]), ("gm", "X3", [3, 5]),
            ("ey", "X4", [3, 4]), ("oh", "X5", [3, 3])]
    adds = [node("Add", [x, v], ["Y_" + v], "add_" + v) for v, x, _ in outs]
    shapes = {x: sh for _, x, sh in outs}
    return finish(graph(
        [node("Softmax", ["A"], ["sm"], "softmax0", axis=1),
         node("LogSoftmax", ["A"], ["ls"], "logsoftmax0", axis=0),
         node("Clip", ["A"], ["cl"], "clip0", min=-0.5, max=0.25),
         node("Pad", ["P"], ["pd"], "pad0", pads=[1, 2, 0, 1], mode="reflect"),
         node("ArgMax", ["A"], ["am"], "argmax0", axis=1, keepdims=0),
         node("Gemm", ["G1", "G2", "C"], ["gm"], "gemm0", transA=1, alpha=0.5, beta=2.0),
         node("EyeLike", ["E"], ["ey"], "eyelike0", k=-1),
         node("OneHot", ["OI", "OD", "OV"], ["oh"], "onehot0", axis=0)] + adds,
        "fold_nn_opset10",
        [vi(x, TP.INT64 if x == "XI" else FLOAT, sh) for x, sh in shapes.items()],
        [vi("Y_" + v, TP.INT64 if x == "XI" else FLOAT, sh) for v, x, sh in outs],
        inits=[raw_tensor("A", rand(r, 2, 3, 4) * 3), raw_tensor("P", rand(r, 2, 3)),
               raw_tensor("G1", rand(r, 4, 3)), raw_tensor("G2", rand(r, 4, 5)),
               raw_tensor("C", rand(r, 5)), raw_tensor("E", rand(r, 3, 4)),
               i64("OI", [0, 2, 1]), i64("OD", [3]),
               raw_tensor("OV", np.array([0.5, 2.0], np.float32))]),
        opset=10)


@model("conv")
def _(r):
    """Conv of constants: a, 1-D, 2 groups, dilation 2, stride 2, pads [1, 2], bias;
    b, 2-D, auto_pad SAME_LOWER, stride 2 (total padding 1 on each axis: at the head);
    c, 3-D, VALID, no bias, kernel_shape given; d, ConvTranspose 1-D, 2 groups, stride 2,
    pads [1, 0], output_padding 1, bias. Each added to an input. Expect: only the Adds
    left; each reads the numpy value (a direct sum over the padded input; for d, each input
    element's kernel-wide contribution added in, then the head padding cropped)."""
    outs = [("ca", "Xa", [1, 4, 4]), ("cb", "Xb", [1, 2, 3, 3]), ("cc", "Xc", [1, 1, 2, 1, 3]),
            ("cd", "Xd", [1, 4, 7])]
    adds = [node("Add", [x, v], ["Y_" + v], "add_" + v) for v, x, _ in outs]
    return finish(graph(
        [node("Conv", ["XA", "WA", "BA"], ["ca"], "conva", group=2, dilations=[2],
              strides=[2], pads=[1, 2]),
         node("Conv", ["XB", "WB"], ["cb"], "convb", auto_pad="SAME_LOWER", strides=[2, 2]),
         node("Conv", ["XC", "WC"], ["cc"], "convc", auto_pad="VALID",
              kernel_shape=[2, 3, 2]),
         node("ConvTranspose", ["XD", "WD", "BD"], ["cd"], "convd", group=2, strides=[2],
              pads=[1, 0], output_padding=[1])] + adds,
        "fold_conv", [fvi(x, sh) for _, x, sh in outs], [fvi("Y_" + v, sh) for v, _, sh in outs],
        inits=[raw_tensor("XA", rand(r, 1, 4, 7)), raw_tensor("WA", rand(r, 4, 2, 2)),
               raw_tensor("BA", rand(r, 4)), raw_tensor("XB", rand(r, 1, 3, 5, 6)),
               raw_tensor("WB", rand(r, 2, 3, 2, 3)), raw_tensor("XC", rand(r, 1, 2, 3, 3, 4)),
               raw_tensor("WC", rand(r, 1, 2, 2, 3, 2)), raw_tensor("XD", rand(r, 1, 4, 3)),
               raw_tensor("WD", rand(r, 4, 2, 3)), raw_tensor("BD", rand(r, 4))]))


@model("nn_opset13")
def _(r):
    """The kernels at opset 13: Softmax on one axis (not the 2-D coercion),
    LogSoftmax (default axis), integer Clip with only a min input, Pad with
    pads and value inputs (a negative pad crops) and in edge mode, GatherND
    with batch_dims 1 and a negative index, OneHot with a negative index and
    a float depth, ArgMin with ties and select_last_index, each added to an
    input. Expect: only the Adds left; each reads the numpy value."""
    outs = [("sm", "X1", FLOAT, [2, 3, 4]), ("ls", "X1", FLOAT, [2, 3, 4]),
            ("cl", "XC", TP.INT32, [5]), ("pc", "X2", FLOAT, [3, 3]),
            ("pe", "X3", FLOAT, [2, 5]), ("gn", "X4", FLOAT, [2, 1, 2]),
            ("oh", "X5", FLOAT, [2, 4, 2]), ("an", "XI", TP.INT64, [2, 1])]
    adds = [node("Add", [x, v], ["Y_" + v], "add_" + v) for v, x, _, _ in outs]
    ins = {x: (t, sh) for _, x, t, sh in outs}
    return finish(graph(
        [node("Softmax", ["A"], ["sm"], "softmax0", axis=1),
         node("LogSoftmax", ["A"], ["ls"], "logsoftmax0"),
         node("Clip", ["CI", "CLO"], ["cl"], "clip0"),
         node("Pad", ["P", "pads_c", "PV"], ["pc"], "padc0"),
         node("Pad", ["P", "pads_e"], ["pe"], "pade0", mode="edge"),
         node("GatherND", ["D", "DI"], ["gn"], "gathernd0", batch_dims=1),
         node("OneHot", ["OI", "OD", "OV"], ["oh"], "onehot0", axis=1),
         node("ArgMin", ["T"], ["an"], "argmin0", axis=1, select_last_index=1)] + adds,
        "fold_nn_opset13",
        [vi(x, t, sh) for x, (t, sh) in ins.items()],
        [vi("Y_" + v, t, sh) for v, _, t, sh in outs],
        inits=[raw_tensor("A", rand(r, 2, 3, 4) * 3),
               raw_tensor("CI", np.array([-7, -2, 0, 5, 100], np.int32)),
               raw_tensor("CLO", np.array(-3, np.int32)), raw_tensor("P", rand(r, 2, 3)),
               i64("pads_c", [1, -1, 0, 1]), raw_tensor("PV", np.array(9.0, np.float32)),
               i64("pads_e", [0, 1, 0, 1]), raw_tensor("D", rand(r, 2, 3, 2)),
               i64("DI", [[[2]], [[-3]]]), i64("OI", [[1, -1], [3, 0]]),
               raw_tensor("OD", np.array(4.0, np.float32)),
               raw_tensor("OV", np.array([-1.0, 1.5], np.float32)),
               i64("T", [[3, 1, 4, 1], [2, 2, 5, 2]])]))


@model("kept")
def _(r):
    """Nodes with constant inputs that must stay: Expand of one value to
    [1024, 512] (more than twice its inputs, above 1 MiB), DequantizeLinear,
    RandomNormal, an integer Div by zero, and Transpose of an initializer
    that is also a graph input (a default the caller may override).
    Expect: expand0, dq0, rnd0, div0 and tr0 kept; warnings for expand0
    and div0."""
    return finish(graph(
        [node("Expand", ["one", "big"], ["ex"], "expand0"),
         node("Add", ["X", "ex"], ["Y"], "add0"),
         node("DequantizeLinear", ["q", "qs"], ["dq"], "dq0"),
         node("RandomNormal", [], ["rn"], "rnd0", shape=[2]),
         node("Add", ["dq", "rn"], ["Y2"], "add1"),
         node("Div", ["a", "zero"], ["Y3"], "div0"),
         node("Transpose", ["D"], ["Y4"], "tr0")],
        "fold_kept", [fvi("X", [1024, 512]), fvi("D", [2, 3])],
        [fvi("Y", [1024, 512]), fvi("Y2", [2]), vi("Y3", TP.INT64, [2]), fvi("Y4", [3, 2])],
        inits=[raw_tensor("one", np.array([1.5], np.float32)), i64("big", [1024, 512]),
               raw_tensor("q", np.array([3, 200], np.uint8)),
               raw_tensor("qs", np.array(0.5, np.float32)), i64("a", [4, 5]),
               i64("zero", [2, 0]), raw_tensor("D", rand(r, 2, 3))]))


@model("grown_mask")
def _(r):
    """An attention-mask chain of constants: ConstantOfShape [64, 64] (16 KiB from an
    8-byte shape) -> Trilu -> Where(mask, 0, -inf) -> Add to X. The result grows far
    beyond twice its inputs but stays under --fold-growth-limit (1 MiB). Expect: the
    ConstantOfShape, Trilu and Where folded; add0 reads the mask as an initializer."""
    from onnx import helper
    return finish(graph(
        [node("ConstantOfShape", ["shape"], ["ones"], "cos0",
              value=helper.make_tensor("v", TP.BOOL, [1], [True])),
         node("Cast", ["ones"], ["onesi"], "cast0", to=TP.INT64),
         node("Trilu", ["onesi"], ["tri"], "trilu0", upper=0),
         node("Cast", ["tri"], ["keep"], "cast1", to=TP.BOOL),
         node("Where", ["keep", "zero", "ninf"], ["mask"], "where0"),
         node("Add", ["X", "mask"], ["Y"], "add0")],
        "fold_grown_mask", [fvi("X", [64, 64])], [fvi("Y", [64, 64])],
        inits=[i64("shape", [64, 64]), raw_tensor("zero", np.array(0, np.float32)),
               raw_tensor("ninf", np.array(-np.inf, np.float32))]), opset=14)


@model("static_shape")
def _(r):
    """X [2,3,4] is static, Z [N,3] has a symbolic batch: Shape(X) -> Gather(2)
    -> Unsqueeze -> Concat([-1], .) -> Reshape(X); Size(X) -> Cast -> Mul;
    Shape(Z, start=1) -> Concat([-1], .) -> Reshape(Z); Shape(Z) is output Y3.
    Expect: every Shape/Size but zshape_all gone (and the chains after them);
    reshape0 reads [-1, 4], mul0 reads 24.0, reshape1 reads [-1, 3]."""
    return finish(graph(
        [node("Shape", ["X"], ["s"], "shape0"),
         node("Gather", ["s", "two"], ["s2"], "gather0", axis=0),
         node("Unsqueeze", ["s2", "axes0"], ["s2u"], "unsq0"),
         node("Concat", ["minus1", "s2u"], ["shape"], "concat0", axis=0),
         node("Reshape", ["X", "shape"], ["xr"], "reshape0"),
         node("Size", ["X"], ["n"], "size0"),
         node("Cast", ["n"], ["nf"], "cast0", to=TP.FLOAT),
         node("Mul", ["xr", "nf"], ["Y"], "mul0"),
         node("Shape", ["Z"], ["zs"], "zshape_tail", start=1),
         node("Concat", ["minus1", "zs"], ["zshape"], "zconcat", axis=0),
         node("Reshape", ["Z", "zshape"], ["Y2"], "reshape1"),
         node("Shape", ["Z"], ["Y3"], "zshape_all")],
        "fold_static_shape", [fvi("X", [2, 3, 4]), fvi("Z", ["N", 3])],
        [fvi("Y", [6, 4]), fvi("Y2", ["N", 3]), vi("Y3", TP.INT64, [2])],
        inits=[i64("two", 2), i64("axes0", [0]), i64("minus1", [-1])]), opset=15)


@model("partial_shape")
def _(r):
    """X [N,3,H,W] has symbolic N, H, W; of Shape(X) only dim 1 is static.
    Gather(., 1) -> Unsqueeze and Slice(., 1:2) -> Cast(float) read only that
    dim; Gather(., 0) reads N. Concat(N, 3, -1) -> Reshape(X); Mul(., 3.0).
    Expect: gather1, unsq1, slice0 and cast0 gone (inference knows their
    values); shape0, gather0, unsq0, concat0, reshape0, mul0 kept; concat0
    reads [3] as its second input, mul0 reads [3.0]."""
    return finish(graph(
        [node("Shape", ["X"], ["s"], "shape0"),
         node("Gather", ["s", "zero"], ["n"], "gather0", axis=0),
         node("Unsqueeze", ["n", "axes0"], ["nu"], "unsq0"),
         node("Gather", ["s", "one"], ["c"], "gather1", axis=0),
         node("Unsqueeze", ["c", "axes0"], ["cu"], "unsq1"),
         node("Concat", ["nu", "cu", "minus1"], ["target"], "concat0", axis=0),
         node("Reshape", ["X", "target"], ["xr"], "reshape0"),
         node("Slice", ["s", "one1", "two1"], ["sl"], "slice0"),
         node("Cast", ["sl"], ["slf"], "cast0", to=FLOAT),
         node("Mul", ["xr", "slf"], ["Y"], "mul0")],
        "fold_partial_shape", [fvi("X", ["N", 3, "H", "W"])], [fvi("Y", ["N", 3, None])],
        inits=[i64("zero", 0), i64("one", 1), i64("axes0", [0]), i64("minus1", [-1]),
               i64("one1", [1]), i64("two1", [2])]), opset=15)


@model("large")
def _(r):
    """W [256, 1024] float (1 MiB) -> Transpose -> Cast(float16) ->
    Cast(float) -> MatMul(X, .): the Transpose and the last Cast are results
    of a writer chunk or more, computed while written.
    Expect: tr0, cast0, cast1 gone; matmul0 reads float32(float16(W.T))."""
    w = (np.arange(256 * 1024, dtype=np.float32) % 251 / 251.0 - 0.5).reshape(256, 1024)
    return finish(graph(
        [node("Transpose", ["W"], ["wt"], "tr0"),
         node("Cast", ["wt"], ["wh"], "cast0", to=TP.FLOAT16),
         node("Cast", ["wh"], ["wf"], "cast1", to=TP.FLOAT),
         node("MatMul", ["X", "wf"], ["Y"], "matmul0")],
        "fold_large", [fvi("X", [2, 1024])], [fvi("Y", [2, 256])],
        inits=[raw_tensor("W", w.astype(np.float32))]))


@model("transpose_tiled")
def _(r):
    """W [3, 517, 347] float (2.1 MB, three writer chunks whose edges cut
    output rows) -> Transpose(perm 2,0,1) -> Add(X, .); H [5, 7, 9] float16
    -> Transpose(perm 1,2,0) -> Add(Z, .) (in memory). Both read their last
    output axis with a stride: the tiled copy, partial rows at chunk edges.
    Expect: tr0, tr1 gone; add0 reads W.transpose(2,0,1), add1 reads
    H.transpose(1,2,0)."""
    w = (np.arange(3 * 517 * 347, dtype=np.float32) % 1009 / 1009.0).reshape(3, 517, 347)
    h = (np.arange(5 * 7 * 9) % 17 / 17.0).astype(np.float16).reshape(5, 7, 9)
    return finish(graph(
        [node("Transpose", ["W"], ["wt"], "tr0", perm=[2, 0, 1]),
         node("Add", ["X", "wt"], ["Y"], "add0"),
         node("Transpose", ["H"], ["ht"], "tr1", perm=[1, 2, 0]),
         node("Add", ["Z", "ht"], ["Y2"], "add1")],
        "fold_transpose_tiled", [fvi("X", [347, 3, 517]), vi("Z", TP.FLOAT16, [7, 9, 5])],
        [fvi("Y", [347, 3, 517]), vi("Y2", TP.FLOAT16, [7, 9, 5])],
        inits=[raw_tensor("W", w), raw_tensor("H", h)]))


@model("if_then_scalar")
def _(r):
    """if0's condition is the scalar true. Expect: no If; then_relu and
    then_add in the main graph, then_add writing r (read by mul0);
    else_neg gone; the branch's value_info entry for t0 in the main graph,
    the one for then_out (now r) gone."""
    return simple("fold_if_then_scalar", True)


@model("if_else_scalar")
def _(r):
    """if0's condition is the scalar false. Expect: no If; else_neg in the
    main graph writing r; then_relu and then_add gone."""
    return simple("fold_if_else_scalar", False)


@model("if_cond_shape1")
def _(r):
    """Two Ifs whose conditions are one-element tensors of shape [1]: ift
    (true) and iff (false), branches named a_* and b_*; Add(rt, rf) -> Y.
    Expect: no If; a_then_add writes rt, b_else_neg writes rf; a_else_neg,
    b_then_relu and b_then_add gone."""
    at, ae = branches("a_")
    bt, be = branches("b_")
    return finish(graph([if_node("ift", "ct", ["rt"], at, ae),
                         if_node("iff", "cf", ["rf"], bt, be),
                         node("Add", ["rt", "rf"], ["Y"], "add0")],
                        "fold_if_cond_shape1", [fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("ct", [True], [1]), cond("cf", [False], [1]),
                               raw_tensor("W", rand(r, *XS))]))


@model("if_in_loop")
def _(r):
    """A Loop (2 iterations) body: body_add = Add(acc, X) -> a, then body_if
    (condition c, a true scalar of the main graph) whose then branch
    then_mul = Mul(a, W) reads a value of its parent (the body's a) and one
    of its grandparent (the main graph's W); else Neg(a).
    Expect: no If; then_mul in the Loop body writing acc_out; else_neg gone."""
    then_g = graph([node("Mul", ["a", "W"], ["then_out"], "then_mul")], "then_branch", [],
                   [fvi("then_out", XS)])
    else_g = graph([node("Neg", ["a"], ["else_out"], "else_neg")], "else_branch", [],
                   [fvi("else_out", XS)])
    body = graph([node("Identity", ["cond_in"], ["cond_out"], "body_id_cond"),
                  node("Add", ["acc", "X"], ["a"], "body_add"),
                  if_node("body_if", "c", ["acc_out"], then_g, else_g)],
                 "loop_body", [vi("iter", TP.INT64, []), vi("cond_in", TP.BOOL, []), fvi("acc", XS)],
                 [vi("cond_out", TP.BOOL, []), fvi("acc_out", XS)])
    return finish(graph(
        [helper.make_node("Loop", ["M", "keep_going", "X"], ["Y"], name="loop0", body=body)],
        "fold_if_in_loop", [fvi("X", XS)], [fvi("Y", XS)],
        inits=[raw_tensor("M", np.array(2, np.int64)), cond("keep_going", True), cond("c", True),
               raw_tensor("W", rand(r, *XS))]))


@model("if_nested")
def _(r):
    """if0 (condition c, true) whose then branch holds then_relu -> t0 and
    an If if1 on the graph input `cond` reading t0 (inner_add = Add(t0, X)
    or inner_neg = Neg(t0)) -> then_out.
    Expect: if0 gone; if1 kept in the main graph writing r, inner_add still
    reading t0; else_neg gone."""
    inner_t = graph([node("Add", ["t0", "X"], ["in_t"], "inner_add")], "inner_then", [],
                    [fvi("in_t", XS)])
    inner_e = graph([node("Neg", ["t0"], ["in_e"], "inner_neg")], "inner_else", [],
                    [fvi("in_e", XS)])
    then_g = graph([node("Relu", ["X"], ["t0"], "then_relu"),
                    if_node("if1", "cond", ["then_out"], inner_t, inner_e)],
                   "then_branch", [], [fvi("then_out", XS)])
    else_g = neg_else()
    return finish(graph([if_node("if0", "c", ["r"], then_g, else_g),
                         node("Mul", ["r", "X"], ["Y"], "mul0")],
                        "fold_if_nested", [vi("cond", TP.BOOL, []), fvi("X", XS)],
                        [fvi("Y", XS)], inits=[cond("c", True)]))


@model("if_name_clash")
def _(r):
    """if0 (true) whose then branch has a node relu0 writing a, read by
    then_add and, from the outer scope, by inner_add in if1 (on the graph
    input `cond`) nested in the branch: the main graph, after if0, has its
    own node relu0 writing a (onnx.checker accepts a branch defining a name
    that the enclosing graph defines later, not earlier).
    Expect: no if0; the main graph's relu0 still writes a; the branch's
    Relu (renamed) writes another name, which then_add and inner_add read
    (and the branch's value_info entry for a names); every name defined
    once and every node name used once."""
    inner_t = graph([node("Add", ["a", "X"], ["in_t"], "inner_add")], "inner_then", [],
                    [fvi("in_t", XS)])
    inner_e = graph([node("Neg", ["X"], ["in_e"], "inner_neg")], "inner_else", [],
                    [fvi("in_e", XS)])
    then_g = graph([node("Relu", ["X"], ["a"], "relu0"),
                    if_node("if1", "cond", ["n"], inner_t, inner_e),
                    node("Add", ["a", "n"], ["then_out"], "then_add")],
                   "then_branch", [], [fvi("then_out", XS)], value_info=[fvi("a", XS)])
    return clash_model("fold_if_name_clash", then_g)


@model("if_nested_outer_output")
def _(r):
    """As fold_if_name_clash, but the then branch of if1 returns the branch
    value a itself (an outer value, no node), and then_relu writes a.
    onnxruntime refuses a subgraph returning an outer value (no numbers).
    Expect: no if0; if1's then branch returns then_relu's output under
    its new name; the main graph's relu0 still writes a."""
    inner_t = graph([], "inner_then", [], [fvi("a", XS)])
    inner_e = graph([node("Neg", ["a"], ["in_e"], "inner_neg")], "inner_else", [],
                    [fvi("in_e", XS)])
    then_g = graph([node("Relu", ["X"], ["a"], "then_relu"),
                    if_node("if1", "cond", ["then_out"], inner_t, inner_e)],
                   "then_branch", [], [fvi("then_out", XS)])
    return clash_model("fold_if_nested_outer_output", then_g)


@model("if_sequence_clash")
def _(r):
    """Two constant Ifs in a row, both true. if0's then branch: t = Relu(X)
    (node n0), l = Loop(t) (loop0, whose body writes z), o0 = Add(l, W)
    (a0); its else branch writes u. if1 reads if0's output r0; its then
    branch writes t (a node also called n0), u (n1), z (n2) and o1 = Add(z,
    u) (a1). Branches of sibling Ifs may share names, so the model is valid.
    The names a moved value must avoid are those of every graph that stays:
    inlining if0, its t and n0 get fresh names (if1's branch has them);
    inlining if1, its z does (loop0's body, moved with if0's nodes, has it),
    but not its t, n0 or u (if0's t and n0 were renamed, and u was only in
    if0's discarded else branch). fold counts the names once per run and
    updates the counts at each inlining; this is what the counts must give.
    Expect: no If; loop0 reads a renamed t; n0 writes t; n1 writes u; a1
    reads a renamed z and u; SSA; node names unique."""
    body = graph([node("Identity", ["keep_in"], ["keep_out"], "loop_keep"),
                  node("Relu", ["carry"], ["z"], "loop_relu")], "body",
                 [vi("i", TP.INT64, []), vi("keep_in", TP.BOOL, []), fvi("carry", XS)],
                 [vi("keep_out", TP.BOOL, []), fvi("z", XS)])
    loop = helper.make_node("Loop", ["M", "keep", "t"], ["l"], name="loop0", body=body)
    then0 = graph([node("Relu", ["X"], ["t"], "n0"), loop,
                   node("Add", ["l", "W"], ["o0"], "a0")], "then0", [], [fvi("o0", XS)])
    else0 = graph([node("Neg", ["X"], ["u"], "g0")], "else0", [], [fvi("u", XS)])
    then1 = graph([node("Relu", ["r0"], ["t"], "n0"), node("Neg", ["r0"], ["u"], "n1"),
                   node("Relu", ["t"], ["z"], "n2"), node("Add", ["z", "u"], ["o1"], "a1")],
                  "then1", [], [fvi("o1", XS)])
    else1 = graph([node("Neg", ["r0"], ["e1"], "g1")], "else1", [], [fvi("e1", XS)])
    return finish(graph([if_node("if0", "c", ["r0"], then0, else0),
                         if_node("if1", "c", ["Y"], then1, else1)],
                        "fold_if_sequence_clash", [fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("c", True), raw_tensor("W", rand(r, *XS)),
                               raw_tensor("M", np.array(1, np.int64)), cond("keep", True)]))


@model("if_graph_output")
def _(r):
    """if0 (true) writes the graph output Y. Expect: no If; then_add writes
    Y (no Identity)."""
    then_g, else_g = branches()
    return finish(graph([if_node("if0", "c", ["Y"], then_g, else_g)],
                        "fold_if_graph_output", [fvi("X", XS)], [fvi("Y", XS)],
                        inits=[cond("c", True), raw_tensor("W", rand(r, *XS))]))


@model("if_outer_output")
def _(r):
    """if0 (true) returns the graph input X from its then branch, which has
    no node, as two outputs: r (read by relu_r -> Y) and Z (a graph output);
    else Neg(X) twice. onnxruntime refuses a subgraph returning an outer
    value: the output is checked against numpy. Expect: no If; relu_r
    reads X; Z kept by an Identity reading X."""
    then_g = graph([], "then_branch", [], [fvi("X", XS), fvi("X", XS)])
    else_g = neg_else(2)
    return finish(graph([if_node("if0", "c", ["r", "Z"], then_g, else_g),
                         node("Relu", ["r"], ["Y"], "relu_r")],
                        "fold_if_outer_output", [fvi("X", XS)], [fvi("Y", XS), fvi("Z", XS)],
                        inits=[cond("c", True)]))


@model("if_init_output")
def _(r):
    """if0 (true) returns K and K2, initializers of its then branch (which
    has no node), as r (read by add_k = Add(X, r) -> Y) and as the graph
    output Z; else Neg(X) twice. (onnxruntime 1.30 computes Y wrong when
    the branch returns K for both outputs: r reads as zeros.)
    Expect: no If; K an initializer of the main graph read by add_k; Z
    holds K2's value."""
    then_g = graph([], "then_branch", [], [fvi("K", XS), fvi("K2", XS)],
                   inits=[raw_tensor("K", rand(r, *XS)), raw_tensor("K2", rand(r, *XS))])
    else_g = neg_else(2)
    return finish(graph([if_node("if0", "c", ["r", "Z"], then_g, else_g),
                         node("Add", ["X", "r"], ["Y"], "add_k")],
                        "fold_if_init_output", [fvi("X", XS)], [fvi("Y", XS), fvi("Z", XS)],
                        inits=[cond("c", True)]))


@model("if_multi_output")
def _(r):
    """if0 (true) with four outputs: then_relu's a as r0, then_neg's b as
    r1, a again as r2 and as the graph output Z; add0 = Add(r0, r1),
    mul0 = Mul(add0's, r2) -> Y. Else Neg(X) four times.
    Expect: no If; then_relu writes r0, then_neg writes r1, mul0 reads r0;
    Z written from r0 (an Identity with fold alone, then_relu itself once
    pass identity ran)."""
    then_g = graph([node("Relu", ["X"], ["a"], "then_relu"),
                    node("Neg", ["X"], ["b"], "then_neg")],
                   "then_branch", [], [fvi("a", XS), fvi("b", XS), fvi("a", XS), fvi("a", XS)])
    else_g = neg_else(4)
    return finish(graph([if_node("if0", "c", ["r0", "r1", "r2", "Z"], then_g, else_g),
                         node("Add", ["r0", "r1"], ["s"], "add0"),
                         node("Mul", ["s", "r2"], ["Y"], "mul0")],
                        "fold_if_multi_output", [fvi("X", XS)], [fvi("Y", XS), fvi("Z", XS)],
                        inits=[cond("c", True)]))


@model("if_dynamic_cond")
def _(r):
    """Conditions that are not constants: if0 on the graph input `cond`,
    if1 on Greater(ReduceSum(X), 0) computed at run time. Expect: both
    Ifs kept, their branches as they were."""
    t0, e0 = branches()
    t1, e1 = branches("k_")
    return finish(graph([if_node("if0", "cond", ["r0"], t0, e0),
                         node("ReduceSum", ["X"], ["sx"], "sum0", keepdims=0),
                         node("Greater", ["sx", "zero"], ["c1"], "greater0"),
                         if_node("if1", "c1", ["r1"], t1, e1),
                         node("Add", ["r0", "r1"], ["Y"], "add0")],
                        "fold_if_dynamic_cond", [vi("cond", TP.BOOL, []), fvi("X", XS)],
                        [fvi("Y", XS)],
                        inits=[raw_tensor("zero", np.array(0.0, np.float32)),
                               raw_tensor("W", rand(r, *XS))]))


@model("if_shape_folds")
def _(r):
    """if0 (true): then Relu(X) [2,3], else Reshape(X, [3,2]): inference
    cannot tell r's dims while the If stands. shape0 = Shape(r) is the
    target of reshape0 = Reshape(V [6], .) -> Y; mul0 = Mul(r, X) -> Y2.
    Expect: no If and no Shape: once then_relu writes r its shape is
    known and shape0 folds in the same run of fold; reshape0 reads [2,3]."""
    then_g = graph([node("Relu", ["X"], ["then_out"], "then_relu")], "then_branch", [],
                   [fvi("then_out", XS)])
    else_g = graph([node("Reshape", ["X", "s32"], ["else_out"], "else_rs")], "else_branch", [],
                   [fvi("else_out", [3, 2])])
    return finish(graph([if_node("if0", "c", ["r"], then_g, else_g),
                         node("Shape", ["r"], ["s"], "shape0"),
                         node("Reshape", ["V", "s"], ["Y"], "reshape0"),
                         node("Mul", ["r", "X"], ["Y2"], "mul0")],
                        "fold_if_shape_folds", [fvi("X", XS), fvi("V", [6])],
                        [fvi("Y", XS), fvi("Y2", XS)],
                        inits=[cond("c", True),
                               raw_tensor("s32", np.array([3, 2], np.int64))]))


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

# numpy meanings of the models' folded values

def _int_arith(I):
    a, b = I("a"), I("b")
    q = np.array([int(x / y) for x, y in zip(a.tolist(), b.tolist())], np.int64)  # truncates
    m = np.mod(a, b)  # the sign of the divisor, as Mod with fmod=0
    mx = np.maximum(np.maximum(np.abs(-q - m), b ** 2), m)
    return np.minimum(mx, 50)


def _mask(I):
    rg = np.arange(4)
    return np.where(~(rg < rg[:, None]), 0.0, -1e4).astype(np.float32)


def _reduce_matmul(I):
    a, b = I("A").astype(np.float64), I("B").astype(np.float64)
    s1 = a.sum(1, keepdims=True) + a.max(1, keepdims=True)
    t = np.cumsum(a @ b, 1) + np.sqrt(s1 * s1) + 1.0 / np.exp(b.mean(0))
    return t.astype(np.float32)


def _split_gather(I):
    c = I("C")
    c0, c1 = c[:, :2], c[:, 2:]
    g = c0[[3, 0, 1, 1]]
    ge = np.take_along_axis(g, np.array([[1], [0], [1], [0]]), 1)
    return np.concatenate([c1[:, [3, 1]], np.tile(ge, (1, 2))], 1)


def _softmax(a, axis, log=False):
    """(Log)Softmax along axis in float64, returned as float32."""
    a = a.astype(np.float64)
    z = a - a.max(axis, keepdims=True)
    lse = np.log(np.exp(z).sum(axis, keepdims=True))
    return (z - lse if log else np.exp(z - lse)).astype(np.float32)


def _coerced(a, axis, log=False):
    """Softmax before opset 13: every axis from `axis` on is one row."""
    return _softmax(a.reshape(int(np.prod(a.shape[:axis])), -1), 1, log).reshape(a.shape)


_NN10 = {
    "sm": lambda I: _coerced(I("A"), 1),
    "ls": lambda I: _coerced(I("A"), 0, log=True),
    "cl": lambda I: np.clip(I("A"), np.float32(-0.5), np.float32(0.25)),
    "pd": lambda I: np.pad(I("P"), ((1, 0), (2, 1)), mode="reflect"),
    "am": lambda I: np.argmax(I("A"), 1).astype(np.int64),
    "gm": lambda I: (0.5 * I("G1").T.astype(np.float64) @ I("G2") + 2.0 * I("C")).astype(np.float32),
    "ey": lambda I: np.eye(3, 4, k=-1, dtype=np.float32),
    "oh": lambda I: np.where(np.arange(3)[:, None] == I("OI")[None, :], 2.0, 0.5).astype(np.float32),
}


_NN13 = {
    "sm": lambda I: _softmax(I("A"), 1),
    "ls": lambda I: _softmax(I("A"), -1, log=True),
    "cl": lambda I: np.maximum(I("CI"), I("CLO")),
    "pc": lambda I: np.pad(I("P")[:, 1:], ((1, 0), (0, 1)), constant_values=9.0),
    "pe": lambda I: np.pad(I("P"), ((0, 0), (1, 1)), mode="edge"),
    "gn": lambda I: np.stack([I("D")[0, 2], I("D")[1, -3]])[:, None, :],
    "oh": lambda I: np.where((I("OI") % 4)[:, None, :] == np.arange(4)[None, :, None],
                             1.5, -1.0).astype(np.float32),
    "an": lambda I: (3 - np.argmin(I("T")[:, ::-1], 1))[:, None].astype(np.int64),
}


def _conv_ref(x, w, b=None, strides=None, dil=None, head=None, tail=None, group=1):
    """ONNX Conv by its definition: the input zero-padded (head/tail per spatial axis), each
    output element a float64 sum over its group's channels and the kernel, rounded once."""
    sp = x.ndim - 2
    strides, dil = strides or [1] * sp, dil or [1] * sp
    head, tail = head or [0] * sp, tail or [0] * sp
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(head, tail)))
    ks = w.shape[2:]
    outs = [(xp.shape[2 + i] - (ks[i] - 1) * dil[i] - 1) // strides[i] + 1 for i in range(sp)]
    y = np.zeros((x.shape[0], w.shape[0]) + tuple(outs))
    cg, mg = w.shape[1], w.shape[0] // group
    for idx in np.ndindex(*y.shape):
        n, m, o = idx[0], idx[1], idx[2:]
        g = m // mg
        for kidx in np.ndindex(*ks):
            at = tuple(o[i] * strides[i] + kidx[i] * dil[i] for i in range(sp))
            y[idx] += np.dot(xp[(n, slice(g * cg, (g + 1) * cg)) + at], w[(m, slice(None)) + kidx])
    if b is not None:
        y += b.reshape((1, -1) + (1,) * sp)
    return y.astype(np.float32)


def _convt_ref(x, w, b, stride, head, out, group):
    """1-D ONNX ConvTranspose by its definition: X[n, c, i] * W[c, m, k] added at output
    position i*stride + k of the uncropped output, which is then cropped from head."""
    cg, mg = x.shape[1] // group, w.shape[1]
    full = np.zeros((x.shape[0], mg * group, (x.shape[2] - 1) * stride + w.shape[2] + 1))
    for n, c, i, m, k in np.ndindex(x.shape[0], x.shape[1], x.shape[2], mg, w.shape[2]):
        full[n, c // cg * mg + m, i * stride + k] += float(x[n, c, i]) * float(w[c, m, k])
    return (full[:, :, head:head + out] + b.reshape(1, -1, 1)).astype(np.float32)


_CONV = {
    "ca": lambda I: _conv_ref(I("XA"), I("WA"), I("BA"), [2], [2], [1], [2], group=2),
    # SAME_LOWER, stride 2: out 3 on both axes; padding (3-1)*2 + k - n = 1 (rows: 2+2-5),
    # 1 (columns: 4+3-6), the odd one at the head
    "cb": lambda I: _conv_ref(I("XB"), I("WB"), None, [2, 2], None, [1, 1], [0, 0]),
    "cc": lambda I: _conv_ref(I("XC"), I("WC")),
    # out = 2*(3-1) + 1 + 3 - 1 - 0 = 7
    "cd": lambda I: _convt_ref(I("XD"), I("WD"), I("BD"), 2, 1, 7, 2),
}


def _nn_spec(refs, ops):
    return dict(both=[op_count("Add", len(refs))] + [op_count(o, 0) for o in ops] +
                [folded_input("add_" + v, 1, f) for v, f in refs.items()])


# ---------------------------------------------------------------------------
# fold's If rule (the if_* models): an If whose condition is a constant gives
# way to the nodes of its chosen branch.
# ---------------------------------------------------------------------------

def node_in_graph(node, path):
    """node lives in the graph at path (testlib.graphs' paths: main, ...)."""
    def fn(inp, out):
        where = [p for p, _, n in testlib.nodes(out) if n.name == node]
        return None if where == [path] else "%s is in %s, expected %s" % (node, where, path)
    return ("%s in %s" % (node, path), fn)


def node_names_unique():
    """No two nodes of the model (any graph) share a name."""
    def fn(inp, out):
        names = [n.name for _, _, n in testlib.nodes(out) if n.name]
        twice = sorted({x for x in names if names.count(x) > 1})
        return ("node names used twice: %s" % twice) if twice else None
    return ("node names unique", fn)


def reads_renamed(readers, old):
    """Every (node, input index) of readers reads one value, written by a
    node, whose name is no longer old: a branch value renamed where it
    landed because the enclosing graph defines old too."""
    def fn(inp, out):
        got = {need_node(out, n)[1].input[i] for n, i in readers}
        if len(got) != 1:
            return "they read %s" % sorted(got)
        name = got.pop()
        made_by(out, name)  # raises when no node writes it
        return None if name != old else "the value is still called %s" % old
    return ("%s read a renamed %s" % (",".join(n for n, _ in readers), old), fn)


def written_by_identity(value, source):
    """value (a graph output kept by name) is written by an Identity of source."""
    def fn(inp, out):
        _, n = made_by(out, value)
        got = (n.op_type, list(n.input))
        return None if got == ("Identity", [source]) else "%s is written by %s%s" % (
            value, got[0], got[1])
    return ("%s = Identity(%s)" % (value, source), fn)


def vi_moved(name):
    """A branch's value_info entry for name is now the main graph's, with
    the type the input declared."""
    def fn(inp, out):
        exp = [v for _, g in testlib.graphs(inp.graph) for v in g.value_info if v.name == name]
        got = [v for v in out.graph.value_info if v.name == name]
        if not got:
            return "the main graph has no value_info %s" % name
        same = got[0].type.SerializeToString() == exp[0].type.SerializeToString()
        return None if same else "value_info %s type changed" % name
    return ("value_info %s in the main graph" % name, fn)


def vi_defined():
    """Every value_info entry (any graph) names a value its graph defines."""
    def fn(inp, out):
        bad = []
        for path, g in testlib.graphs(out.graph):
            defined = {i.name for i in g.input} | {t.name for t in g.initializer} | \
                {o for n in g.node for o in n.output}
            bad += ["%s: %s" % (path, v.name) for v in g.value_info if v.name not in defined]
        return ("value_info naming no value: %s" % bad) if bad else None
    return ("value_info names defined values", fn)


NO_IF, VI_DEFINED = no_op("If"), vi_defined()


SPECS = {
    "grown_mask": dict(both=[removed("cos0", "trilu0", "where0"), kept("add0")]),
    # the folded target [2,-1] keeps X's shape [2,12]: eliminate-noops then
    # removes reshape0 in the default run
    "shape_chain": dict(both=[
        removed("shape0", "gather0", "unsq0", "concat0", "size0", "cast0"), kept("mul0"),
        folded_input("mul0", 1, lambda I: np.float32(I("W").size))],
        single=[kept("reshape0"),
                folded_input("reshape0", 1, lambda I: np.array([I("W").shape[0], -1], np.int64))],
        default=[removed("reshape0"), node_input("mul0", 0, "X")]),
    "weight_transform": dict(both=[
        removed("tr0", "mul0", "cast0", "cast1", "reshape0"), kept("matmul0", "conv0"),
        folded_input("matmul0", 1, lambda I: (I("W").T.astype(np.float64) * I("s"))
                     .astype(np.float16).astype(np.float32)),
        folded_input("conv0", 1, lambda I: I("Wc").reshape(2, 3, 3, 3))]),
    "sigmoid_tail": dict(both=[
        removed("sig1", "sig3"), kept("sig2"),
        folded_input("add1", 1, lambda I: (1 / (1 + np.exp(-I("S1").astype(np.float64))))
                     .astype(np.float32)),
        folded_input("add3", 1, lambda I: 1 / (1 + np.exp(-I("S3"))))], warns=["sig2"]),
    "step_near": dict(both=[
        kept("sm0", "cs0", "floor0", "exp3", "gt3", "sm4", "argmax4"),
        removed("exp1", "floor1", "floor2"),
        folded_input("add1", 1, lambda I: np.floor(np.exp(I("E").astype(np.float64)))
                     .astype(np.float32)),
        folded_input("add2", 1, lambda I: np.floor(I("ONE")))],
        warns=["floor0", "sm0", "cs0", "gt3", "exp3", "argmax4", "sm4"]),
    "int_pow": dict(both=[
        removed("pow0", "pow1", "pow2"), kept("pow3", "pow4"),
        folded_input("add0", 1, lambda I: _pow_as_ort(I("B0"), I("E0"), np.int64)),
        folded_input("add1", 1, lambda I: _pow_as_ort(I("B1"), I("E1"), I32)),
        folded_input("add2", 1, lambda I: _pow_as_ort(I("B2"), I("E2"), np.int64))],
        warns=["pow3", "pow4"]),
    "int_undefined": dict(both=[kept("div0", "mod1")], warns=["div0", "mod1"],
                          no_numbers="onnxruntime dies of SIGFPE on the minimum divided by -1"),
    "int_fmod_wrap": dict(both=[
        removed("mod0", "abs1", "neg2", "sum3"),
        folded_input("add0", 1, lambda I: np.array([1, 0, -1], np.int64)),
        folded_input("add1", 1, lambda I: np.array([INT32_MIN, 5], I32)),
        folded_input("add2", 1, lambda I: np.array([INT32_MIN, 5], I32)),
        folded_input("add3", 1, lambda I: np.array([INT32_MIN], I32))]),
    "cast_range": dict(both=[
        removed("cast0", "cast1"), kept("cast2", "cast3", "cast4"),
        folded_input("add0", 1, lambda I: np.array([2, -2, 1000000000], I32)),
        output_param("c1", lambda I: np.array([255, 0], np.uint8))],
        warns=["cast2", "cast3", "cast4"]),
    "int_arith": dict(both=[
        op_count("Add", 1), kept("add0"), folded_input("add0", 1, _int_arith)]),
    "mask": dict(both=[
        removed("range0", "unsq0", "less0", "not0", "where0", "cos0", "trilu0"),
        kept("add0", "mul1"), folded_input("add0", 1, _mask),
        folded_input("mul1", 1, lambda I: np.tril(np.full((4, 4), 2.0, np.float32)))]),
    # beta 0: C is not read; it holds inf/NaN, which 0 * C would make NaN
    "gemm_beta0_inf": dict(both=[
        op_count("Gemm", 0), kept("add0"),
        folded_input("add0", 1, lambda I: (1.5 * I("GA").astype(np.float64)
                                           @ I("GB").astype(np.float64)).astype(np.float32))]),
    "reduce_matmul": dict(both=[
        op_count("Add", 1), op_count("MatMul", 0), kept("add0"),
        folded_input("add0", 1, _reduce_matmul)]),
    "nn_opset10": _nn_spec(_NN10, ["Softmax", "LogSoftmax", "Clip", "Pad", "ArgMax",
                                         "Gemm", "EyeLike", "OneHot"]),
    "conv": _nn_spec(_CONV, ["Conv", "ConvTranspose"]),
    "nn_opset13": _nn_spec(_NN13, ["Softmax", "LogSoftmax", "Clip", "Pad", "GatherND",
                                         "OneHot", "ArgMin"]),
    "split_gather": dict(both=[
        op_count("Add", 1), kept("add0"), folded_input("add0", 1, _split_gather)]),
    "in_if": dict(both=[
        removed("then_tr", "else_neg"), kept("if0", "then_mul", "else_add"),
        folded_input("then_mul", 1, lambda I: I("W").T),
        folded_input("else_add", 1, lambda I: -I("K"))]),
    "kept": dict(both=[kept("expand0", "dq0", "rnd0", "div0", "tr0")],
                      warns=["expand0", "div0"], no_numbers="RandomNormal differs from run to run"),
    "static_shape": dict(both=[
        removed("shape0", "gather0", "unsq0", "concat0", "size0", "cast0", "zshape_tail", "zconcat"),
        kept("reshape0", "mul0", "reshape1", "zshape_all"),
        folded_input("reshape0", 1, lambda I: np.array([-1, 4], np.int64)),
        folded_input("mul0", 1, lambda I: np.float32(2 * 3 * 4)),
        folded_input("reshape1", 1, lambda I: np.array([-1, 3], np.int64))]),
    "partial_shape": dict(both=[
        removed("gather1", "unsq1", "slice0", "cast0"),
        kept("shape0", "gather0", "unsq0", "concat0", "reshape0", "mul0"),
        folded_input("concat0", 1, lambda I: np.array([3], np.int64)),
        folded_input("mul0", 1, lambda I: np.array([3.0], np.float32))]),
    "transpose_tiled": dict(both=[
        removed("tr0", "tr1"), kept("add0", "add1"),
        folded_input("add0", 1, lambda I: I("W").transpose(2, 0, 1)),
        folded_input("add1", 1, lambda I: I("H").transpose(1, 2, 0))]),
    "large": dict(both=[
        removed("tr0", "cast0", "cast1"), kept("matmul0"),
        folded_input("matmul0", 1, lambda I: I("W").T.astype(np.float16).astype(np.float32))]),
    "if_then_scalar": dict(
        both=[NO_IF, removed("else_neg"), node_input("then_relu", 0, "X"),
              node_input("then_add", 1, "W"), node_output("then_add", 0, "r"),
              node_input("mul0", 0, "r"), vi_moved("t0"), vi_removed("then_out"), VI_DEFINED],
        reports=["inlined then branch 1 (if0)"]),
    "if_else_scalar": dict(
        both=[NO_IF, removed("then_relu", "then_add"), node_output("else_neg", 0, "r")],
        reports=["inlined else branch 1 (if0)"]),
    "if_cond_shape1": dict(
        both=[NO_IF, removed("a_else_neg", "b_then_relu", "b_then_add"),
              node_output("a_then_add", 0, "rt"), node_output("b_else_neg", 0, "rf")],
        reports=["inlined then branch 1 (ift)", "inlined else branch 1 (iff)"]),
    "if_in_loop": dict(
        both=[NO_IF, removed("else_neg"), node_in_graph("then_mul", "main/loop0.body"),
              node_input("then_mul", 0, "a"), node_input("then_mul", 1, "W"),
              node_output("then_mul", 0, "acc_out")],
        reports=["inlined then branch 1 (body_if)"]),
    "if_nested": dict(both=[
        op_count("If", 1), removed("else_neg"), node_in_graph("if1", "main"),
        node_output("if1", 0, "r"), node_input("inner_add", 0, "t0"),
        node_output("then_relu", 0, "t0")]),
    "if_name_clash": dict(both=[
        op_count("If", 1), node_output("relu0", 0, "a"), node_input("add0", 0, "a"),
        reads_renamed([("then_add", 0), ("inner_add", 0)], "a"), SSA, node_names_unique(),
        VI_DEFINED]),
    "if_nested_outer_output": dict(
        both=[op_count("If", 1), node_output("relu0", 0, "a"),
              subgraph_output("if1", "then_branch", 0, "then_relu"),
              reads_renamed([("inner_neg", 0)], "a"), SSA],
        no_numbers="onnxruntime refuses a subgraph returning an outer value directly"),
    "if_sequence_clash": dict(both=[
        NO_IF, reads_renamed([("loop0", 2)], "t"), node_output("n0", 0, "t"),
        node_output("n1", 0, "u"), reads_renamed([("a1", 0)], "z"), node_input("a1", 1, "u"),
        node_output("a1", 0, "Y"), SSA, node_names_unique()]),
    "if_graph_output": dict(both=[
        NO_IF, no_op("Identity"), removed("else_neg"), node_output("then_add", 0, "Y")]),
    # onnxruntime refuses the input (its then branch returns X itself)
    "if_outer_output": dict(
        both=[NO_IF, node_input("relu_r", 0, "X"), written_by_identity("Z", "X")],
        reference=lambda f: {"Y": _relu(_f64(f, "X")), "Z": _f64(f, "X")}),
    # Z = Identity(K2) folds into an initializer on fold's next run
    "if_init_output": dict(both=[
        NO_IF, folded_input("add_k", 1, lambda I: I("K")), output_param("Z", lambda I: I("K2"))]),
    "if_multi_output": dict(
        both=[NO_IF, node_output("then_neg", 0, "r1"), node_input("add0", 1, "r1")],
        single=[node_output("then_relu", 0, "r0"), node_input("add0", 0, "r0"),
                node_input("mul0", 1, "r0"), written_by_identity("Z", "r0")],
        default=[no_op("Identity"), node_output("then_relu", 0, "Z"), node_input("add0", 0, "Z"),
                 node_input("mul0", 1, "Z")]),
    "if_dynamic_cond": dict(both=[
        op_count("If", 2), kept("if0", "if1", "then_relu", "then_add", "else_neg", "k_then_relu",
                                "k_then_add", "k_else_neg"),
        node_input("if0", 0, "cond"), node_input("if1", 0, "c1")]),
    # inference cannot tell r's dims while the If stands (its branches
    # disagree): shape0 folds only once the branch took its place
    "if_shape_folds": dict(both=[
        NO_IF, no_op("Shape"), node_output("then_relu", 0, "r"),
        folded_input("reshape0", 1, lambda I: np.array([2, 3], np.int64))]),
}
