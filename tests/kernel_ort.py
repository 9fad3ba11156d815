#!/usr/bin/env python3
"""kernel_ort.py - the interpreter against onnxruntime on small models the
ONNX backend suite does not cover: the recurrent ops in both directions, in
reverse, with per-batch sequence lengths, clip, linear_before_reset, named
activations, peepholes with input_forget (batch-first layout, which
onnxruntime does not run, is in the backend suite); MaxPool's Indices output
with dilations, ceil_mode, padding and 1-D/3-D windows (the suite has two
2-D cases), legacy nearest Resize/Upsample, antialiased Resize, 3-D Conv and
ConvTranspose; the sequence and
optional ops at the attributes, positions and element types its few cases
leave out (uneven and listed splits, an empty piece, keepdims=0, negative axes and
positions, new_axis stacking, int32, float16, double and bool elements);
and the string kernels' attributes, dtypes and refusals
(tests/ort_string_cases.py). For each model onnxruntime runs seeded random
inputs; ppqfmt's --check-inputs and the
test-only --check-expected then give the same inputs to the interpreter and
compare its outputs with onnxruntime's (1e-5 + 1e-3 * max|expected|, strings
exactly). A case marked as one ppqfmt must refuse passes only on exit 6.

Run: .deps/venv/bin/python tests/kernel_ort.py [-v]
Last line: "kernel_ort: N passed, M failed, K skipped".
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

import testlib
import ort_string_cases

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))
SEQ, BATCH, IN, HID = 5, 3, 4, 6
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def rnn_case(op, direction="forward", lens=False, layout=0, **attrs):
    """(model, feeds) of one op node with random W, R, B (and initial states)."""
    rng = np.random.default_rng(abs(hash((op, direction, lens, layout, str(attrs)))) % 2**32)
    dirs = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    f = np.float32
    x_shape = [BATCH, SEQ, IN] if layout else [SEQ, BATCH, IN]
    s_shape = [BATCH, dirs, HID] if layout else [dirs, BATCH, HID]
    inits = [numpy_helper.from_array(rng.uniform(-1, 1, (dirs, g * HID, IN)).astype(f), "W"),
             numpy_helper.from_array(rng.uniform(-1, 1, (dirs, g * HID, HID)).astype(f), "R"),
             numpy_helper.from_array(rng.uniform(-1, 1, (dirs, 2 * g * HID)).astype(f), "B")]
    ins = ["X", "W", "R", "B", "lens" if lens else "", "h0"]
    feeds = {"X": rng.uniform(-2, 2, x_shape).astype(f),
             "h0": rng.uniform(-1, 1, s_shape).astype(f)}
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape),
              helper.make_tensor_value_info("h0", TensorProto.FLOAT, s_shape)]
    if lens:
        feeds["lens"] = np.array([SEQ, 2, 4][:BATCH], np.int32)
        inputs.append(helper.make_tensor_value_info("lens", TensorProto.INT32, [BATCH]))
    outs = ["Y", "Y_h"]
    if op == "LSTM":
        ins += ["c0", "P"]
        feeds["c0"] = rng.uniform(-1, 1, s_shape).astype(f)
        inputs.append(helper.make_tensor_value_info("c0", TensorProto.FLOAT, s_shape))
        inits.append(numpy_helper.from_array(rng.uniform(-1, 1, (dirs, 3 * HID)).astype(f), "P"))
        outs.append("Y_c")
    node = helper.make_node(op, ins, outs, hidden_size=HID, direction=direction, layout=layout,
                            **attrs)
    graph = helper.make_graph([node], "rnn", inputs,
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
                               for o in outs], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8  # what onnxruntime reads (onnx 1.23.2 writes a newer one)
    return model, feeds


CASES = [
    ("rnn_bidirectional", "RNN", dict(direction="bidirectional")),
    ("rnn_reverse_lens", "RNN", dict(direction="reverse", lens=True)),
    ("rnn_relu_clip", "RNN", dict(activations=["Relu"], clip=0.5)),
    ("gru_bidirectional_lens", "GRU", dict(direction="bidirectional", lens=True)),
    ("gru_linear_before_reset", "GRU", dict(linear_before_reset=1)),
    ("gru_reverse_softsign", "GRU", dict(direction="reverse", activations=["Sigmoid", "Softsign"])),
    ("lstm_bidirectional_lens", "LSTM", dict(direction="bidirectional", lens=True)),
    ("lstm_reverse_clip", "LSTM", dict(direction="reverse", clip=1.0)),
    ("lstm_input_forget", "LSTM", dict(input_forget=1)),
    ("lstm_reverse_lens_relu", "LSTM", dict(direction="reverse", lens=True,
                                            activations=["Sigmoid", "Relu", "Tanh"])),
]


def one_node(op, inputs, outputs, feeds, opset, inits=(), **attrs):
    """(model, feeds) of one op node; value infos from feeds' arrays, outputs untyped;
    inits: initializer arrays by name."""
    dt = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
          np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}
    graph = helper.make_graph(
        [helper.make_node(op, inputs, outputs, **attrs)], op.lower(),
        [helper.make_tensor_value_info(n, dt[feeds[n].dtype], feeds[n].shape) for n in feeds],
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in dict(inits).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, feeds


def max_pool_case(shape, dtype=np.float32, **attrs):
    """MaxPool with its Indices output; ties made likely by rounding the input."""
    rng = np.random.default_rng(len(shape) * 1000 + len(str(attrs)))
    x = np.round(rng.uniform(-4, 4, shape)).astype(dtype)
    return one_node("MaxPool", ["X"], ["Y", "I"], {"X": x}, 12, **attrs)


def legacy_nearest_case(op, opset, scales):
    """Upsample-9 or Resize-10 in nearest mode (the legacy rounding) on a float input."""
    rng = np.random.default_rng(opset + len(scales))
    x = rng.uniform(-4, 4, [1, 2, 5, 7]).astype(np.float32)
    return one_node(op, ["X", "scales"], ["Y"], {"X": x}, opset,
                    {"scales": np.array(scales, np.float32)}, mode="nearest")


def antialias_case(mode, scales, **attrs):
    """Resize-18 downscaling with antialias (the filter widened by 1/scale)."""
    rng = np.random.default_rng(len(scales) + len(mode))
    x = rng.uniform(-4, 4, [1, 2, 13, 17]).astype(np.float32)
    return one_node("Resize", ["X", "", "scales"], ["Y"], {"X": x}, 18,
                    {"scales": np.array(scales, np.float32)}, mode=mode, antialias=1, **attrs)


def conv3d_case(group=1, **attrs):
    """Conv over three spatial axes (weights an initializer, with a bias)."""
    rng = np.random.default_rng(group * 7 + len(attrs))
    x = rng.uniform(-1, 1, [2, 4, 6, 7, 9]).astype(np.float32)
    w = rng.uniform(-1, 1, [6, 4 // group, 3, 2, 3]).astype(np.float32)
    b = rng.uniform(-1, 1, [6]).astype(np.float32)
    return one_node("Conv", ["X", "W", "B"], ["Y"], {"X": x}, 11, {"W": w, "B": b},
                    group=group, **attrs)


def conv_transpose_case(x_shape, w_shape, group=1, **attrs):
    """ConvTranspose with a bias (weights an initializer)."""
    rng = np.random.default_rng(len(x_shape) * 31 + group + len(attrs))
    x = rng.uniform(-1, 1, x_shape).astype(np.float32)
    w = rng.uniform(-1, 1, w_shape).astype(np.float32)
    b = rng.uniform(-1, 1, [w_shape[1] * group]).astype(np.float32)
    return one_node("ConvTranspose", ["X", "W", "B"], ["Y"], {"X": x}, 11, {"W": w, "B": b},
                    group=group, **attrs)


# (name, (model, feeds)) besides the recurrent CASES
MODEL_CASES = [
    ("maxpool_indices_dilated_ceil", lambda: max_pool_case(
        [2, 3, 9, 8], kernel_shape=[3, 2], strides=[2, 3], dilations=[2, 1], ceil_mode=1,
        pads=[1, 0, 2, 1])),
    ("maxpool_indices_column_major", lambda: max_pool_case(
        [1, 2, 5, 7], kernel_shape=[2, 3], pads=[1, 1, 1, 1], storage_order=1)),
    ("maxpool_indices_1d_same", lambda: max_pool_case(
        [2, 2, 11], kernel_shape=[4], strides=[3], auto_pad="SAME_UPPER")),
    ("maxpool_indices_3d_uint8", lambda: max_pool_case(
        [1, 2, 4, 5, 6], np.uint8, kernel_shape=[2, 2, 3], strides=[1, 2, 2])),
    ("conv3d_pads_strides", lambda: conv3d_case(pads=[1, 0, 2, 2, 1, 0], strides=[2, 1, 3])),
    ("conv3d_grouped_dilated", lambda: conv3d_case(2, dilations=[2, 1, 2], pads=[1, 1, 1, 0, 0, 1])),
    ("conv3d_pointwise_depth", lambda: conv3d_case(auto_pad="SAME_UPPER")),
    ("convtranspose_2d_stride_outpad", lambda: conv_transpose_case(
        [2, 4, 5, 6], [4, 3, 3, 4], strides=[2, 3], pads=[1, 0, 0, 2], output_padding=[1, 2])),
    ("convtranspose_2d_grouped_dilated", lambda: conv_transpose_case(
        [1, 6, 4, 5], [6, 2, 2, 3], 3, dilations=[2, 3], strides=[1, 2])),
    ("convtranspose_1d", lambda: conv_transpose_case([3, 2, 9], [2, 5, 4], strides=[3])),
    ("convtranspose_3d", lambda: conv_transpose_case(
        [1, 2, 3, 4, 5], [2, 3, 2, 3, 2], strides=[2, 1, 2], pads=[0, 1, 1, 1, 0, 0])),
    ("upsample9_nearest", lambda: legacy_nearest_case("Upsample", 9, [1, 1, 2, 1.5])),
    ("resize10_nearest_up", lambda: legacy_nearest_case("Resize", 10, [1, 1, 2.5, 3])),
    ("resize10_nearest_down", lambda: legacy_nearest_case("Resize", 10, [1, 1, 0.6, 0.45])),
    ("resize_antialias_linear", lambda: antialias_case("linear", [1, 1, 0.3, 0.55])),
    ("resize_antialias_cubic_exclude", lambda: antialias_case(
        "cubic", [1, 1, 0.4, 0.7], exclude_outside=1, cubic_coeff_a=-0.5)),
    ("resize_antialias_linear_asymmetric", lambda: antialias_case(
        "linear", [1, 1, 0.5, 0.25], coordinate_transformation_mode="asymmetric")),
    ("resize_antialias_cubic_symmetric", lambda: antialias_case(
        "cubic", [1, 1, 0.35, 0.6], coordinate_transformation_mode="half_pixel_symmetric")),
]


def seq_case(nodes, inputs, outputs, opset=18):
    """(model, feeds): a graph of nodes over tensor inputs [(name, array)] to tensor
    outputs [(name, elem_type)]; the sequences and optionals stay inside."""
    graph = helper.make_graph(
        nodes, "seq",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, dict(inputs)


def seq_cases():
    rng = np.random.default_rng(35)
    x = rng.uniform(-1, 1, (3, 7)).astype(np.float32)
    y = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float64)
    z = rng.integers(-9, 9, (6, 2)).astype(np.int32)
    w = rng.uniform(-1, 1, (1, 2)).astype(np.float16)
    b = rng.integers(0, 2, (2, 3)).astype(bool)
    n = helper.make_node
    i64, f32 = TensorProto.INT64, TensorProto.FLOAT
    c = lambda name, v, t=np.int64: numpy_helper.from_array(np.array(v, t), name)
    return [
        # chunks of 3 along the last axis: 3 + 3 + 1
        ("split_chunks_last_axis", seq_case(
            [n("Constant", [], ["k"], value=c("k", 3)),
             n("Constant", [], ["m1"], value=c("m1", -1, np.int32)),
             n("SplitToSequence", ["x", "k"], ["s"], axis=-1),
             n("SequenceAt", ["s", "m1"], ["last"]),
             n("SequenceLength", ["s"], ["len"]),
             n("ConcatFromSequence", ["s"], ["back"], axis=1)],
            [("x", x)], [("last", f32), ("len", i64), ("back", f32)])),
        # no split, keepdims=0: pieces lose the axis; stacked again at the last axis
        ("split_nokeepdims_stack_last", seq_case(
            [n("SplitToSequence", ["y"], ["s"], axis=1, keepdims=0),
             n("ConcatFromSequence", ["s"], ["t"], axis=-1, new_axis=1)],
            [("y", y)], [("t", TensorProto.DOUBLE)])),
        # listed sizes; erase at -2, insert at the front, join on axis 0
        ("split_sizes_erase_insert", seq_case(
            [n("Constant", [], ["sizes"], value=c("sizes", [1, 3, 2])),
             n("Constant", [], ["m2"], value=c("m2", -2)),
             n("Constant", [], ["zero"], value=c("zero", 0, np.int32)),
             n("SplitToSequence", ["z", "sizes"], ["s"]),
             n("SequenceErase", ["s", "m2"], ["e"]),
             n("SequenceInsert", ["e", "z", "zero"], ["i"]),
             n("SequenceErase", ["i"], ["j"]),
             n("ConcatFromSequence", ["j"], ["t"], axis=0)],
            [("z", z)], [("t", TensorProto.INT32)])),
        # construct, pick from the end, stack on axis 0
        ("construct_at_stack", seq_case(
            [n("Neg", ["w"], ["v"]),
             n("SequenceConstruct", ["w", "v", "w"], ["s"]),
             n("Constant", [], ["m3"], value=c("m3", -3)),
             n("SequenceAt", ["s", "m3"], ["first"]),
             n("ConcatFromSequence", ["s"], ["t"], axis=0, new_axis=1)],
            [("w", w)], [("first", TensorProto.FLOAT16), ("t", TensorProto.FLOAT16)])),
        # an empty bool sequence grown by three inserts: at the end twice, then at the front
        ("empty_insert_bool", seq_case(
            [n("SequenceEmpty", [], ["e"], dtype=TensorProto.BOOL),
             n("Not", ["b"], ["nb"]),
             n("SequenceInsert", ["e", "b"], ["s1"]),
             n("SequenceInsert", ["s1", "nb"], ["s2"]),
             n("Constant", [], ["zero"], value=c("zero", 0)),
             n("SequenceInsert", ["s2", "b", "zero"], ["s3"]),
             n("ConcatFromSequence", ["s3"], ["t"], axis=-2, new_axis=1)],
            [("b", b)], [("t", TensorProto.BOOL)])),
        # a listed split with an empty piece, picked and joined again
        ("split_empty_piece", seq_case(
            [n("Constant", [], ["sizes"], value=c("sizes", [0, 2, 1])),
             n("Constant", [], ["zero"], value=c("zero", 0)),
             n("SplitToSequence", ["x", "sizes"], ["s"]),
             n("SequenceAt", ["s", "zero"], ["empty"]),
             n("ConcatFromSequence", ["s"], ["back"], axis=0)],
            [("x", x)], [("empty", f32), ("back", f32)])),
        # an optional made, asked and opened
        ("optional_wrap_get", seq_case(
            [n("Optional", ["x"], ["o"]),
             n("OptionalHasElement", ["o"], ["has"]),
             n("OptionalGetElement", ["o"], ["got"])],
            [("x", x)], [("has", TensorProto.BOOL), ("got", f32)])),
    ]


def run_case(name, model, feeds, tmp, declines=False):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    try:
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
    except Exception as e:  # onnxruntime lacks this form: nothing to compare with
        if not declines:
            return "skip", "onnxruntime: %s" % str(e).split("\n")[0][:120]
        sess, got = None, []  # onnxruntime refuses it too: ppqfmt must still decline
    d = os.path.join(tmp, name)
    testlib.write_data_set(d, feeds.items(),
                           zip([o.name for o in sess.get_outputs()], got) if sess else ())
    p = subprocess.run([PPQFMT, "--dry-run", "-q", "--passes=none", "--check-inputs=" + d,
                        "--check-expected", path], capture_output=True, text=True)
    if declines:  # a form onnxruntime and onnx's reference differ on: exit 6, not a value
        return ("ok", None) if p.returncode == 6 else ("fail", "exit %d (want 6): %s" % (
            p.returncode, p.stderr.strip()[-300:]))
    return ("ok", None) if p.returncode == 0 else ("fail", "exit %d: %s" % (
        p.returncode, p.stderr.strip()[-300:]))


def main():
    counts = {"ok": 0, "fail": 0, "skip": 0}
    with tempfile.TemporaryDirectory() as tmp:
        all_cases = ([(name, *rnn_case(op, **kw), False) for name, op, kw in CASES] +
                     [(name, *build(), False) for name, build in MODEL_CASES] +
                     [(name, *mf, False) for name, mf in seq_cases()] +
                     ort_string_cases.cases())
        for name, model, feeds, declines in all_cases:
            verdict, why = run_case(name, model, feeds, tmp, declines)
            counts[verdict] += 1
            print(("ok %s" % name) if verdict == "ok" else "%s %s: %s" % (
                verdict.upper(), name, why))
    print("kernel_ort: %d passed, %d failed, %d skipped" % (counts["ok"], counts["fail"],
                                                            counts["skip"]))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
