"""ort_nn_cases.py - kernel_ort.py's cases for the network kernels: MaxPool's Indices
output (dilated with ceil_mode, column-major, 1-D SAME_UPPER, 3-D uint8), Upsample-9 and
Resize-10 nearest (the legacy rounding), antialiased Resize, 3-D Conv and ConvTranspose.
cases() gives (name, model, feeds, declines)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


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


def cases():
    return [(name, *build(), False) for name, build in MODEL_CASES]
