"""fuse-pad: fold a zero (-inf for MaxPool) constant Pad into the Conv/pool reading it
(formatter/fuse_pad.c).

Its test models (builders registered with @model; testdata/fuse_pad/<case>.onnx)
and what each must look like after formatting (SPECS, run by tests/test_passes.py)."""
import numpy as np
from onnx import TensorProto as TP

import testlib
from passes.build import (finish, fvi, graph, i64, if_node, Models, node, rand, raw_tensor, rng,
                          scalar, vi)
from passes.common import (attr, find_scoped, node_param, NPAD, unchanged)

PASS = "fuse-pad"

MODELS = Models("fuse_pad", "fusepad", output_types=True)
model = MODELS.model


# ---------------------------------------------------------------------------
# fuse-pad: a constant Pad of spatial axes folds into Conv/AveragePool/MaxPool
# ---------------------------------------------------------------------------

def pad_model(name, consumer, pad_pads, value=None, mode=None, xshape=(1, 2, 6, 6),
              extra_outputs=(), **cattrs):
    """X -> Pad(pads, value) -> consumer (kernel 3x3) -> Y."""
    r = rng(name)
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


@model("conv")
def _(r):
    """Pad [0,0,1,2, 0,0,2,1] (no value input: 0) -> Conv pads [1,1,1,1].
    Expect: pad0 removed; op0 reads X with pads [2,3,3,2]."""
    return pad_model("fusepad_conv", "Conv", [0, 0, 1, 2, 0, 0, 2, 1], pads=[1, 1, 1, 1])


@model("conv_value")
def _(r):
    """Pad value 0.5 -> Conv. Expect: kept (Conv pads with 0)."""
    return pad_model("fusepad_conv_value", "Conv", [0, 0, 1, 1, 0, 0, 1, 1], value=0.5)


@model("conv_channels")
def _(r):
    """Pad on the channel axis [0,1,1,1, 0,0,1,1] -> Conv. Expect: kept."""
    return pad_model("fusepad_conv_channels", "Conv", [0, 1, 1, 1, 0, 0, 1, 1],
                     xshape=(1, 1, 6, 6))


@model("conv_negative")
def _(r):
    """Pad with a negative (cropping) pad [0,0,-1,1, 0,0,1,1] -> Conv.
    Expect: kept."""
    return pad_model("fusepad_conv_negative", "Conv", [0, 0, -1, 1, 0, 0, 1, 1])


@model("reflect")
def _(r):
    """Pad mode reflect -> Conv. Expect: kept."""
    return pad_model("fusepad_reflect", "Conv", [0, 0, 1, 1, 0, 0, 1, 1], mode="reflect")


@model("two_consumers")
def _(r):
    """Pad output p read by the Conv and by Relu -> Z. Expect: kept."""
    return pad_model("fusepad_two_consumers", "Conv", [0, 0, 1, 1, 0, 0, 1, 1],
                     extra_outputs=("Z",))


@model("avgpool_include")
def _(r):
    """Pad 0 -> AveragePool count_include_pad=1 pads [1,0,0,1].
    Expect: pad0 removed; op0 pads [2,1,1,2], count_include_pad 1."""
    return pad_model("fusepad_avgpool_include", "AveragePool", [0, 0, 1, 1, 0, 0, 1, 1],
                     value=0.0, pads=[1, 0, 0, 1], count_include_pad=1)


@model("avgpool_exclude")
def _(r):
    """Pad 0 -> AveragePool count_include_pad=0 without pads of its own.
    Expect: pad0 removed; op0 pads [1,2,2,1] and count_include_pad=1 (the
    Pad's zeros were counted as data)."""
    return pad_model("fusepad_avgpool_exclude", "AveragePool", [0, 0, 1, 2, 0, 0, 2, 1])


@model("avgpool_exclude_pads")
def _(r):
    """Pad 0 -> AveragePool count_include_pad=0 with pads [1,1,1,1] of its
    own (those must stay uncounted). Expect: kept."""
    return pad_model("fusepad_avgpool_exclude_pads", "AveragePool", [0, 0, 1, 1, 0, 0, 1, 1],
                     pads=[1, 1, 1, 1])


