#!/usr/bin/env python3
"""Shape inference of the com.microsoft operators (core/ops/ops_contrib.c) against onnxruntime.

For each case a small model runs one contrib operator on static inputs, each of its outputs
read by a Cast to double (so that it is an intermediate value infer-shapes declares). ppqfmt formats it
(default passes); every output of the contrib node must then be declared with a type and a
shape, and each declared dim (a number) must equal the one onnxruntime actually produces (the
original run with those values made graph outputs). A dim ppqfmt leaves symbolic is counted,
not failed: onnxruntime may decide it at run time. Run with .deps/venv/bin/python (as
tests/run_all.sh does). Last line: `contrib_ops: N passed, M failed`.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import ortcheck  # noqa: E402
import testlib  # noqa: E402

PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
F32, I32, I64, U8 = np.float32, np.int32, np.int64, np.uint8
RNG = np.random.default_rng(3)
TYPES = {F32: T.FLOAT, I32: T.INT32, I64: T.INT64, U8: T.UINT8}


def rand(*shape, dtype=F32):
    return (RNG.random(shape) * (255 if dtype == U8 else 1)).astype(dtype)


def case(op, inputs, outputs, domain='com.microsoft', **attrs):
    """(op, node, feeds): inputs is [(name, ndarray or None for an omitted input)]."""
    node = h.make_node(op, [n if a is not None else '' for n, a in inputs], outputs, 'node0',
                       domain=domain, **attrs)
    return op, node, {n: a for n, a in inputs if a is not None}


B, S, N, KV, D = 1, 4, 4, 2, 16
CASES = [
    case('GroupQueryAttention', [('q', rand(B, S, N * D)), ('k', rand(B, S, KV * D)),
                                 ('v', rand(B, S, KV * D)), ('pk', rand(B, KV, 6, D)),
                                 ('pv', rand(B, KV, 6, D)), ('sl', np.array([9], I32)),
                                 ('tl', np.array(10, I32))],
         ['o', 'present_k', 'present_v'], num_heads=N, kv_num_heads=KV),
    case('GroupQueryAttention', [('qkv', rand(B, S, (N + 2 * KV) * D)), ('k', None), ('v', None),
                                 ('pk', rand(B, KV, 0, D)), ('pv', rand(B, KV, 0, D)),
                                 ('sl', np.array([3], I32)), ('tl', np.array(4, I32))],
         ['o', 'present_k', 'present_v'], num_heads=N, kv_num_heads=KV),
    case('MultiHeadAttention', [('q', rand(B, S, N * D)), ('k', rand(B, 5, N * D)),
                                ('v', rand(B, 5, N * 8))], ['o'], num_heads=N),
    case('Attention', [('x', rand(2, 3, 8)), ('w', rand(8, 24)), ('b', rand(24))], ['o', 'present'],
         num_heads=2),
    case('SkipLayerNormalization', [('x', rand(2, 3, 8)), ('s', rand(2, 3, 8)), ('g', rand(8)),
                                    ('b', rand(8))], ['o', 'mean', 'inv_std', 'sum']),
    case('SkipSimplifiedLayerNormalization', [('x', rand(2, 3, 8)), ('s', rand(2, 3, 8)),
                                              ('g', rand(8))], ['o', 'mean', 'inv_std', 'sum']),
    case('SimplifiedLayerNormalization', [('x', rand(2, 3, 8)), ('g', rand(8))],
         ['o', 'inv_std'], domain='', axis=-1),
    case('RotaryEmbedding', [('x', rand(1, 3, 32)), ('p', np.array([[0, 1, 2]], I64)),
                             ('c', rand(8, 8)), ('s', rand(8, 8))], ['o']),
    case('MatMulNBits', [('a', rand(2, 3, 64)), ('b', rand(32, 2, 16, dtype=U8)),
                         ('sc', rand(64))], ['o'], K=64, N=32, bits=4, block_size=32),
    case('FusedMatMul', [('a', rand(2, 5, 3)), ('b', rand(2, 4, 5))], ['o'], transA=1, transB=1,
         alpha=0.5),
    case('FusedMatMul', [('a', rand(3, 5)), ('b', rand(2, 5, 4))], ['o']),
    case('QLinearAdd', [('a', rand(2, 3, dtype=U8)), ('as', np.array(0.1, F32)),
                        ('az', np.array(128, U8)), ('b', rand(3, dtype=U8)),
                        ('bs', np.array(0.2, F32)), ('bz', np.array(128, U8)),
                        ('cs', np.array(0.3, F32)), ('cz', np.array(128, U8))], ['o']),
    case('QuantizeLinear', [('x', rand(2, 3)), ('s', np.array(0.1, F32)),
                            ('z', np.array(3, U8))], ['o']),
    case('DequantizeLinear', [('x', rand(2, 3, dtype=U8)), ('s', np.array(0.1, F32)),
                              ('z', np.array(3, U8))], ['o']),
]


def model(node, feeds, outputs):
    ins = [h.make_tensor_value_info(n, TYPES[a.dtype.type], list(a.shape)) for n, a in feeds.items()]
    casts = [h.make_node('Cast', [o], [o + '_out'], 'cast_' + o, to=T.DOUBLE) for o in outputs]
    outs = [h.make_tensor_value_info(o + '_out', T.DOUBLE, None) for o in outputs]
    m = h.make_model(h.make_graph([node] + casts, 'g', ins, outs),
                     opset_imports=[h.make_opsetid('', 17), h.make_opsetid('com.microsoft', 1)])
    m.ir_version = 8
    return m


def actual(m, feeds, outputs):
    """{value: (onnx elem type, shape)} onnxruntime produces for the contrib node's outputs."""
    probe = onnx.ModelProto()
    probe.CopyFrom(m)
    probe.graph.output.extend(h.make_empty_tensor_value_info(o) for o in outputs)
    got = ortcheck.run_python(probe.SerializeToString(), feeds)
    return {o: (onnx.helper.np_dtype_to_tensor_dtype(got[o].dtype), list(got[o].shape))
            for o in outputs}


