#!/usr/bin/env python3
"""Float8, 4-bit, 2-bit and float4 tensors through ppqfmt's default passes.

Models are built here with onnx's helper: initializers and Constants of each low-bit type (odd
element counts, so a 4-bit tensor ends in half a byte; float8e8m0 and the 2-bit types of
opsets 24 and 25 too) in every storage form onnx writes (raw_data, int32_data, external data),
read through Identity/Reshape/Transpose and Cast to float; Cast from float to each type;
DequantizeLinear of float8 (opset 19) and of block-quantized int4 (opset 21); QuantizeLinear
with output_dtype int4 and float8e5m2, CastLike to float8 and uint4. Each output must pass
onnx's full checker, keep every initializer it still holds stored exactly as before (the
TensorProto bytes equal), type and shape every value_info as onnx's inference does on the
original, and compute what the original computes under onnxruntime (tolerance 1e-5 +
1e-3*max|ref|) where onnxruntime runs the original. --external-data moves 4-bit and float8
weights out byte for byte; 4-bit bytes that do not match the dims are refused. Run with
.deps/venv/bin/python (as tests/run_all.sh does). Last line: `lowbit_types: N passed, M failed`.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, external_data_helper, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
import ortcheck  # noqa: E402
import testlib  # noqa: E402

PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))

# dtype -> (opset whose Identity/Reshape/Transpose/Cast accept it, values to store)
FLOAT8 = [-1.5, 0.25, 3.0, -0.0, 2.5]
TYPES = {
    T.FLOAT8E4M3FN: (21, FLOAT8), T.FLOAT8E4M3FNUZ: (21, FLOAT8),
    T.FLOAT8E5M2: (21, FLOAT8), T.FLOAT8E5M2FNUZ: (21, FLOAT8),
    T.INT4: (21, [-8, 7, 0, -3, 5]), T.UINT4: (21, [0, 15, 3, 9, 1]),
    T.FLOAT4E2M1: (23, [-6.0, 0.5, 1.5, -0.0, 4.0]),
    T.FLOAT8E8M0: (24, [1.0, 2.0, 0.25, 64.0, 0.5]),
    T.INT2: (25, [-2, 1, 0, -1, 1]), T.UINT2: (25, [0, 3, 1, 2, 3]),
}
SUB_BYTE = (T.INT4, T.UINT4, T.FLOAT4E2M1, T.INT2, T.UINT2)


def model_at(g, opset):
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 10 if opset <= 22 else 11 if opset <= 24 else 12
    return m


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def passthrough(dtype, raw):
    """W (5 elements of dtype) -> Identity -> Transpose [5,1] -> (Reshape [1,5] for float8,
    which onnxruntime has no 4-bit Reshape for) -> Cast float; a Constant of dtype -> Cast
    float; float x -> Cast dtype -> Cast float."""
    opset, vals = TYPES[dtype]
    w = helper.make_tensor('w', dtype, [1, 5], vals)
    if raw:
        w = numpy_helper.from_array(numpy_helper.to_array(w), 'w')
    c = helper.make_tensor('cv', dtype, [1, 5], vals)
    shape = numpy_helper.from_array(np.array([1, 5], np.int64), 'shape')
    reshape = dtype not in SUB_BYTE
    nodes = [helper.make_node('Identity', ['w'], ['w1']),
             helper.make_node('Transpose', ['w1'], ['w2'], perm=[1, 0])]
    nodes += [helper.make_node('Reshape', ['w2', 'shape'], ['w3'])] if reshape else []
    nodes += [helper.make_node('Cast', ['w3' if reshape else 'w2'], ['y'], to=T.FLOAT),
              helper.make_node('Constant', [], ['c'], value=c),
              helper.make_node('Cast', ['c'], ['y2'], to=T.FLOAT),
              helper.make_node('Cast', ['x'], ['xq'], to=dtype),
              helper.make_node('Cast', ['xq'], ['y3'], to=T.FLOAT)]
    g = helper.make_graph(nodes, 'passthrough', [vi('x', T.FLOAT, [2, 3])],
                          [vi('y', T.FLOAT, [1, 5] if reshape else [5, 1]),
                           vi('y2', T.FLOAT, [1, 5]), vi('y3', T.FLOAT, [2, 3])],
                          [w] + ([shape] if reshape else []))
    return model_at(g, opset)


def dq_float8():
    """Opset 19: a float8 weight dequantized into a MatMul, and x quantized to float8."""
    w = helper.make_tensor('w', T.FLOAT8E4M3FN, [3, 5], list(np.linspace(-2, 2, 15)))
    w = numpy_helper.from_array(numpy_helper.to_array(w), 'w')  # raw_data
    nodes = [helper.make_node('DequantizeLinear', ['w', 's'], ['wf']),
             helper.make_node('MatMul', ['x', 'wf'], ['m']),
             helper.make_node('QuantizeLinear', ['m', 's', 'zp'], ['mq']),
             helper.make_node('DequantizeLinear', ['mq', 's', 'zp'], ['y'])]
    inits = [w, numpy_helper.from_array(np.array(0.5, np.float32), 's'),
             helper.make_tensor('zp', T.FLOAT8E4M3FN, [], [0.0])]
    g = helper.make_graph(nodes, 'dq_float8', [vi('x', T.FLOAT, [2, 3])],
                          [vi('y', T.FLOAT, [2, 5])], inits)
    return model_at(g, 19)


def dq_int4_block(raw):
    """Opset 21: an int4 weight [5, 3] (15 elements, odd) block-quantized along axis 0 with
    block size 2, dequantized into a MatMul; x quantized with output_dtype int4."""
    rng = np.random.default_rng(3)
    wv = [int(v) for v in rng.integers(-8, 8, 15)]
    w = helper.make_tensor('w', T.INT4, [5, 3], wv, raw=False)
    zp = helper.make_tensor('zp', T.INT4, [3, 3], [int(v) for v in rng.integers(-2, 3, 9)])
    if raw:
        w = helper.make_tensor('w', T.INT4, [5, 3], _packed(wv), raw=True)
    nodes = [helper.make_node('DequantizeLinear', ['w', 's', 'zp'], ['wf'], axis=0, block_size=2),
             helper.make_node('MatMul', ['x', 'wf'], ['m']),
             helper.make_node('QuantizeLinear', ['m', 'sx'], ['mq'], output_dtype=T.INT4),
             helper.make_node('DequantizeLinear', ['mq', 'sx'], ['y'])]
    inits = [w, zp, numpy_helper.from_array(rng.uniform(0.1, 0.3, (3, 3)).astype(np.float32), 's'),
             numpy_helper.from_array(np.array(0.25, np.float32), 'sx')]
    g = helper.make_graph(nodes, 'dq_int4', [vi('x', T.FLOAT, [2, 5])],
                          [vi('y', T.FLOAT, [2, 3])], inits)
    return model_at(g, 21)


def castlike_q():
    """Opset 21: CastLike to float8 and uint4, QuantizeLinear with output_dtype float8e5m2."""
    nodes = [helper.make_node('CastLike', ['x', 't8'], ['a']),
             helper.make_node('CastLike', ['x', 't4'], ['b']),
             helper.make_node('QuantizeLinear', ['x', 's'], ['q'], output_dtype=T.FLOAT8E5M2),
             helper.make_node('Cast', ['a'], ['ya'], to=T.FLOAT),
             helper.make_node('Cast', ['b'], ['yb'], to=T.FLOAT),
             helper.make_node('DequantizeLinear', ['q', 's'], ['yq'])]
    inits = [helper.make_tensor('t8', T.FLOAT8E4M3FN, [1], [1.0]),
             helper.make_tensor('t4', T.UINT4, [1], [1]),
             numpy_helper.from_array(np.array(0.5, np.float32), 's')]
    g = helper.make_graph(nodes, 'castlike_q', [vi('x', T.FLOAT, [3])],
                          [vi(n, T.FLOAT, [3]) for n in ('ya', 'yb', 'yq')], inits)
    return model_at(g, 21)


def _packed(vals):
    """Two 4-bit elements a byte, low nibble first; the last byte half empty when odd."""
    nib = [v & 15 for v in vals] + ([0] if len(vals) % 2 else [])
    return bytes(nib[i] | nib[i + 1] << 4 for i in range(0, len(nib), 2))


def cases():
    for dtype in TYPES:
        for raw in (False, True):
            name = '%s/%s' % (T.DataType.Name(dtype).lower(), 'raw' if raw else 'int32')
            yield name, (lambda d=dtype, r=raw: passthrough(d, r)), False
        yield '%s/external' % T.DataType.Name(dtype).lower(), \
            (lambda d=dtype: passthrough(d, True)), True
    yield 'dq-float8', dq_float8, False
    yield 'dq-float8/external', dq_float8, True
    yield 'dq-int4-block/int32', lambda: dq_int4_block(False), False
    yield 'dq-int4-block/raw', lambda: dq_int4_block(True), False
    yield 'dq-int4-block/external', lambda: dq_int4_block(True), True
    yield 'castlike-q-float8', castlike_q, False


def same_initializers(a, b):
    """Every initializer b still holds under a's name is stored as a stored it."""
    before = {t.name: t for t in a.graph.initializer}
    for t in b.graph.initializer:
        if t.name in before:
            x, y = before[t.name], t
            if (x.data_type, list(x.dims)) != (y.data_type, list(y.dims)):
                return '%s: type or dims changed' % t.name
            if x.HasField('raw_data') != y.HasField('raw_data') or \
                    bytes(x.raw_data) != bytes(y.raw_data) or \
                    list(x.int32_data) != list(y.int32_data):
                return '%s: stored bytes changed' % t.name
    return None


