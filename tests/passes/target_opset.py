"""target_opset: --target-opset (formatter/opset.c's driver run once before the passes, by
api/run.c) and the independence of the legacy-form passes.

One small model per operator whose definition changed between opset 7 and 17 in a way
--target-opset has to adapt (an attribute that became an input, a renamed or deprecated
operator, a default that changed meaning), at the last opset before the change; models that
cannot be adapted; and models mixing legacy forms, for the independence of the slice, clip, pad
and resize passes (builders registered with @model, each taking its name and setting its own
doc_string; testdata/target_opset/<case>.onnx). Models use the IR version of their opset's ONNX
release. Below them, what tests/test_target_opset.py checks: the structure checks of the
adapted nodes and the tables of runs (CASES, CANNOT, LEGACY_RUNS).
"""
import numpy as np
from onnx import helper, numpy_helper, TensorProto

from passes.build import fvi, INT64, IR_OF_OPSET, Models, rng
from passes.common import attr, sval

MODELS = Models("target_opset", by_name=True)
model = MODELS.model


def at_opset(name, opset, nodes, inputs, outputs, doc, inits=()):
    """The model `name` at `opset` with its era's IR version and doc_string doc."""
    inits = list(inits)
    ins = list(inputs)
    if IR_OF_OPSET[opset] < 4:  # IR 3: every initializer is also a graph input
        ins += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in inits]
    g = helper.make_graph(nodes, name, ins, outputs, initializer=inits, doc_string=doc)
    # the producer names the script these models came from first: kept, byte for byte
    m = helper.make_model(g, producer_name="make_opset_testdata",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = IR_OF_OPSET[opset]
    return m


@model("split11_attr")
def _(name):
    return at_opset(name, 11, [helper.make_node("Split", ["x"], ["a", "b"], "split", axis=1,
                                             split=[2, 3])],
                    [fvi("x", [2, 5])], [fvi("a", [2, 2]), fvi("b", [2, 3])],
                    "Split-11 split attribute -> Split-13 split input (int64)")


@model("split11_equal")
def _(name):
    return at_opset(name, 11, [helper.make_node("Split", ["x"], ["a", "b"], "split", axis=0)],
                    [fvi("x", [4, 3])], [fvi("a", [2, 3]), fvi("b", [2, 3])],
                    "Split-11 without split: stays without the input (equal parts)")


@model("squeeze11_axes")
def _(name):
    return at_opset(name, 11, [helper.make_node("Squeeze", ["x"], ["y"], "squeeze", axes=[1, 3])],
                    [fvi("x", [2, 1, 3, 1])], [fvi("y", [2, 3])],
                    "Squeeze-11 axes attribute -> Squeeze-13 axes input")


@model("unsqueeze11_axes")
def _(name):
    return at_opset(name, 11, [helper.make_node("Unsqueeze", ["x"], ["y"], "unsqueeze",
                                             axes=[0, 3])],
                    [fvi("x", [2, 3])], [fvi("y", [1, 2, 3, 1])],
                    "Unsqueeze-11 axes attribute -> Unsqueeze-13 axes input")


@model("reducesum11_axes")
def _(name):
    return at_opset(name, 11, [helper.make_node("ReduceSum", ["x"], ["y"], "rsum", axes=[-1, 1],
                                             keepdims=0)],
                    [fvi("x", [2, 3, 4])], [fvi("y", [2])],
                    "ReduceSum-11 axes attribute -> ReduceSum-13 axes input, keepdims kept")


@model("reducesum11_noaxes")
def _(name):
    return at_opset(name, 11, [helper.make_node("ReduceSum", ["x"], ["y"], "rsum")],
                    [fvi("x", [2, 3])], [fvi("y", [1, 1])],
                    "ReduceSum-11 without axes (all): stays without the input")


def softmax_model(name, op, axis, shape, opset=11):
    kw = {} if axis is None else {"axis": axis}
    return at_opset(name, opset, [helper.make_node(op, ["x"], ["y"], "sm", **kw)],
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
    return at_opset(name, 9, nodes, [fvi("x", [2, 3])], [fvi("y", [2, 3])],
                    "Softmax-9 axis 0 on a value of undeclared rank: Flatten, Softmax, Reshape")


@model("dropout10_ratio")
def _(name):
    return at_opset(name, 10, [helper.make_node("Dropout", ["x"], ["y"], "drop", ratio=0.25)],
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
    return at_opset(name, opset, [node], [fvi("x", [2, 3, 4])], outputs,
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
    return at_opset(name, 10, [node], [fvi("x", [1, 2, 8, 8])], [fvi("y", [2, 2, 2, 2])],
                    "RoiAlign-10 -> RoiAlign-16 with coordinate_transformation_mode "
                    "output_half_pixel (the new default, half_pixel, computes something else)",
                    [rois, idx])


@model("upsample7_attr")
def _(name):
    node = helper.make_node("Upsample", ["x"], ["y"], "up", mode="nearest",
                            scales=[1.0, 1.0, 2.0, 3.0])
    return at_opset(name, 7, [node], [fvi("x", [1, 2, 3, 3])], [fvi("y", [1, 2, 6, 9])],
                    "Upsample-7 (scales attribute): Upsample-9 (input) at 9, Resize-10 at 10, "
                    "Resize-11 (asymmetric, floor) from 11")


@model("topk9")
def _(name):
    node = helper.make_node("TopK", ["x"], ["v", "i"], "topk", k=2, axis=1)
    return at_opset(name, 9, [node], [fvi("x", [3, 5])],
                    [fvi("v", [3, 2]), helper.make_tensor_value_info("i", INT64, [3, 2])],
                    "TopK-1 k attribute -> TopK-10 K input of shape [1]")


@model("scatter9")
def _(name):
    idx = numpy_helper.from_array(np.array([[1, 0, 2], [0, 2, 1]], np.int64), "idx")
    upd = numpy_helper.from_array(rng(name).rand(2, 3).astype(np.float32), "upd")
    node = helper.make_node("Scatter", ["x", "idx", "upd"], ["y"], "scatter", axis=1)
    return at_opset(name, 9, [node], [fvi("x", [2, 4])], [fvi("y", [2, 4])],
                    "Scatter-9 (deprecated in 11) -> ScatterElements", [idx, upd])


@model("cannot_imagescaler9")
def _(name):
    node = helper.make_node("ImageScaler", ["x"], ["y"], "scaler", scale=2.0, bias=[1.0, 2.0])
    return at_opset(name, 9, [node], [fvi("x", [1, 2, 3, 3])], [fvi("y", [1, 2, 3, 3])],
                    "ImageScaler, experimental, gone from opset 10: cannot be adapted")


@model("dropout10_mask")
def _(name):
    nodes = [helper.make_node("Dropout", ["x"], ["d", "mask"], "drop", ratio=0.25),
             helper.make_node("Cast", ["mask"], ["m"], "cast", to=1),
             helper.make_node("Add", ["d", "m"], ["y"], "add")]
    return at_opset(name, 10, nodes, [fvi("x", [2, 5])], [fvi("y", [2, 5])],
                    "Dropout-10 with its mask read: in inference mode all false up to opset 11, "
                    "all true from 12 (onnxruntime): raised to 11, not past it")


def with_function(name, opset, f_nodes, f_opset, main_nodes, doc):
    """x [2,5] -> main_nodes (which call local.f(a) -> b) -> y, at opset with IR 8 (functions
    need it); f imports the default domain at f_opset."""
    f = helper.make_function("local", "f", ["a"], ["b"], f_nodes,
                             [helper.make_opsetid("", f_opset)])
    g = helper.make_graph(main_nodes, name, [fvi("x", [2, 5])], [fvi("y", [2, 5])], doc_string=doc)
    m = helper.make_model(g, producer_name="make_opset_testdata", functions=[f],
                          opset_imports=[helper.make_opsetid("", opset),
                                         helper.make_opsetid("local", 1)])
    m.ir_version = 8
    return m


@model("function15_leakyrelu")
def _(name):
    f_nodes = [helper.make_node("LeakyRelu", ["a"], ["l"], "leaky", alpha=0.2),
               helper.make_node("Add", ["l", "a"], ["b"], "add")]
    return with_function(name, 15, f_nodes, 15,
                         [helper.make_node("f", ["x"], ["y"], "call", domain="local")],
                         "torch's export_modules_as_functions at opset 15: the function's "
                         "import follows the raise (LeakyRelu gained types only)")


@model("function9_clip")
def _(name):
    f_nodes = [helper.make_node("Clip", ["a"], ["b"], "fclip", min=-0.5, max=0.5)]
    return with_function(name, 9, f_nodes, 9,
                         [helper.make_node("Clip", ["x"], ["c"], "clip", min=0.0, max=6.0),
                          helper.make_node("f", ["c"], ["y"], "call", domain="local")],
                         "Clip-6 in the main graph and in a model-local function: the "
                         "function's cannot be adapted, so neither moves")


@model("cannot_resize11_tf_nn")
def _(name):
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    roi = numpy_helper.from_array(np.array([], np.float32), "roi")
    node = helper.make_node("Resize", ["x", "roi", "scales"], ["y"], "resize", mode="nearest",
                            coordinate_transformation_mode="tf_half_pixel_for_nn")
    return at_opset(name, 11, [node], [fvi("x", [1, 1, 2, 2])], [fvi("y", [1, 1, 4, 4])],
                    "Resize-11 tf_half_pixel_for_nn, removed in 13: cannot be adapted to 13+",
                    [roi, scales])


@model("resize12_sizes")
def _(name):
    roi = numpy_helper.from_array(np.array([], np.float32), "roi")
    scales = numpy_helper.from_array(np.array([], np.float32), "scales")
    sizes = numpy_helper.from_array(np.array([1, 1, 3, 5], np.int64), "sizes")
    node = helper.make_node("Resize", ["x", "roi", "scales", "sizes"], ["y"], "resize",
                            mode="linear")
    return at_opset(name, 12, [node], [fvi("x", [1, 1, 2, 2])], [fvi("y", [1, 1, 3, 5])],
                    "Resize-12 with sizes and the empty scales opsets 11-12 require; "
                    "Resize-13 wants scales absent", [roi, scales, sizes])


@model("opset5_relu")
def _(name):
    return at_opset(name, 5, [helper.make_node("Relu", ["x"], ["y"], "relu")],
                    [fvi("x", [2])], [fvi("y", [2])], "opset 5: Relu unchanged since opset 6")


@model("opset1_mix")
def _(name):
    """x [2,3] -> Relu-1 (consumed_inputs) -> Concat-1 (no axis: 1) with x -> Reshape-1
    (shape attribute) [3,4] -> Cast-1 (to="DOUBLE") -> y."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], "relu", consumed_inputs=[0]),
             helper.make_node("Concat", ["r", "x"], ["c"], "concat"),
             helper.make_node("Reshape", ["c"], ["s"], "reshape", shape=[3, 4]),
             helper.make_node("Cast", ["s"], ["y"], "cast", to="DOUBLE")]
    return at_opset(name, 1, nodes, [fvi("x", [2, 3])],
                    [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [3, 4])],
                    "opset 1: consumed_inputs, Concat-1's default axis, Reshape-1's shape "
                    "attribute, Cast-1's string 'to'")


def opset1_mix_reference(feeds):
    x = feeds["x"]
    return {"y": np.concatenate([np.maximum(x, 0), x], axis=1).reshape(3, 4).astype(np.float64)}


@model("cannot_tile1")
def _(name):
    nodes = [helper.make_node("Tile", ["x", "tiles", "axis"], ["y"], "tile")]
    inits = [numpy_helper.from_array(np.array(2, np.float32), "tiles"),
             numpy_helper.from_array(np.array(1, np.float32), "axis")]
    return at_opset(name, 1, nodes, [fvi("x", [2, 3])], [fvi("y", [2, 6])],
                    "Tile-1 (tiles and axis inputs): no rule", inits=inits)


@model("above13")
def _(name):
    return at_opset(name, 13, [helper.make_node("Relu", ["x"], ["y"], "relu")],
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
    return at_opset(name, 9, nodes, [fvi("x", [2, 3])], [fvi(out, shape)],
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


# ---------------------------------------------------------------------------
# what tests/test_target_opset.py checks
# ---------------------------------------------------------------------------

def default_opset(m):
    return next(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


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


def opset1_adapted(inp, out):
    expect(not any(attr(n, "consumed_inputs") is not None for n in out.graph.node),
           "consumed_inputs left")
    expect(attr(node(out, "Concat"), "axis") == 1, "Concat axis %r" % attr(node(out, "Concat"), "axis"))
    expect(attr(node(out, "Cast"), "to") == TensorProto.DOUBLE, "Cast to %r" % attr(node(out, "Cast"), "to"))
    reshape = node(out, "Reshape")
    expect(len(reshape.input) == 2 and attr(reshape, "shape") is None, "Reshape %s" % reshape)


def functions_at(target):
    def check(inp, out):
        got = [[o.version for o in f.opset_import if o.domain in ("", "ai.onnx")]
               for f in out.functions]
        expect(got == [[target]] * len(inp.functions), "function imports %r" % got)
        expect([f.node for f in out.functions] == [f.node for f in inp.functions],
               "function nodes changed")
    return check


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
    ("dropout10_mask", 11, None),
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
    ("function15_leakyrelu", 17, functions_at(17)),
    ("opset5_relu", 17, None),
    ("opset1_mix", 17, opset1_adapted),
]
# onnxruntime runs no model below opset 7: these raised outputs are compared with numpy
REFERENCES = {"opset1_mix": opset1_mix_reference, "opset5_relu": lambda f: {"y": np.maximum(f["x"], 0)}}
# (model, target, operator the message must name)
CANNOT = [
    ("cannot_bn9_outputs_used", 14, "BatchNormalization"),
    ("cannot_bn9_training_outputs", 17, "BatchNormalization"),
    ("cannot_imagescaler9", 10, "ImageScaler"),
    ("cannot_resize11_tf_nn", 13, "Resize"),
    ("dropout10_mask", 12, "Dropout"),
    ("dropout10_mask", 17, "Dropout"),
    ("cannot_tile1", 17, "Tile"),
    ("function9_clip", 11, "function 'f', node 'fclip' (Clip)"),
]
# (model, extra args, expected opset, Clip keeps min/max attributes): the legacy passes
# without --target-opset
LEGACY_RUNS = [
    ("mix_slice_clip9", ["--no-clip"], 10, True),
    ("mix_slice_clip9", [], 11, False),
    ("mix_slice_clip9", ["--passes=clip"], 11, False),
    ("mix_slice_clip_pad9", ["--no-clip"], 11, False),
    ("function9_clip", [], 9, True),
]
