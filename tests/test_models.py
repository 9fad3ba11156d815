#!/usr/bin/python3
"""Real networks through ppqfmt: torchvision and user-style exports, formatted with the default passes.

Usage: tests/test_models.py [--quick | --legacy] [--models a,b] [--opsets 11,13,17] [--dir DIR]
                            [--keep OUTDIR] [--ppqfmt-args ARGS]

Exports the models with scripts/export_torchvision.py into DIR (default build/models) when
they are missing or older than it or scripts/export_transformers.py (torch comes from Debian:
run scripts/install_model_deps.sh once), then runs ppqfmt (build/ppqfmt, or $PPQFMT) with the
default passes and --report=json on every model and checks:
  run      ppqfmt exits 0 (time recorded);
  checker  onnx.checker.check_model(output, full_check=True) passes (the original is checked
           too; if the original itself fails, that is reported and the output's verdict is
           shown but not counted);
  left     no BatchNormalization, Constant or Identity node is left (subgraphs included); for
           a BatchNormalization left, ppqfmt's report warnings about it are printed;
  shared   no initializer is an input of more than one node (uses inside subgraphs count);
  dead     every node reaches a graph output (walking backwards from the outputs; a name used
           inside a node's subgraph counts as an input of that node);
  legacy   no node is left in a legacy form: Clip with min/max attributes, Pad with a pads
           attribute, Slice with a starts attribute, Resize with 2 inputs, Upsample, TopK with
           a k attribute (subgraphs included); for a form left, ppqfmt's warnings are printed;
  opset    when the input holds a legacy form, the output's default-domain opset is >= 11 and
           its ir_version >= 6 (the legacy forms' input forms exist from opset 11). An input
           with no legacy form may keep its opset (docs/ARCHITECTURE.md: the opset is raised when a pass
           rewrites a legacy form), but in no case may the output's opset or IR version be
           lower than the input's;
  as-base  (Constant-weight variants only) the output equals ppqfmt's output for the base
           export: the same nodes (op type, inputs, outputs, attributes) in the same order and
           the same initializers (names and values; their order may differ);
  equiv    onnxruntime gives the same outputs on the original and the output
           (scripts/ortcheck.py: same random inputs, tolerance 1e-5 + 1e-3*max|ref|; the
           dynamic dims of a user-style export take the sizes its export record gives, other
           than the traced ones). Detection models (boxes, scores, labels with one row per
           detection): the same, plus the detection count; if the counts differ, the rows both
           have are compared and the check fails naming both counts (compare_detections);
  shape    shape inference (build/tests/test_infer --dump; tests/infer_oracle.py's functions) on
           the original and on the output: onnxruntime's actual shape of every node output of
           the main graph (each made a graph output, same inputs as equiv) must match ppqfmt's
           dims with the symbols bound from those shapes, and wherever onnx's
           infer_shapes(strict_mode=False, data_prop=True) knows a dtype, rank or static dim,
           ppqfmt's must not differ: a conflict fails. Facts onnx has and ppqfmt lacks on ops
           with a rule are listed as notes, not failures;
  --check  ppqfmt's own verdict (`--dry-run --check=1`, the export's test sizes bound with
           --input-shape) agrees with equiv's: exit 0 where onnxruntime found the outputs
           equal, 5 where it did not. Exit 6 (a node ppqfmt's interpreter cannot run) or a
           run over CHECK_TIMEOUT seconds is "n/a" with the reason, not a failure.
A model passes if every check passes. The result is a markdown table (nodes and
BatchNormalization nodes before -> after, timings), a shape-inference coverage table (per model,
original and output: the share of node outputs with a dtype and rank, and with every dim known
-- a number or an expression of the graph inputs' symbols -- for ppqfmt and for onnx; the facts
only one side has; onnxruntime dims checked; the wall time of test_infer --dump, which loads the
model, against onnx's infer_shapes on the loaded model), the details of every failure, and the
last line `test_models: N passed, M failed[, K skipped]` (K: model/opset combinations torch
cannot export; the reason is printed). The exit status is 1 if any model failed.

The legacy set (--legacy; part of the default full run): opset-9 exports of resnet18,
mobilenet_v2 (ReLU6 -> Clip-6), squeezenet1_1 and our own legacy_nearest / legacy_bilinear
(Conv+BN, ReLU6, clamp, F.pad constant 0.5 and reflect, nn.Upsample x2, a slice: Clip-6, Pad-2,
Upsample-9, Slice-1), and Constant-weight variants (<model>_constw: every initializer replaced
by a Constant node of the same name, as some converters emit) of resnet18 at opset 13 and of
mobilenet_v2 and legacy_nearest at opset 9.

The user-style set (USER_MODELS, scripts/export_transformers.py; part of the default full run):
gpt2_tiny, bert_tiny, llama_tiny, lstm_conv, gru_conv, whisper_tiny (encoder-decoder),
torch_encoder (nn.TransformerEncoder with a key-padding-mask input), crnn, and torchvision's
swin_t, maxvit_t, efficientnet_v2_s, raft_small, raft_small_static, lraspp_mobilenet_v3_large,
s3d, inception_v3, googlenet and the detection networks ssdlite320_mobilenet_v3_large,
fasterrcnn_mobilenet_v3_large_320_fpn, fcos_resnet50_fpn, retinanet_resnet50_fpn and
maskrcnn_resnet50_fpn at opsets 14 and 17, exported with dynamic axes and torch's constant
folding on (RAFT's grid_sample has no opset-14 export: a skip). An export whose original fails
the checker the way EXPORT_FAULTS records (torch wrote it invalid) is a skip with the reason.

--quick is the small CI subset: resnet18 and mobilenet_v2 at opset 13, r3d_18 at opset 11,
resnet18 at opset 9, mobilenet_v2_constw at opset 9, gpt2_tiny at opset 17, lstm_conv at
opset 14 and bert_tiny at opset 14.

Every model also gets the census check (tests/census.py: nothing fold could evaluate is left, no
Shape/Size of a static value, also with --input-shape binding the dynamic inputs), and the
exports of FUSION_MODELS below opset 17 the fusion check (--target-opset=17
--enable=fuse-gelu leaves no layer-norm ReduceMean and no GELU Erf/Tanh, onnxruntime agrees).
The default run is every model of ALL_MODELS at opsets 11, 13 and 17, the user-style set, plus
the legacy set. --models/--opsets restrict it (a model named with --models is run at every
opset given, or 11, 13 and 17 when none is -- 14 and 17 for a user-style model -- plus its
legacy-set entries), and restrict --quick and --legacy
when given with them. Any <model>_constw name may be given. --keep OUTDIR keeps the formatted
models.
Run with Debian's /usr/bin/python3 (python3-onnx, python3-numpy).
"""
import argparse
import filecmp
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

