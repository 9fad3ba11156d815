"""Judges the outputs of make bench-peers (scripts/bench_peers.py runs it with .deps/venv/bin/python:
onnx 1.23.2, onnxruntime 1.31.1).

Usage: .deps/venv/bin/python scripts/peer_check.py JOB.json
JOB: {"ref": original model, "outs": {tool: output path}, "sizes": {dim_param: n},
      "ort": true|false}
Prints one JSON object: {"ref": census of the original, tool: census + "checker" + "equiv"}.

census (scripts/census.py is the onnx-1.12 twin for make test-models; this one reads onnx 1.23's
protos and counts what the peers table shows), over the main graph and every subgraph:
  nodes, const_identity (Constant + Identity nodes), foldable (a node with at least one input
  whose inputs are all initializers or Constant outputs, random ops aside), shape (Shape/Size
  nodes), fused (LayerNormalization, RMSNormalization and onnxruntime's SimplifiedLayerNorm /
  SkipLayerNorm forms, Gelu, FastGelu, BiasGelu, QuickGelu), bn (BatchNormalization),
  vi_cov (share of node outputs with a declared element type and shape: value_info or graph
  outputs), opset, ops (node count per op type).
checker: onnx.checker.check_model(path, full_check=True) ("ok" or the message's first line).
equiv: onnxruntime on the original and the output with the same random inputs
(scripts/ortcheck.py random_inputs/compare: symbolic dims from "sizes", tolerance
1e-5 + 1e-3*max|ref| per output): "ok", or what differed, or why it could not run.
"""
import json
import os
import sys

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'tests'))
from ortcheck import compare, random_inputs, run_python  # noqa: E402
from testlib import graphs  # noqa: E402  (tests/: every graph of a model)

RANDOM = {'RandomNormal', 'RandomUniform', 'RandomNormalLike', 'RandomUniformLike', 'Multinomial',
          'Bernoulli', 'Dropout'}
FUSED = {'LayerNormalization', 'RMSNormalization', 'SimplifiedLayerNormalization',
         'SkipLayerNormalization', 'SkipSimplifiedLayerNormalization', 'Gelu', 'FastGelu',
         'BiasGelu', 'QuickGelu'}


def declared(vi):
    if vi.type.WhichOneof('value') != 'tensor_type':
        return False
    tt = vi.type.tensor_type
    return tt.elem_type != 0 and tt.HasField('shape')


def census(path):
    m = onnx.load(path, load_external_data=False)
    c = dict(nodes=0, const_identity=0, foldable=0, shape=0, fused=0, bn=0, outputs=0, typed=0,
             fused_ops={}, ops={})
    typed = set()
    for _, g in graphs(m.graph):
        typed |= {v.name for v in list(g.value_info) + list(g.output) if declared(v)}
    consts = set()
    for _, g in graphs(m.graph):
        consts |= {t.name for t in g.initializer} - {i.name for i in g.input}
        consts |= {n.output[0] for n in g.node if n.op_type == 'Constant' and n.output}
    for _, g in graphs(m.graph):
        for n in g.node:
            c['nodes'] += 1
            c['ops'][n.op_type] = c['ops'].get(n.op_type, 0) + 1
            c['const_identity'] += n.op_type in ('Constant', 'Identity')
            ins = [i for i in n.input if i]
            if (ins and all(i in consts for i in ins) and n.op_type not in RANDOM
                    and not any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                                for a in n.attribute)):
                c['foldable'] += 1
            c['shape'] += n.op_type in ('Shape', 'Size')
            c['bn'] += n.op_type == 'BatchNormalization'
            if n.op_type in FUSED:
                c['fused'] += 1
                c['fused_ops'][n.op_type] = c['fused_ops'].get(n.op_type, 0) + 1
            for o in n.output:
                if o:
                    c['outputs'] += 1
                    c['typed'] += o in typed
    c['vi_cov'] = c['typed'] / c['outputs'] if c['outputs'] else 1.0
    c['opset'] = next((o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')), None)
    c['static'] = all(d.HasField('dim_value') for i in m.graph.input
                      if i.name not in {t.name for t in m.graph.initializer}
                      for d in i.type.tensor_type.shape.dim)
    c['bytes'] = os.path.getsize(path)
    return c


def first_line(e):
    s = ' '.join(str(e).split())
    return ('%s: %s' % (type(e).__name__, s))[:300]


def main(argv):
    with open(argv[0]) as f:
        job = json.load(f)
    res = {}
    ref = job['ref']
    res['ref'] = census(ref)
    feeds = refout = None
    why = None
    if job.get('ort', True):
        try:
            feeds = random_inputs(ref, seed=0, sizes=job.get('sizes') or {})
            refout = run_python(ref, feeds)
        except Exception as e:
            why = 'original does not run: ' + first_line(e)
    else:
        why = 'not run'
    for tool, out in job['outs'].items():
        r = {}
        try:
            r.update(census(out))
        except Exception as e:
            r['census'] = first_line(e)
        try:
            onnx.checker.check_model(out, full_check=True)
            r['checker'] = 'ok'
        except Exception as e:
            r['checker'] = first_line(e)
        if refout is None:
            r['equiv'] = why
        else:
            try:
                ok, msg = compare(refout, run_python(out, feeds))
                r['equiv'] = 'ok' if ok else msg[:300]
            except Exception as e:
                r['equiv'] = 'does not run: ' + first_line(e)
        res[tool] = r
    json.dump(res, sys.stdout)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
