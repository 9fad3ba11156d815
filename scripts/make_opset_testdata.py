#!/usr/bin/python3
"""Generate the models in testdata/opset/ that tests/test_target_opset.py uses.

Usage: scripts/make_opset_testdata.py [OUTDIR]     (default: testdata/opset/ next to scripts/)

One small model per operator whose definition changed between opset 7 and 17 in a way
--target-opset has to adapt (an attribute that became an input, a renamed or deprecated
operator, a default that changed meaning), at the last opset before the change; models that
cannot be adapted; and models mixing legacy forms, for the independence of the slice, clip, pad
and resize passes. Each graph's doc_string says what it tests. Models use the IR version of their
opset's ONNX release; everything is deterministic (weights from a RandomState seeded from the
model name), and every model passes onnx.checker.check_model(full_check=True) before it is
written. Run with Debian's python (/usr/bin/python3, python3-onnx 1.12).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from passes.build import fvi, rng  # noqa: E402  (tests/passes/build.py)

INT64 = TP.INT64
IR_OF_OPSET = {5: 3, 6: 3, 7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 14: 7, 15: 8, 16: 8}

BUILDERS = []


def model(name):
    def register(fn):
        BUILDERS.append((name, fn))
        return fn
    return register


def build(name, opset, nodes, inputs, outputs, doc, inits=()):
    inits = list(inits)
    ins = list(inputs)
    if IR_OF_OPSET[opset] < 4:  # IR 3: every initializer is also a graph input
        ins += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    g = helper.make_graph(nodes, name, ins, outputs, initializer=inits, doc_string=doc)
    m = helper.make_model(g, producer_name="make_opset_testdata",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = IR_OF_OPSET[opset]
    return m


@model("split11_attr")
def _(name):
    return build(name, 11, [helper.make_node("Split", ["x"], ["a", "b"], "split", axis=1,
                                             split=[2, 3])],
                 [fvi("x", [2, 5])], [fvi("a", [2, 2]), fvi("b", [2, 3])],
                 "Split-11 split attribute -> Split-13 split input (int64)")


@model("split11_equal")
def _(name):
    return build(name, 11, [helper.make_node("Split", ["x"], ["a", "b"], "split", axis=0)],
                 [fvi("x", [4, 3])], [fvi("a", [2, 3]), fvi("b", [2, 3])],
                 "Split-11 without split: stays without the input (equal parts)")


@model("squeeze11_axes")
def _(name):
    return build(name, 11, [helper.make_node("Squeeze", ["x"], ["y"], "squeeze", axes=[1, 3])],
                 [fvi("x", [2, 1, 3, 1])], [fvi("y", [2, 3])],
                 "Squeeze-11 axes attribute -> Squeeze-13 axes input")


@model("unsqueeze11_axes")
def _(name):
    return build(name, 11, [helper.make_node("Unsqueeze", ["x"], ["y"], "unsqueeze",
                                             axes=[0, 3])],
                 [fvi("x", [2, 3])], [fvi("y", [1, 2, 3, 1])],
                 "Unsqueeze-11 axes attribute -> Unsqueeze-13 axes input")


@model("reducesum11_axes")
def _(name):
    return build(name, 11, [helper.make_node("ReduceSum", ["x"], ["y"], "rsum", axes=[-1, 1],
                                             keepdims=0)],
                 [fvi("x", [2, 3, 4])], [fvi("y", [2])],
                 "ReduceSum-11 axes attribute -> ReduceSum-13 axes input, keepdims kept")


@model("reducesum11_noaxes")
def _(name):
    return build(name, 11, [helper.make_node("ReduceSum", ["x"], ["y"], "rsum")],
                 [fvi("x", [2, 3])], [fvi("y", [1, 1])],
                 "ReduceSum-11 without axes (all): stays without the input")


def softmax_model(name, op, axis, shape, opset=11):
    kw = {} if axis is None else {"axis": axis}
    return build(name, opset, [helper.make_node(op, ["x"], ["y"], "sm", **kw)],
                 [fvi("x", shape)], [fvi("y", shape)],
                 "%s-%d axis %s on rank %d: Softmax-13 works along one axis" %
                 (op, opset, axis, len(shape)))


@model("softmax11_last")
def _(name):
    return softmax_model(name, "Softmax", 2, [2, 3, 4])


@model("softmax11_default")
def _(name):
    return softmax_model(name, "Softmax", None, [2, 3, 4])


@model("logsoftmax11_axis1")
def _(name):
    return softmax_model(name, "LogSoftmax", 1, [2, 3, 4, 5])


@model("hardmax11_default_rank2")
def _(name):
    return softmax_model(name, "Hardmax", None, [3, 4])


@model("softmax9_undeclared_rank")
def _(name):
    nodes = [helper.make_node("Relu", ["x"], ["t"], "relu"),
             helper.make_node("Softmax", ["t"], ["y"], "sm", axis=0)]
    return build(name, 9, nodes, [fvi("x", [2, 3])], [fvi("y", [2, 3])],
                 "Softmax-9 axis 0 on a value of undeclared rank: Flatten, Softmax, Reshape")


@model("dropout10_ratio")
def _(name):
    return build(name, 10, [helper.make_node("Dropout", ["x"], ["y"], "drop", ratio=0.25)],
                 [fvi("x", [2, 3])], [fvi("y", [2, 3])],
                 "Dropout-10 ratio attribute -> Dropout-12 ratio input (scalar float)")


def bn_model(name, opset, outputs_used):
    r = rng(name)
    inits = [numpy_helper.from_array(r.rand(3).astype(np.float32) + 0.5, n)
             for n in ("scale", "bias", "mean", "var")]
    outs = ["y", "rm", "rv", "sm", "sv"]
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], outs,
                            "bn", epsilon=1e-3)
    outputs = [fvi("y", [2, 3, 4])] + ([fvi("rm", [3])] if outputs_used else [])
    return build(name, opset, [node], [fvi("x", [2, 3, 4])], outputs,
                 "BatchNormalization-9 with the training outputs (%s): the training form, "
                 "which onnxruntime computes with batch statistics; cannot be adapted to 14" %
                 ("one is a graph output" if outputs_used else "unused"), inits)


@model("cannot_bn9_training_outputs")
def _(name):
    return bn_model(name, 9, False)


@model("cannot_bn9_outputs_used")
def _(name):
    return bn_model(name, 9, True)


@model("roialign10")
def _(name):
    r = rng(name)
    rois = numpy_helper.from_array(np.array([[0, 0, 3, 3], [1, 1, 6, 5]], np.float32), "rois")
    idx = numpy_helper.from_array(np.array([0, 0], np.int64), "idx")
    node = helper.make_node("RoiAlign", ["x", "rois", "idx"], ["y"], "roi", output_height=2,
                            output_width=2, sampling_ratio=2, spatial_scale=1.0)
    del r
    return build(name, 10, [node], [fvi("x", [1, 2, 8, 8])], [fvi("y", [2, 2, 2, 2])],
                 "RoiAlign-10 -> RoiAlign-16 with coordinate_transformation_mode "
                 "output_half_pixel (the new default, half_pixel, computes something else)",
                 [rois, idx])


@model("upsample7_attr")
def _(name):
    node = helper.make_node("Upsample", ["x"], ["y"], "up", mode="nearest",
                            scales=[1.0, 1.0, 2.0, 3.0])
    return build(name, 7, [node], [fvi("x", [1, 2, 3, 3])], [fvi("y", [1, 2, 6, 9])],
                 "Upsample-7 (scales attribute): Upsample-9 (input) at 9, Resize-10 at 10, "
                 "Resize-11 (asymmetric, floor) from 11")


@model("topk9")
def _(name):
    node = helper.make_node("TopK", ["x"], ["v", "i"], "topk", k=2, axis=1)
    return build(name, 9, [node], [fvi("x", [3, 5])],
                 [fvi("v", [3, 2]), helper.make_tensor_value_info("i", INT64, [3, 2])],
                 "TopK-1 k attribute -> TopK-10 K input of shape [1]")


@model("scatter9")
def _(name):
    idx = numpy_helper.from_array(np.array([[1, 0, 2], [0, 2, 1]], np.int64), "idx")
    upd = numpy_helper.from_array(rng(name).rand(2, 3).astype(np.float32), "upd")
    node = helper.make_node("Scatter", ["x", "idx", "upd"], ["y"], "scatter", axis=1)
    return build(name, 9, [node], [fvi("x", [2, 4])], [fvi("y", [2, 4])],
                 "Scatter-9 (deprecated in 11) -> ScatterElements", [idx, upd])


@model("cannot_imagescaler9")
def _(name):
    node = helper.make_node("ImageScaler", ["x"], ["y"], "scaler", scale=2.0, bias=[1.0, 2.0])
    return build(name, 9, [node], [fvi("x", [1, 2, 3, 3])], [fvi("y", [1, 2, 3, 3])],
                 "ImageScaler, experimental, gone from opset 10: cannot be adapted")


@model("cannot_resize11_tf_nn")
def _(name):
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    roi = numpy_helper.from_array(np.array([], np.float32), "roi")
    node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], "resize", mode="nearest",
                            coordinate_transformation_mode="tf_half_pixel_for_nn")
    return build(name, 11, [node], [fvi("x", [1, 1, 2, 2])], [fvi("y", [1, 1, 4, 4])],
                 "Resize-11 tf_half_pixel_for_nn, removed in 13: cannot be adapted to 13+",
                 [roi, scales])


@model("resize12_sizes")
def _(name):
    roi = numpy_helper.from_array(np.array([], np.float32), "roi")
    scales = numpy_helper.from_array(np.array([], np.float32), "scales")
    sizes = numpy_helper.from_array(np.array([1, 1, 3, 5], np.int64), "sizes")
    node = helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"], "resize",
                            mode="linear")
    return build(name, 12, [node], [fvi("x", [1, 1, 2, 2])], [fvi("y", [1, 1, 3, 5])],
                 "Resize-12 with sizes and the empty scales opsets 11-12 require; "
                 "Resize-13 wants scales absent", [roi, scales, sizes])


@model("cannot_opset5")
def _(name):
    return build(name, 5, [helper.make_node("Relu", ["x"], ["y"], "relu")],
                 [fvi("x", [2])], [fvi("y", [2])], "opset 5: older than ppqfmt upgrades")


@model("above13")
def _(name):
    return build(name, 13, [helper.make_node("Relu", ["x"], ["y"], "relu")],
                 [fvi("x", [2])], [fvi("y", [2])],
                 "opset 13: above --target-opset=11, left as it is with a warning")


def legacy_mix(name, with_pad):
    nodes = [helper.make_node("Slice", ["x"], ["s"], "slice", starts=[0], ends=[2], axes=[1]),
             helper.make_node("Clip", ["s"], ["c"], "clip", min=-0.5, max=0.5)]
    out = "c"
    if with_pad:
        nodes.append(helper.make_node("Pad", ["c"], ["p"], "pad", pads=[0, 1, 0, 1]))
        out = "p"
    shape = [2, 4] if with_pad else [2, 2]
    return build(name, 9, nodes, [fvi("x", [2, 3])], [fvi(out, shape)],
                 "Slice-1 and Clip-6%s at opset 9: with clip off, %s" %
                 (" and Pad-2" if with_pad else "",
                  "pad raises to 11, so Clip-6 is adapted anyway" if with_pad else
                  "slice raises to 10 only and Clip-6 stays"))


@model("mix_slice_clip9")
def _(name):
    return legacy_mix(name, False)


@model("mix_slice_clip_pad9")
def _(name):
    return legacy_mix(name, True)


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    out = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(here), "testdata", "opset")
    os.makedirs(out, exist_ok=True)
    for name, fn in BUILDERS:
        m = fn(name)
        onnx.checker.check_model(m, full_check=True)
        onnx.save(m, os.path.join(out, name + ".onnx"))
    print("wrote %d models to %s" % (len(BUILDERS), out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