import onnx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, 'scripts'))
import export_torchvision as exporter  # noqa: E402  (imports no torch itself)
import census  # noqa: E402  (tests/, beside this file)
import infer_oracle  # noqa: E402
import ortcheck  # noqa: E402
import testlib  # noqa: E402

EXPORT = exporter.SCRIPT
PPQFMT = os.environ.get('PPQFMT', os.path.join(REPO, 'build', 'ppqfmt'))
TEST_INFER = os.path.join(REPO, os.environ.get('BUILD', 'build'), 'tests', 'test_infer')
PPQFMT_TIMEOUT = 600

ALL_MODELS = ['resnet18', 'resnet50', 'mobilenet_v2', 'mobilenet_v3_large', 'efficientnet_b0',
              'densenet121', 'shufflenet_v2_x1_0', 'regnet_y_400mf', 'convnext_tiny', 'r3d_18',
              'deeplabv3_mobilenet_v3_large', 'vit_b_16']
ALL_OPSETS = [11, 13, 17]
# exported as users do (scripts/export_transformers.py): dynamic axes, constant folding on
USER_MODELS = list(exporter.USER)
USER_OPSETS = list(exporter.export_transformers.DEFAULT_OPSETS)
# detection models: one row per detection (compare_detections)
DETECTION = tuple(m for m, spec in exporter.USER.items() if 'boxes' in spec['outputs'])
# exports whose layer norms and GELUs the fusions must take at --target-opset=17 (fusion_check)
FUSION_MODELS = ('gpt2_tiny', 'bert_tiny', 'llama_tiny', 'vit_b_16', 'swin_t', 'whisper_tiny',
                 'torch_encoder')
FUSION_ARGS = ['--target-opset=17', '--enable=fuse-gelu']
LEGACY = [('resnet18', 9), ('mobilenet_v2', 9), ('squeezenet1_1', 9), ('legacy_nearest', 9),
          ('legacy_bilinear', 9), ('resnet18_constw', 13), ('mobilenet_v2_constw', 9),
          ('legacy_nearest_constw', 9)]
QUICK = [('resnet18', 13), ('mobilenet_v2', 13), ('r3d_18', 11), ('resnet18', 9),
         ('mobilenet_v2_constw', 9), ('gpt2_tiny', 17), ('lstm_conv', 14),
         ('bert_tiny', 14)]  # the last: the fusion check (erf GELU, LayerNorm) in CI
# Exports torch writes invalid, by the checker's message on the original: onnxruntime refuses
# them too, so nothing can be compared; such an export is a skip with the reason (while the
# original fails that way), as is a network torch cannot export at all.
EXPORT_FAULTS = {
    'raft_small': ('(op_type:Sqrt, node name: /inner/Sqrt): X typestr: T, has unsupported type: '
                   'tensor(int64)',
                   "torch 1.13 writes RAFT's corr / sqrt(tensor(num_channels)) with dynamic axes "
                   "as Sqrt of an int64 (Cast of a Shape), refused by onnx's checker and "
                   "onnxruntime; raft_small_static is the same network with static inputs"),
}
CONSTW = '_constw'   # scripts/export_torchvision.py: the Constant-weight variant of a model
KNOWN_MODELS = ALL_MODELS + USER_MODELS + [m for m, _ in LEGACY if m not in ALL_MODELS and
                                            not m.endswith(CONSTW)]
LEFTOVER_OPS = ('BatchNormalization', 'Constant', 'Identity')


# ---------------------------------------------------------------------------
# graph walks (subgraphs included)
# ---------------------------------------------------------------------------

subgraphs = testlib.subgraphs


def names_used_inside(node):
    """Every name a node's subgraphs read (over-approximates the outer-scope ones)."""
    used = set()
    for _, sg in subgraphs(node):
        for _, g in testlib.graphs(sg):
            for n in g.node:
                used.update(x for x in n.input if x)
            used.update(o.name for o in g.output)
    return used


def op_counts(m):
    return Counter(n.op_type for _, _, n in testlib.nodes(m))


def outer_copies(g, path):
    """Identity nodes of a subgraph that copy a value the subgraph does not make (an outer
    value) to one of its outputs: onnxruntime refuses a subgraph output that is an outer-scope
    value (microsoft/onnxruntime#5991, #11536), so exporters write these and they must stay."""
    if path == 'main':
        return set()
    made = {o for n in g.node for o in n.output} | {i.name for i in g.input} | \
        {t.name for t in g.initializer}
    outs = {o.name for o in g.output}
    return {(path, n.output[0]) for n in g.node if n.op_type == 'Identity' and
            n.output[0] in outs and n.input[0] not in made}


def leftovers(m):
    """{op type: [node names]} for the op types no default-pipeline output may contain (an
    Identity that outer_copies() requires excepted)."""
    left = defaultdict(list)
    required = set()
    for p, g in testlib.graphs(m.graph):
        required |= outer_copies(g, p)
    for p, _, n in testlib.nodes(m):
        if n.op_type in LEFTOVER_OPS and (p, n.output[0] if n.output else '') not in required:
            left[n.op_type].append(n.name if p == 'main' else '%s/%s' % (p, n.name))
    return dict(left)


def legacy_form(n):
    """The legacy form a node is in (a short label), or None."""
    attrs = {a.name for a in n.attribute}
    if n.domain not in ('', 'ai.onnx'):
        return None
    if n.op_type == 'Clip' and attrs & {'min', 'max'}:
        return 'Clip-6'
    if n.op_type == 'Pad' and 'pads' in attrs:
        return 'Pad-2'
    if n.op_type == 'Slice' and 'starts' in attrs:
        return 'Slice-1'
    if n.op_type == 'Resize' and len(n.input) == 2:
        return 'Resize-10'
    if n.op_type == 'Upsample':
        return 'Upsample'
    if n.op_type == 'TopK' and 'k' in attrs:
        return 'TopK-1'
    return None


