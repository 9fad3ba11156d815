#!/usr/bin/env python3
"""--target-opset below the model's opset (formatter/downgrade.c), judged by the pinned onnx
1.23.2 and onnxruntime 1.31.1 of .deps/venv (run with .deps/venv/bin/python).

Each case is a small model built here with onnx.helper at a high opset. For each:
`--passes=none --target-opset=N` exits 0 and writes default-domain opset N, the output passes
onnx.checker.check_model(full_check=True) (which judges every node by its opset-N schema), the
lowered node is checked against the INPUT node (which constant input became which attribute, with
which values; Split-18's num_outputs as the equal sizes computed here), and onnxruntime gives the
same outputs on original and output (random inputs); at targets up to 17 Debian's onnx 1.12
(/usr/bin/python3) checks the output too when its IR version (kept from the input) is at most 8; then the same with the default passes.
Models without an exact old form give exit 2, one `ppqfmt:` line naming the node, and no output
file. Last line: `test_lower_opset: N passed, M failed`.
"""
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import testlib  # tests/, beside this file


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))

T = testlib.Tally("test_lower_opset")
check = T.check

fvi = testlib.tensor_vi
attr = testlib.node_attr
by_name = testlib.node_named
same_outputs = testlib.ort_same_outputs


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def input_value(model, node, slot):
    name = node.input[slot]
    return [int(v) for v in numpy_helper.to_array(
        next(t for t in model.graph.initializer if t.name == name))]


# --- cases: (label, build, target, check(inp, out) -> None or why) ---

REDUCES = [("ReduceMean", [1], 0), ("ReduceMax", None, 1), ("ReduceL2", [-1], 1),
           ("ReduceProd", [0, 2], 0), ("ReduceLogSumExp", [2], 1), ("ReduceMin", [0], 1),
           ("ReduceL1", [1, 2], 1), ("ReduceSumSquare", None, 0), ("ReduceLogSum", [0], 0)]


def reduce18():
    nodes, outs, inits = [], [], []
    for i, (op, axes, keep) in enumerate(REDUCES):
        ins = ["x"]
        if axes is not None:
            inits.append(ints("axes%d" % i, axes))
            ins.append("axes%d" % i)
        nodes.append(helper.make_node(op, ins, ["y%d" % i], "r%d" % i, keepdims=keep))
        shape = list(np.zeros((2, 3, 4)).sum(axis=None if axes is None else tuple(axes),
                                              keepdims=bool(keep)).shape)
        outs.append(fvi("y%d" % i, shape))
    return testlib.model_at(18, nodes, [fvi("x", [2, 3, 4])], outs, inits)


def axes_moved(inp, out):
    """Every node with an axes input in inp has exactly those axes as an attribute in out."""
    for n in inp.graph.node:
        o = by_name(out, n.name)
        want = input_value(inp, n, 1) if len(n.input) > 1 and n.input[1] else None
        got = attr(o, "axes")
        got = list(got) if got is not None else None
        if got != want or len(o.input) != 1:
            return "%s: axes %r inputs %r, expected axes %r" % (n.name, got, list(o.input), want)
    return None


def axes13():
    inits = [ints("a0", [1]), ints("a1", [0, 3]), ints("a2", [0, 2])]
    nodes = [helper.make_node("ReduceSum", ["x", "a0"], ["s"], "sum", keepdims=1),
             helper.make_node("Unsqueeze", ["s", "a1"], ["u"], "unsq"),
             helper.make_node("Squeeze", ["u", "a2"], ["y"], "sq")]
    return testlib.model_at(13, nodes, [fvi("x", [2, 3, 4])], [fvi("y", [2, 1, 4])], inits)


def split18(opset=18):
    def build():
        nodes = [helper.make_node("Split", ["x"], ["a", "b", "c"], "split", axis=1,
                                  num_outputs=3)]
        outs = [fvi(n, [2, 2]) for n in "abc"]
        return testlib.model_at(opset, nodes, [fvi("x", [2, 6])], outs)
    return build


def split_sizes(out):
    n = by_name(out, "split")
    if len(n.input) > 1 and n.input[1]:
        return input_value(out, n, 1)
    return list(attr(n, "split") or [])


