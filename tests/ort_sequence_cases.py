"""ort_sequence_cases.py - kernel_ort.py's cases for the sequence and optional ops at the
attributes, positions and element types the backend cases leave out (uneven and listed
splits, an empty piece, keepdims=0, negative axes and positions, new_axis stacking,
int32, float16, double and bool elements). cases() gives (name, model, feeds, declines)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


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


def cases():
    return [(name, *mf, False) for name, mf in seq_cases()]
