"""fuse-layernorm: decomposed layer norm to LayerNormalization (opset >= 17)
(formatter/fuse_layernorm.c).

Its test models (builders registered with @model; testdata/fuse_layernorm/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP

from passes.build import (finish, fvi, graph, if_node, Models, node, rand, raw_tensor, rng, scalar,
                          vi)
from passes.common import (attr, close, find_scoped, made_by, no_op, node_param, NRM, op_count,
                           unchanged)

PASS = "fuse-layernorm"

MODELS = Models("fuse_layernorm", "fuseln", output_types=True)
model = MODELS.model


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
    r = rng(name)
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
    r = rng(name)
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


@model("tf_keras")
def _(r):
    """TensorFlow's form with gamma [8] and beta [8], eps 1e-3, the variance
    of Mul(d, d). Expect: one LayerNormalization(X, G, Bt), axis -1, epsilon
    1e-3, writing Y; no ReduceMean left."""
    return ln_tf_model("fuseln_tf_keras", (2, 5, 8), (8,), (8,))


@model("tf_no_affine")
def _(r):
    """TensorFlow's form without gamma and beta (Neg(mean * a)), the variance
    of Pow(d, 2); X [3,6]. Expect: LayerNormalization(X, ones [6])."""
    return ln_tf_model("fuseln_tf_no_affine", (3, 6), square_pow=True)


@model("tf_shared_scale")
def _(r):
    """TensorFlow's form whose a = Reciprocal(..) * G is also a graph output.
    Expect: kept."""
    m = ln_tf_model("fuseln_tf_shared_scale", (2, 5, 8), (8,), (8,))
    m.graph.output.append(fvi("ag", None))
    return m


@model("torch")
def _(r):
    """torch LayerNorm(8) at opset 17: ReduceMean(-1), Sub, Pow 2,
    ReduceMean, Add(1e-5), Sqrt, Div, Mul(G [8]), Add(Bt [8]).
    Expect: one LayerNormalization(X, G, Bt), axis -1, epsilon 1e-5,
    writing Y; no ReduceMean left."""
    return ln_model("fuseln_torch", (2, 5, 8), [-1], (8,), (8,))


@model("reciprocal")
def _(r):
    """Mul by Reciprocal(Sqrt), Mul(G, n) and Add(Bt, g) (constants first),
    epsilon 1e-6. Expect: LayerNormalization(X, G, Bt), axis -1, eps 1e-6."""
    return ln_model("fuseln_reciprocal", (3, 6), [-1], (6,), (6,), eps=1e-6,
                    reciprocal=True, swap=True)


@model("two_subs")
def _(r):
    """Two Subs of (X, mean) (one for the variance, one for the division),
    the square as Mul(d, d). Expect: LayerNormalization(X, G, Bt)."""
    return ln_model("fuseln_two_subs", (2, 4, 6), [-1], (6,), (6,), two_subs=True,
                    square_mul=True)


@model("no_affine")
def _(r):
    """No gamma, no beta; X declared [2,4,6]. Expect: LayerNormalization
    whose Scale is ones [6] and no B."""
    return ln_model("fuseln_no_affine", (2, 4, 6), [-1])


@model("two_axes")
def _(r):
    """Axes [-2,-1] of X [2,3,4]; gamma [4] (broadcast over axis -2), beta
    [3,4]. Expect: LayerNormalization axis -2, Scale = gamma broadcast to
    [3,4], B = Bt."""
    return ln_model("fuseln_two_axes", (2, 3, 4), [-2, -1], (4,), (3, 4))


@model("positive_axes")
def _(r):
    """Axes [2] of X [2,3,4] (declared rank 3). Expect: LayerNormalization
    axis -1."""
    return ln_model("fuseln_positive_axes", (2, 3, 4), [2], (4,), (4,))


@model("undeclared_gamma")
def _(r):
    """X [2,5,8] -> Relu -> h (no declared shape: the normalized size is not
    known from h) -> the pattern over h with gamma [8], beta [8].
    Expect: LayerNormalization(h, G, Bt) (the size from gamma)."""
    m = ln_model("fuseln_undeclared_gamma", (2, 5, 8), [-1], (8,), (8,), x="h")
    m.graph.node.insert(0, node("Relu", ["X"], ["h"], "relu0"))
    return m


@model("symbolic_no_gamma")
def _(r):
    """X ['B','T','C'] and no gamma: the size of the ones to write is
    unknown. Expect: kept, with a warning."""
    return ln_model("fuseln_symbolic_no_gamma", ("B", "T", "C"), [-1])


@model("symbolic_gamma_broadcasts")
def _(r):
    """X [3, 'C'] with gamma and beta [2]: C may be 1 at run time, and the Mul by gamma
    broadcasts it to 2, where a LayerNormalization over C would compute another thing
    (random-model seed 37205928). Expect: kept, with a warning."""
    return ln_model("fuseln_symbolic_gamma_broadcasts", (3, "C"), [-1], gshape=(2,), bshape=(2,))


@model("float16")
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


@model("not_trailing")
def _(r):
    """Axes [1] of X [2,3,4]: not the trailing axes. Expect: kept."""
    return ln_model("fuseln_not_trailing", (2, 3, 4), [1], (3, 1), (3, 1))


@model("opset13")
def _(r):
    """The torch pattern at opset 13 (no LayerNormalization there).
    Expect: kept."""
    return ln_model("fuseln_opset13", (2, 5, 8), [-1], (8,), (8,), opset=13)


@model("shared_variance")
def _(r):
    """The variance v is also a graph output. Expect: kept."""
    m = ln_model("fuseln_shared_variance", (2, 5, 8), [-1], (8,), (8,))
    m.graph.output.append(fvi("v", None))
    return m


@model("in_if")
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
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

def layernorm(mean, out_value, k, gamma=None, beta=None, nd=None):
    """The pattern from ReduceMean `mean` became one LayerNormalization
    writing out_value: reads mean's input, axis -k, epsilon the value of the
    Add's constant (the pattern's `add` node, sharing mean's name prefix),
    Scale = gamma broadcast to the normalized dims nd (ones without gamma),
    B = beta broadcast (absent without beta), both of x's type."""
    def fn(inp, out):
        chain, mn = find_scoped(inp, mean)
        prefix = mean[:-len("mean")]
        achain, an = find_scoped(inp, prefix + "add")
        eps = node_param(achain, an, 1).reshape(-1)[0]
        ochain, ln = made_by(out, out_value)
        errs = []
        if ln.op_type != "LayerNormalization" or ln.input[0] != mn.input[0]:
            return "%s is written by %s(%s)" % (out_value, ln.op_type, list(ln.input))
        if attr(ln, "axis", -1) != -k:
            errs.append("axis %s, expected %d" % (attr(ln, "axis", -1), -k))
        if np.float32(attr(ln, "epsilon", 1e-5)) != np.float32(eps):
            errs.append("epsilon %r, expected %r" % (attr(ln, "epsilon", 1e-5), eps))
        for idx, src in ((1, gamma), (2, beta)):
            if src is None and idx == 2:
                if len(ln.input) > 2 and ln.input[2]:
                    errs.append("has a B input, expected none")
                continue
            if src is None:
                exp, dt = np.ones(nd), np.float32
            else:
                _, sn = find_scoped(inp, src[0])
                sv = node_param(chain, sn, src[1])
                exp, dt = np.broadcast_to(sv.astype(np.float64), nd), sv.dtype
            got = node_param(ochain, ln, idx)
            if got.dtype != dt:
                errs.append("input %d dtype %s, expected %s" % (idx, got.dtype, dt))
            err = close("input %d" % idx, got.astype(np.float64), np.asarray(exp), dt)
            if err:
                errs.append(err)
        return "; ".join(errs) or None
    return ("LayerNormalization from %s" % mean, fn)


