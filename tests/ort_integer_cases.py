"""ort_integer_cases.py - kernel_ort.py's single-node cases for the integer, quantized,
data and linear-algebra kernels in forms the backend cases leave out (broadcasting, other
integer types, per-column and per-channel zero points and scales, grouped ConvInteger,
Einsum's "..." and diagonals, unsorted Unique along an axis, Scan with reversed axes,
circular TensorScatter). cases() gives (name, model, feeds, declines)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


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


def cases():
    return [(name, *node_case(op, **kw), False) for name, op, kw in NODE_CASES]
