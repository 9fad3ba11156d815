#!/usr/bin/python3
"""Generate the large models scripts/bench.py measures (issue 5), cached.

Usage: scripts/make_bench_models.py [--quick] [--only inline|external|files] [OUTDIR]
       scripts/make_bench_models.py --nodes 10k,100k,1M [--pattern P] [OUTDIR]
       (OUTDIR defaults to build/bench next to scripts/)

  inline    ~600 MB (--quick: ~60 MB), every tensor inside model.onnx: a chain
            of 3x3 Conv (with bias) -> BatchNormalization -> Relu layers,
            float32, C channels in and out, on a [1, C, 8, 8] input.
  external  ~3 GiB (--quick: ~300 MB): a chain of Gemm (with bias, transB
            alternating 1/0) -> BatchNormalization -> Relu layers on [1, N];
            every tensor in weights.bin beside model.onnx.
  files     ~2.3 GB (--quick: ~140 MB): a chain of MatMul -> Relu layers on
            [1, N] whose 34 weights are 34 data files named after them (as
            torch.onnx.export writes a model over 2 GiB); the default passes
            leave them as they are, so ppqfmt copies each file.

BatchNormalization statistics are non-trivial (scale, bias, mean, var drawn
at random, epsilon varying) so folding them really changes the weights.

Each model lives in OUTDIR/<name>/ with a manifest.json that records the
SHA-256 of this file, the parameters and the size of every file.  A model whose
manifest matches (same generator, same parameters, files present with their
sizes) is kept; anything else is regenerated into OUTDIR/.tmp-<name> and
renamed into place, so an interrupted run leaves no half model behind.

The external model is written piece by piece: each tensor is drawn with numpy,
appended to weights.bin and dropped, and the TensorProto only records
location/offset/length (data_location=EXTERNAL).  The generator never holds
more than one layer's weight (64 MiB) in memory.  The inline model is built
in memory with onnx (about twice its size at peak).

Every generated model passes onnx.checker.check_model(path, full_check=True)
before its manifest is written.  Deterministic: weights come from numpy
generators seeded per layer.

Node-scaling models (issue 12), `--nodes SIZES` (e.g. 10k,100k,1M): for each
pattern of NODE_PATTERNS a graph of exactly N nodes, tiny tensors (2 channels),
in OUTDIR/nodes-<pattern>-<N>/ with the same manifest and cache rules:

  convbn    N/2 x (Conv with bias -> BatchNormalization): fuse-bn folds each
  bn        N x BatchNormalization on a [1, 2, 4, 4] input: bn-to-conv
  fanbn     N/2 x BatchNormalization all reading the input (one value with N/2
            readers, each replaced in turn by bn-to-conv), summed by N/2 Adds
  clip      N x Clip-6 (min 0, max 6 attributes) at opset 9: clip upgrades
  dead      N/2 x Relu reaching the output, N/2 x Relu reaching nothing and
            N/2 initializers nobody reads: isolated removes them
  split     N x Add(x, W) all reading one initializer W: split-params copies it

These are written as protobuf bytes directly (the onnx Python objects cost
~1 KB and several microseconds per node); the 10k model of each pattern passes
onnx.checker.check_model(full_check=True), the larger ones the plain check.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPSET = 13
IR = 8
MODEL = 'model.onnx'
DATA = 'weights.bin'
MiB = 1 << 20

# name -> parameters; layer counts give ~600 MB / ~3 GiB (quick ~60 / ~300 MB).
SPECS = {
    'inline': dict(kind='inline', channels=1024, layers=16),           # 16 x 37.7 MB = 604 MB
    'inline-quick': dict(kind='inline', channels=512, layers=6),       # 6 x 9.4 MB = 57 MB
    'external': dict(kind='external', features=4096, layers=48),       # 48 x 64 MiB = 3.0 GiB
    'external-quick': dict(kind='external', features=2048, layers=18),  # 18 x 16 MiB = 302 MB
    'files': dict(kind='files', features=4096, layers=34),             # 34 files x 64 MiB = 2.3 GB
    'files-quick': dict(kind='files', features=1024, layers=34),       # 34 files x 4 MiB = 143 MB
}


def generator_hash():
    with open(os.path.abspath(__file__), 'rb') as f:
        return hashlib.sha256(f.read()).hexdigest()


def names_for(quick):
    return ['inline-quick', 'external-quick', 'files-quick'] if quick else ['inline', 'external', 'files']


def bn_stats(rng, n):
    """scale, bias, mean, var of one BatchNormalization over n channels."""
    return [rng.uniform(0.5, 1.5, n).astype(np.float32),
            rng.normal(0, 0.5, n).astype(np.float32),
            rng.normal(0, 0.5, n).astype(np.float32),
            rng.uniform(0.5, 2.0, n).astype(np.float32)]


def epsilon(i):
    return [1e-5, 1e-3, 1e-4][i % 3]


def weight(rng, shape, fan_in):
    w = rng.standard_normal(shape, dtype=np.float32)
    w *= np.float32(np.sqrt(2.0 / fan_in))
    return w


def finish(graph_nodes, inits, inp, out, name):
    g = helper.make_graph(graph_nodes, name, [inp], [out], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', OPSET)],
                          producer_name='ppqfmt-bench', producer_version='1')
    m.ir_version = IR
    return m


def build_inline(folder, channels, layers, **_):
    c = channels
    nodes, inits = [], []
    x = 'X'
    for i in range(layers):
        rng = np.random.default_rng(1000 + i)
        p = 'l%d_' % i
        w = weight(rng, (c, c, 3, 3), c * 9)
        b = rng.normal(0, 0.1, c).astype(np.float32)
        inits.append(numpy_helper.from_array(w, p + 'conv_w'))
        del w
        inits.append(numpy_helper.from_array(b, p + 'conv_b'))
        for n, a in zip(['bn_scale', 'bn_bias', 'bn_mean', 'bn_var'], bn_stats(rng, c)):
            inits.append(numpy_helper.from_array(a, p + n))
        nodes.append(helper.make_node('Conv', [x, p + 'conv_w', p + 'conv_b'], [p + 'conv'], name=p + 'conv',
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node('BatchNormalization',
                                      [p + 'conv'] + [p + n for n in ['bn_scale', 'bn_bias', 'bn_mean', 'bn_var']],
                                      [p + 'bn'], name=p + 'bn', epsilon=epsilon(i)))
        y = 'Y' if i == layers - 1 else p + 'relu'
        nodes.append(helper.make_node('Relu', [p + 'bn'], [y], name=p + 'relu'))
        x = y
    m = finish(nodes, inits, helper.make_tensor_value_info('X', TensorProto.FLOAT, [1, c, 8, 8]),
               helper.make_tensor_value_info('Y', TensorProto.FLOAT, [1, c, 8, 8]), 'bench_inline')
    del inits, nodes
    data = m.SerializeToString()
    del m
    with open(os.path.join(folder, MODEL), 'wb') as f:
        f.write(data)


def external_tensor(name, a, location, offset):
    """A float TensorProto whose data, a's bytes, are at offset in the file location."""
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(a.shape)
    t.data_location = TensorProto.EXTERNAL
    for k, v in [('location', location), ('offset', str(offset)), ('length', str(a.nbytes))]:
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