def legacy_nodes(m):
    """{legacy form: [node names]} (subgraphs included)."""
    found = defaultdict(list)
    for p, _, n in testlib.nodes(m):
        form = legacy_form(n)
        if form:
            found[form].append(n.name if p == 'main' else '%s/%s' % (p, n.name))
    return dict(found)


def node_key(n):
    return (n.domain, n.op_type, tuple(n.input), tuple(n.output),
            tuple(a.SerializeToString() for a in n.attribute))


def same_as_base(out, base_out):
    """None if two formatted models have the same nodes and initializers, else what differs."""
    na, nb = [node_key(n) for n in out.graph.node], [node_key(n) for n in base_out.graph.node]
    if na != nb:
        k = next((i for i, (x, y) in enumerate(zip(na, nb)) if x != y), min(len(na), len(nb)))
        def show(v, i):
            n = v.graph.node[i] if i < len(v.graph.node) else None
            return ('%s %s(%s) -> %s' % (n.name, n.op_type, ', '.join(n.input),
                                         ', '.join(n.output))) if n is not None else 'nothing'
        return '%d nodes vs %d for the base; first difference at node #%d: %s; base: %s' % (
            len(na), len(nb), k, show(out, k), show(base_out, k))
    ia = {t.name: t for t in out.graph.initializer}
    ib = {t.name: t for t in base_out.graph.initializer}
    if set(ia) != set(ib):
        return 'initializers differ: only here %s; only in the base %s' % (
            short(sorted(set(ia) - set(ib))), short(sorted(set(ib) - set(ia))))
    import numpy as np
    from onnx import numpy_helper
    bad = [k for k in sorted(ia) if ia[k].data_type != ib[k].data_type or
           list(ia[k].dims) != list(ib[k].dims) or
           not np.array_equal(numpy_helper.to_array(ia[k]), numpy_helper.to_array(ib[k]))]
    if bad:
        return '%d initializers differ in dtype, shape or value: %s' % (len(bad), short(bad))
    return None


def default_opset(m):
    vs = [o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')]
    return vs[0] if vs else None


def shared_params(m):
    """{initializer name: number of distinct nodes that read it}, for those read by more than
    one node. A read by a node inside a subgraph of an outer initializer counts (names are
    matched without regard to shadowing, which these exports do not use)."""
    inits = {t.name for _, g in testlib.graphs(m.graph) for t in g.initializer}
    readers = defaultdict(set)
    for p, g in testlib.graphs(m.graph):
        for k, n in enumerate(g.node):
            for x in set(n.input):
                if x in inits:
                    readers[x].add((p, k))
    return {x: len(r) for x, r in readers.items() if len(r) > 1}


def dead_nodes(g, path='main'):
    """Names of nodes in g (and, recursively, its subgraphs) from which no output of their own
    graph can be reached."""
    producer = {}
    for k, n in enumerate(g.node):
        for o in n.output:
            if o:
                producer[o] = k
    live, todo = set(), [o.name for o in g.output]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        k = producer.get(name)
        if k is None or k in live:
            continue
        live.add(k)
        n = g.node[k]
        todo.extend(x for x in n.input if x)
        todo.extend(names_used_inside(n))
    dead = []
    for k, n in enumerate(g.node):
        label = n.name or '#%d %s' % (k, n.op_type)
        if k not in live:
            dead.append(label if path == 'main' else '%s/%s' % (path, label))
        for sl, sg in subgraphs(n):
            dead.extend(dead_nodes(sg, '%s/%s.%s' % (path, label, sl)))
    return dead


def checker(path):
    """None if the full checker accepts the model file, else its message (one line).

    What onnx.checker.check_model(path, full_check=True) does, without its side effect: for a
    path, that function runs shape inference with the file itself as the output, i.e. rewrites
    the model it checks (python3-onnx 1.12). Here the inferred model goes to /dev/null, so
    neither the cached export nor ppqfmt's output changes before onnxruntime runs them."""
    try:
        onnx.checker.check_model(path)
        onnx.shape_inference.infer_shapes_path(path, os.devnull, check_type=True,
                                               strict_mode=True)
        return None
    except Exception as e:  # ValidationError, InferenceError, DecodeError, ...
        return ' '.join(('%s: %s' % (type(e).__name__, e)).split())[:500]


def short(items, n=4):
    items = list(items)
    more = ' (+%d more)' % (len(items) - n) if len(items) > n else ''
    return ', '.join(map(str, items[:n])) + more


# ---------------------------------------------------------------------------
# export
# ---------------------------------------------------------------------------

def model_paths(d, name, opset):
    base = os.path.join(d, '%s_op%d' % (name, opset))
    return base + '.onnx', base + '.json'


fresh = exporter.up_to_date   # newer than both export scripts


def needs_export(d, name, opset):
    onnx_path, json_path = model_paths(d, name, opset)
    if not fresh(json_path):
        return True
    if name.endswith(CONSTW):
        # a variant is made from its base's export: stale when the base is missing or stale,
        # or was exported after it (as export_torchvision.py judges it: by the .json records)
        base_onnx, base_json = model_paths(d, name[:-len(CONSTW)], opset)
        if not (fresh(base_onnx) and fresh(base_json)) or (
                os.path.getmtime(base_json) > os.path.getmtime(json_path)):
            return True
    if fresh(onnx_path):
        return False
    try:
        with open(json_path) as f:
            return not json.load(f).get('skipped')
    except (OSError, ValueError):
        return True


def export(d, pairs):
    """Export what is missing; returns (seconds spent, error text or None)."""
    by_opset = defaultdict(list)
    for name, opset in pairs:
        if needs_export(d, name, opset):
            by_opset[opset].append(name)
    t0 = time.time()
    for opset, names in sorted(by_opset.items()):
        cmd = [sys.executable, EXPORT, d, '--opsets', str(opset), '--models', ','.join(names)]
        print('# exporting: %s' % ' '.join(cmd[1:]))
        sys.stdout.flush()
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = p.stdout.decode('utf-8', 'replace')
        for line in out.splitlines():
            print('#   ' + line)
        if p.returncode != 0:
            hint = ''
            if 'No module named' in out and 'torch' in out:
                hint = ' (torch missing: run scripts/install_model_deps.sh)'
            return time.time() - t0, 'export_torchvision.py exit %d%s: %s' % (
                p.returncode, hint, ' | '.join(out.strip().splitlines()[-2:]))
    return time.time() - t0, None


# ---------------------------------------------------------------------------
# one model
# ---------------------------------------------------------------------------

def run_ppqfmt(src, dst, extra):
    cmd = [PPQFMT] + extra + ['--report=json', src, '-o', dst]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=PPQFMT_TIMEOUT)
    except subprocess.TimeoutExpired:
        return time.time() - t0, None, 'ppqfmt timed out after %ds' % PPQFMT_TIMEOUT
    secs = time.time() - t0
    err = p.stderr.decode('utf-8', 'replace')
    report = None
    for line in reversed(err.splitlines()):
        if line.startswith('{'):
            try:
                report = json.loads(line)
            except ValueError:
                pass
            break
    if p.returncode != 0:
        return secs, report, 'ppqfmt exit %d: %s' % (
            p.returncode, ' | '.join(err.strip().splitlines()[-3:]) or '(no stderr)')
    if not os.path.exists(dst):
        return secs, report, 'ppqfmt exit 0 but wrote no output'
    return secs, report, None