def types_as_onnx_infers(src, out):
    """Every value_info ppqfmt wrote has the element type and dims onnx's own inference gives
    the original."""
    want = {v.name: v.type.tensor_type for v in
            onnx.shape_inference.infer_shapes(onnx.load(src), strict_mode=True).graph.value_info}
    got = onnx.load(out).graph.value_info
    if not got:
        return 'no value_info written'
    for v in got:
        w, g = want.get(v.name), v.type.tensor_type
        if w is None:
            continue  # onnx infers nothing there: nothing to compare
        dims = [[d.dim_value for d in t.shape.dim] for t in (w, g)]
        if w.elem_type != g.elem_type or dims[0] != dims[1]:
            return '%s: %s%s, onnx infers %s%s' % (v.name, T.DataType.Name(g.elem_type), dims[1],
                                                T.DataType.Name(w.elem_type), dims[0])
    return None


def ort_same(src, out):
    try:
        feeds = ortcheck.random_inputs(src, seed=5)
        ref = ortcheck.run_python(src, feeds)
    except Exception as e:  # no kernel for the original: nothing to compare against
        return testlib.SKIP + 'onnxruntime does not run the original: %s' % str(e)[:120]
    ok, msg = ortcheck.compare(ref, ortcheck.run_python(out, feeds))
    return None if ok else msg


