#!/usr/bin/env python3
"""kernel_ort.py - the interpreter against onnxruntime on small models the
ONNX backend suite does not cover: the recurrent ops in both directions, in
reverse, with per-batch sequence lengths, clip, linear_before_reset, named
activations, peepholes with input_forget (batch-first layout, which
onnxruntime does not run, is in the backend suite); QuantizeLinear,
DequantizeLinear and Cast with the low-precision types (int4, uint4,
float8) at opset 21, per tensor, per axis and blocked, saturating or not
(the backend suite's cases of these are at opset 28, past ppqfmt's range;
onnxruntime returns no int4 or float8 array, so each model ends in float). For each
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


LOWP_SHAPE = [4, 6]


def lowp_case(nodes, inits, out_names=("y",)):
    """(model, feeds) of nodes at opset 21 reading a float input x of LOWP_SHAPE
    (values up to +-600, so that float8 saturates) and the initializers inits."""
    rng = np.random.default_rng(len(nodes) * 7919 + sum(len(n.op_type) for n in nodes))
    x = (rng.uniform(-1, 1, LOWP_SHAPE) * np.where(rng.uniform(size=LOWP_SHAPE) < 0.2, 600, 20))
    graph = helper.make_graph(
        nodes, "lowp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, LOWP_SHAPE)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in out_names], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    return model, {"x": x.astype(np.float32)}


def qdq_nodes(qtype, scale_dims, zero=None, **attrs):
    """x -> QuantizeLinear(qtype) -> DequantizeLinear -> y, the scale (and zero point)
    initializers of scale_dims."""
    scale = np.linspace(0.5, 3.0, int(np.prod(scale_dims)), dtype=np.float32).reshape(scale_dims)
    inits = [numpy_helper.from_array(scale, "s")]
    ins = ["q_in", "s"]
    if zero is not None:
        inits.append(helper.make_tensor("z", qtype, scale_dims,
                                        np.resize(np.array(zero), scale.size).tolist()))
        ins.append("z")
    extra = {} if zero is not None else {"output_dtype": qtype}
    if "saturate" in attrs:  # QuantizeLinear's alone
        extra["saturate"] = attrs.pop("saturate")
    return ([helper.make_node("Identity", ["x"], ["q_in"]),
             helper.make_node("QuantizeLinear", ins, ["q"], **extra, **attrs),
             helper.make_node("DequantizeLinear", ["q"] + ins[1:], ["y"], **attrs)], inits)


def dq_weight_nodes(qtype, values, scale_dims, **attrs):
    """y = x + DequantizeLinear(w) for a constant w of qtype and LOWP_SHAPE."""
    scale = np.linspace(0.25, 2.0, int(np.prod(scale_dims)), dtype=np.float32).reshape(scale_dims)
    w = helper.make_tensor("w", qtype, LOWP_SHAPE, np.resize(np.array(values), 24).tolist())
    return ([helper.make_node("DequantizeLinear", ["w", "s"], ["wf"], **attrs),
             helper.make_node("Add", ["x", "wf"], ["y"])],
            [w, numpy_helper.from_array(scale, "s")])


def cast_nodes(to, saturate=1, gain=1.0):
    """x * gain -> Cast(to, saturate) -> Cast(float) -> y (a gain of 200 takes x past
    E5M2's largest finite value, 57344)."""
    return ([helper.make_node("Mul", ["x", "gain"], ["xg"]),
             helper.make_node("Cast", ["xg"], ["c"], to=to, saturate=saturate),
             helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)],
            [numpy_helper.from_array(np.array(gain, np.float32), "gain")])


T = TensorProto
LOWP_CASES = {
    "qdq_int4_per_axis": lambda: qdq_nodes(T.INT4, [6], zero=[-1, 0, 2], axis=1),
    "qdq_uint4_blocked": lambda: qdq_nodes(T.UINT4, [4, 3], zero=[3, 8], axis=1, block_size=2),
    "qdq_int4_blocked_axis0": lambda: qdq_nodes(T.INT4, [2, 6], axis=0, block_size=2),
    "qdq_e4m3fn_saturate": lambda: qdq_nodes(T.FLOAT8E4M3FN, [1]),
    "qdq_e4m3fn_no_saturate": lambda: qdq_nodes(T.FLOAT8E4M3FN, [1], saturate=0),
    "qdq_e5m2_per_axis": lambda: qdq_nodes(T.FLOAT8E5M2, [6], axis=1),
    "qdq_e4m3fnuz_no_saturate": lambda: qdq_nodes(T.FLOAT8E4M3FNUZ, [1], saturate=0),
    "qdq_e5m2fnuz": lambda: qdq_nodes(T.FLOAT8E5M2FNUZ, [4], axis=0),
    "dq_int4_weight_blocked": lambda: dq_weight_nodes(T.INT4, range(-8, 8), [4, 2], axis=1,
                                                      block_size=3),
    "dq_uint4_weight_per_axis": lambda: dq_weight_nodes(T.UINT4, range(16), [4], axis=0),
    "dq_e4m3fn_weight": lambda: dq_weight_nodes(T.FLOAT8E4M3FN, [0.5, -448, 3.75, 1e-3], [1]),
    "cast_e4m3fn_no_saturate": lambda: cast_nodes(T.FLOAT8E4M3FN, 0),
    "cast_e5m2_saturate": lambda: cast_nodes(T.FLOAT8E5M2, 1, 200.0),
    # No E5M2 without saturation: onnxruntime 1.31.1 gives NaN where x rounds to 61440..65535
    # (past the largest finite value), the spec and onnx's reference infinity; the backend
    # suite's castlike_no_saturate cases check that one.
    "cast_e5m2fnuz_no_saturate": lambda: cast_nodes(T.FLOAT8E5M2FNUZ, 0, 200.0),
    "cast_e4m3fnuz_saturate": lambda: cast_nodes(T.FLOAT8E4M3FNUZ, 1),
}

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
] + [(name, "lowp", {}) for name in LOWP_CASES]


def run_case(name, op, kw, tmp):
    model, feeds = lowp_case(*LOWP_CASES[name]()) if op == "lowp" else rnn_case(op, **kw)
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
        for name, op, kw in CASES:
            verdict, why = run_case(name, op, kw, tmp)
            counts[verdict] += 1
            print(("ok %s" % name) if verdict == "ok" else "%s %s: %s" % (
                verdict.upper(), name, why))
    print("kernel_ort: %d passed, %d failed, %d skipped" % (counts["ok"], counts["fail"],
                                                            counts["skip"]))
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
