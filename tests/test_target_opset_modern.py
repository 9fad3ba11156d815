#!/usr/bin/env python3
"""--target-opset across the opset 18 to 26 boundaries (formatter/upgrade_modern.c and Split-18 in
upgrade_late.c), judged by the pinned onnx 1.23.2 and onnxruntime 1.31.1 of .deps/venv (run with
.deps/venv/bin/python; Debian's onnx 1.13 of tests/test_target_opset.py knows no opset past 17).

Each case is a small model at the last opset before a change, built here with onnx.helper. For
each: `--passes=none --target-opset=N` exits 0 and writes default-domain opset N with at least the
IR version of N's onnx release, the output passes onnx.checker.check_model(full_check=True), the
adapted node is checked against the INPUT node (which attribute became which input, with which
values; GroupNormalization-18's per-group factors repeated per channel, against numpy),
and onnxruntime gives the same outputs on original and output (random inputs); then the
same with the default passes. Models that cannot be adapted give exit 2, one `ppqfmt:` line naming
the operator and no output file; a target above 26 is a usage error (exit 1).
Last line: `test_target_opset_modern: N passed, M failed`.
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
NEWEST = 26  # the newest opset onnxruntime 1.31.1 runs (onnx 1.23.2 defines 28)

T = testlib.Tally("test_target_opset_modern")
check = T.check

fvi = testlib.tensor_vi
attr = testlib.node_attr
by_name = testlib.node_named
same_outputs = testlib.ort_same_outputs


def init_value(model, name):
    for t in model.graph.initializer:
        if t.name == name:
            return numpy_helper.to_array(t)
    raise AssertionError("input %s is no initializer" % name)


# --- the cases: (label, model, target, structure check(inp, out) -> None or why) ---

REDUCES = [("ReduceMean", [1], 0), ("ReduceMax", None, 1), ("ReduceL2", [-1], 1),
           ("ReduceProd", [0, 2], 0), ("ReduceLogSumExp", [2], 1), ("ReduceMin", [0], 1),
           ("ReduceL1", [1, 2], 1), ("ReduceSumSquare", None, 0), ("ReduceLogSum", [0], 0)]


def reduce13():
    nodes, outs = [], []
    for i, (op, axes, keep) in enumerate(REDUCES):
        kw = {"keepdims": keep}
        if axes is not None:
            kw["axes"] = axes
        nodes.append(helper.make_node(op, ["xp" if op == "ReduceLogSum" else "x"], ["y%d" % i],
                                      "r%d" % i, **kw))
        marked = [d % 3 for d in (axes or range(3))]
        shape = [1 if a in marked else n for a, n in enumerate([2, 3, 4]) if keep or a not in marked]
        outs.append(fvi("y%d" % i, shape))
    nodes.insert(0, helper.make_node("Abs", ["x"], ["xp"], "abs"))
    return testlib.model_at(17, nodes, [fvi("x", [2, 3, 4])], outs)


def reduce_check(inp, out):
    for i, (op, axes, _) in enumerate(REDUCES):
        n = by_name(out, "r%d" % i)
        if attr(n, "axes") is not None:
            return "%s kept its axes attribute" % op
        if axes is None and len(n.input) != 1:
            return "%s without axes got an input %s" % (op, list(n.input))
        if axes is not None:
            got = init_value(out, n.input[1])
            if got.dtype != np.int64 or list(got) != axes:
                return "%s axes input %r %s, expected %r" % (op, list(got), got.dtype, axes)
        if attr(n, "keepdims") != attr(by_name(inp, "r%d" % i), "keepdims"):
            return "%s keepdims changed" % op
    return None


def split17_equal():
    return testlib.model_at(17, [helper.make_node("Split", ["x"], ["a", "b", "c"], "split", axis=1)],
                    [fvi("x", [2, 6])], [fvi("a", [2, 2]), fvi("b", [2, 2]), fvi("c", [2, 2])])


def split_equal_check(inp, out):
    n = by_name(out, "split")
    if attr(n, "num_outputs") != 3 or len(n.input) != 1:
        return "num_outputs %r, inputs %s" % (attr(n, "num_outputs"), list(n.input))
    return None


def split11_attr():
    m = helper.make_model(helper.make_graph(
        [helper.make_node("Split", ["x"], ["a", "b"], "split", axis=1, split=[2, 3])], "g",
        [fvi("x", [2, 5])], [fvi("a", [2, 2]), fvi("b", [2, 3])]),
        opset_imports=[helper.make_opsetid("", 11)])
    m.ir_version = 6
    return m


def split_attr_check(inp, out):
    n = by_name(out, "split")
    if attr(n, "split") is not None or attr(n, "num_outputs") is not None:
        return "split %r num_outputs %r" % (attr(n, "split"), attr(n, "num_outputs"))
    got = init_value(out, n.input[1])
    return None if list(got) == [2, 3] and got.dtype == np.int64 else "split input %r" % got


def grid_sample16():
    nodes = [helper.make_node("GridSample", ["x", "grid"], ["y%d" % i], "gs%d" % i, **kw)
             for i, kw in enumerate([{}, {"mode": "bilinear"}, {"mode": "bicubic"},
                                     {"mode": "nearest", "align_corners": 1}])]
    return testlib.model_at(16, nodes, [fvi("x", [1, 2, 4, 5]), fvi("grid", [1, 3, 3, 2])],
                    [fvi("y%d" % i, [1, 2, 3, 3]) for i in range(4)])


def grid_sample_check(inp, out):
    want = [None, b"linear", b"cubic", b"nearest"]
    got = [attr(by_name(out, "gs%d" % i), "mode") for i in range(4)]
    return None if got == want else "modes %r, expected %r" % (got, want)


def dft17():
    nodes = [helper.make_node("DFT", ["x"], ["y0"], "dft0"),
             helper.make_node("DFT", ["x", ""], ["y1"], "dft1", axis=2, inverse=1),
             helper.make_node("DFT", ["x", "len"], ["y2"], "dft2", axis=2, onesided=1)]
    length = numpy_helper.from_array(np.array(6, np.int64), "len")
    return testlib.model_at(17, nodes, [fvi("x", [2, 5, 6, 1])],
                    [fvi("y0", [2, 5, 6, 2]), fvi("y1", [2, 5, 6, 2]), fvi("y2", [2, 5, 4, 2])],
                    [length])


def dft_check(inp, out):
    for i, axis in enumerate([1, 2, 2]):
        n = by_name(out, "dft%d" % i)
        if attr(n, "axis") is not None or len(n.input) != 3:
            return "dft%d: axis attribute %r, inputs %s" % (i, attr(n, "axis"), list(n.input))
        old = by_name(inp, "dft%d" % i)
        if (n.input[1] or "") != (old.input[1] if len(old.input) > 1 else ""):
            return "dft%d: dft_length input %r" % (i, n.input[1])
        got = init_value(out, n.input[2])
        if got.shape != () or got.dtype != np.int64 or int(got) != axis:
            return "dft%d: axis input %r (%s)" % (i, got, got.dtype)
    return None


def plain13():
    w = numpy_helper.from_array(np.random.default_rng(1).normal(size=(4, 3, 3, 3))
                                .astype(np.float32), "w")
    return testlib.model_at(13, [helper.make_node("Conv", ["x", "w"], ["c"], "conv", pads=[1, 1, 1, 1]),
                         helper.make_node("Relu", ["c"], ["y"], "relu")],
                    [fvi("x", [1, 3, 5, 5])], [fvi("y", [1, 4, 5, 5])], [w])


CASES = [("reduce17", reduce13, 18, reduce_check),
         ("reduce17", reduce13, NEWEST, reduce_check),
         ("split17_equal", split17_equal, 18, split_equal_check),
         ("split17_equal", split17_equal, NEWEST, split_equal_check),
         ("split11_attr", split11_attr, NEWEST, split_attr_check),
         ("gridsample16", grid_sample16, 20, grid_sample_check),
         ("gridsample16", grid_sample16, NEWEST, grid_sample_check),
         ("dft17", dft17, 20, dft_check),
         ("dft17", dft17, NEWEST, dft_check),
         ("plain13", plain13, NEWEST, None)]


GN_SCALE, GN_BIAS = [0.5, -2.0, 3.0], [1.0, 0.25, -1.5]


def group_norm18_const():
    """Two GroupNormalization-18 over 6 channels in 3 groups, sharing their factors."""
    inits = [numpy_helper.from_array(np.array(GN_SCALE, np.float32), "s"),
             numpy_helper.from_array(np.array(GN_BIAS, np.float32), "b")]
    nodes = [helper.make_node("GroupNormalization", ["x", "s", "b"], ["h"], "gn0", num_groups=3),
             helper.make_node("GroupNormalization", ["h", "s", "b"], ["y"], "gn1", num_groups=3,
                              epsilon=1e-3)]
    return testlib.model_at(18, nodes, [fvi("x", [2, 6, 3, 2])], [fvi("y", [2, 6, 3, 2])], inits)


def group_norm_check(inp, out):
    for name in ("gn0", "gn1"):
        n = by_name(out, name)
        for slot, want in ((1, GN_SCALE), (2, GN_BIAS)):
            got = init_value(out, n.input[slot])
            exp = np.repeat(np.array(want, np.float32), 2)
            if got.shape != (6,) or not np.array_equal(got, exp):
                return "%s input %d: %r, expected %r" % (name, slot, got, exp)
    return None


def group_norm18_input():
    return testlib.model_at(18, [helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], "gn",
                                          num_groups=2)],
                    [fvi("x", [1, 4, 2, 2]), fvi("s", [2]), fvi("b", [2])],
                    [fvi("y", [1, 4, 2, 2])])


CASES += [("groupnorm18_const", group_norm18_const, 21, group_norm_check),
          ("groupnorm18_const", group_norm18_const, NEWEST, group_norm_check)]
CANNOT = [("groupnorm18_input", group_norm18_input, 21, "GroupNormalization")]


def run(args):
    return testlib.run_ppqfmt(PPQFMT, args)


def raised(label, build, target, chk, tmp):
    inp = build()
    label = "%s@%d" % (label, target)
    src, dst = (os.path.join(tmp, label + ext) for ext in (".in.onnx", ".onnx"))
    onnx.save(inp, src)
    out = testlib.check_raise_alone(check, PPQFMT, label, src, dst, target, testlib.IR_OF_OPSET[target])
    if out is None:
        return
    if chk:
        check("%s: adapted node" % label, chk, inp, out)
    check("%s: raise alone onnxruntime same outputs" % label, same_outputs, src, dst)
    testlib.check_default_passes(check, PPQFMT, label, src, os.path.join(tmp, label + ".full.onnx"),
                                 target, same_outputs)


def cannot(label, build, target, word, tmp):
    src, dst = (os.path.join(tmp, label + ext) for ext in (".in.onnx", ".onnx"))
    onnx.save(build(), src)
    testlib.check_refused(check, PPQFMT, "%s@%d" % (label, target), src, dst, target, word)


def above_newest(tmp):
    src, dst = os.path.join(tmp, "plain.onnx"), os.path.join(tmp, "plain.out.onnx")
    onnx.save(plain13(), src)
    rc, err = run(["--target-opset=%d" % (NEWEST + 1), src, "-o", dst])
    check("--target-opset=%d: usage error naming the range" % (NEWEST + 1), lambda: None if (
        rc == 1 and "7 to %d" % NEWEST in err and not os.path.exists(dst)) else
        "exit %d, %r" % (rc, err))


def main():
    if not os.access(PPQFMT, os.X_OK):
        T.report("setup", "ppqfmt not found at %s" % PPQFMT)
        return T.summary()
    with tempfile.TemporaryDirectory(prefix="target_opset_modern_") as tmp:
        for label, build, target, chk in CASES:
            raised(label, build, target, chk, tmp)
        for label, build, target, word in CANNOT:
            cannot(label, build, target, word, tmp)
        above_newest(tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