@model("avgpool_ceil")
def _(r):
    """Pad 0 -> AveragePool count_include_pad=1, ceil_mode=1, strides 2.
    Expect: kept."""
    return pad_model("fusepad_avgpool_ceil", "AveragePool", [0, 0, 1, 1, 0, 0, 1, 1],
                     count_include_pad=1, ceil_mode=1, strides=[2, 2])


@model("maxpool_zero")
def _(r):
    """Pad 0 -> MaxPool. Expect: kept (MaxPool's padding acts as -inf: a 0
    pad changes the maximum of windows of negative values)."""
    return pad_model("fusepad_maxpool_zero", "MaxPool", [0, 0, 1, 1, 0, 0, 1, 1])


@model("maxpool_neginf")
def _(r):
    """Pad -inf -> MaxPool pads [0,1,0,1]. Expect: pad0 removed; op0 pads
    [1,2,1,2]."""
    return pad_model("fusepad_maxpool_neginf", "MaxPool", [0, 0, 1, 1, 0, 0, 1, 1],
                     value=-np.inf, pads=[0, 1, 0, 1])


@model("attr_form")
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


@model("in_if")
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
# what each model must look like after formatting (see tests/test_passes.py)
# ---------------------------------------------------------------------------

def pad_pads(chain, pad):
    """The pads of Pad node `pad` (attribute or initializer input)."""
    p = attr(pad, "pads")
    return list(p) if p is not None else [int(v) for v in node_param(chain, pad, 1)]


def pad_folded(pad, consumer, include=False):
    """Pad `pad` is gone; `consumer` reads the Pad's input with its own pads
    plus the Pad's spatial pads (and count_include_pad=1 when include)."""
    def fn(inp, out):
        chain, pn = find_scoped(inp, pad)
        _, cn = find_scoped(inp, consumer)
        pp = pad_pads(chain, pn)
        rank = len(pp) // 2
        k = rank - 2
        own = list(attr(cn, "pads", [0] * 2 * k))
        exp = [own[i] + pp[2 + i] for i in range(k)] + [own[k + i] + pp[rank + 2 + i]
                                                          for i in range(k)]
        _, on = find_scoped(out, consumer)
        errs = []
        if on.input[0] != pn.input[0]:
            errs.append("%s reads %s, expected %s" % (consumer, on.input[0], pn.input[0]))
        if list(attr(on, "pads", [])) != exp:
            errs.append("%s pads %s, expected %s" % (consumer, list(attr(on, "pads", [])), exp))
        if include and attr(on, "count_include_pad", 0) != 1:
            errs.append("%s count_include_pad is not 1" % consumer)
        if any(n.name == pad for _, _, n in testlib.nodes(out)):
            errs.append("%s still there" % pad)
        return "; ".join(errs) or None
    return ("%s folded into %s" % (pad, consumer), fn)


SPECS = {
    # -- fuse-pad ------------------------------------------------------------
    "conv": dict(both=[NPAD, pad_folded("pad0", "op0")]),
    "conv_value": dict(both=[unchanged("pad0", "op0")], warns=["pad0"]),
    "conv_channels": dict(both=[unchanged("pad0", "op0")]),
    "conv_negative": dict(both=[unchanged("pad0", "op0")]),
    "reflect": dict(both=[unchanged("pad0", "op0")]),
    "two_consumers": dict(both=[unchanged("pad0", "op0", "relu0")]),
    "avgpool_include": dict(both=[NPAD, pad_folded("pad0", "op0", include=True)]),
    "avgpool_exclude": dict(both=[NPAD, pad_folded("pad0", "op0", include=True)]),
    "avgpool_exclude_pads": dict(both=[unchanged("pad0", "op0")], warns=["pad0"]),
    "avgpool_ceil": dict(both=[unchanged("pad0", "op0")], warns=["pad0"]),
    "maxpool_zero": dict(both=[unchanged("pad0", "op0")], warns=["pad0"]),
    "maxpool_neginf": dict(both=[NPAD, pad_folded("pad0", "op0")]),
    "attr_form": dict(both=[NPAD, pad_folded("pad0", "op0")],
                              opsets={"default": {"": 11}}),  # the pad pass raises it,
    "in_if": dict(both=[NPAD, pad_folded("then_pad", "then_conv"),
                                unchanged("else_conv")]),
}
