#!/usr/bin/env python3
"""kernel_ort.py - the interpreter against onnxruntime on one-node models the
ONNX backend suite does not cover: the recurrent ops in both directions, in
reverse, with per-batch sequence lengths, clip, linear_before_reset, named
activations, peepholes with input_forget (batch-first layout, which
onnxruntime does not run, is in the backend suite); and single nodes of the
integer, quantized and linear-algebra kernels in forms the suite leaves out
(broadcasting, other integer types, per-channel zero points and scales,
Einsum's "..." and diagonals, Unique along an axis unsorted). For each
model onnxruntime runs seeded random inputs; ppqfmt's --check-inputs and the
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


def node_case(op, ins, outs=1, opset=21, **attrs):
    """(model, feeds) of one op node: ins lists (name, array) pairs, fed as graph inputs,
    or as initializers when the name starts with 'c_'."""
    feeds = {n: a for n, a in ins if not n.startswith("c_")}
    inits = [numpy_helper.from_array(a, n) for n, a in ins if n.startswith("c_")]
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in feeds.items()]
    names = ["y%d" % k for k in range(outs)]
    node = helper.make_node(op, [n for n, _ in ins], names, **attrs)
    graph = helper.make_graph([node], op.lower(), inputs,
                              [onnx.ValueInfoProto(name=n) for n in names], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return onnx.shape_inference.infer_shapes(model, strict_mode=True), feeds


def rand(shape, dtype, lo, hi, seed):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(lo, hi, shape, dtype=dtype, endpoint=True)
    return rng.uniform(lo, hi, shape).astype(dtype)


def scan_body():
    """Scan's body: s' = s + x, y = s' * x (a [2] state, a [2] slice)."""
    v = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])  # noqa: E731
    return helper.make_graph([helper.make_node("Add", ["s", "x"], ["s2"]),
                              helper.make_node("Mul", ["s2", "x"], ["y"])],
                             "body", [v("s"), v("x")], [v("s2"), v("y")])