def all_warnings(report):
    """Every warning of the report, 'pass: subject: message'."""
    return ['%s: %s: %s' % (p.get('name'), w.get('subject') or '', w.get('message') or '')
            for p in (report or {}).get('passes', []) for w in p.get('warnings', [])]


def warnings_about(report, names):
    """Report warnings whose subject is, or whose message mentions, one of names."""
    out = []
    for p in (report or {}).get('passes', []):
        for w in p.get('warnings', []):
            subj, msg = w.get('subject') or '', w.get('message') or ''
            if subj in names or any(x and x in msg for x in names):
                out.append('%s: %s: %s' % (p.get('name'), subj, msg))
    return out


def test_model(name, opset, d, workdir, extra):
    """Returns a result dict; r['fails'] lists (check, message)."""
    src, meta_path = model_paths(d, name, opset)
    r = {'model': name, 'opset': opset, 'fails': [], 'notes': [], 'checks': {}}
    t_model = time.time()
    try:
        with open(meta_path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        meta = {'skipped': True, 'reason': 'no export record: %s' % e}
    r['export_s'] = meta.get('export_seconds')
    r['bytes'] = meta.get('bytes')
    if meta.get('skipped') or not os.path.exists(src):
        r['skipped'] = meta.get('reason') or 'not exported'
        return r

    def fail(check, msg):
        r['checks'][check] = 'FAIL'
        r['fails'].append((check, msg))

    orig = onnx.load(src)
    before = op_counts(orig)
    r['nodes'] = [sum(before.values()), None]
    r['bn'] = [before['BatchNormalization'], None]
    r['opset_ir'] = [(default_opset(orig), orig.ir_version), None]
    r['legacy'] = [{k: len(v) for k, v in legacy_nodes(orig).items()}, None]
    r['orig_checker'] = checker(src)
    fault = EXPORT_FAULTS.get(name)
    if fault and r['orig_checker'] and fault[0] in r['orig_checker']:
        r['skipped'] = 'invalid export: %s' % fault[1]
        return r
    if r['orig_checker']:
        r['notes'].append('the ORIGINAL export fails the checker: %s' % r['orig_checker'])

    dst = os.path.join(workdir, os.path.basename(src))
    r['ppqfmt_s'], report, err = run_ppqfmt(src, dst, extra)
    r['warnings'] = all_warnings(report)
    if err:
        fail('run', err)
        for k in ('checker', 'left', 'shared', 'dead', 'legacy', 'census', 'idempotent', 'opset',
                  'equiv', '--check', 'shape'):
            r['checks'][k] = '-'
        if name.endswith(CONSTW):
            r['checks']['as-base'] = '-'
        return r
    r['checks']['run'] = 'ok'

    out = onnx.load(dst)
    after = op_counts(out)
    r['nodes'][1] = sum(after.values())
    r['bn'][1] = after['BatchNormalization']

    msg = checker(dst)
    if msg is None:
        r['checks']['checker'] = 'ok'
    elif r['orig_checker']:
        r['checks']['checker'] = 'n/a'
        r['notes'].append('output fails the checker too (not counted): %s' % msg)
    else:
        fail('checker', msg)

    left = leftovers(out)
    r['left'] = {op: len(v) for op, v in left.items()}
    if left:
        fail('left', '; '.join('%d %s: %s' % (len(v), op, short(v)) for op, v in left.items()))
        bn = set(left.get('BatchNormalization', []))
        if bn:
            ws = warnings_about(report, bn)
            r['bn_warnings'] = ws or ['(ppqfmt gave no warning about any of them)']
    else:
        r['checks']['left'] = 'ok'

    shared = shared_params(out)
    r['shared'] = len(shared)
    if shared:
        fail('shared', '%d initializers read by several nodes: %s' % (
            len(shared), short('%s x%d' % kv for kv in sorted(shared.items()))))
    else:
        r['checks']['shared'] = 'ok'

    dead = dead_nodes(out.graph)
    r['dead'] = len(dead)
    if dead:
        fail('dead', '%d nodes reach no output: %s' % (len(dead), short(dead)))
    else:
        r['checks']['dead'] = 'ok'

    leg = legacy_nodes(out)
    r['legacy'][1] = {k: len(v) for k, v in leg.items()}
    if leg:
        fail('legacy', '; '.join('%d %s: %s' % (len(v), form, short(v))
                                 for form, v in sorted(leg.items())))
        names = {x for v in leg.values() for x in v}
        r['legacy_warnings'] = warnings_about(report, names) or [
            '(ppqfmt gave no warning naming any of them)']
    else:
        r['checks']['legacy'] = 'ok'

    census_check(r, name, src, orig, meta, workdir, extra, fail)
    if name in FUSION_MODELS and opset < 17:
        fusion_check(r, name, src, orig, meta, workdir, extra, fail)

    # Formatting the output again must change nothing (docs/ARCHITECTURE.md, correct output rule 5).
    again = os.path.join(workdir, '%s.again.onnx' % name)
    _, _, aerr = run_ppqfmt(dst, again, extra)
    if aerr or not filecmp.cmp(dst, again, shallow=False):
        fail('idempotent', aerr or 'formatting the output again changed its bytes')
    else:
        r['checks']['idempotent'] = 'ok'
    for f in (again, again + '.data'):
        if os.path.exists(f):
            os.remove(f)

    if name.endswith(CONSTW):
        base_src = model_paths(d, name[:-len(CONSTW)], opset)[0]
        base_dst = os.path.join(workdir, '%s.base.onnx' % name)
        _, _, berr = run_ppqfmt(base_src, base_dst, extra)
        if berr:
            diff = 'ppqfmt on the base %s: %s' % (os.path.basename(base_src), berr)
        else:
            diff = same_as_base(out, onnx.load(base_dst))
        if os.path.exists(base_dst):
            os.remove(base_dst)
        if diff:
            fail('as-base', diff)
        else:
            r['checks']['as-base'] = 'ok'

    (op0, ir0) = r['opset_ir'][0]
    op1, ir1 = default_opset(out), out.ir_version
    r['opset_ir'][1] = (op1, ir1)
    problems = []
    if op0 is not None and (op1 is None or op1 < op0):
        problems.append('default-domain opset lowered %s -> %s' % (op0, op1))
    if ir1 < ir0:
        problems.append('ir_version lowered %d -> %d' % (ir0, ir1))
    if r['legacy'][0]:
        if op1 is None or op1 < 11:
            problems.append('the input holds legacy forms (%s) but the output declares opset %s '
                            '(want >= 11)' % (', '.join(sorted(r['legacy'][0])), op1))
        if ir1 < 6:
            problems.append('the input holds legacy forms but the output has ir_version %d '
                            '(want >= 6)' % ir1)
    if problems:
        fail('opset', '; '.join(problems))
    else:
        r['checks']['opset'] = 'ok'

    t0 = time.time()
    try:
        feeds, runs = ort_runs(src, dst, orig, out, meta.get('test_sizes'), workdir)
    except Exception as e:  # the oracle must not take the runner down
        feeds, runs = {}, ['%s: %s' % (type(e).__name__, e)] * 4
    r['ort_s'] = time.time() - t0
    if isinstance(runs[0], str):
        ok, msg = False, 'onnxruntime failed on the original: %s' % runs[0]
    elif isinstance(runs[1], str):
        ok, msg = False, 'onnxruntime failed on the output: %s' % runs[1]
    else:
        ok, msg = (compare_detections if name in DETECTION else ortcheck.compare)(
            runs[0], runs[1])
    if ok:
        r['checks']['equiv'] = 'ok'
        if msg != '%d outputs match' % len(runs[0]):
            r['notes'].append('equiv: %s' % msg)
    else:
        fail('equiv', msg)
    if not isinstance(runs[0], str) and not isinstance(runs[1], str):
        selfcheck(r, src, orig, meta, extra, ok, fail)

    ruled = infer_oracle.ruled_ops(TEST_INFER)
    r['shape'] = {'orig': shape_side(src, orig, runs[2], feeds, ruled),
                  'out': shape_side(dst, out, runs[3], feeds, ruled)}
    bad = ['%s: %s' % (side, m) for side, sd in r['shape'].items() for m in sd['conflicts']]
    if bad:
        fail('shape', '%d conflicts: %s' % (len(bad), '; '.join(bad[:10])))
    else:
        r['checks']['shape'] = 'ok'
    for side, sd in r['shape'].items():
        if sd['misses']:
            r['notes'].append('shape (%s): onnx knows %d facts ppqfmt does not, on ops with a '
                              'rule: %s' % (side, len(sd['misses']), short(sd['misses'], 6)))
        if sd.get('unknown_ops'):
            r['notes'].append('shape (%s): ops without a rule: %s' % (
                side, ', '.join(sd['unknown_ops'])))
        r['notes'] += ['shape (%s): %s' % (side, n) for n in sd['notes']]
    r['check_s'] = (time.time() - t_model - r['ort_s'] - r['ppqfmt_s'] -
                    r.get('check_run_s', 0))
    return r


CHECK_TIMEOUT = 300


def selfcheck(r, src, orig, meta, extra, ort_ok, fail):
    """ppqfmt --check's verdict against onnxruntime's (ort_ok)."""
    cmd = [PPQFMT] + extra + static_input_args(orig, meta.get('test_sizes')) + [
        '--dry-run', '--check=1', '-q', src]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=CHECK_TIMEOUT)
    except subprocess.TimeoutExpired:
        r['checks']['--check'] = 'n/a'
        r['notes'].append('--check: over %d s' % CHECK_TIMEOUT)
        return
    r['check_run_s'] = time.time() - t0
    err = ' | '.join(p.stderr.decode('utf-8', 'replace').strip().splitlines()[-2:])
    if p.returncode == 6:
        r['checks']['--check'] = 'n/a'
        r['notes'].append('--check: cannot run: %s' % err)
    elif p.returncode not in (0, 5):
        fail('--check', 'exit %d: %s' % (p.returncode, err))
    elif (p.returncode == 0) != ort_ok:
        fail('--check', 'ppqfmt says %s, onnxruntime %s: %s' % (
            'equal' if p.returncode == 0 else 'different', 'equal' if ort_ok else 'different',
            err))
    else:
        r['checks']['--check'] = 'ok'


