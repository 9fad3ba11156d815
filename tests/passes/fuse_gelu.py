"""fuse-gelu: GELU forms to com.microsoft (Bias/Fast/Quick)Gelu (onnxruntime only)
(formatter/fuse_gelu.c).

Its test models (builders registered with @model; testdata/fuse_gelu/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import math
import numpy as np
from onnx import TensorProto as TP

from passes.build import (finish, finish_with, fvi, graph, if_node, Models, node, OPSET, rand,
                          raw_tensor, rng, scalar, vi)
from passes.common import (attr, made_by, no_op, op_count)

PASS = "fuse-gelu"

MODELS = Models("fuse_gelu", "fusegelu", output_types=True)
model = MODELS.model


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


def gelu_tanh(name, cube_mul=False, c1=math.sqrt(2.0 / math.pi), xshape=(2, 7)):
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
    return finish(graph(n, name, [fvi("X", list(xshape))], [fvi("Y", None)], inits=inits))


def quick_gelu(name, alpha=1.702):
    """CLIP's quick GELU: Y = X * Sigmoid(alpha * X)."""
    n = [node("Mul", ["alpha", "X"], ["u"], "scale0"), node("Sigmoid", ["u"], ["s"], "sig0"),
         node("Mul", ["X", "s"], ["Y"], "mul0")]
    return finish(graph(n, name, [fvi("X", [2, 7])], [fvi("Y", None)],
                        inits=[scalar("alpha", alpha)]))


def biased(m, bshape, xshape=(2, 3, 8), extra=False):
    """m's GELU of X made a GELU of x = Add(X, B) (B of bshape); X declared
    xshape; with extra, x is also read by Relu -> Z."""
    r = rng(m.graph.name)
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


@model("erf_torch")
def _(r):
    """torch: Div(X, 1.4142135), Erf, Add(1, e), Mul(X, a), Mul(t, 0.5).
    Expect with fuse-gelu: one com.microsoft Gelu(X) writing Y, the
    com.microsoft opset import added; by default: kept."""
    return gelu_erf("fusegelu_erf_torch", "a")


@model("erf_mul")
def _(r):
    """Mul(X, 0.70710677), Erf, Add, Mul(a, 0.5), Mul(t, X).
    Expect with fuse-gelu: Gelu(X)."""
    return gelu_erf("fusegelu_erf_mul", "b")


@model("erf_half_first")
def _(r):
    """Div(X, sqrt2), Erf, Add; Mul(0.5, X) then Mul(t, a).
    Expect with fuse-gelu: Gelu(X)."""
    return gelu_erf("fusegelu_erf_half_first", "c")


@model("tanh_scalar")
def _(r):
    """The GPT-2 tanh GELU of a scalar X (declared []). onnxruntime's FastGelu
    refuses an input of rank 0. Expect: kept, with a warning about tanh0."""
    return gelu_tanh("fusegelu_tanh_scalar", xshape=())


@model("tanh_unknown_rank")
def _(r):
    """The GPT-2 tanh GELU of X = Squeeze(X0 [a, b]) without axes: which dims
    are 1 is known only at run time, so X's rank is not known and could be 0;
    Z = ReduceSum of the GELU over all axes (a graph output needs a shape).
    Expect: kept, with a warning about tanh0."""
    m = gelu_tanh("fusegelu_tanh_unknown_rank")
    m.graph.node.insert(0, node("Squeeze", ["X0"], ["X"], "squeeze0"))
    m.graph.node.append(node("ReduceSum", ["Y"], ["Z"], "sum0", keepdims=0))
    m.graph.input[0].CopyFrom(fvi("X0", ["a", "b"]))
    m.graph.output[0].CopyFrom(fvi("Z", []))
    return m


@model("erf_wrong_constant")
def _(r):
    """Div(X, 1.5) instead of sqrt2. Expect: kept."""
    return gelu_erf("fusegelu_erf_wrong_constant", "a", div=1.5)