class ExternalWriter:
    """Appends arrays to one data file and returns TensorProtos pointing there."""

    ALIGN = 4096  # large tensors start on a page boundary (as newer onnx does)

    def __init__(self, folder):
        self.f = open(os.path.join(folder, DATA), 'wb')
        self.offset = 0

    def add(self, name, a):
        a = np.ascontiguousarray(a, dtype=np.float32)
        if a.nbytes >= MiB and self.offset % self.ALIGN:
            pad = self.ALIGN - self.offset % self.ALIGN
            self.f.write(b'\0' * pad)
            self.offset += pad
        t = external_tensor(name, a, DATA, self.offset)
        self.f.write(memoryview(a).cast('B'))
        self.offset += a.nbytes
        return t

    def close(self):
        self.f.close()


def build_external(folder, features, layers, **_):
    n = features
    nodes, inits = [], []
    wr = ExternalWriter(folder)
    try:
        x = 'X'
        for i in range(layers):
            rng = np.random.default_rng(2000 + i)
            p = 'l%d_' % i
            trans_b = 1 - i % 2
            w = weight(rng, (n, n), n)  # [out, in] when transB=1, [in, out] when 0
            inits.append(wr.add(p + 'gemm_w', w))
            del w
            inits.append(wr.add(p + 'gemm_b', rng.normal(0, 0.1, n).astype(np.float32)))
            for nm, a in zip(['bn_scale', 'bn_bias', 'bn_mean', 'bn_var'], bn_stats(rng, n)):
                inits.append(wr.add(p + nm, a))
            nodes.append(helper.make_node('Gemm', [x, p + 'gemm_w', p + 'gemm_b'], [p + 'gemm'], name=p + 'gemm',
                                          transB=trans_b))
            nodes.append(helper.make_node('BatchNormalization',
                                          [p + 'gemm'] + [p + nm for nm in ['bn_scale', 'bn_bias', 'bn_mean', 'bn_var']],
                                          [p + 'bn'], name=p + 'bn', epsilon=epsilon(i)))
            y = 'Y' if i == layers - 1 else p + 'relu'
            nodes.append(helper.make_node('Relu', [p + 'bn'], [y], name=p + 'relu'))
            x = y
    finally:
        wr.close()
    m = finish(nodes, inits, helper.make_tensor_value_info('X', TensorProto.FLOAT, [1, n]),
               helper.make_tensor_value_info('Y', TensorProto.FLOAT, [1, n]), 'bench_external')
    with open(os.path.join(folder, MODEL), 'wb') as f:
        f.write(m.SerializeToString())


