#!/usr/bin/env python3
"""Quantized models through ppqfmt: a QDQ model as onnxruntime's quantize_static writes it
goes through the default passes valid, equivalent and quantized the same way.

Float models are built here with onnx's helper (a Conv/BatchNormalization/residual network and
a MatMul/Add/Softmax block, at opsets 13 and 17), quantized by the pinned onnxruntime's
quantize_static (QDQ format, per-tensor and per-channel, random calibration data), then
formatted with ppqfmt's default passes. Each output must pass onnx's full checker, compute
what the QDQ model computes under onnxruntime (tolerance 1e-5 + 1e-3*max|ref|), hold as many
QuantizeLinear and DequantizeLinear nodes, and leave every initializer a Q/DQ node reads read
by the same nodes (never split, merged or folded). Run with .deps/venv/bin/python (as
tests/run_all.sh does). Last line: `qdq_suite: N passed, M failed`.
"""
import collections
import logging
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
import ortcheck  # noqa: E402
import testlib  # noqa: E402

PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
QDQ = ('QuantizeLinear', 'DequantizeLinear')
RNG = np.random.default_rng(7)


def init(name, *shape, scale=0.2):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def convnet(opset):
    bn = [init('g', 8), init('beta', 8), init('mean', 8),
          numpy_helper.from_array(RNG.uniform(0.5, 1.5, 8).astype(np.float32), 'var')]
    nodes = [helper.make_node('Conv', ['x', 'w1', 'b1'], ['c1'], 'conv1', pads=[1, 1, 1, 1]),
             helper.make_node('BatchNormalization', ['c1', 'g', 'beta', 'mean', 'var'], ['n1'],
                              'bn1'),
             helper.make_node('Relu', ['n1'], ['r1'], 'relu1'),
             helper.make_node('Conv', ['r1', 'w2', 'b2'], ['c2'], 'conv2', pads=[1, 1, 1, 1]),
             helper.make_node('Add', ['c2', 'r1'], ['s'], 'residual'),
             helper.make_node('GlobalAveragePool', ['s'], ['p'], 'pool'),
             helper.make_node('Flatten', ['p'], ['f'], 'flatten'),
             helper.make_node('Gemm', ['f', 'wf', 'bf'], ['y'], 'fc', transB=1)]
    inits = [init('w1', 8, 3, 3, 3), init('b1', 8), init('w2', 8, 8, 3, 3), init('b2', 8),
             init('wf', 10, 8), init('bf', 10)] + bn
    g = helper.make_graph(nodes, 'convnet', [helper.make_tensor_value_info(
        'x', TensorProto.FLOAT, [1, 3, 16, 16])], [helper.make_tensor_value_info(
            'y', TensorProto.FLOAT, [1, 10])], inits)
    return model_at(g, opset)


def attention(opset):
    nodes = [helper.make_node('MatMul', ['x', 'wq'], ['q0'], 'q'),
             helper.make_node('Add', ['q0', 'bq'], ['q'], 'q_bias'),
             helper.make_node('MatMul', ['x', 'wk'], ['k0'], 'k'),
             helper.make_node('Transpose', ['k0'], ['kt'], 'k_t', perm=[0, 2, 1]),
             helper.make_node('MatMul', ['q', 'kt'], ['a0'], 'scores'),
             helper.make_node('Mul', ['a0', 'scale'], ['a1'], 'scale'),
             helper.make_node('Softmax', ['a1'], ['a'], 'softmax', axis=-1),
             helper.make_node('MatMul', ['a', 'x'], ['o'], 'mix'),
             helper.make_node('MatMul', ['o', 'wo'], ['o1'], 'proj'),
             helper.make_node('Add', ['o1', 'x'], ['y'], 'residual')]
    inits = [init('wq', 16, 16), init('bq', 16), init('wk', 16, 16), init('wo', 16, 16),
             numpy_helper.from_array(np.array(0.25, np.float32), 'scale')]
    g = helper.make_graph(nodes, 'attention', [helper.make_tensor_value_info(
        'x', TensorProto.FLOAT, [1, 8, 16])], [helper.make_tensor_value_info(
            'y', TensorProto.FLOAT, [1, 8, 16])], inits)
    return model_at(g, opset)


def model_at(g, opset):
    """IR 8, which onnxruntime reads (onnx's helper writes its own newest)."""
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 8
    return m


class Calibration(CalibrationDataReader):
    def __init__(self, path):
        self.feeds = [ortcheck.random_inputs(path, seed=s) for s in range(4)]

    def get_next(self):
        return self.feeds.pop() if self.feeds else None


def qdq_readers(m):
    """{initializer: sorted names of the nodes reading it} for those a Q/DQ node reads."""
    readers = collections.defaultdict(set)
    for n in m.graph.node:
        for i in n.input:
            readers[i].add(n.name)
    qdq = {n.name for n in m.graph.node if n.op_type in QDQ}
    return {t.name: sorted(readers[t.name]) for t in m.graph.initializer
            if readers[t.name] & qdq}


def count(m):
    return collections.Counter(n.op_type for n in m.graph.node if n.op_type in QDQ)


def ort_equiv(a, b):
    feeds = ortcheck.random_inputs(a, seed=11)
    return ortcheck.compare(ortcheck.run_python(a, feeds), ortcheck.run_python(b, feeds))


def check_case(t, tmp, name, build, opset, per_channel):
    label = '%s@%d%s' % (name, opset, '/per-channel' if per_channel else '')
    fp, q, out = (os.path.join(tmp, label.replace('/', '_') + s) for s in
                  ('.onnx', '.qdq.onnx', '.fmt.onnx'))
    onnx.save(build(opset), fp)
    quantize_static(fp, q, Calibration(fp), quant_format=QuantFormat.QDQ,
                    per_channel=per_channel)
    p = subprocess.run([PPQFMT, '-q', q, '-o', out], capture_output=True, text=True)
    if not t.check('%s: exit 0' % label, lambda: None if p.returncode == 0 else p.stderr):
        return
    qm, om = onnx.load(q), onnx.load(out)
    t.check('%s: full checker' % label, onnx.checker.check_model, om, True)
    t.check('%s: as many Q/DQ nodes' % label,
            lambda: None if count(qm) == count(om) else '%s -> %s' % (count(qm), count(om)))
    t.check('%s: Q/DQ initializers read as before' % label,
            lambda: None if qdq_readers(qm) == qdq_readers(om) else 'changed')
    t.check('%s: onnxruntime same outputs' % label,
            lambda: None if ort_equiv(q, out)[0] else ort_equiv(q, out)[1])


def main():
    ort.set_default_logger_severity(3)
    logging.getLogger().setLevel(logging.ERROR)  # the quantizer's advice to pre-process
    t = testlib.Tally('qdq_suite')
    with tempfile.TemporaryDirectory(prefix='qdq_suite_') as tmp:
        for name, build in (('convnet', convnet), ('attention', attention)):
            for opset in (13, 17):
                for per_channel in (False, True):
                    check_case(t, tmp, name, build, opset, per_channel)
    return t.summary()


if __name__ == '__main__':
    sys.exit(main())