@model("erf_shared")
def _(r):
    """The Erf output is also read by Relu -> Z. Expect: kept."""
    return gelu_erf("fusegelu_erf_shared", "a", extra=True)


@model("untyped_input")
def _(r):
    """X -> Sin -> x (no declared type, and Sin's is not traced) -> the torch
    erf GELU of x. Expect with fuse-gelu: Gelu(x) (float32 told by the
    pattern's constant 1, which ONNX makes x's type)."""
    m = gelu_erf("fusegelu_untyped_input", "a")
    for n in m.graph.node:
        n.input[:] = ["x" if v == "X" else v for v in n.input]
    m.graph.node.insert(0, node("Sin", ["X"], ["x"], "sin0"))
    return m


@model("float16")
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


@model("tanh_gpt2")
def _(r):
    """GPT-2 tanh GELU with Pow(X, 3). Expect with fuse-gelu: one
    com.microsoft FastGelu(X) writing Y; by default: kept."""
    return gelu_tanh("fusegelu_tanh_gpt2")


@model("tanh_cube_mul")
def _(r):
    """Tanh GELU with X^3 as Mul(Mul(X, X), X). Expect with fuse-gelu:
    FastGelu(X)."""
    return gelu_tanh("fusegelu_tanh_cube_mul", cube_mul=True)


@model("tanh_wrong_constant")
def _(r):
    """Tanh GELU with 0.8 instead of sqrt(2/pi). Expect: kept."""
    return gelu_tanh("fusegelu_tanh_wrong_constant", c1=0.8)


@model("quick")
def _(r):
    """Mul(1.702, X), Sigmoid, Mul(X, s). Expect with fuse-gelu: one
    com.microsoft QuickGelu(X) with alpha 1.702 writing Y."""
    return quick_gelu("fusegelu_quick")


@model("quick_other_alpha")
def _(r):
    """X * Sigmoid(2 X): not the quick GELU constant. Expect: kept."""
    return quick_gelu("fusegelu_quick_other_alpha", alpha=2.0)


@model("bias_erf")
def _(r):
    """X [2,3,8] -> Add(X, B [8]) -> the torch erf GELU. Expect with
    fuse-gelu: one com.microsoft BiasGelu(X, B) writing Y."""
    return biased(gelu_erf("fusegelu_bias_erf", "a"), (8,))


@model("bias_tanh")
def _(r):
    """X [2,3,8] -> Add(X, B [8]) -> the GPT-2 tanh GELU. Expect with
    fuse-gelu: one com.microsoft FastGelu(X, B) writing Y."""
    return biased(gelu_tanh("fusegelu_bias_tanh"), (8,))


@model("bias_read_elsewhere")
def _(r):
    """Add(X, B [8]) output x also read by Relu -> Z. Expect with fuse-gelu:
    Gelu(x); the Add stays."""
    return biased(gelu_erf("fusegelu_bias_read_elsewhere", "a"), (8,), extra=True)


@model("bias_broadcast")
def _(r):
    """X [2,3,1] + B [8]: the bias widens X's last axis, which BiasGelu does
    not do. Expect with fuse-gelu: Gelu(x); the Add stays."""
    return biased(gelu_erf("fusegelu_bias_broadcast", "a"), (8,), xshape=(2, 3, 1))


@model("in_if")
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
        [("", OPSET), ("com.microsoft", 1)])


# ---------------------------------------------------------------------------
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

def gelu_op(value, x, op_type, bias=None, alpha=None):
    """value is written by com.microsoft op_type(x) (op_type(x, bias) with a
    bias; attribute alpha equal to the float32 of alpha when given);
    com.microsoft is imported once."""
    inputs = [x] + ([bias] if bias else [])

    def fn(inp, out):
        _, n = made_by(out, value)
        if (n.op_type, n.domain, list(n.input)) != (op_type, "com.microsoft", inputs):
            return "%s is written by %s.%s(%s)" % (value, n.domain, n.op_type, list(n.input))
        if alpha is not None and np.float32(attr(n, "alpha", 0.0)) != np.float32(alpha):
            return "alpha %r, expected %r" % (attr(n, "alpha"), alpha)
        imports = [o.version for o in out.opset_import if o.domain == "com.microsoft"]
        return None if imports == [1] else "com.microsoft imports: %s" % imports
    return ("%s = com.microsoft.%s(%s)" % (value, op_type, ", ".join(inputs)), fn)


