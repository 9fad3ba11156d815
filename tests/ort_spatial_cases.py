"""ort_spatial_cases.py - kernel_ort.py's cases for the spatial and signal kernels with
attributes the backend cases leave at their defaults: GridSample's modes and padding
modes (3-D, double), DFT-17/20 (complex, onesided, inverse, dft_length), STFT, the
windows, MelWeightMatrix, ConvTranspose's auto_pad SAME and output_shape, the local
normalizations, the image ops, RoiAlign and DeformConv. cases() gives
(name, model, feeds, declines)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def node_case(op, feeds, opset, out=None, **attrs):
    """(model, feeds) of one op node whose inputs are all graph inputs (None: omitted);
    out: Y's element type (the first input's by default)."""
    ins = [k if v is not None else "" for k, v in feeds.items()]
    out = out or helper.np_dtype_to_tensor_dtype(next(iter(feeds.values())).dtype)
    feeds = {k: v for k, v in feeds.items() if v is not None}
    node = helper.make_node(op, ins, ["Y"], **attrs)
    graph = helper.make_graph(
        [node], op.lower(),
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for k, v in feeds.items()],
        [helper.make_tensor_value_info("Y", out, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model, feeds


def uniform(shape, lo=-1.0, hi=1.0, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def gridsample(opset, x_shape, grid_shape, dtype=np.float32, **attrs):
    # grid values past [-1, 1] reach the padding
    return node_case("GridSample", {"X": uniform(x_shape, dtype=dtype, seed=1),
                                    "grid": uniform(grid_shape, -1.3, 1.3, dtype, seed=2)},
                     opset, **attrs)


def dft(opset, x_shape, n=None, axis=None, dtype=np.float32, **attrs):
    feeds = {"x": uniform(x_shape, dtype=dtype, seed=3),
             "dft_length": None if n is None else np.array(n, np.int64)}
    if opset >= 20:
        feeds["axis"] = None if axis is None else np.array(axis, np.int64)
    elif axis is not None:
        attrs["axis"] = axis
    return node_case("DFT", feeds, opset, **attrs)


def conv_transpose(x_shape, w_shape, **attrs):
    return node_case("ConvTranspose", {"X": uniform(x_shape, seed=4), "W": uniform(w_shape, seed=5)},
                     17, **attrs)


def roialign(**attrs):
    boxes = np.array([[0.3, 1.1, 6.2, 5.7], [2.5, 0.0, 9.5, 7.9], [-1.2, 4.4, 3.3, 11.0]], np.float32)
    return node_case("RoiAlign", {"X": uniform([2, 3, 8, 10], seed=22), "rois": boxes,
                                  "batch_indices": np.array([1, 0, 1], np.int64)}, 16, **attrs)


def scalar(v, dtype=np.int64):
    return np.array(v, dtype)


# Spatial and signal kernels (eval_grid.c, eval_signal.c, eval_conv.c): modes,
# padding modes, dtypes and sizes the backend cases leave out.
NODE_CASES = [
    ("gridsample_bilinear_zeros", lambda: gridsample(16, [2, 3, 5, 4], [2, 6, 7, 2])),
    ("gridsample_bilinear_border_align", lambda: gridsample(
        16, [1, 2, 4, 6], [1, 5, 3, 2], padding_mode="border", align_corners=1)),
    ("gridsample_bicubic_reflection", lambda: gridsample(
        16, [1, 2, 5, 5], [1, 4, 4, 2], mode="bicubic", padding_mode="reflection")),
    ("gridsample_bicubic_reflection_align", lambda: gridsample(
        16, [1, 2, 5, 3], [1, 4, 4, 2], mode="bicubic", padding_mode="reflection",
        align_corners=1)),
    ("gridsample_nearest_reflection", lambda: gridsample(
        16, [1, 3, 4, 5], [1, 6, 6, 2], mode="nearest", padding_mode="reflection")),
    # cubic with border padding: onnxruntime 1.31 and onnx's reference differ (the
    # backend cases, from the reference, cover it)
    ("gridsample20_cubic_zeros_double", lambda: gridsample(
        20, [1, 2, 6, 5], [1, 3, 4, 2], np.float64, mode="cubic")),
    ("gridsample20_linear_3d", lambda: gridsample(20, [1, 2, 3, 4, 5], [1, 2, 3, 4, 3])),
    ("gridsample20_nearest_3d_border", lambda: gridsample(
        20, [1, 2, 3, 4, 5], [1, 2, 3, 4, 3], mode="nearest", padding_mode="border")),
    ("dft17_complex_inverse_len", lambda: dft(17, [2, 6, 2], n=8, inverse=1)),
    ("dft17_real_onesided_axis2", lambda: dft(17, [2, 3, 7, 1], n=5, axis=2, onesided=1)),
    # onnxruntime 1.31 crashes on a DFT-20 whose axis input is omitted: always given
    ("dft20_real_double", lambda: dft(20, [3, 9, 1], axis=-2, dtype=np.float64)),
    ("dft20_axis1_of_4", lambda: dft(20, [2, 5, 3, 2], axis=1)),
    ("dft20_irfft", lambda: dft(20, [2, 5, 2], n=9, axis=1, inverse=1, onesided=1)),
    ("stft_window_twosided", lambda: node_case(
        "STFT", {"signal": uniform([2, 20, 1], seed=6), "frame_step": scalar(3),
                 "window": uniform([6], 0, 1, seed=7)}, 17, onesided=0)),
    ("stft_frame_length", lambda: node_case(
        "STFT", {"signal": uniform([1, 17, 1], seed=8), "frame_step": scalar(4),
                 "window": None, "frame_length": scalar(5)}, 17)),
    ("hannwindow_symmetric_double", lambda: node_case(
        "HannWindow", {"size": scalar(9)}, 17, TensorProto.DOUBLE, periodic=0,
        output_datatype=TensorProto.DOUBLE)),
    ("blackmanwindow_periodic", lambda: node_case("BlackmanWindow", {"size": scalar(11)}, 17,
                                                       TensorProto.FLOAT)),
    ("hammingwindow_int32_size", lambda: node_case(
        "HammingWindow", {"size": scalar(7, np.int32)}, 17, TensorProto.FLOAT)),
    ("melweightmatrix_edges", lambda: node_case(
        "MelWeightMatrix", {"num_mel_bins": scalar(6), "dft_length": scalar(64),
                            "sample_rate": scalar(16000), "lower_edge_hertz": scalar(133.3, np.float32),
                            "upper_edge_hertz": scalar(6100.5, np.float32)}, 17, TensorProto.FLOAT)),
    ("convtranspose_same_lower", lambda: conv_transpose(
        [1, 2, 4, 5], [2, 3, 3, 4], auto_pad="SAME_LOWER", strides=[2, 3])),
    ("convtranspose_same_upper_dilated", lambda: conv_transpose(
        [1, 2, 4, 5], [2, 2, 3, 3], auto_pad="SAME_UPPER", strides=[2, 2], dilations=[2, 1])),
    ("convtranspose_output_shape_grouped", lambda: conv_transpose(
        [1, 4, 3, 3], [4, 1, 3, 2], group=2, strides=[3, 2], output_shape=[10, 7])),
    ("convtranspose_output_shape_same_upper", lambda: conv_transpose(
        [1, 1, 5, 4], [1, 2, 3, 3], auto_pad="SAME_UPPER", strides=[2, 2], output_shape=[8, 7])),
    ("lpnormalization_l1_negative", lambda: node_case(
        "LpNormalization", {"x": uniform([3, 4, 5], seed=9)}, 17, axis=1, p=1)),
    ("lpnormalization_l2_double", lambda: node_case(
        "LpNormalization", {"x": uniform([4, 6], dtype=np.float64, seed=10)}, 17, axis=0)),
    ("lrn_size_5", lambda: node_case(  # onnxruntime takes odd sizes only
        "LRN", {"x": uniform([2, 7, 3, 4], seed=11)}, 17, size=5, alpha=0.3, beta=0.6, bias=1.5)),
    ("mvn_axes_1", lambda: node_case(
        "MeanVarianceNormalization", {"x": uniform([2, 5, 3, 2], seed=12)}, 13, axes=[1])),
    ("mvn_axes_2_3", lambda: node_case(  # onnxruntime's function body is float only
        "MeanVarianceNormalization", {"x": uniform([2, 3, 4, 5], seed=13)}, 13, axes=[2, 3])),
    ("centercroppad_crop_pad_axes", lambda: node_case(
        "CenterCropPad", {"x": uniform([3, 8, 5], seed=14), "shape": np.array([5, 8], np.int64)},
        18, axes=[-2, 2])),
    ("col2im_strides_pads_dilations", lambda: node_case(
        "Col2Im", {"x": uniform([2, 3 * 2 * 3, 8], seed=15),
                   "image_shape": np.array([6, 7], np.int64),
                   "block_shape": np.array([2, 3], np.int64)},
        18, strides=[2, 2], pads=[1, 0, 1, 1], dilations=[1, 2])),
    ("depthtospace_crd", lambda: node_case(
        "DepthToSpace", {"x": uniform([2, 8, 3, 2], seed=16)}, 13, blocksize=2, mode="CRD")),
    ("depthtospace_dcr_3", lambda: node_case(
        "DepthToSpace", {"x": uniform([1, 18, 2, 3], seed=17)}, 13, blocksize=3)),
    ("spacetodepth_3", lambda: node_case(
        "SpaceToDepth", {"x": uniform([2, 2, 6, 3], seed=18)}, 13, blocksize=3)),
    ("affinegrid_3d_align", lambda: node_case(
        "AffineGrid", {"theta": uniform([2, 3, 4], seed=19), "size": np.array([2, 1, 3, 4, 5])},
        20, align_corners=1)),
    ("affinegrid_2d", lambda: node_case(
        "AffineGrid", {"theta": uniform([1, 2, 3], seed=20), "size": np.array([1, 3, 5, 6])}, 20)),
    ("maxunpool_strided_pads", lambda: node_case(
        "MaxUnpool", {"x": uniform([1, 2, 2, 3], seed=21),
                      "i": np.array([0, 4, 7, 13, 17, 19, 20, 26, 29, 31, 37, 38], np.int64)
                      .reshape(1, 2, 2, 3)}, 11, kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 0, 0])),
    ("roialign_max_output_half_pixel", lambda: roialign(
        mode="max", coordinate_transformation_mode="output_half_pixel", output_height=3,
        output_width=2)),
    ("roialign_avg_ratio_scale", lambda: roialign(
        sampling_ratio=2, spatial_scale=0.5, output_height=2, output_width=4)),
    ("deformconv_groups_mask_strided", lambda: node_case(
        "DeformConv", {"X": uniform([2, 4, 7, 6], seed=23), "W": uniform([6, 2, 3, 2], seed=24),
                       "offset": uniform([2, 2 * 3 * 2 * 2, 4, 3], -2, 2, seed=25),
                       "B": uniform([6], seed=26), "mask": uniform([2, 2 * 3 * 2, 4, 3], 0, 1, seed=27)},
        19, group=2, offset_group=2, strides=[2, 2], pads=[1, 0, 1, 1], dilations=[1, 2])),
]


def cases():
    return [(name, *make(), False) for name, make in NODE_CASES]