def build_files(folder, features, layers, **_):
    """A MatMul+Relu chain whose every weight is a data file of its own named after it, as
    torch.onnx.export writes a model over 2 GiB: nothing for the default passes to change in
    the weights, so ppqfmt's output folder gets each file copied as it is."""
    n = features
    nodes, inits = [], []
    x = 'X'
    for i in range(layers):
        p = 'l%d_' % i
        w = weight(np.random.default_rng(3000 + i), (n, n), n)
        with open(os.path.join(folder, p + 'w'), 'wb') as f:
            f.write(memoryview(w).cast('B'))
        inits.append(external_tensor(p + 'w', w, p + 'w', 0))
        del w
        y = 'Y' if i == layers - 1 else p + 'relu'
        nodes.append(helper.make_node('MatMul', [x, p + 'w'], [p + 'mm'], name=p + 'mm'))
        nodes.append(helper.make_node('Relu', [p + 'mm'], [y], name=p + 'relu'))
        x = y
    m = finish(nodes, inits, helper.make_tensor_value_info('X', TensorProto.FLOAT, [1, n]),
               helper.make_tensor_value_info('Y', TensorProto.FLOAT, [1, n]), 'bench_files')
    with open(os.path.join(folder, MODEL), 'wb') as f:
        f.write(m.SerializeToString())


# ---------------------------------------------------------------- node scaling

NODE_PATTERNS = ['convbn', 'bn', 'fanbn', 'clip', 'dead', 'split']
NODE_CHANNELS = 2


def parse_size(text):
    """'10k' -> 10000, '1M' -> 1000000, '500' -> 500."""
    t = text.strip()
    mult = {'k': 1000, 'K': 1000, 'm': 1000000, 'M': 1000000}.get(t[-1:], 1)
    return int(t[:-1] if mult > 1 else t) * mult