def static_input_args(model, sizes):
    """--input-shape options that bind every symbolic dim of the graph inputs to the export's
    test size (unnamed dims to 1); [] when the inputs are static already."""
    inits = {t.name for t in model.graph.initializer}
    args = []
    for vi in model.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if vi.name in inits or all(d.HasField('dim_value') for d in dims):
            continue
        sized = [str(d.dim_value) if d.HasField('dim_value') else
                 str((sizes or {}).get(d.dim_param, 1)) for d in dims]
        args += ['--input-shape', '%s=%s' % (vi.name, ','.join(sized))]
    return args


def census_left(path):
    """(foldable nodes left, Shape/Size nodes of static values left) in a formatted model."""
    m = onnx.load(path)
    types = census.onnx_types(m)
    return census.foldable_left(m, types=types), census.static_shapes_left(m, types=types)


def pattern_nodes(m):
    """(ReduceMeans of layer norms, Erf/Tanh of GELUs) of the main graph, by role: a ReduceMean
    whose mean a Sub takes from the same input, or that averages the square (Pow or Mul) of
    such a difference; every Erf; a Tanh read by an Add (0.5*x*(1+tanh(...))). An RMSNorm's
    ReduceMean of x*x and a pooler's Tanh are neither."""
    made = {o: n for n in m.graph.node for o in n.output}
    readers = defaultdict(list)
    for n in m.graph.node:
        for x in n.input:
            readers[x].append(n)

    def centred(v):  # v = Sub(x, ReduceMean(x))
        n = made.get(v)
        mean = made.get(n.input[1]) if n is not None and n.op_type == 'Sub' else None
        return mean is not None and mean.op_type == 'ReduceMean' and mean.input[0] == n.input[0]

    ln, gelu = [], []
    for n in m.graph.node:
        if n.op_type == 'ReduceMean':
            sq = made.get(n.input[0])
            if any(r.op_type == 'Sub' and r.input[0] == n.input[0] for r in readers[n.output[0]]) \
                    or (sq is not None and sq.op_type in ('Pow', 'Mul') and centred(sq.input[0])):
                ln.append(n.name)
        elif n.op_type == 'Erf' or (n.op_type == 'Tanh' and
                                    any(r.op_type == 'Add' for r in readers[n.output[0]])):
            gelu.append(n.name)
    return ln, gelu