U8, I8, F = np.uint8, np.int8, np.float32
S = lambda v, t=F: np.array(v, t)  # noqa: E731  a scalar
NODE_CASES = [
    ("bitwise_and_int16_broadcast", "BitwiseAnd",
     dict(ins=[("a", rand((3, 4), np.int16, -30000, 30000, 1)),
               ("b", rand((4,), np.int16, -30000, 30000, 2))])),
    ("bitwise_xor_uint64", "BitwiseXor",
     dict(ins=[("a", rand((5,), np.uint64, 0, 2**64 - 1, 3)),
               ("b", rand((5,), np.uint64, 0, 2**64 - 1, 4))])),
    ("bitwise_not_int8", "BitwiseNot", dict(ins=[("a", rand((2, 3), I8, -128, 127, 5))])),
    ("bitshift_right_uint32_broadcast", "BitShift",
     dict(ins=[("a", rand((2, 3), np.uint32, 0, 2**32 - 1, 6)), ("b", S([1, 7, 31], np.uint32))],
          direction="RIGHT")),
    ("matmulinteger_int8_column_zp", "MatMulInteger",
     dict(ins=[("a", rand((2, 3, 4), I8, -128, 127, 7)), ("b", rand((4, 5), I8, -128, 127, 8)),
               ("a_zp", S(3, I8)), ("b_zp", rand((5,), I8, -5, 5, 9))])),
    ("convinteger_grouped_dilated", "ConvInteger",
     dict(ins=[("x", rand((1, 4, 7, 7), U8, 0, 255, 10)),
               ("c_w", rand((6, 2, 3, 3), U8, 0, 255, 11)),
               ("x_zp", S(7, U8)), ("c_w_zp", S(3, U8))], pads=[1, 2, 1, 0], strides=[2, 1],
          dilations=[1, 2], group=2)),
    ("qlinearmatmul_int8_column_scale", "QLinearMatMul",
     dict(ins=[("a", rand((3, 4), I8, -128, 127, 12)), ("c_as", S(0.02)), ("c_az", S(1, I8)),
               ("c_b", rand((4, 6), I8, -128, 127, 13)), ("c_bs", S(np.linspace(0.01, 0.03, 6), F)),
               ("c_bz", S(0, I8)), ("c_ys", S(0.3)), ("c_yz", S(-3, I8))])),
    ("qlinearconv_channel_scale_bias", "QLinearConv",
     dict(ins=[("x", rand((1, 3, 6, 6), U8, 0, 255, 14)), ("c_xs", S(0.01)), ("c_xz", S(120, U8)),
               ("c_w", rand((4, 3, 3, 3), I8, -100, 100, 15)),
               ("c_ws", S([0.01, 0.02, 0.015, 0.005])),
               ("c_wz", S([0, 0, 0, 0], I8)), ("c_ys", S(0.05)), ("c_yz", S(128, U8)),
               ("c_b", rand((4,), np.int32, -500, 500, 16))], pads=[1, 1, 1, 1])),
    ("dynamicquantizelinear_positive", "DynamicQuantizeLinear",
     dict(ins=[("x", rand((4, 5), F, 0.5, 9, 17))], outs=3)),
    ("einsum_ellipsis_broadcast", "Einsum",
     dict(ins=[("a", rand((2, 1, 3, 4), F, -1, 1, 18)), ("b", rand((1, 5, 4, 2), F, -1, 1, 19))],
          equation="...ij,...jk->...ik")),
    ("einsum_diagonal_implicit", "Einsum",
     dict(ins=[("a", rand((3, 3, 4), F, -1, 1, 20)), ("b", rand((4, 2), F, -1, 1, 21))],
          equation="iij,jk")),
    ("einsum_three_inputs_int32", "Einsum",
     dict(ins=[("a", rand((2, 3), np.int32, -9, 9, 22)), ("b", rand((3, 4), np.int32, -9, 9, 23)),
               ("c", rand((4,), np.int32, -9, 9, 24))], equation="ij,jk,k->i")),
    ("unique_axis1_unsorted", "Unique",
     dict(ins=[("x", S([[1, 3, 1, 2, 3], [0, 5, 0, 4, 5]], np.int64))], outs=4, axis=1, sorted=0)),
    ("compress_flat", "Compress",
     dict(ins=[("x", rand((2, 3), F, -1, 1, 25)), ("c", S([1, 0, 1, 1], bool))])),
    ("reversesequence_batch_first", "ReverseSequence",
     dict(ins=[("x", rand((3, 4, 2), F, -1, 1, 26)), ("lens", S([4, 1, 3], np.int64))],
          batch_axis=0, time_axis=1)),
    ("det_batch", "Det", dict(ins=[("x", rand((2, 3, 4, 4), F, -2, 2, 27))])),
    ("scan_axes_directions", "Scan",
     dict(ins=[("s0", rand((2,), F, -1, 1, 29)), ("x", rand((2, 5), F, -1, 1, 30))], outs=2,
          body=scan_body(), num_scan_inputs=1, scan_input_axes=[1], scan_input_directions=[1],
          scan_output_axes=[1], scan_output_directions=[1])),
    ("tensorscatter_circular", "TensorScatter",
     dict(ins=[("cache", rand((2, 3, 5, 4), F, -1, 1, 31)), ("upd", rand((2, 3, 3, 4), F, -1, 1, 32)),
               ("widx", S([4, 1], np.int64))], mode="circular", axis=2, opset=24)),
    ("nonzero_bool_3d", "NonZero",
     dict(ins=[("x", rand((2, 3, 4), np.int32, 0, 1, 28).astype(bool))])),
]


def run_case(name, op, kw, tmp):
    model, feeds = rnn_case(op, **kw) if op in GATES else node_case(op, **kw)
    path = os.path.join(tmp, name + ".onnx")
    onnx.save(model, path)
    try:
        opts = ort.SessionOptions()
        opts.log_severity_level = 4
        sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        got = sess.run(None, feeds)
    except Exception as e:  # onnxruntime lacks this form: nothing to compare with
        return "skip", "onnxruntime: %s" % str(e).split("\n")[0][:400]
    d = os.path.join(tmp, name)
    testlib.write_data_set(d, feeds.items(), zip([o.name for o in sess.get_outputs()], got))
    p = subprocess.run([PPQFMT, "--dry-run", "-q", "--passes=none", "--check-inputs=" + d,
                        "--check-expected", path], capture_output=True, text=True)
    return ("ok", None) if p.returncode == 0 else ("fail", "exit %d: %s" % (
        p.returncode, p.stderr.strip()[-300:]))


def main():
    counts = {"ok": 0, "fail": 0, "skip": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for name, op, kw in CASES + NODE_CASES:
            verdict, why = run_case(name, op, kw, tmp)
            counts[verdict] += 1
            print(("ok %s" % name) if verdict == "ok" else "%s %s: %s" % (
                verdict.upper(), name, why))
    print("kernel_ort: %d passed, %d failed, %d skipped" % (counts["ok"], counts["fail"],
                                                            counts["skip"]))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