MS = {"single": {"com.microsoft": 1}}  # fuse-gelu adds the domain's import


SPECS = {
    # -- fuse-gelu (off by default: the default run keeps the pattern) ---------
    "erf_torch": dict(default=[op_count("Erf", 1)], opsets=MS,
                               single=[no_op("Erf"), no_op("Mul"), gelu_op("Y", "X", "Gelu")]),
    "erf_mul": dict(default=[op_count("Erf", 1)], opsets=MS,
                             single=[no_op("Erf"), no_op("Mul"), gelu_op("Y", "X", "Gelu")]),
    "erf_half_first": dict(default=[op_count("Erf", 1)], opsets=MS,
                                    single=[no_op("Erf"), no_op("Mul"),
                                            gelu_op("Y", "X", "Gelu")]),
    "untyped_input": dict(default=[op_count("Erf", 1)], opsets=MS,
                                   single=[no_op("Erf"), gelu_op("Y", "x", "Gelu")]),
    "float16": dict(both=[op_count("Erf", 1), no_op("Gelu")], warns=["erf0"]),
    "erf_wrong_constant": dict(both=[op_count("Erf", 1), no_op("Gelu")]),
    "erf_shared": dict(both=[op_count("Erf", 1), no_op("Gelu")]),
    "tanh_gpt2": dict(default=[op_count("Tanh", 1)], opsets=MS,
                               single=[no_op("Tanh"), no_op("Pow"), no_op("Mul"),
                                       gelu_op("Y", "X", "FastGelu")]),
    "tanh_cube_mul": dict(default=[op_count("Tanh", 1)], opsets=MS,
                                   single=[no_op("Tanh"), no_op("Mul"),
                                           gelu_op("Y", "X", "FastGelu")]),
    "tanh_scalar": dict(both=[op_count("Tanh", 1), no_op("FastGelu")], warns=["tanh0"]),
    "tanh_unknown_rank": dict(both=[op_count("Tanh", 1), no_op("FastGelu")], warns=["tanh0"]),
    "tanh_wrong_constant": dict(both=[op_count("Tanh", 1), no_op("FastGelu")]),
    "quick": dict(default=[op_count("Sigmoid", 1)], opsets=MS,
                           single=[no_op("Sigmoid"), no_op("Mul"),
                                   gelu_op("Y", "X", "QuickGelu", alpha=1.702)]),
    "quick_other_alpha": dict(both=[op_count("Sigmoid", 1), no_op("QuickGelu")]),
    "bias_erf": dict(default=[op_count("Erf", 1)], opsets=MS,
                              single=[no_op("Erf"), no_op("Add"),
                                      gelu_op("Y", "X", "BiasGelu", bias="B")]),
    "bias_tanh": dict(default=[op_count("Tanh", 1)], opsets=MS,
                               single=[no_op("Tanh"), no_op("Add"),
                                       gelu_op("Y", "X", "FastGelu", bias="B")]),
    "bias_read_elsewhere": dict(default=[op_count("Erf", 1)], opsets=MS,
                                         single=[no_op("Erf"), op_count("Add", 1),
                                                 gelu_op("Y", "x", "Gelu")]),
    "bias_broadcast": dict(default=[op_count("Erf", 1)], opsets=MS,
                                    single=[no_op("Erf"), op_count("Add", 1),
                                            gelu_op("Y", "x", "Gelu")]),
    "in_if": dict(default=[op_count("Erf", 1)],
                           single=[no_op("Erf"), gelu_op("then_out", "X", "Gelu")]),
}