def split_equal(inp, out):
    got = split_sizes(out)
    n = by_name(out, "split")
    return None if got == [2, 2, 2] and attr(n, "num_outputs") is None else \
        "split sizes %r, attrs %r" % (got, [a.name for a in n.attribute])


def split13():
    nodes = [helper.make_node("Split", ["x", "sz"], ["a", "b"], "split", axis=0)]
    return testlib.model_at(13, nodes, [fvi("x", [5, 2])], [fvi("a", [2, 2]), fvi("b", [3, 2])],
                    [ints("sz", [2, 3])])


def split_attr(inp, out):
    n = by_name(out, "split")
    return None if list(attr(n, "split") or []) == [2, 3] and len(n.input) == 1 else \
        "split %r inputs %r" % (attr(n, "split"), list(n.input))


def pad_resize(opset):
    def build():
        inits = [ints("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
                 numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
        nodes = [helper.make_node("Pad", ["x", "pads"], ["p"], "pad", mode="reflect"),
                 helper.make_node("Resize", ["p", "", "scales"], ["y"], "resize", mode="linear")]
        return testlib.model_at(opset, nodes, [fvi("x", [1, 2, 3, 3])], [fvi("y", [1, 2, 10, 10])],
                        inits)
    return build


def unchanged_nodes(inp, out):
    """The same node types, inputs and attributes as the input (nothing needed adapting)."""
    for n in inp.graph.node:
        o = by_name(out, n.name)
        if (o.op_type, list(o.input), sorted(a.name for a in o.attribute)) != \
                (n.op_type, list(n.input), sorted(a.name for a in n.attribute)):
            return "%s changed: %s" % (n.name, o)
    return None


def scatter18():
    inits = [ints("idx", [[0], [2]]), ints("eidx", [[1, 0, 2]])]
    nodes = [helper.make_node("ScatterND", ["x", "idx", "u"], ["s"], "snd", reduction="add"),
             helper.make_node("ScatterElements", ["s", "eidx", "v"], ["y"], "sel", axis=0,
                              reduction="mul"),
             helper.make_node("ScatterND", ["y", "idx", "u"], ["z"], "snone", reduction="none")]
    return testlib.model_at(18, nodes, [fvi("x", [4, 3]), fvi("u", [2, 3]), fvi("v", [1, 3])],
                    [fvi("z", [4, 3])], inits)


def scatter_reductions_kept(inp, out):
    for name, want in (("snd", b"add"), ("sel", b"mul"), ("snone", b"none")):
        got = attr(by_name(out, name), "reduction")
        if got != want:
            return "%s reduction %r" % (name, got)
    return None


def scatter18_none():
    nodes = [helper.make_node("ScatterND", ["x", "idx", "u"], ["y"], "snone", reduction="none")]
    return testlib.model_at(18, nodes, [fvi("x", [4, 3]), fvi("u", [2, 3])], [fvi("y", [4, 3])],
                    [ints("idx", [[0], [2]])])


def scatter_reduction_dropped(inp, out):
    got = attr(by_name(out, "snone"), "reduction")
    return None if got is None else "snone keeps reduction %r below opset 16" % got


def plain21():
    """Operators that only gained types (or optional attributes this model leaves out)
    since opset 13: they stay as they are."""
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32) * 0.1, "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], "conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], "relu"),
             helper.make_node("Cast", ["r"], ["h"], "cast", to=TensorProto.FLOAT16),
             helper.make_node("Cast", ["h"], ["f"], "cast2", to=TensorProto.FLOAT),
             helper.make_node("Flatten", ["f"], ["fl"], "flatten", axis=1),
             helper.make_node("Add", ["fl", "fl"], ["y"], "add")]
    return testlib.model_at(21, nodes, [fvi("x", [1, 3, 4, 4])], [fvi("y", [1, 64])], [w])


def sum_broadcast(shape_b, opset=13):
    """Sum broadcasts from opset 8: below, only inputs of one known shape."""
    def build():
        return testlib.model_at(opset, [helper.make_node("Sum", ["a", "b"], ["y"], "vsum")],
                                [fvi("a", [2, 3]), fvi("b", shape_b)], [fvi("y", [2, 3])])
    return build