def fusion_check(r, name, src, orig, meta, workdir, extra, fail):
    """Issue 15's transformer check: formatted with --target-opset=17 --enable=fuse-gelu, no
    ReduceMean of a layer norm and no Erf/Tanh of a GELU is left (pattern_nodes, counted on the
    export itself, not from ppqfmt's report), and onnxruntime gives the export's outputs."""
    dst = os.path.join(workdir, '%s.fused.onnx' % name)
    _, report, err = run_ppqfmt(src, dst, extra + FUSION_ARGS)
    try:
        if err:
            fail('fusions', 'with %s: %s' % (' '.join(FUSION_ARGS), err))
            return
        out = onnx.load(dst)
        before, after = pattern_nodes(orig), pattern_nodes(out)
        fused = Counter(n.op_type for n in out.graph.node
                        if n.op_type in ('LayerNormalization', 'Gelu', 'FastGelu', 'BiasGelu',
                                         'QuickGelu'))
        r['fusions'] = {'ln': (len(before[0]), len(after[0])),
                        'gelu': (len(before[1]), len(after[1])), 'fused': dict(fused)}
        feeds = ortcheck.random_inputs(src, 0, meta.get('test_sizes'))
        runs = ortcheck.run_models([{'model': p, 'inputs': feeds} for p in (src, dst)])
        ok, msg = (False, '; '.join(x for x in runs if isinstance(x, str))) \
            if any(isinstance(x, str) for x in runs) else ortcheck.compare(runs[0], runs[1])
        problems = ['%d layer-norm ReduceMean left: %s' % (len(after[0]), short(after[0]))
                    if after[0] else '',
                    '%d GELU Erf/Tanh left: %s' % (len(after[1]), short(after[1]))
                    if after[1] else '', '' if ok else 'onnxruntime: %s' % msg]
        problems = [p for p in problems if p]
        if problems:
            fail('fusions', '; '.join(problems))
        else:
            r['checks']['fusions'] = 'ok'
            r['notes'].append('fusions (%s): layer-norm ReduceMean %d -> 0, GELU Erf/Tanh %d -> '
                              '0; %s; %s' % (' '.join(FUSION_ARGS), len(before[0]),
                                             len(before[1]), dict(fused), msg))
    finally:
        for f in (dst, dst + '.data'):
            if os.path.exists(f):
                os.remove(f)


def census_check(r, name, src, orig, meta, workdir, extra, fail):
    """Constant folding's census (tests/census.py): no node whose inputs are all constants
    is left but the kinds fold never folds, and no Shape/Size of a statically shaped value,
    on the output as formatted and, for a model with dynamic inputs, on a second run with
    --input-shape binding them to the export's test sizes (then every shape that does not
    depend on data is static)."""
    dst = os.path.join(workdir, os.path.basename(src))
    left, shapes = census_left(dst)
    args = static_input_args(orig, meta.get('test_sizes'))
    if args:
        static = os.path.join(workdir, '%s.static.onnx' % name)
        _, _, err = run_ppqfmt(src, static, extra + args)
        if err:
            fail('census', 'with %s: %s' % (' '.join(args), err))
            return
        more = census_left(static)
        left += ['(static) ' + x for x in more[0]]
        shapes += ['(static) ' + x for x in more[1]]
        for f in (static, static + '.data'):
            if os.path.exists(f):
                os.remove(f)
    r['census'] = (len(left), len(shapes))
    if left or shapes:
        fail('census', '%d foldable nodes left: %s; %d Shape/Size of static values left: %s' % (
            len(left), short(left), len(shapes), short(shapes)))
    else:
        r['checks']['census'] = 'ok'


def compare_detections(ref, got):
    """The outputs of a detection model (boxes, scores, labels) have one row per detection that
    survives the score threshold and NMS, a count that depends on the data. With the same count
    on both sides every output is compared as usual (ortcheck.compare) and the message gives the
    count. With different counts the rows both sides have are compared (torchvision sorts the
    detections by descending score, so these are the first min(n) rows) and the result is a
    failure naming both counts: a detection gained or lost at a threshold is still a numeric
    difference in the formatted model."""
    if set(ref) != set(got):
        return ortcheck.compare(ref, got)
    n_ref = {len(a) for a in ref.values() if a.ndim}
    n_got = {len(a) for a in got.values() if a.ndim}
    if len(n_ref) != 1 or len(n_got) != 1:
        return ortcheck.compare(ref, got)
    a, b = n_ref.pop(), n_got.pop()
    k = min(a, b)
    ok, msg = ortcheck.compare({n: x[:k] for n, x in ref.items()},
                               {n: x[:k] for n, x in got.items()})
    if a == b:
        return ok, '%s (%d detections)' % (msg, a)
    return False, '%d detections, the original %d; the first %d: %s' % (b, a, k, msg)


def ort_runs(src, dst, orig, out, sizes, workdir):
    """onnxruntime on the original and the output as they are, then on copies with every node
    output of the main graph made a graph output, all on the same random inputs (dynamic dims
    sized by sizes, the export record's test_sizes). Returns (feeds, [4 results]), each a dict
    {output name: array} or an error string."""
    feeds = ortcheck.random_inputs(src, 0, sizes)
    paths = [src, dst]
    try:
        for tag, m in (('orig', orig), ('out', out)):
            paths.append(os.path.join(workdir, '%s.%s.all.onnx' % (
                os.path.basename(src)[:-5], tag)))
            infer_oracle.with_all_outputs(m, list(infer_oracle.producers(m)), paths[-1])
        return feeds, ortcheck.run_models([{'model': p, 'inputs': feeds} for p in paths])
    finally:
        for p in paths[2:]:
            if os.path.exists(p):
                os.remove(p)


