#!/usr/bin/env python3
"""kernel_ort.py - the interpreter against onnxruntime on small models the
ONNX backend suite does not cover: the recurrent ops in both directions, in
reverse, with per-batch sequence lengths, clip, linear_before_reset, named
activations, peepholes with input_forget (batch-first layout, which
onnxruntime does not run, is in the backend suite); the sequence and
optional ops at the attributes, positions and element types its few cases
leave out (uneven and listed splits, an empty piece, keepdims=0, negative axes and
positions, new_axis stacking, int32, float16, double and bool elements).
For each model onnxruntime runs seeded random inputs; ppqfmt's --check-inputs and the
test-only --check-expected then give the same inputs to the interpreter and
compare its outputs with onnxruntime's (1e-5 + 1e-3 * max|expected|).

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


def run_case(name, model, feeds, tmp):
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    try:
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
    except Exception as e:  # onnxruntime lacks this form: nothing to compare with
        return "skip", "onnxruntime: %s" % str(e).split("\n")[0][:120]
    d = os.path.join(tmp, name)
    testlib.write_data_set(d, feeds.items(), zip([o.name for o in sess.get_outputs()], got))
    p = subprocess.run([PPQFMT, "--dry-run", "-q", "--passes=none", "--check-inputs=" + d,
                        "--check-expected", path], capture_output=True, text=True)
    return ("ok", None) if p.returncode == 0 else ("fail", "exit %d: %s" % (
        p.returncode, p.stderr.strip()[-300:]))


def main():
    counts = {"ok": 0, "fail": 0, "skip": 0}
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(name, rnn_case(op, **kw)) for name, op, kw in CASES] + seq_cases()
        for name, (model, feeds) in cases:
            verdict, why = run_case(name, model, feeds, tmp)
            counts[verdict] += 1
            print(("ok %s" % name) if verdict == "ok" else "%s %s: %s" % (
                verdict.upper(), name, why))
    print("kernel_ort: %d passed, %d failed, %d skipped" % (counts["ok"], counts["fail"],
                                                            counts["skip"]))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