def reduce_in_if():
    """A ReduceMean-18 inside an If branch: subgraphs are lowered too."""
    def branch(name, axis):
        return helper.make_graph(
            [helper.make_node("ReduceMean", ["x", name], ["o_" + name], "r_" + name, keepdims=0)],
            "b_" + name, [], [fvi("o_" + name, [3])], initializer=[ints(name, [axis])])
    nodes = [helper.make_node("If", ["c"], ["y"], "if", then_branch=branch("ta", 0),
                              else_branch=branch("ea", 0))]
    return testlib.model_at(18, nodes, [fvi("c", [], TensorProto.BOOL), fvi("x", [3, 3])],
                    [fvi("y", [3])])


def if_axes(inp, out):
    n = by_name(out, "if")
    for a in n.attribute:
        r = a.g.node[0]
        if list(attr(r, "axes") or []) != [0] or len(r.input) != 1:
            return "%s: %s" % (a.name, r)
    return None


CASES = [("reduce18", reduce18, 17, axes_moved), ("reduce18", reduce18, 13, axes_moved),
         ("axes13", axes13, 12, axes_moved), ("axes13", axes13, 11, axes_moved),
         ("split18", split18(18), 17, split_equal), ("split18", split18(18), 11, split_equal),
         ("split13", split13, 12, split_attr),
         ("pad_resize19", pad_resize(19), 17, unchanged_nodes),
         ("pad_resize19", pad_resize(19), 13, unchanged_nodes),
         ("scatter18", scatter18, 16, scatter_reductions_kept),
         ("scatter18_none", scatter18_none, 13, scatter_reduction_dropped),
         ("plain21", plain21, 13, unchanged_nodes),
         ("reduce_in_if", reduce_in_if, 17, if_axes),
         ("sum8_same_shape", sum_broadcast([2, 3]), 7, unchanged_nodes)]


# --- refusals: (label, build, target, word the message must hold) ---

def reduce_max20_bool():
    return testlib.model_at(20, [helper.make_node("ReduceMax", ["x"], ["y"], "rmax", keepdims=0)],
                    [fvi("x", [2, 3], TensorProto.BOOL)], [fvi("y", [], TensorProto.BOOL)])


def group_norm21():
    inits = [numpy_helper.from_array(np.ones(4, np.float32), n) for n in ("s", "b")]
    return testlib.model_at(21, [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], "gn",
                                          num_groups=2)],
                    [fvi("x", [1, 4, 2, 2])], [fvi("y", [1, 4, 2, 2])], inits)


def split18_uneven():
    return testlib.model_at(18, [helper.make_node("Split", ["x"], ["a", "b"], "usplit", axis=0,
                                          num_outputs=2)],
                    [fvi("x", [5])], [fvi("a", [3]), fvi("b", [2])])


def reduce18_fed_axes():
    return testlib.model_at(18, [helper.make_node("ReduceMean", ["x", "ax"], ["y"], "rfed")],
                    [fvi("x", [2, 3]), fvi("ax", [1], TensorProto.INT64)], [fvi("y", None)])


def bfloat16_13():
    return testlib.model_at(13, [helper.make_node("Cast", ["x"], ["y"], "tobf16", to=TensorProto.BFLOAT16)],
                    [fvi("x", [2])], [fvi("y", [2], TensorProto.BFLOAT16)])


def scatter18_max():
    return testlib.model_at(18, [helper.make_node("ScatterND", ["x", "i", "u"], ["y"], "smax",
                                          reduction="max")],
                    [fvi("x", [4]), fvi("u", [1])], [fvi("y", [4])], [ints("i", [[1]])])


def pad19_wrap():
    return testlib.model_at(19, [helper.make_node("Pad", ["x", "p"], ["y"], "wrap", mode="wrap")],
                    [fvi("x", [4])], [fvi("y", [6])], [ints("p", [1, 1])])


def gelu20():
    return testlib.model_at(20, [helper.make_node("Gelu", ["x"], ["y"], "gelu")], [fvi("x", [4])],
                    [fvi("y", [4])])