def input_sizes(model, feeds):
    """{dim_param: size} for the symbolic dims of the graph inputs, from the fed arrays."""
    env = {}
    for vi in ortcheck.real_inputs(model):
        for k, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.dim_param and vi.name in feeds:
                env[d.dim_param] = int(feeds[vi.name].shape[k])
    return env


def dims_known(dims, env):
    """True when every dim is a number or an expression of the input symbols in env."""
    for d in dims:
        if isinstance(d, int):
            continue
        try:
            if d is None or infer_oracle.eval_dim(d, env) is None:
                return False
        except Exception:  # noqa: BLE001 - a form eval_dim does not read counts as unknown
            return False
    return True


def shape_side(path, model, actual, feeds, ruled):
    """ppqfmt's facts for one model file (test_infer --dump) against onnxruntime's shapes of every
    node output (actual; an error string if that run failed) and onnx's infer_shapes. Returns
    {'conflicts': [...], 'misses': [...] (static facts onnx has and ppqfmt lacks, on ops with a
    rule), 'notes', 'unknown_ops', 'cov': counts, 'ours_s', 'onnx_s'}."""
    side = {'conflicts': [], 'misses': [], 'notes': [], 'cov': Counter()}
    t0 = time.time()
    dump = infer_oracle.run_dump(TEST_INFER, path)
    side['ours_s'] = time.time() - t0
    if isinstance(dump, str):
        side['conflicts'].append(dump)
        return side
    ours, unknown, _ = dump
    side['unknown_ops'] = sorted(set(unknown))
    t0 = time.time()
    theirs = infer_oracle.onnx_facts(model, symbolic=True)
    side['onnx_s'] = time.time() - t0
    if isinstance(theirs, str):
        side['notes'].append(theirs)
        theirs = {}
    static = {v: (dt, None if dims is None else [d if isinstance(d, int) else None for d in dims])
              for v, (dt, dims) in theirs.items()}
    prod = infer_oracle.producers(model)
    t = infer_oracle.Tally()
    infer_oracle.compare_onnx(path, ours, static, prod, ruled, t, side['conflicts'],
                              side['misses'])
    if isinstance(actual, str):
        side['conflicts'].append('onnxruntime with every node output: %s' % actual)
    else:
        infer_oracle.compare_ort(ours, {v: a for v, a in actual.items() if v in prod}, t,
                                 side['conflicts'])
    env = input_sizes(model, feeds)
    c = side['cov']
    c.update(t.c)
    for v in prod:
        for who, facts in (('ours', ours), ('onnx', theirs)):
            dt, dims = facts.get(v, (None, None))
            if dt and dims is not None:
                c[who + '_rank'] += 1
                c[who + '_full'] += dims_known(dims, env)
    return side


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

def fmt_s(x):
    return '-' if x is None else '%.1f' % x


def legacy_counts(d):
    """{'Clip-6': 35} -> 'Clip-6 35'; {} -> '0'; None -> '-'."""
    if d is None:
        return '-'
    return ' '.join('%s %d' % kv for kv in sorted(d.items())) or '0'


