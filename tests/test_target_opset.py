#!/usr/bin/python3
"""--target-opset and the independence of the legacy-form passes, on testdata/opset/.

The models come from scripts/make_opset_testdata.py, one per adapted operator. For each case in
CASES ppqfmt runs twice on the model:
  - `--passes=none --target-opset=N`: the raise alone. Exit 0, default-domain opset N, IR version
    at least the one of N's onnx release, full checker, and the adapted node checked against the
    INPUT node's attributes (which attribute became which input, with which values and type);
  - `--target-opset=N` with the default passes: exit 0, full checker, and onnxruntime gives the
    same outputs for input and output on random inputs (scripts/ortcheck.py).
Models that cannot be adapted must give exit 2, one `ppqfmt:` line naming the operator, and no
output file. The legacy-pass cases (no --target-opset) check which opset the passes raise to and
whether a Clip-6 with clip off stays. Last line: `test_target_opset: N passed, M failed`.
Run with Debian's /usr/bin/python3 (python3-onnx).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

import testlib  # tests/, beside this file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.path.join(REPO, "testdata", "opset")
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))
# The IR version of the onnx release that introduced each opset (onnx.helper.VERSION_TABLE).
IR_OF_OPSET = {7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8, 17: 8}

T = testlib.Tally("test_target_opset")
report, check = T.report, T.check
ORT = testlib.ortcheck()


def run(args):
    p = subprocess.run([PPQFMT] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def default_opset(m):
    return next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def attr(n, name, default=None):
    for a in n.attribute:
        if a.name == name:
            return helper.get_attribute_value(a)
    return default


def sval(v):
    return v.decode() if isinstance(v, bytes) else v


def init(m, name):
    t = next((t for t in m.graph.initializer if t.name == name), None)
    return None if t is None else numpy_helper.to_array(t)


def node(m, op):
    found = [n for n in m.graph.node if n.op_type == op]
    if len(found) != 1:
        raise AssertionError("%d %s nodes, expected 1" % (len(found), op))
    return found[0]


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


# --- structure: the output node against the input node ---

def ints_to_input(op, attr_name):
    def chk(inp, out):
        old, new = node(inp, op), node(out, op)
        expect(attr(new, attr_name) is None, "%s attribute still there" % attr_name)
        want = attr(old, attr_name)
        if want is None:
            expect(len(new.input) == 1, "inputs %s, expected one" % list(new.input))
            return
        got = init(out, new.input[1]) if len(new.input) == 2 else None
        expect(got is not None and got.dtype == np.int64 and got.tolist() == list(want),
               "input 2 is %r, expected int64 %r" % (got, list(want)))
        for a in old.attribute:
            if a.name != attr_name:
                expect(attr(new, a.name) == attr(old, a.name), "attribute %s changed" % a.name)
    return chk


def softmax_axis(op):
    """Same node with axis written out (the flattened rows are the last axis)."""
    def chk(inp, out):
        old, new = node(inp, op), node(out, op)
        expect(len(out.graph.node) == len(inp.graph.node), "nodes added")
        expect(attr(new, "axis") == attr(old, "axis", 1),
               "axis %s, expected %s" % (attr(new, "axis"), attr(old, "axis", 1)))
    return chk


def softmax_flattened(op):
    """Shape, Flatten(axis of the input node), op(axis=1), Reshape(rows, shape) to the output."""
    def chk(inp, out):
        old = node(inp, op)
        types = [n.op_type for n in out.graph.node if n.op_type != "Relu"]
        expect(types == ["Shape", "Flatten", op, "Reshape"], "nodes %s" % types)
        shape, flat, new, resh = [n for n in out.graph.node if n.op_type != "Relu"]
        x = old.input[0]
        expect(shape.input[0] == x and flat.input[0] == x, "Shape/Flatten do not read %s" % x)
        expect(attr(flat, "axis") == attr(old, "axis", 1), "Flatten axis %s" % attr(flat, "axis"))
        expect(new.input[0] == flat.output[0] and attr(new, "axis") == 1, "%s not on rows" % op)
        expect(list(resh.input) == [new.output[0], shape.output[0]], "Reshape inputs")
        expect(resh.output[0] == old.output[0], "output name not kept")
    return chk


def dropout_ratio(inp, out):
    old, new = node(inp, "Dropout"), node(out, "Dropout")
    got = init(out, new.input[1]) if len(new.input) == 2 else None
    expect(got is not None and got.shape == () and got.dtype == np.float32 and
           abs(float(got) - attr(old, "ratio")) < 1e-7, "ratio input %r" % got)
    expect(attr(new, "ratio") is None, "ratio attribute still there")


def roi_align_mode(inp, out):
    expect(sval(attr(node(out, "RoiAlign"), "coordinate_transformation_mode")) ==
           "output_half_pixel", "coordinate_transformation_mode not output_half_pixel")


def upsample_as(target):
    def chk(inp, out):
        old = node(inp, "Upsample")
        scales = attr(old, "scales")
        op = "Upsample" if target == 9 else "Resize"
        new = node(out, op)
        got = init(out, new.input[-1])
        expect(got is not None and got.tolist() == scales, "scales %r, expected %r" %
               (got, scales))
        expect(len(new.input) == (2 if target < 11 else 3), "inputs %s" % list(new.input))
        expect(sval(attr(new, "mode")) == sval(attr(old, "mode")), "mode changed")
        if target >= 11:
            expect(sval(attr(new, "coordinate_transformation_mode")) == "asymmetric" and
                   sval(attr(new, "nearest_mode")) == "floor", "not asymmetric/floor")
    return chk


def resize_no_scales(inp, out):
    new = node(out, "Resize")
    expect(list(new.input) == ["x", "roi", "", "sizes"], "inputs %s" % list(new.input))


def topk_k(inp, out):
    old, new = node(inp, "TopK"), node(out, "TopK")
    got = init(out, new.input[1]) if len(new.input) == 2 else None
    expect(got is not None and got.dtype == np.int64 and got.tolist() == [attr(old, "k")],
           "K input %r" % got)
    expect(attr(new, "axis") == attr(old, "axis"), "axis changed")


def scatter_renamed(inp, out):
    new = node(out, "ScatterElements")
    expect(attr(new, "axis") == attr(node(inp, "Scatter"), "axis"), "axis changed")


# (model, target, structure check)
CASES = [
    ("split11_attr", 13, ints_to_input("Split", "split")),
    ("split11_attr", 17, ints_to_input("Split", "split")),
    ("split11_attr", 12, None),
    ("split11_equal", 17, ints_to_input("Split", "split")),
    ("squeeze11_axes", 13, ints_to_input("Squeeze", "axes")),
    ("unsqueeze11_axes", 17, ints_to_input("Unsqueeze", "axes")),
    ("reducesum11_axes", 13, ints_to_input("ReduceSum", "axes")),
    ("reducesum11_noaxes", 17, ints_to_input("ReduceSum", "axes")),
    ("softmax11_last", 13, softmax_axis("Softmax")),
    ("hardmax11_default_rank2", 17, softmax_axis("Hardmax")),
    ("softmax11_default", 13, softmax_flattened("Softmax")),
    ("logsoftmax11_axis1", 17, softmax_flattened("LogSoftmax")),
    ("softmax9_undeclared_rank", 17, softmax_flattened("Softmax")),
    ("dropout10_ratio", 12, dropout_ratio),
    ("roialign10", 16, roi_align_mode),
    ("upsample7_attr", 9, upsample_as(9)),
    ("upsample7_attr", 10, upsample_as(10)),
    ("upsample7_attr", 11, upsample_as(11)),
    ("upsample7_attr", 17, upsample_as(17)),
    ("topk9", 10, topk_k),
    ("scatter9", 11, scatter_renamed),
    ("resize12_sizes", 12, None),
    ("resize12_sizes", 13, resize_no_scales),
    ("mix_slice_clip_pad9", 17, None),
]
# (model, target, operator the message must name)
CANNOT = [
    ("cannot_bn9_outputs_used", 14, "BatchNormalization"),
    ("cannot_bn9_training_outputs", 17, "BatchNormalization"),
    ("cannot_imagescaler9", 10, "ImageScaler"),
    ("cannot_resize11_tf_nn", 13, "Resize"),
    ("cannot_opset5", 7, "opset 6"),
]


def raised(name, target, chk, tmp):
    src = os.path.join(TESTDATA, name + ".onnx")
    inp = onnx.load(src)
    label = "%s@%d" % (name, target)
    dst = os.path.join(tmp, label + ".onnx")
    rc, err = run(["--passes=none", "--target-opset=%d" % target, src, "-o", dst])
    if not check("%s: raise alone exits 0" % label,
                 lambda: None if rc == 0 else "exit %d: %s" % (rc, err.strip())):
        return
    out = onnx.load(dst)
    check("%s: opset and IR" % label, lambda: None if default_opset(out) == target and
          out.ir_version >= IR_OF_OPSET[target] else "opset %d ir %d" %
          (default_opset(out), out.ir_version))
    check("%s: full checker" % label, onnx.checker.check_model, out, True)
    if chk:
        check("%s: adapted node" % label, chk, inp, out)
    again = os.path.join(tmp, label + ".again.onnx")
    check("%s: raising again changes nothing" % label, lambda: None if run(
        ["--passes=none", "--target-opset=%d" % target, dst, "-o", again])[0] == 0 and
        open(again, "rb").read() == open(dst, "rb").read() else "output changed")
    full = os.path.join(tmp, label + ".full.onnx")
    rc, err = run(["--target-opset=%d" % target, src, "-o", full])
    if check("%s: default passes exit 0" % label,
             lambda: None if rc == 0 else "exit %d: %s" % (rc, err.strip())):
        check("%s: default passes full checker" % label, onnx.checker.check_model,
              onnx.load(full), True)
        ok, msg = ORT.equiv(src, full)
        check("%s: onnxruntime same outputs" % label, lambda: None if ok else msg)


def cannot(name, target, word, tmp):
    src = os.path.join(TESTDATA, name + ".onnx")
    dst = os.path.join(tmp, name + ".onnx")
    rc, err = run(["--target-opset=%d" % target, src, "-o", dst])
    lines = err.strip().splitlines()
    check("%s: exit 2, one line naming %s, no output" % (name, word), lambda: None if (
        rc == 2 and len(lines) == 1 and lines[0].startswith("ppqfmt: ") and word in lines[0]
        and not os.path.exists(dst)) else "exit %d, stderr %r, output %s" %
        (rc, err, os.path.exists(dst)))


def legacy_passes(tmp):
    """Without --target-opset: which opset the legacy passes raise to, and Clip-6 with clip
    off."""
    cases = [  # model, extra args, expected opset, Clip keeps min/max attributes
        ("mix_slice_clip9", ["--no-clip"], 10, True),
        ("mix_slice_clip9", [], 11, False),
        ("mix_slice_clip9", ["--passes=clip"], 11, False),
        ("mix_slice_clip_pad9", ["--no-clip"], 11, False),
    ]
    for name, args, opset, kept in cases:
        label = "%s %s" % (name, " ".join(args) or "(default)")
        src = os.path.join(TESTDATA, name + ".onnx")
        dst = os.path.join(tmp, name + "_".join(args) + ".legacy.onnx")
        rc, err = run(args + [src, "-o", dst])
        if not check("%s: exit 0" % label, lambda: None if rc == 0 else err):
            continue
        out = onnx.load(dst)

        def shape():
            clip = node(out, "Clip")
            has = attr(clip, "min") is not None and attr(clip, "max") is not None
            expect(default_opset(out) == opset, "opset %d, expected %d" %
                   (default_opset(out), opset))
            expect(has == kept, "Clip-6 attributes %s" % ("gone" if kept else "kept"))
            expect(all(attr(n, "starts") is None for n in out.graph.node), "Slice-1 left")
        check("%s: opset %d, Clip-6 %s" % (label, opset, "kept" if kept else "adapted"), shape)
        check("%s: full checker" % label, onnx.checker.check_model, out, True)
        ok, msg = ORT.equiv(src, dst)
        check("%s: onnxruntime same outputs" % label, lambda: None if ok else msg)


def above(tmp):
    src = os.path.join(TESTDATA, "above13.onnx")
    dst = os.path.join(tmp, "above13.onnx")
    rc, err = run(["--passes=none", "--target-opset=11", src, "-o", dst])
    check("above13 --target-opset=11: kept, exit 0, warning names both opsets", lambda: None if (
        rc == 0 and "13" in err and "11" in err and "warning" in err and
        open(dst, "rb").read() == open(src, "rb").read()) else "exit %d, %r" % (rc, err))


def passes_none(tmp):
    """Without --target-opset, --passes=none gives every model back byte for byte."""
    for name in testlib.models_in(TESTDATA):
        src = os.path.join(TESTDATA, name + ".onnx")
        dst = os.path.join(tmp, name + ".none.onnx")
        rc, err = run(["--passes=none", src, "-o", dst])
        check("%s: --passes=none is byte-identical" % name, lambda: None if rc == 0 and open(
            dst, "rb").read() == open(src, "rb").read() else "exit %d %s" % (rc, err))


def main():
    if not os.access(PPQFMT, os.X_OK):
        report("setup", "ppqfmt not found at %s" % PPQFMT)
        return T.summary()
    with tempfile.TemporaryDirectory(prefix="target_opset_") as tmp:
        for name, target, chk in CASES:
            raised(name, target, chk, tmp)
        for name, target, word in CANNOT:
            cannot(name, target, word, tmp)
        legacy_passes(tmp)
        above(tmp)
        passes_none(tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
