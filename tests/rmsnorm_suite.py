#!/usr/bin/env python3
"""fuse-rmsnorm: the decomposed RMS norm of LLaMA-style models to RMSNormalization-23.

Models are built here with onnx's helper at opset 23: x [2, 4, 8] -> square -> ReduceMean over
the last axis -> Add(eps) -> the four normalizing forms torch exports -> Mul(weight [8]). The
fused cases go through the default passes and must hold one RMSNormalization reading x and the
weight (its bytes as before) with axis -1 and the model's epsilon, none of the chain's
operators, pass onnx's full checker and compute what the original computes under onnxruntime
(tolerance 1e-5 + 1e-3*max|ref|). The kept cases (eps not constant, the weight read by another
node, the mean over another axis, an intermediate value read elsewhere or a graph output, a
double x, opset 22) go through fuse-rmsnorm alone and must hold no RMSNormalization; through
the default passes they must stay valid and equivalent. Run with .deps/venv/bin/python (as
tests/run_all.sh does). Last line: `rmsnorm_suite: N passed, M failed`.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
import ortcheck  # noqa: E402
import testlib  # noqa: E402

PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
EPS = 1e-6
CHAIN_OPS = {'Pow', 'ReduceMean', 'Sqrt', 'Div', 'Reciprocal', 'Cast'}
NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64}


def const(name, value, dt=T.FLOAT):
    return numpy_helper.from_array(np.asarray(value, dtype=NP[dt]), name)


def build(form='div_one', square='pow', swap=False, dt=T.FLOAT, axes=(-1,), eps_input=False,
          opset=23, extra=None, cast=None):
    """The chain in one of its forms; extra(nodes, outputs, inits) adds readers; cast: torch's
    half-precision form, x0 of that type cast to float (dt) and the result cast back before
    the weight (of that type)."""
    rng = np.random.default_rng(1)
    nodes, inits = [], [const('w', rng.uniform(0.5, 1.5, 8), cast or dt), const('two', 2.0, dt),
                        const('one', 1.0, dt), const('mhalf', -0.5, dt)]
    pair = (lambda a, b: [b, a]) if swap else (lambda a, b: [a, b])
    if cast:
        nodes.append(helper.make_node('Cast', ['x0'], ['x'], to=dt))
    nodes.append(helper.make_node('Pow', ['x', 'two'], ['q']) if square == 'pow' else
                 helper.make_node('Mul', ['x', 'x'], ['q']))
    if axes:  # an input from opset 18 on; none: every axis
        inits.append(numpy_helper.from_array(np.array(axes, np.int64), 'axes'))
    nodes.append(helper.make_node('ReduceMean', ['q', 'axes'] if axes else ['q'], ['m'],
                                  keepdims=1))
    inputs = [helper.make_tensor_value_info('x0' if cast else 'x', cast or dt, [2, 4, 8])]
    if eps_input:
        inputs.append(helper.make_tensor_value_info('eps', dt, []))
    else:
        inits.append(const('eps', EPS, dt))
    nodes.append(helper.make_node('Add', pair('m', 'eps'), ['a']))
    if form == 'rsqrt':
        nodes += [helper.make_node('Pow', ['a', 'mhalf'], ['inv']),
                  helper.make_node('Mul', pair('x', 'inv'), ['n'])]
    else:
        nodes.append(helper.make_node('Sqrt', ['a'], ['s']))
        if form == 'div_x':
            nodes.append(helper.make_node('Div', ['x', 's'], ['n']))
        else:
            nodes += [helper.make_node('Div', ['one', 's'], ['inv']) if form == 'div_one' else
                      helper.make_node('Reciprocal', ['s'], ['inv']),
                      helper.make_node('Mul', pair('x', 'inv'), ['n'])]
    if cast:
        nodes.append(helper.make_node('Cast', ['n'], ['nc'], to=cast))
    nodes.append(helper.make_node('Mul', pair('nc' if cast else 'n', 'w'), ['y']))
    outputs = [helper.make_tensor_value_info('y', cast or dt, [2, 4, 8])]
    if extra:
        extra(nodes, outputs, inits)
    g = helper.make_graph(nodes, 'rms', inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = 10
    return m


def weight_read_elsewhere(nodes, outputs, inits):
    nodes.append(helper.make_node('Mul', ['x', 'w'], ['z']))
    outputs.append(helper.make_tensor_value_info('z', T.FLOAT, [2, 4, 8]))


def reads(value, shape):
    def add(nodes, outputs, inits):
        nodes.append(helper.make_node('Neg', [value], [value + '_read']))
        outputs.append(helper.make_tensor_value_info(value + '_read', T.FLOAT, shape))
    return add


def output(value, shape):
    def add(nodes, outputs, inits):
        outputs.append(helper.make_tensor_value_info(value, T.FLOAT, shape))
    return add


FUSED = {
    'div_one': {}, 'reciprocal': {'form': 'reciprocal'}, 'div_x': {'form': 'div_x'},
    'rsqrt': {'form': 'rsqrt'}, 'mul_square': {'square': 'mul'},
    'swapped_operands': {'swap': True, 'form': 'reciprocal'},
    'positive_axis': {'axes': (2,)},
    'float16': {'dt': T.FLOAT16, 'form': 'rsqrt'},
    'float16_cast_to_float': {'cast': T.FLOAT16, 'form': 'rsqrt'},
}
KEPT = {
    'eps_not_constant': {'eps_input': True},
    'weight_read_elsewhere': {'extra': weight_read_elsewhere},
    'axis_not_last': {'axes': (1,)},
    'two_axes': {'axes': (-2, -1)},
    'every_axis': {'axes': ()},
    'mean_read_elsewhere': {'extra': reads('m', [2, 4, 1])},
    'sqrt_read_elsewhere': {'extra': reads('s', [2, 4, 1])},
    'normalized_is_output': {'extra': output('n', [2, 4, 8])},
    'double': {'dt': T.DOUBLE},
    'opset22': {'opset': 22},
    'cast_input_read_elsewhere': {'cast': T.FLOAT16, 'extra': reads('x', [2, 4, 8])},
}


def ppqfmt(src, out, *args):
    p = subprocess.run([PPQFMT, '-q', src, '-o', out] + list(args), capture_output=True,
                       text=True)
    if p.returncode:
        raise RuntimeError('exit %d: %s' % (p.returncode, p.stderr.strip()))
    return onnx.load(out)


def fused_structure(src, out):
    a, b = onnx.load(src), onnx.load(out)
    rms = [n for n in b.graph.node if n.op_type == 'RMSNormalization']
    left = sorted(n.op_type for n in b.graph.node if n.op_type in CHAIN_OPS)
    if len(rms) != 1 or left:
        return '%d RMSNormalization, chain operators left: %s' % (len(rms), left)
    n = rms[0]
    attrs = {x.name: helper.get_attribute_value(x) for x in n.attribute}
    inits = {t.name: t for t in a.graph.initializer}
    eps = float(np.float32(numpy_helper.to_array(inits['eps'])))  # as the model rounds it
    if attrs.get('axis', -1) != -1 or abs(attrs.get('epsilon', 1e-5) - eps) > eps * 1e-6:
        return 'attributes %s' % attrs
    x = a.graph.input[0].name  # x, or x0 cast to float
    if n.input[0] != x or n.output[0] != 'y':
        return 'reads %s, writes %s' % (list(n.input), list(n.output))
    w = {t.name: t for t in b.graph.initializer}.get(n.input[1])
    w0 = inits['w']
    if w is None or numpy_helper.to_array(w).tobytes() != numpy_helper.to_array(w0).tobytes():
        return 'scale %s is not the weight' % n.input[1]
    return None


def kept(out):
    ops = [n.op_type for n in onnx.load(out).graph.node]
    return 'fused: %s' % ops if 'RMSNormalization' in ops or 'ReduceMean' not in ops else None


def ort_same(src, out):
    feeds = ortcheck.random_inputs(src, seed=3)
    if 'eps' in feeds:
        feeds['eps'] = np.asarray(EPS, feeds['eps'].dtype)
    ok, msg = ortcheck.compare(ortcheck.run_python(src, feeds), ortcheck.run_python(out, feeds))
    return None if ok else msg


def main():
    ort.set_default_logger_severity(3)
    t = testlib.Tally('rmsnorm_suite')
    with tempfile.TemporaryDirectory(prefix='rmsnorm_suite_') as tmp:
        for name, opts in list(FUSED.items()) + list(KEPT.items()):
            src, out, alone = (os.path.join(tmp, name + s) for s in
                               ('.onnx', '.out.onnx', '.alone.onnx'))
            m = build(**opts)
            if not t.check('%s: the case is valid' % name, onnx.checker.check_model, m, True):
                continue
            onnx.save(m, src)
            if not t.check('%s: default passes' % name, lambda: ppqfmt(src, out) and None):
                continue
            if name in FUSED:
                t.check('%s: fused' % name, fused_structure, src, out)
            else:
                t.check('%s: kept by fuse-rmsnorm alone' % name, lambda: ppqfmt(
                    src, alone, '--passes=fuse-rmsnorm') and kept(alone))
            t.check('%s: full checker' % name, onnx.checker.check_model, out, True)
            t.check('%s: onnxruntime same outputs' % name, ort_same, src, out)
    return t.summary()


if __name__ == '__main__':
    sys.exit(main())
