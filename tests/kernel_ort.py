#!/usr/bin/env python3
"""kernel_ort.py - the interpreter against onnxruntime on small models the
ONNX backend suite does not cover: the recurrent ops in both directions, in
reverse, with per-batch sequence lengths, clip, linear_before_reset, named
activations, peepholes with input_forget (batch-first layout, which
onnxruntime does not run, is in the backend suite); and, from the case
modules ort_nn_cases.py, ort_lowp_cases.py, ort_sequence_cases.py,
ort_integer_cases.py, ort_spatial_cases.py and ort_string_cases.py, the forms
of the other kernels the backend suite leaves out. For each
model onnxruntime runs seeded random inputs; ppqfmt's --check-inputs and the
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

import ort_integer_cases
import ort_lowp_cases
import ort_nn_cases
import ort_sequence_cases
import ort_spatial_cases
import ort_string_cases
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
                     ort_nn_cases.cases() + ort_lowp_cases.cases() + ort_sequence_cases.cases() +
                     ort_integer_cases.cases() + ort_spatial_cases.cases() +
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