LN1 = op_count("LayerNormalization", 1)


SPECS = {
    # -- fuse-layernorm --------------------------------------------------------
    "torch": dict(both=[NRM, LN1, op_count("Div", 0),
                               layernorm("mean", "Y", 1, ("gamma", 1), ("beta", 1), (8,))]),
    "reciprocal": dict(both=[NRM, LN1, no_op("Reciprocal"),
                                    layernorm("mean", "Y", 1, ("gamma", 0), ("beta", 0), (6,))]),
    "two_subs": dict(both=[NRM, LN1, no_op("Sub"),
                                  layernorm("mean", "Y", 1, ("gamma", 1), ("beta", 1), (6,))]),
    "no_affine": dict(both=[NRM, LN1, layernorm("mean", "Y", 1, nd=(6,))]),
    "two_axes": dict(both=[NRM, LN1, layernorm("mean", "Y", 2, ("gamma", 1), ("beta", 1),
                                                      (3, 4))]),
    "positive_axes": dict(both=[NRM, LN1, layernorm("mean", "Y", 1, ("gamma", 1),
                                                           ("beta", 1), (4,))]),
    "undeclared_gamma": dict(both=[NRM, LN1, layernorm("mean", "Y", 1, ("gamma", 1),
                                                              ("beta", 1), (8,))]),
    "symbolic_no_gamma": dict(both=[op_count("ReduceMean", 2), no_op("LayerNormalization")],
                                     warns=["mean"]),
    "symbolic_gamma_broadcasts": dict(both=[op_count("ReduceMean", 2),
                                            no_op("LayerNormalization")], warns=["mean"]),
    "float16": dict(both=[NRM, LN1, layernorm("mean", "Y", 1, ("gamma", 1), ("beta", 1),
                                                     (8,))]),
    "not_trailing": dict(both=[op_count("ReduceMean", 2), no_op("LayerNormalization")]),
    "opset13": dict(both=[op_count("ReduceMean", 2), no_op("LayerNormalization")]),
    "shared_variance": dict(both=[op_count("ReduceMean", 2),
                                         no_op("LayerNormalization")]),
    "tf_keras": dict(both=[NRM, LN1, no_op("Reciprocal"), no_op("Sub"),
                                  layernorm("mean", "Y", 1, ("gamma", 1), ("shift", 0), (8,))]),
    "tf_no_affine": dict(both=[NRM, LN1, no_op("Neg"), layernorm("mean", "Y", 1, nd=(6,))]),
    "tf_shared_scale": dict(both=[op_count("ReduceMean", 2),
                                         no_op("LayerNormalization")]),
    "in_if": dict(both=[NRM, LN1, layernorm("t_mean", "then_out", 1, ("t_gamma", 1),
                                                   ("t_beta", 1), (8,)),
                               unchanged("else_relu")]),
}