def space_to_depth28(mode):
    """SpaceToDepth-28 added `mode`: a node without it lowers as it is, one with it cannot
    (the opset-28 changes are in the signature table too, not only those up to 26)."""
    def build():
        kw = {"mode": mode} if mode else {}
        return testlib.model_at(28, [helper.make_node("SpaceToDepth", ["x"], ["y"], "s2d",
                                                      blocksize=2, **kw)],
                                [fvi("x", [1, 2, 4, 4])], [fvi("y", [1, 8, 2, 2])])
    return build


def reduce13_negative_axis():
    return testlib.model_at(13, [helper.make_node("ReduceMean", ["x"], ["y"], "rneg", axes=[-1])],
                    [fvi("x", [2, 3])], [fvi("y", [2, 1])])


CANNOT = [("reduce13_negative_axis", reduce13_negative_axis, 10, "rneg"),
          ("reducemax20_bool", reduce_max20_bool, 18, "rmax"),
          ("groupnorm21", group_norm21, 18, "'gn'"),
          ("split18_uneven", split18_uneven, 17, "usplit"),
          ("reduce18_fed_axes", reduce18_fed_axes, 17, "rfed"),
          ("bfloat16_13", bfloat16_13, 12, "tobf16"),
          ("scatter18_max", scatter18_max, 17, "smax"),
          ("pad19_wrap", pad19_wrap, 18, "'wrap'"),
          ("gelu20", gelu20, 19, "gelu"),
          ("space_to_depth28_mode", space_to_depth28("CRD"), 26, "s2d"),
          ("sum8_broadcast", sum_broadcast([3]), 7, "vsum")]


def above_runtime(tmp):
    """From opset 28 (onnxruntime 1.31.1 runs none above 26: no numbers here): a SpaceToDepth
    without the mode attribute -28 added lowers to 26 as it is."""
    inp = space_to_depth28(None)()
    src, dst = (os.path.join(tmp, "s2d28" + ext) for ext in (".in.onnx", ".onnx"))
    onnx.save(inp, src)
    out = testlib.check_raise_alone(check, PPQFMT, "space_to_depth28@26", src, dst, 26,
                                    inp.ir_version - 1)
    if out is not None:
        check("space_to_depth28@26: node kept", unchanged_nodes, inp, out)


DEBIAN_PYTHON = "/usr/bin/python3"  # Debian's onnx 1.12, which knows opsets up to 17


def debian_checker(path):
    import subprocess
    p = subprocess.run([DEBIAN_PYTHON, "-c", "import onnx, sys; "
                        "onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return None if p.returncode == 0 else p.stderr.decode("utf-8", "replace").strip()[-300:]


def lowered(label, build, target, chk, tmp):
    inp = build()
    label = "%s@%d" % (label, target)
    src, dst = (os.path.join(tmp, label + ext) for ext in (".in.onnx", ".onnx"))
    onnx.save(inp, src)
    out = testlib.check_raise_alone(check, PPQFMT, label, src, dst, target, inp.ir_version)
    if out is None:
        return
    check("%s: lowered nodes" % label, chk, inp, out)
    if target <= 17 and out.ir_version <= 8 and os.access(DEBIAN_PYTHON, os.X_OK):
        check("%s: Debian onnx full checker" % label, debian_checker, dst)
    check("%s: alone onnxruntime same outputs" % label, same_outputs, src, dst)
    testlib.check_default_passes(check, PPQFMT, label, src, os.path.join(tmp, label + ".full.onnx"),
                                 target, same_outputs)


def main():
    if not os.access(PPQFMT, os.X_OK):
        T.report("setup", "ppqfmt not found at %s" % PPQFMT)
        return T.summary()
    with tempfile.TemporaryDirectory(prefix="lower_opset_") as tmp:
        for label, build, target, chk in CASES:
            lowered(label, build, target, chk, tmp)
        for label, build, target, word in CANNOT:
            src, dst = (os.path.join(tmp, label + ext) for ext in (".in.onnx", ".onnx"))
            onnx.save(build(), src)
            testlib.check_refused(check, PPQFMT, "%s@%d" % (label, target), src, dst, target,
                                  word)
        above_runtime(tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
