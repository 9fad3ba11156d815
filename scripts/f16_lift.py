"""A float16 model computed in float32: the same graph with every float16 type, tensor and
dtype attribute made float32 (scripts/fuzz_diff.py's float16 oracle).

float16 values are exact in float32, so the lifted model computes the graph's function
without float16's roundings. How far a model's own float16 outputs lie from its lifted
outputs measures how much float16 rounding moves each output element: large where the
model is ill-conditioned (a LayerNorm over two nearly equal values), tiny elsewhere.
"""
import numpy as np
import onnx
import onnx.numpy_helper
import onnx.shape_inference
from onnx import TensorProto as TP, helper

# Attributes holding an element type (Cast's `to`; EyeLike, Random*'s `dtype`).
DTYPE_ATTRS = ('to', 'dtype')


def lift_model(model, rounded=False):
    """A copy of model with float16 replaced by float32 everywhere. rounded: each node output
    that is float16 in model (as onnx's shape inference finds) is still rounded to float16
    (a Cast to float16 and back after it), so that the copy computes every op in float32 and
    rounds its result as the graph states, where onnxruntime's float16 run may keep a chain of
    ops in float32 (the Casts it inserts around float16 kernels it lacks)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    f16 = _f16_names(onnx.shape_inference.infer_shapes(m).graph) if rounded else set()
    _lift_graph(m.graph)
    if f16:
        _round_after(m.graph, f16)
    return m


def _f16_names(g):
    """Names declared float16 in g (inputs, outputs, value_info) and in its subgraphs."""
    names = {vi.name for vi in list(g.input) + list(g.output) + list(g.value_info)
             if vi.type.tensor_type.elem_type == TP.FLOAT16}
    for n in g.node:
        for a in n.attribute:
            for sub in ([a.g] if a.HasField('g') else []) + list(a.graphs):
                names |= _f16_names(sub)
    return names


def _round_after(g, f16):
    """After each node of g (and of its subgraphs) writing a name in f16: Cast to float16 and
    back to float32, the name moved to the second Cast's output."""
    nodes = []
    for n in g.node:
        for a in n.attribute:
            for sub in ([a.g] if a.HasField('g') else []) + list(a.graphs):
                _round_after(sub, f16)
        nodes.append(n)
        for i, y in enumerate(n.output):
            if y in f16:
                n.output[i] = y + '__unrounded'
                nodes.append(helper.make_node('Cast', [y + '__unrounded'], [y + '__f16'],
                                              to=TP.FLOAT16))
                nodes.append(helper.make_node('Cast', [y + '__f16'], [y], to=TP.FLOAT))
    del g.node[:]
    g.node.extend(nodes)


def lift_feeds(feeds):
    """The arrays of feeds, float16 ones as float32 (exactly)."""
    return {k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in feeds.items()}


def _lift_graph(g):
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        _lift_type(vi.type)
    for i, t in enumerate(g.initializer):
        if t.data_type == TP.FLOAT16:
            g.initializer[i].CopyFrom(_lift_tensor(t))
    for n in g.node:
        for a in n.attribute:
            _lift_attr(a)


def _lift_attr(a):
    if a.type == onnx.AttributeProto.INT and a.name in DTYPE_ATTRS and a.i == TP.FLOAT16:
        a.i = TP.FLOAT
    if a.HasField('t') and a.t.data_type == TP.FLOAT16:
        a.t.CopyFrom(_lift_tensor(a.t))
    for i, t in enumerate(a.tensors):
        if t.data_type == TP.FLOAT16:
            a.tensors[i].CopyFrom(_lift_tensor(t))
    if a.HasField('g'):
        _lift_graph(a.g)
    for sub in a.graphs:
        _lift_graph(sub)
    if a.HasField('tp'):
        _lift_type(a.tp)


def _lift_tensor(t):
    arr = onnx.numpy_helper.to_array(t).astype(np.float32)
    return onnx.numpy_helper.from_array(arr, t.name)


def _lift_type(tp):
    kind = tp.WhichOneof('value')
    if kind == 'tensor_type' and tp.tensor_type.elem_type == TP.FLOAT16:
        tp.tensor_type.elem_type = TP.FLOAT
    elif kind == 'sparse_tensor_type' and tp.sparse_tensor_type.elem_type == TP.FLOAT16:
        tp.sparse_tensor_type.elem_type = TP.FLOAT
    elif kind == 'sequence_type':
        _lift_type(tp.sequence_type.elem_type)
    elif kind == 'optional_type':
        _lift_type(tp.optional_type.elem_type)
