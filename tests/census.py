"""What constant folding left in a formatted model, counted independently of ppqfmt.

foldable_left(model) lists the nodes whose inputs are all constants, except the kinds the
fold pass never folds (docs/PASSES.md, pass "fold"): random operations, QuantizeLinear and
DequantizeLinear, operations of other domains, results over the fold limit, and
Expand/Tile/ConstantOfShape whose result is more than twice the size of its inputs (and more
than 1 MiB, --fold-growth-limit). Result sizes come from onnx's own shape inference, not from the value_info ppqfmt
wrote. static_shapes_left(model) lists the Shape/Size nodes whose input onnx's inference gives a
static shape (the dims the node reads, for Shape with start/end): those must have become
constants.

Used by tests/test_models.py (the census check) and scripts/bench.py (the fold table)."""
import numpy as np
import onnx
from onnx import helper, shape_inference

FOLD_LIMIT = 64 << 20
NEVER = {'RandomNormal', 'RandomUniform', 'RandomNormalLike', 'RandomUniformLike', 'Multinomial',
         'Bernoulli', 'QuantizeLinear', 'DequantizeLinear', 'DynamicQuantizeLinear', 'Constant'}
GROWS = {'Expand', 'Tile', 'ConstantOfShape'}
GROWTH, SMALL = 2, 1 << 20  # --fold-growth-limit's default


def _subgraphs(node):
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def _walk(g, outer, path, old_ir):
    """(path, node, constants in scope) for every node, subgraphs included. A constant is an
    initializer that is not also a graph input: from IR 4 on such an initializer is a default
    the caller may override; before, every initializer is listed as an input and counts."""
    inputs = {i.name for i in g.input}
    local = {k: v for k, v in outer.items() if k not in inputs}
    for t in g.initializer:
        if old_ir or t.name not in inputs:
            local[t.name] = t
    for n in g.node:
        yield path, n, local
        for sub in _subgraphs(n):
            yield from _walk(sub, local, '%s/%s' % (path, n.name), old_ir)


def _nodes(model):
    return _walk(model.graph, {}, 'main', model.ir_version < 4)


def _strip_value_info(g):
    del g.value_info[:]
    for n in g.node:
        for sub in _subgraphs(n):
            _strip_value_info(sub)


def onnx_types(model):
    """{value name: (elem_type, dims or None)} from onnx's inference on a copy of model without
    the value_info it carries (so nothing ppqfmt wrote is read back)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    _strip_value_info(m.graph)
    try:
        m = shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
    except Exception:  # noqa: BLE001 - inference failing leaves every size unknown
        return {}
    types = {}

    def take(vis):
        for vi in vis:
            tt = vi.type.tensor_type
            if not vi.type.HasField('tensor_type'):
                continue
            dims = None
            if tt.HasField('shape'):
                dims = [d.dim_value if d.HasField('dim_value') else None for d in tt.shape.dim]
            types[vi.name] = (tt.elem_type, dims)

    def visit(g):
        take(g.input)
        take(g.output)
        take(g.value_info)
        for t in g.initializer:
            types[t.name] = (t.data_type, list(t.dims))
        for n in g.node:
            for sub in _subgraphs(n):
                visit(sub)
    visit(m.graph)
    return types


def _nbytes(entry):
    if not entry or entry[1] is None or any(d is None for d in entry[1]):
        return None
    try:
        size = np.dtype(helper.tensor_dtype_to_np_dtype(entry[0])).itemsize
    except Exception:  # noqa: BLE001 - string and unknown element types
        return None
    return int(np.prod(entry[1], dtype=np.int64)) * size


def _label(path, n):
    return n.name if path == 'main' else '%s/%s' % (path, n.name)


def foldable_left(model, limit=FOLD_LIMIT, types=None):
    """Labels of the nodes that fold should have evaluated and did not (see the module doc)."""
    types = onnx_types(model) if types is None else types
    left = []
    for path, n, consts in _nodes(model):
        present = [x for x in n.input if x]
        if (n.op_type in NEVER or n.domain not in ('', 'ai.onnx') or
                not all(x in consts for x in present) or any(_subgraphs(n))):
            continue
        outs = [_nbytes(types.get(o)) for o in n.output if o]
        if any(b is not None and b > limit for b in outs):
            continue
        if n.op_type in GROWS:
            ins = sum(_nbytes((consts[x].data_type, list(consts[x].dims))) or 0 for x in present)
            grown = max(ins * GROWTH, SMALL)
            if any(b is None or b > grown for b in outs):
                continue
        left.append(_label(path, n))
    return left


def static_shapes_left(model, types=None):
    """Labels of the Shape/Size nodes whose input has a shape onnx's inference knows."""
    types = onnx_types(model) if types is None else types
    left = []
    for path, n, _ in _nodes(model):
        if n.op_type not in ('Shape', 'Size') or n.domain not in ('', 'ai.onnx'):
            continue
        dims = (types.get(n.input[0]) or (None, None))[1] if n.input else None
        if dims is None:
            continue
        rank = len(dims)
        attrs = {a.name: a.i for a in n.attribute}
        start, end = (0, rank) if n.op_type == 'Size' else (attrs.get('start', 0),
                                                            attrs.get('end', rank))
        start, end = [min(max(x + rank if x < 0 else x, 0), rank) for x in (start, end)]
        if all(d is not None for d in dims[start:end]):
            left.append(_label(path, n))
    return left
