"""ort_lowp_cases.py - kernel_ort.py's cases for QuantizeLinear, DequantizeLinear and
Cast with the low-precision types (int4, uint4, float8) at opset 21, per tensor, per
axis and blocked, saturating or not; onnxruntime returns no int4 or float8 array, so
each model ends in float. cases() gives (name, model, feeds, declines)."""
import numpy as np
from onnx import TensorProto, helper, numpy_helper


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


def cases():
    return [(name, *lowp_case(*make()), False) for name, make in LOWP_CASES.items()]