def table(results):
    lines = ['| model | opset | nodes before→after | BN before→after | opset/IR before→after '
             '| legacy forms before→after | checker | leftovers | shared params | dead | as base '
             '| equiv | --check | shape | foldable/Shape left | export s | ppqfmt s | ORT s '
             '| --check s |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in results:
        if r.get('skipped'):
            lines.append('| %s | %d | skipped: %s | | | | | | | | | | | | | | | | |' % (
                r['model'], r['opset'], r['skipped'][:120].replace('|', '/')))
            continue
        n, bn, c = r.get('nodes', [None, None]), r.get('bn', [None, None]), r['checks']

        def arrow(v):
            return '%s→%s' % tuple('-' if x is None else x for x in v)
        left = r.get('left')
        left_s = c.get('left', '-') if not left else ', '.join(
            '%s %d' % ({'BatchNormalization': 'BN'}.get(k, k), v) for k, v in sorted(left.items()))
        shared_s = c.get('shared', '-') if not r.get('shared') else '%d' % r['shared']
        dead_s = c.get('dead', '-') if not r.get('dead') else '%d' % r['dead']
        checker_s = c.get('checker', '-')
        if r.get('orig_checker'):
            checker_s += ' (orig FAIL)'
        ov = r.get('opset_ir', [None, None])
        opset_s = '%s→%s' % tuple('-' if v is None else '%s/%s' % v for v in ov)
        if c.get('opset') == 'FAIL':
            opset_s += ' FAIL'
        lv = r.get('legacy', [None, None])
        legacy_s = '%s→%s' % tuple(legacy_counts(v) for v in lv)
        if c.get('legacy') == 'FAIL':
            legacy_s += ' FAIL'
        census_s = '%d/%d' % r['census'] if 'census' in r else c.get('census', '-')
        lines.append('| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s '
                     '| %s | %s | %s | %s |'
                     % (r['model'], r['opset'], arrow(n), arrow(bn), opset_s, legacy_s, checker_s,
                        left_s, shared_s, dead_s, c.get('as-base', ''), c.get('equiv', '-'),
                        c.get('--check', '-'), c.get('shape', '-'), census_s,
                        fmt_s(r.get('export_s')), fmt_s(r.get('ppqfmt_s')),
                        fmt_s(r.get('ort_s')), fmt_s(r.get('check_run_s'))))
    return '\n'.join(lines)


def coverage_table(results):
    """Shape inference per model, on the original export and on ppqfmt's output: the share of
    node outputs (main graph) with a dtype and rank, and with every dim known (a number or an
    expression of the graph inputs' symbols), for ppqfmt and for onnx's infer_shapes."""
    def pct(a, n):
        return '%.1f%%' % (100.0 * a / n) if n else '-'
    lines = ['| model | opset | file | node outputs | ppqfmt dtype+rank | ppqfmt all dims '
             '| onnx dtype+rank | onnx all dims | ppqfmt-only | onnx-only | ORT dims checked '
             '| ORT unchecked values | conflicts | ppqfmt dump s | onnx infer_shapes s |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for r in results:
        for side, sd in sorted((r.get('shape') or {}).items(), reverse=True):
            c, n = sd['cov'], sd['cov']['outputs']
            lines.append('| %s | %d | %s | %d | %s | %s | %s | %s | %d | %d | %d | %d | %d | %s '
                         '| %s |' % (
                             r['model'], r['opset'], side, n, pct(c['ours_rank'], n),
                             pct(c['ours_full'], n), pct(c['onnx_rank'], n),
                             pct(c['onnx_full'], n), c['ours_only'], c['onnx_only'],
                             c['ort_dims'], c['ort_unchecked'], len(sd['conflicts']),
                             '%.3f' % sd['ours_s'], '%.3f' % sd['onnx_s']
                             if 'onnx_s' in sd else '-'))
    return '\n'.join(lines)


def parse_list(text, allowed, what, conv=str):
    try:
        items = [conv(x.strip()) for x in text.split(',') if x.strip()]
    except ValueError:
        raise SystemExit('bad %s list: %s' % (what, text))
    bad = [x for x in items if allowed is not None and x not in allowed]
    if bad:
        raise SystemExit('unknown %s: %s (known: %s)' % (what, short(bad, 10),
                                                       ', '.join(map(str, allowed))))
    return items


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sel = ap.add_mutually_exclusive_group()
    sel.add_argument('--quick', action='store_true', help='the small CI subset')
    sel.add_argument('--legacy', action='store_true',
                     help='the legacy set only (opset-9 exports, Constant-weight variants)')
    ap.add_argument('--models', help='comma-separated (default: all)')
    ap.add_argument('--opsets', help='comma-separated (default: 11,13,17)')
    ap.add_argument('--dir', default=os.path.join(REPO, 'build', 'models'),
                    help='where the exported models live (default build/models)')
    ap.add_argument('--keep', help='keep the formatted models in this directory')
    ap.add_argument('--ppqfmt-args', default='', help='extra ppqfmt arguments')
    args = ap.parse_args(argv)

    models = parse_list(args.models, None, 'model') if args.models else None
    bad = [m for m in models or [] if (m[:-len(CONSTW)] if m.endswith(CONSTW) else m)
           not in KNOWN_MODELS]
    if bad:
        raise SystemExit('unknown model: %s (known: %s; and <model>%s for each)' % (
            short(bad, 10), ', '.join(KNOWN_MODELS), CONSTW))
    opsets = parse_list(args.opsets, None, 'opset', int) if args.opsets else None

    def chosen(m, o):
        return (models is None or m in models) and (opsets is None or o in opsets)
    if args.quick:
        pairs = [(m, o) for m, o in QUICK if chosen(m, o)]
    elif args.legacy:
        pairs = [(m, o) for m, o in LEGACY if chosen(m, o)]
    else:
        pairs = [(m, o) for m in (models or ALL_MODELS + USER_MODELS)
                 for o in (opsets or (USER_OPSETS if m in USER_MODELS else ALL_OPSETS))]
        pairs += [(m, o) for m, o in LEGACY if chosen(m, o) and (m, o) not in pairs]
    if not pairs:
        raise SystemExit('nothing to test')
    if not os.access(PPQFMT, os.X_OK):
        print('FAIL setup: no ppqfmt binary at %s (run make)' % PPQFMT)
        print('test_models: 0 passed, 1 failed')
        return 1

    t_start = time.time()
    os.makedirs(args.dir, exist_ok=True)
    export_s, err = export(args.dir, pairs)
    if err:
        print('FAIL export: %s' % err)
        print('test_models: 0 passed, %d failed' % len(pairs))
        return 1

    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        workdir = args.keep
    else:
        workdir = tempfile.mkdtemp(prefix='ppqfmt_models_')
    extra = shlex.split(args.ppqfmt_args)
    results = []
    try:
        for name, opset in pairs:
            label = '%s_op%d' % (name, opset)
            try:
                r = test_model(name, opset, args.dir, workdir, extra)
            except Exception as e:  # an unreadable model etc.: a failure, not a crash
                r = {'model': name, 'opset': opset, 'checks': {}, 'notes': [],
                     'fails': [('runner', '%s: %s' % (type(e).__name__, e))]}
            results.append(r)
            if r.get('skipped'):
                print('skip %s: %s' % (label, r['skipped']))
            elif r['fails']:
                print('FAIL %s: %s' % (label, '; '.join(
                    '%s: %s' % (c, ' '.join(m.split())[:300]) for c, m in r['fails'])))
            else:
                print('ok %s' % label)
            sys.stdout.flush()
            if not args.keep:
                out = os.path.join(workdir, '%s.onnx' % label)
                if os.path.exists(out):
                    os.remove(out)
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    print()
    print(table(results))
    print()
    print(coverage_table(results))
    print()
    for r in results:
        label = '%s_op%d' % (r['model'], r['opset'])
        if r['fails'] or r['notes'] or r.get('bn_warnings'):
            print('### %s' % label)
            for c, m in r['fails']:
                print('- FAIL %s: %s' % (c, ' '.join(m.split())[:1000]))
            for w in r.get('bn_warnings', []):
                print('  - ppqfmt warning: %s' % w)
            for w in r.get('legacy_warnings', []):
                print('  - ppqfmt warning (legacy form left): %s' % w)
            if r['fails']:
                ws = r.get('warnings') or []
                print('- ppqfmt warnings (--report=json): %s' % ('none' if not ws else ''))
                for w in ws[:40]:
                    print('  - %s' % w)
                if len(ws) > 40:
                    print('  - (+%d more)' % (len(ws) - 40))
            for n in r['notes']:
                print('- note: %s' % n)
    skipped = [r for r in results if r.get('skipped')]
    failed = [r for r in results if not r.get('skipped') and r['fails']]
    passed = len(results) - len(skipped) - len(failed)
    ran = [r for r in results if not r.get('skipped')]
    total_bytes = sum(r.get('bytes') or 0 for r in ran)
    print()
    print('# time: %.1fs total; export %.1fs (this run); ppqfmt %.1fs; onnxruntime %.1fs; '
          'load and checker %.1fs; models %.0f MB in %s' % (
              time.time() - t_start, export_s, sum(r.get('ppqfmt_s') or 0 for r in ran),
              sum(r.get('ort_s') or 0 for r in ran), sum(r.get('check_s') or 0 for r in ran),
              total_bytes / 1e6, args.dir))
    print('test_models: %d passed, %d failed%s' % (
        passed, len(failed), (', %d skipped' % len(skipped)) if skipped else ''))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