def declared(path):
    m = onnx.load(path)
    out = {}
    for vi in m.graph.value_info:
        t = vi.type.tensor_type
        dims = [d.dim_value if d.HasField('dim_value') else None for d in t.shape.dim]
        out[vi.name] = (t.elem_type, dims if t.HasField('shape') else None)
    return out


def check(op, node, feeds, tmp, tally):
    outputs = [o for o in node.output if o]
    label = '%s(%s)' % (op, ','.join(f.shape.__repr__() for f in feeds.values()))[:90]
    src, dst = os.path.join(tmp, 'm.onnx'), os.path.join(tmp, 'o.onnx')
    m = model(node, feeds, outputs)
    onnx.save(m, src)
    want = actual(m, feeds, outputs)
    p = subprocess.run([PPQFMT, '-q', src, '-o', dst], capture_output=True, text=True)
    if not tally.check(label + ': exit 0', lambda: None if p.returncode == 0 else p.stderr):
        return 0
    got = declared(dst)
    symbolic = 0
    for o in outputs:
        def same(o=o):
            if o not in got or got[o][1] is None:
                return 'not declared'
            dt, dims = got[o]
            wdt, wdims = want[o]
            if dt != wdt or len(dims) != len(wdims):
                return 'declared %s, onnxruntime gives %s' % (got[o], want[o])
            bad = [i for i, (a, b) in enumerate(zip(dims, wdims)) if a is not None and a != b]
            return 'dims %s, onnxruntime %s' % (dims, wdims) if bad else None
        tally.check('%s: %s' % (label, o), same)
        symbolic += sum(d is None for d in (got.get(o, (0, []))[1] or []))
    return symbolic


def main():
    ort.set_default_logger_severity(3)
    tally = testlib.Tally('contrib_ops')
    symbolic = 0
    with tempfile.TemporaryDirectory(prefix='contrib_ops_') as tmp:
        for op, node, feeds in CASES:
            symbolic += check(op, node, feeds, tmp, tally)
    print('dims left symbolic (onnxruntime decides them at run time): %d' % symbolic)
    return tally.summary()


if __name__ == '__main__':
    sys.exit(main())