def size_label(n):
    return '%dM' % (n // 1000000) if n % 1000000 == 0 else '%dk' % (n // 1000) if n % 1000 == 0 else str(n)


def node_model_name(pattern, n):
    return 'nodes-%s-%s' % (pattern, size_label(n))


def _varint(n):
    out = bytearray()
    while n > 0x7f:
        out.append((n & 0x7f) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _ld(field, payload):
    """A length-delimited protobuf field."""
    return _varint(field << 3 | 2) + _varint(len(payload)) + payload


def _vi(field, n):
    return _varint(field << 3) + _varint(n)


def _pb_node(op, inputs, outputs, name, attrs=b''):
    """NodeProto: input 1, output 2, name 3, op_type 4, attribute 5."""
    return b''.join([_ld(1, i) for i in inputs] + [_ld(2, o) for o in outputs]
                    + [_ld(3, name), _ld(4, op), attrs])


def _pb_attr_float(name, v):
    """AttributeProto: name 1, f 2 (fixed32), type 20 (FLOAT = 1)."""
    return _ld(5, _ld(1, name) + b'\x15' + np.float32(v).tobytes() + _vi(20, 1))


def _pb_attr_int(name, v):
    return _ld(5, _ld(1, name) + _vi(3, v) + _vi(20, 2))


def _pb_attr_ints(name, vs):
    return _ld(5, _ld(1, name) + b''.join(_vi(8, v) for v in vs) + _vi(20, 7))


def _pb_tensor(name, raw, dims):
    """TensorProto (float): dims 1, data_type 2, name 8, raw_data 9."""
    return b''.join([_vi(1, d) for d in dims] + [_vi(2, TensorProto.FLOAT), _ld(8, name), _ld(9, raw)])


def _pb_value_info(name, dims):
    shape = b''.join(_ld(1, _vi(1, d)) for d in dims)
    return _ld(1, name) + _ld(2, _ld(1, _vi(1, TensorProto.FLOAT) + _ld(2, shape)))


def _node_graph(pattern, n):
    """(opset, ir_version, node bytes list, initializer bytes list)."""
    c = NODE_CHANNELS
    rng = np.random.default_rng(3000)
    vec = lambda lo, hi: rng.uniform(lo, hi, c).astype(np.float32).tobytes()  # noqa: E731
    w_raw, b_raw = vec(-1, 1) + vec(-1, 1), vec(-0.1, 0.1)
    bn_raw = [vec(0.5, 1.5), vec(-0.5, 0.5), vec(-0.5, 0.5), vec(0.5, 2.0)]
    eps = _pb_attr_float(b'epsilon', 1e-5)
    nodes, inits = [], []
    x = b'X'

    def out(i, last, tag):
        return b'Y' if i == last else b'%s%d' % (tag, i)

    if pattern == 'convbn':
        kern = _pb_attr_ints(b'kernel_shape', [1, 1])
        for i in range(n // 2):
            p = b'l%d_' % i
            inits += [_pb_tensor(p + b'w', w_raw, [c, c, 1, 1]), _pb_tensor(p + b'b', b_raw, [c])]
            inits += [_pb_tensor(p + k, r, [c]) for k, r in zip([b's', b'o', b'm', b'v'], bn_raw)]
            nodes.append(_pb_node(b'Conv', [x, p + b'w', p + b'b'], [p + b'conv'], p + b'conv', kern))
            x = out(i, n // 2 - 1, b'bn')
            nodes.append(_pb_node(b'BatchNormalization', [p + b'conv', p + b's', p + b'o', p + b'm', p + b'v'],
                                  [x], p + b'bn', eps))
        return 13, 8, nodes, inits
    if pattern == 'bn':
        for i in range(n):
            p = b'l%d_' % i
            inits += [_pb_tensor(p + k, r, [c]) for k, r in zip([b's', b'o', b'm', b'v'], bn_raw)]
            y = out(i, n - 1, b'bn')
            nodes.append(_pb_node(b'BatchNormalization', [x, p + b's', p + b'o', p + b'm', p + b'v'],
                                  [y], p + b'bn', eps))
            x = y
        return 13, 8, nodes, inits
    if pattern == 'fanbn':
        acc = b'X'
        for i in range(n // 2):
            p = b'l%d_' % i
            inits += [_pb_tensor(p + k, r, [c]) for k, r in zip([b's', b'o', b'm', b'v'], bn_raw)]
            nodes.append(_pb_node(b'BatchNormalization', [b'X', p + b's', p + b'o', p + b'm', p + b'v'],
                                  [p + b'bn'], p + b'bn', eps))
            y = out(i, n // 2 - 1, b'sum')
            nodes.append(_pb_node(b'Add', [acc, p + b'bn'], [y], p + b'add'))
            acc = y
        return 13, 8, nodes, inits
    if pattern == 'clip':
        bounds = _pb_attr_float(b'min', 0.0) + _pb_attr_float(b'max', 6.0)
        for i in range(n):
            y = out(i, n - 1, b'clip')
            nodes.append(_pb_node(b'Clip', [x], [y], b'clip%d' % i, bounds))
            x = y
        return 9, 4, nodes, inits
    if pattern == 'dead':
        half = n // 2
        for i in range(half):
            y = out(i, half - 1, b'live')
            nodes.append(_pb_node(b'Relu', [x], [y], b'live%d' % i))
            x = y
        d = b'X'
        for i in range(n - half):
            nodes.append(_pb_node(b'Relu', [d], [b'dead%d' % i], b'dead%d' % i))
            d = b'dead%d' % i
        inits += [_pb_tensor(b'unused%d' % i, b_raw, [c]) for i in range(half)]
        return 13, 8, nodes, inits
    if pattern == 'split':
        inits.append(_pb_tensor(b'W', b_raw, [c, 1, 1]))
        for i in range(n):
            y = out(i, n - 1, b'add')
            nodes.append(_pb_node(b'Add', [x, b'W'], [y], b'add%d' % i))
            x = y
        return 13, 8, nodes, inits
    raise ValueError(pattern)


def build_nodes(folder, pattern, nodes, **_):
    """Writes the ModelProto bytes of one node-scaling model."""
    opset, ir, node_pbs, init_pbs = _node_graph(pattern, nodes)
    dims = [1, NODE_CHANNELS, 4, 4]
    graph = b''.join([_ld(1, nb) for nb in node_pbs] + [_ld(2, b'bench_' + pattern.encode())]
                     + [_ld(5, t) for t in init_pbs]
                     + [_ld(11, _pb_value_info(b'X', dims)), _ld(12, _pb_value_info(b'Y', dims))])
    del node_pbs, init_pbs
    model = b''.join([_vi(1, ir), _ld(2, b'ppqfmt-bench'), _ld(3, b'1'), _ld(7, graph),
                      _ld(8, _vi(2, opset))])
    with open(os.path.join(folder, MODEL), 'wb') as f:
        f.write(model)


def node_spec(pattern, n):
    return dict(kind='nodes', pattern=pattern, nodes=n)


def spec_of(name):
    """The parameters of a model name: SPECS, or nodes-<pattern>-<size>."""
    if name in SPECS:
        return SPECS[name]
    _, pattern, size = name.split('-')
    return node_spec(pattern, parse_size(size))


def manifest_ok(folder, name, sha):
    try:
        with open(os.path.join(folder, 'manifest.json')) as f:
            man = json.load(f)
    except (OSError, ValueError):
        return None
    if man.get('generator_sha256') != sha or man.get('params') != spec_of(name):
        return None
    for fn, size in man.get('files', {}).items():
        p = os.path.join(folder, fn)
        if not os.path.isfile(p) or os.path.getsize(p) != size:
            return None
    return man


def ensure(outdir, name, sha, log=print):
    """Return the manifest of OUTDIR/<name>, generating the model if needed."""
    folder = os.path.join(outdir, name)
    man = manifest_ok(folder, name, sha)
    if man:
        log('%s: cached (%s, %.1f MiB)' % (name, folder, man['size'] / MiB))
        return man
    spec = spec_of(name)
    tmp = os.path.join(outdir, '.tmp-' + name)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    t0 = time.perf_counter()
    try:
        {'inline': build_inline, 'external': build_external, 'files': build_files,
         'nodes': build_nodes}[spec['kind']](tmp, **spec)
        # the full check (shape inference) of a million nodes takes minutes
        onnx.checker.check_model(os.path.join(tmp, MODEL), full_check=spec.get('nodes', 0) <= 10000)
        files = {fn: os.path.getsize(os.path.join(tmp, fn)) for fn in sorted(os.listdir(tmp))}
        man = dict(name=name, generator_sha256=sha, params=spec, model=MODEL,
                   data_files=[fn for fn in files if fn != MODEL], files=files, size=sum(files.values()))
        with open(os.path.join(tmp, 'manifest.json'), 'w') as f:
            json.dump(man, f, indent=1, sort_keys=True)
        shutil.rmtree(folder, ignore_errors=True)
        os.rename(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log('%s: generated in %.1f s (%s, %.1f MiB)' % (name, time.perf_counter() - t0, folder, man['size'] / MiB))
    return man


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quick', action='store_true', help='the small models (~60 MB inline, ~300 MB external)')
    ap.add_argument('--only', choices=['inline', 'external', 'files'])
    ap.add_argument('--nodes', metavar='SIZES', help='node-scaling models of these sizes (10k,100k,1M)')
    ap.add_argument('--pattern', choices=NODE_PATTERNS, help='only this node-scaling pattern')
    ap.add_argument('outdir', nargs='?', default=os.path.join(ROOT, 'build', 'bench'))
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    sha = generator_hash()
    if a.nodes:
        for n in (parse_size(x) for x in a.nodes.split(',')):
            for pattern in [a.pattern] if a.pattern else NODE_PATTERNS:
                ensure(a.outdir, node_model_name(pattern, n), sha)
        return
    for name in names_for(a.quick):
        if a.only and SPECS[name]['kind'] != a.only:
            continue
        ensure(a.outdir, name, sha)
    sys.stdout.flush()


if __name__ == '__main__':
    main()