def check_case(t, tmp, name, build, external):
    d = os.path.join(tmp, name.replace('/', '_'))
    os.makedirs(d)
    src, out = os.path.join(d, 'in.onnx'), os.path.join(d, 'out.onnx')
    m = build()
    onnx.checker.check_model(m, full_check=True)  # the case itself must be valid
    if external:  # the low-bit tensors in in.data; int64 shapes stay inline for onnx's checker
        external_data_helper.convert_model_to_external_data(m, location='in.data',
                                                            size_threshold=0)
        for x in m.graph.initializer:
            if x.data_type == T.INT64:
                x.ClearField('external_data')
                x.data_location = T.DEFAULT
    onnx.save(m, src)
    p = subprocess.run([PPQFMT, '-q', src, '-o', out], capture_output=True, text=True)
    if not t.check('%s: exit 0' % name, lambda: None if p.returncode == 0 else p.stderr):
        return
    a, b = onnx.load(src), onnx.load(out)
    t.check('%s: full checker' % name, onnx.checker.check_model, out, True)
    t.check('%s: initializers stored as before' % name, same_initializers, a, b)
    t.check('%s: types as onnx infers them' % name, types_as_onnx_infers, src, out)
    t.check('%s: onnxruntime same outputs' % name, ort_same, src, out)


def moved_out(tmp):
    """--external-data with threshold 16: int4 weights of 4097 elements (2049 bytes) as raw_data
    and as int32_data, an int2 one of 4099 as int32_data and a float8 one of 33 leave the model
    for the data file, their values as before."""
    d = os.path.join(tmp, 'moved_out')
    os.makedirs(d)
    rng = np.random.default_rng(0)
    vals = [int(v) for v in rng.integers(-8, 8, 4097)]
    f = helper.make_tensor('f', T.FLOAT8E4M3FN, [33], list(np.linspace(-3, 3, 33)))
    inits = [helper.make_tensor('w', T.INT4, [4097], _packed(vals), raw=True),
             helper.make_tensor('w2', T.INT4, [4097], vals),
             helper.make_tensor('u2', T.INT2, [4099], [int(v) for v in rng.integers(-2, 2, 4099)]),
             numpy_helper.from_array(numpy_helper.to_array(f), 'f')]
    nodes = [helper.make_node('Cast', [t.name], ['y_' + t.name], to=T.FLOAT) for t in inits]
    g = helper.make_graph(nodes, 'moved', [], [vi('y_' + t.name, T.FLOAT, list(t.dims))
                                              for t in inits], inits)
    src, out = os.path.join(d, 'in.onnx'), os.path.join(d, 'out.onnx')
    onnx.save(model_at(g, 25), src)
    p = subprocess.run([PPQFMT, '-q', src, '-o', out, '--external-data=out.data',
                        '--size-threshold=16'], capture_output=True, text=True)
    if p.returncode:
        return p.stderr
    stored = onnx.load(out, load_external_data=False).graph.initializer
    if any(t.data_location != T.EXTERNAL for t in stored):
        return 'kept inline: %s' % [t.name for t in stored if t.data_location != T.EXTERNAL]
    onnx.checker.check_model(out, True)
    values = lambda ts: {t.name: numpy_helper.to_array(t).tobytes() for t in ts}  # noqa: E731
    if values(onnx.load(out).graph.initializer) != values(inits):
        return 'values changed'
    return ort_same(src, out)


def refused(tmp, name, tensor, external=False):
    """A 4-bit initializer whose stored bytes do not match its dims: exit 2, one stderr line,
    no output."""
    d = os.path.join(tmp, name)
    os.makedirs(d)
    g = helper.make_graph([helper.make_node('Cast', ['w'], ['y'], to=T.FLOAT)], name, [],
                          [vi('y', T.FLOAT, [5])], [tensor])
    src, out = os.path.join(d, 'in.onnx'), os.path.join(d, 'out.onnx')
    m = model_at(g, 21)
    if external:
        with open(os.path.join(d, 'w.bin'), 'wb') as fh:
            fh.write(tensor.raw_data)
        external_data_helper.set_external_data(m.graph.initializer[0], 'w.bin')
        m.graph.initializer[0].ClearField('raw_data')
        m.graph.initializer[0].data_location = T.EXTERNAL
    with open(src, 'wb') as fh:  # onnx.save would check nothing either; written as built
        fh.write(m.SerializeToString())
    p = subprocess.run([PPQFMT, '-q', src, '-o', out], capture_output=True, text=True)
    lines = p.stderr.strip().splitlines()
    if p.returncode != 2 or len(lines) != 1 or 'pack' not in lines[0] or os.path.exists(out):
        return 'exit %d, stderr %r, output %s' % (p.returncode, p.stderr, os.path.exists(out))
    return None


def main():
    ort.set_default_logger_severity(3)
    t = testlib.Tally('lowbit_types')
    with tempfile.TemporaryDirectory(prefix='lowbit_types_') as tmp:
        for name, build, external in cases():
            try:
                check_case(t, tmp, name, build, external)
            except Exception as e:  # a case onnx itself rejects is a broken test
                t.report('%s: build' % name, '%s: %s' % (type(e).__name__, e))
        t.check('external-data output: 4-bit and float8 weights move out', moved_out, tmp)
        short = helper.make_tensor('w', T.INT4, [5], b'\x12\x34\x05', raw=True)
        short.raw_data = b'\x12\x34'  # 5 elements need 3 bytes
        t.check('int4 raw_data too short: refused', refused, tmp, 'short_raw', short)
        t.check('int4 external data too short: refused', refused, tmp, 'short_ext', short, True)
        few = helper.make_tensor('w', T.INT4, [5], [1, 2, 3, 4, 5])
        del few.int32_data[-1]  # 5 elements need 3 packed bytes
        t.check('int4 int32_data too short: refused', refused, tmp, 'short_int32', few)
    return t.summary()


if __name__ == '__main__':
    sys.exit(main())
