#!/usr/bin/python3
"""Benchmark of issue 5: ppqfmt's wall time against cp, and its peak memory,
on two large models made by scripts/make_bench_models.py (cached in
build/bench/):

  inline    ~600 MB, every tensor inside model.onnx: Conv+BatchNormalization
            chain (ppqfmt folds every BN).
  external  ~3 GiB, every tensor in weights.bin beside model.onnx:
            Gemm+BatchNormalization chain.
  files     ~2.3 GB, 34 weights in 34 data files beside model.onnx:
            MatMul+Relu chain the default passes leave as it is (ppqfmt
            copies each data file beside its output).

Usage: scripts/bench.py [--quick] [--runs N]
                       [--only inline|external|files|nodes|inference|fold|fusions|maxvit|check]
                       [--models DIR]
                       [--sizes 10k,100k,1M] [--timeout S] [-- PPQFMT-ARG...]

(arguments after `--` are added to every ppqfmt command, e.g.
`-- --external-data=w.bin`; the default is none: `ppqfmt MODEL -o OUT`.)

For each model, N times (default 5) alternately: `cp MODEL DATA... FRESH/`
then `build/ppqfmt MODEL -o FRESH/model.onnx`, each into a new folder under
build/bench/run/ (same filesystem as the input, a different folder from it, so
ppqfmt copies the data files beside its output), each under
`/usr/bin/time -v` (its "Maximum resident set size" is the peak RSS).  The
output is deleted and `sync` run before every timed command; the input files
are read once before the first run so every run starts from a warm page cache.
No run is dropped: the table shows medians, the lines above it every run.

The last ppqfmt output of each model is checked: onnx.checker.check_model(PATH,
full_check=True), no BatchNormalization left, one Conv/Gemm per layer (every
BN folded, none turned into a depthwise Conv), and the fused weight and bias of
the first two layers equal to the fold computed here in double (the files
model: every MatMul kept and every data file beside the output equal to the
input's).

For the inline model, python3-onnx's onnx.load + onnx.save (one run, wall and
peak RSS of the whole python process) is shown for reference.

Targets (printed beside the figures, never enforced):
  inline    wall <= 1.3 x cp, peak RSS <= 1.1 x model size + 32 MiB
  external  wall <= 1.3 x cp, peak RSS <= 256 MiB
  files     wall <= 1.3 x cp, peak RSS <= 256 MiB

Node scaling (issue 12, `--only nodes`, part of every run): for each pattern
of make_bench_models.NODE_PATTERNS at 10k, 100k and 1M nodes (--quick: 10k and
100k): `ppqfmt MODEL -o OUT` (default passes) and python3-onnx onnx.load +
onnx.save in turn, --pairs times (default 3; their medians are shown), then
`ppqfmt --passes=none MODEL -o OUT` and `ppqfmt --passes=identity --dry-run
MODEL` (the graph loaded, nothing written) once each, all under
/usr/bin/time -v (cpu time read with os.wait4, in microseconds, not time's
centiseconds). Printed: wall and peak RSS of each, the ratios
default / none and default / python, microseconds per node and its ratio to
the smallest size, all from user + system CPU seconds (wall time, also shown,
counts other work on a shared machine), the cpu per node added from one size
to the next (the smallest size's us/node also carries the fixed start-up
cost), and the loaded graph's peak RSS per node and per node + use (input
read). Targets: at 1M nodes default <= 1.5x
none and <= 1.0x python and the loaded graph <= 400 bytes per node + use;
time per node within 1.5x of the 10k figure, and per node added within 1.5x
of the 10k -> 100k step. A run longer than
--timeout seconds (default 1200) is stopped and shown as such.

Fusions (issue 15, `--only fusions`, part of every run): each export in build/models of
FUSION_MODELS below opset 17 (make test-models, or scripts/export_torchvision.py build/models
--opsets 14 --models NAMES) through `ppqfmt --target-opset=17 --enable=fuse-gelu
--report=json`: nodes and ReduceMean/Erf/Tanh before and after, the changes of every fusion
pass, onnxruntime's max error against the original (scripts/ortcheck.py's inputs, the
export record's sizes) and the fusion passes' milliseconds against all passes and the wall
time of the run.

fuse-bn-forward on MaxViT (issue 30, `--only maxvit`, part of every run): torchvision maxvit_t
exported once into build/bench/maxvit_t/ (as scripts/export_torchvision.py exports its networks:
PRESERVE, no constant folding, opset 17; needs torch, make deps-models), the default run against
--no-fuse-bn-forward (medians of alternating runs), the fuse-bn-forward pass's and the other
passes' milliseconds (--report=json) and python3-onnx load+infer_shapes+save for reference.

--quick uses ~60 MB / ~300 MB models (a smoke run; the targets are for the
full sizes).  Exit status: 0 when every ppqfmt run succeeded and its output is
valid, whatever the figures; 1 otherwise.
"""
import argparse
import filecmp
import functools
import os
import shutil
import statistics
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, 'scripts')
BENCH = os.path.join(ROOT, 'build', 'bench')
RUN = os.path.join(BENCH, 'run')
PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
TIME = '/usr/bin/time'
MiB = 1 << 20

sys.path.insert(0, SCRIPTS)
import make_bench_models  # noqa: E402


class Failed(Exception):
    pass


def log(*a):
    print(*a, flush=True)


def fresh(name):
    d = os.path.join(RUN, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def measure(cmd, limit=None, keep_stdout=False):
    """Runs cmd under /usr/bin/time -v after a sync: (wall s, peak RSS bytes, rc, stderr, stdout, cpu s),
    or None when it ran past limit seconds (then it is killed).
    - peak RSS: time's "Maximum resident set size". The kernel's figure for a child this script starts
      itself would be this Python's own RSS at least (a child keeps its parent's high-water mark across
      exec); time's child is forked from the small time process.
    - cpu (user + system): the kernel's own accounting of the reaped time process and its child
      (os.wait4, microseconds; time's own share is about 1 ms). time prints centiseconds cut down, not
      rounded: a run of 19 ms of cpu read as 10 ms, so the 10k node rows came out about half their true
      cpu time."""
    os.sync()
    killed = []

    def kill(pid):
        killed.append(pid)
        os.killpg(pid, signal.SIGKILL)
    tf = os.path.join(BENCH, '.time.txt')
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([TIME, '-v', '-o', tf] + cmd, stdout=out if keep_stdout else subprocess.DEVNULL,
                             stderr=err, start_new_session=True)
        timer = threading.Timer(limit, kill, (p.pid,)) if limit else None
        if timer:
            timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if timer:
            timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if killed:
            return None
        with open(tf) as f:
            rss = [int(line.rsplit(':', 1)[1]) * 1024 for line in f if 'Maximum resident set size' in line]
        os.unlink(tf)
        out.seek(0)
        err.seek(0)
        return (wall, rss[0], p.returncode, err.read().decode(errors='replace'),
                out.read().decode(errors='replace'), ru.ru_utime + ru.ru_stime)


def timed(cmd):
    """measure() without a limit: (wall s, peak RSS bytes, rc, stderr, stdout)."""
    return measure(cmd, keep_stdout=True)[:5]


PAIRED_RUNS = 5  # the fold and inference tables: alternating runs per command, medians


def timed_alternating(cmds, runs=PAIRED_RUNS):
    """Each of cmds run `runs` times in turn (A B A B ...), so a drift in the machine's speed
    reaches them alike: per command (median wall s, largest peak RSS, rc, stderr). A failed
    run ends the series and stands for every command."""
    got = [[] for _ in cmds]
    for _ in range(runs):
        for i, cmd in enumerate(cmds):
            got[i].append(timed(cmd))
            if got[i][-1][2]:
                return [got[i][-1]] * len(cmds)
    return [(statistics.median(r[0] for r in g), max(r[1] for r in g), 0, g[-1][3]) for g in got]


def warm(paths):
    for p in paths:
        with open(p, 'rb', buffering=0) as f:
            while f.read(16 * MiB):
                pass


# ---------------------------------------------------------------- verification

def tensor_array(t, base):
    if t.data_type != TensorProto.FLOAT:
        raise Failed('%s: dtype %d, expected float' % (t.name, t.data_type))
    if t.data_location == TensorProto.EXTERNAL:
        info = {e.key: e.value for e in t.external_data}
        n = int(np.prod(t.dims)) * 4
        with open(os.path.join(base, info['location']), 'rb') as f:
            f.seek(int(info.get('offset', 0)))
            buf = f.read(int(info.get('length', n)))
        if len(buf) != n:
            raise Failed('%s: %d bytes of external data, expected %d' % (t.name, len(buf), n))
        return np.frombuffer(buf, dtype=np.float32).reshape(tuple(t.dims))
    return numpy_helper.to_array(t)


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def verify(src_path, out_path, man):
    """The checks of the docstring; raises Failed."""
    try:
        onnx.checker.check_model(out_path, full_check=True)
    except Exception as e:  # noqa: BLE001 - any checker error means invalid
        raise Failed('checker: %s' % str(e).strip().splitlines()[0])
    src = onnx.load(src_path, load_external_data=False)
    out = onnx.load(out_path, load_external_data=False)
    ops = [n.op_type for n in out.graph.node]
    layers = man['params']['layers']
    if man['params']['kind'] == 'files':
        return verify_copied(src_path, out_path, man, ops)
    op = 'Conv' if man['params']['kind'] == 'inline' else 'Gemm'
    if 'BatchNormalization' in ops:
        raise Failed('%d BatchNormalization left' % ops.count('BatchNormalization'))
    if ops.count(op) != layers:
        raise Failed('%d %s nodes, expected %d (a BN not folded?)' % (ops.count(op), op, layers))
    s_init = {t.name: t for t in src.graph.initializer}
    o_init = {t.name: t for t in out.graph.initializer}
    s_nodes = {n.name: n for n in src.graph.node}
    producer = {o: n for n in out.graph.node for o in n.output}
    sdir, odir = os.path.dirname(src_path), os.path.dirname(out_path)
    for i in range(min(2, layers)):
        lin = s_nodes['l%d_%s' % (i, op.lower())]
        bn = s_nodes['l%d_bn' % i]
        fused = producer.get(bn.output[0])
        if fused is None or fused.op_type != op or len(fused.input) != 3:
            raise Failed('layer %d: %s is not produced by a %s with a bias' % (i, bn.output[0], op))
        w = tensor_array(s_init[lin.input[1]], sdir).astype(np.float64)
        b = tensor_array(s_init[lin.input[2]], sdir).astype(np.float64)
        scale, bias, mean, var = (tensor_array(s_init[n], sdir).astype(np.float64) for n in bn.input[1:])
        f = scale / np.sqrt(var + attr(bn, 'epsilon', 1e-5))
        if op == 'Conv':
            ew = w * f[:, None, None, None]
        elif attr(lin, 'transB', 0) == attr(fused, 'transB', 0):
            ew = w * (f[:, None] if attr(lin, 'transB', 0) else f[None, :])
        else:
            raise Failed('layer %d: transB changed' % i)
        eb = (b - mean) * f + bias
        gw = tensor_array(o_init[fused.input[1]], odir)
        gb = tensor_array(o_init[fused.input[2]], odir)
        for what, got, exp in [('weight', gw, ew), ('bias', gb, eb)]:
            if got.shape != exp.shape or not np.allclose(got, exp, rtol=1e-5, atol=1e-6):
                raise Failed('layer %d: fused %s differs from the expected fold' % (i, what))


def verify_copied(src_path, out_path, man, ops):
    """The files model: every layer kept, every data file beside the output equal to the
    input's, byte for byte."""
    if ops.count('MatMul') != man['params']['layers']:
        raise Failed('%d MatMul nodes, expected %d' % (ops.count('MatMul'), man['params']['layers']))
    for fn in man['data_files']:
        a, b = os.path.join(os.path.dirname(src_path), fn), os.path.join(os.path.dirname(out_path), fn)
        if not os.path.isfile(b) or not filecmp.cmp(a, b, shallow=False):
            raise Failed('data file %s not copied as it was' % fn)


# ---------------------------------------------------------------- measuring

def bench_model(man, runs, extra):
    folder = os.path.join(BENCH, man['name'])
    src = os.path.join(folder, man['model'])
    files = [src] + [os.path.join(folder, f) for f in man['data_files']]
    size = sum(os.path.getsize(p) for p in files)
    r = dict(name=man['name'], kind=man['params']['kind'], size=size, cp=[], ppq=[], rss=[], cp_rss=[], error=None,
             n_files=len(man['data_files']))
    warm(files)
    log('%s: %d files, %.1f MiB; %d runs each, alternating cp / ppqfmt' % (man['name'], len(files), size / MiB, runs))
    try:
        for i in range(runs):
            d = fresh('cp')
            wall, rss, rc, err, _ = timed(['cp'] + files + [d + '/'])
            if rc:
                raise Failed('cp exited %d: %s' % (rc, err.strip()))
            r['cp'].append(wall)
            r['cp_rss'].append(rss)
            shutil.rmtree(d)
            d = fresh('ppqfmt')
            out = os.path.join(d, 'model.onnx')
            wall, rss, rc, err, _ = timed([PPQFMT] + extra + [src, '-o', out])
            if rc:
                msg = err.strip().splitlines()
                raise Failed('ppqfmt exited %d%s' % (rc, (': ' + ' / '.join(msg[-3:])) if msg else ''))
            r['ppq'].append(wall)
            r['rss'].append(rss)
            out_size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
            names = sorted(os.listdir(d))
            log('  run %d: cp %.3f s   ppqfmt %.3f s, peak RSS %.1f MiB, output %.1f MiB in %s'
                % (i + 1, r['cp'][-1], wall, rss / MiB, out_size / MiB,
                   ', '.join(names) if len(names) <= 3 else '%d files' % len(names)))
            if i < runs - 1:
                shutil.rmtree(d)
        t0 = time.perf_counter()
        verify(src, out, man)
        log('  output valid: full checker, %s (%.1f s)'
            % ('every data file copied as it was' if r['kind'] == 'files' else
               'no BatchNormalization, fused weights match', time.perf_counter() - t0))
        r['valid'] = True
    except Failed as e:
        r['error'] = str(e)
        log('  FAILED: %s' % e)
    finally:
        shutil.rmtree(os.path.join(RUN, 'ppqfmt'), ignore_errors=True)
        shutil.rmtree(os.path.join(RUN, 'cp'), ignore_errors=True)
    return r


PY_REF = r'''
import sys, time, onnx
t0 = time.perf_counter(); m = onnx.load(sys.argv[1]); t1 = time.perf_counter()
onnx.save(m, sys.argv[2]); t2 = time.perf_counter()
print('%.3f %.3f' % (t1 - t0, t2 - t1))
'''


def bench_python(man):
    src = os.path.join(BENCH, man['name'], man['model'])
    d = fresh('python')
    try:
        wall, rss, rc, err, outp = timed([sys.executable, '-c', PY_REF, src, os.path.join(d, 'model.onnx')])
        if rc:
            raise Failed('python onnx.load+save exited %d: %s' % (rc, err.strip()[-300:]))
        load, save = (float(x) for x in outp.split())
        log('  python3-onnx %s: onnx.load+onnx.save %.3f s (load %.3f, save %.3f, rest is python start/import),'
            ' peak RSS %.1f MiB' % (onnx.__version__, wall, load, save, rss / MiB))
        return dict(wall=wall, rss=rss)
    finally:
        shutil.rmtree(d, ignore_errors=True)


# ---------------------------------------------------------------- shape inference

PY_INFER = r'''
import sys, onnx
from onnx import shape_inference
m = onnx.load(sys.argv[1])
m = shape_inference.infer_shapes(m, strict_mode=False, data_prop=True)
onnx.save(m, sys.argv[2])
'''


def typed_share(path):
    """Share of the main graph's node outputs that the file declares with a type and a shape."""
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    typed = {vi.name for vi in list(g.value_info) + list(g.output) + list(g.input)
             if vi.type.WhichOneof('value') == 'tensor_type' and vi.type.tensor_type.elem_type
             and vi.type.tensor_type.HasField('shape')}
    outs = [o for n in g.node for o in n.output if o]
    return sum(o in typed for o in outs) / len(outs) if outs else 1.0


MODELS = os.path.join(ROOT, 'build', 'models')  # make test-models exports here (--models)


def network_models():
    """The real-network exports in MODELS, if made."""
    if not os.path.isdir(MODELS):
        return []
    return [p for p in sorted(os.path.join(MODELS, n) for n in os.listdir(MODELS) if n.endswith('.onnx'))
            if os.path.isfile(p)]


def inference_models():
    """The models the inference table measures: the inline bench model and the node-scaling
    Conv+BN chains that exist, and the real-network exports."""
    found = sorted(os.path.join(BENCH, n, 'model.onnx') for n in os.listdir(BENCH)
                   if n.startswith(('inline', 'nodes-convbn-')))
    return [p for p in found if os.path.isfile(p)] + network_models()


def bench_inference():
    """The default run against the default run without infer-shapes on the same model (the
    cost of inferring and writing value_info), and the whole default run against python3-onnx's
    load + infer_shapes + save, measured in the same run; and, as the floor any tool that
    writes the model meets, cp of the file (onnx/cp: the most onnx/ppqfmt can be)."""
    rows = [('model', 'no-infer s', 'default s', '+ms', 'onnx s', 'onnx/ppqfmt', 'cp s', 'onnx/cp',
             'RSS MiB', 'onnx RSS MiB', 'typed ppqfmt', 'typed onnx')]
    d = fresh('inference')
    for src in inference_models():
        out, ref = os.path.join(d, 'ppqfmt.onnx'), os.path.join(d, 'onnx.onnx')
        base, ours, floor = timed_alternating([[PPQFMT, '-q', '--no-infer-shapes', src, '-o', out],
                                               [PPQFMT, '-q', src, '-o', out],
                                               ['cp', src, os.path.join(d, 'cp.onnx')]], 3)
        theirs = timed([sys.executable, '-c', PY_INFER, src, ref])
        if ours[2] or base[2]:
            log('  %s: ppqfmt exited %d: %s' % (src, ours[2] or base[2], (ours[3] or base[3]).strip()[-200:]))
            continue
        ok = theirs[2] == 0
        name = os.path.relpath(src, ROOT)
        rows.append((name, '%.2f' % base[0], '%.2f' % ours[0], '%+.0f' % (1000 * (ours[0] - base[0])),
                     '%.2f' % theirs[0] if ok else 'failed', '%.1fx' % (theirs[0] / ours[0]) if ok else '-',
                     '%.2f' % floor[0], '%.1fx' % (theirs[0] / floor[0]) if ok else '-',
                     '%.0f' % (ours[1] / MiB), '%.0f' % (theirs[1] / MiB) if ok else '-',
                     '%.1f%%' % (100 * typed_share(out)), '%.1f%%' % (100 * typed_share(ref)) if ok else '-'))
    shutil.rmtree(d, ignore_errors=True)
    print('\nshape inference: ppqfmt default passes against --no-infer-shapes (+ms: the cost of\n'
          'inferring and writing value_info; both, and cp, median wall of 3 alternating runs) and\n'
          'python3-onnx load+infer_shapes+save (one run), same session;\n'
          'typed: share of node outputs (main graph) declared with a type and shape afterwards;\n'
          'cp s: copying the file, the floor of any run that writes the model (so onnx/cp is the\n'
          'largest onnx/ppqfmt any tool could show; small models: the cost of starting a process).\n'
          'Targets: +ms <= 20 on the 330 MB ViT-B/16, onnx/ppqfmt >= 50, typed never below onnx.\n')
    if len(rows) > 1:
        table(rows)
    else:
        print('  (no models: run make bench first, or make test-models for the real networks)')


# ---------------------------------------------------------------- fusions

# The fusion figures of issue 15: every pass that folds or fuses nodes, the options the
# transformer recipes use, and the exported networks they are measured on (whatever of them
# build/models holds: `make test-models`, or scripts/export_torchvision.py build/models
# --opsets 14 --models NAMES).
@functools.lru_cache(maxsize=None)
def fusion_passes():
    """The fuse-* passes and bn-to-conv, in pipeline order, from `ppqfmt --list-passes`: a new
    fusion pass is measured without an edit here."""
    out = subprocess.run([PPQFMT, '--list-passes'], capture_output=True, text=True,
                         check=True).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return tuple(n for n in names if n.startswith('fuse-') or n == 'bn-to-conv')


FUSION_ARGS = ['--target-opset=17', '--enable=fuse-gelu', '--report=json']
FUSION_MODELS = ('gpt2_tiny', 'bert_tiny', 'llama_tiny', 'vit_b_16', 'swin_t', 'maxvit_t',
                 'resnet18', 'mobilenet_v2', 'efficientnet_v2_s')
LEFT_OPS = ('ReduceMean', 'Erf', 'Tanh')


def op_counts(path):
    """Counter of op types over the graph and its subgraphs."""
    counts = {}

    def walk(g):
        for n in g.node:
            counts[n.op_type] = counts.get(n.op_type, 0) + 1
            for a in n.attribute:
                for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else list(a.graphs)):
                    walk(sg)
    walk(onnx.load(path, load_external_data=False).graph)
    return counts


def fusion_models():
    """The exports in MODELS (--models) of FUSION_MODELS below opset 17 (the runs raise them)."""
    d = MODELS
    names = sorted(os.listdir(d)) if os.path.isdir(d) else []
    pick = lambda n: (n.endswith('.onnx') and n.rsplit('_op', 1)[0] in FUSION_MODELS
                      and n.rsplit('_op', 1)[-1][:-5].isdigit() and int(n.rsplit('_op', 1)[-1][:-5]) < 17)
    return [os.path.join(d, n) for n in names if pick(n)]


FUSED_OPS = ('LayerNormalization', 'Gelu', 'BiasGelu', 'FastGelu', 'QuickGelu')


def probed(path, names, dst):
    """path's model with the values names made graph outputs too, saved to dst."""
    from onnx import helper
    m = onnx.load(path)
    have = {o.name for o in m.graph.output}
    m.graph.output.extend(helper.make_empty_tensor_value_info(n) for n in names if n not in have)
    onnx.save(m, dst)
    return dst


def ort_max_error(src, out, d):
    """(max |out - src| under onnxruntime, the same over the tolerance 1e-5 + 1e-3 * max|ref| of
    scripts/ortcheck.py, worst of the graph outputs and the values the fused nodes write, which
    keep the names they had in src: a network whose head is initialized to zero, as ViT's,
    has constant outputs) or an error string. The dynamic dims take the sizes of the export
    record (.json beside the model)."""
    import json
    import ortcheck
    rec = os.path.splitext(src)[0] + '.json'
    sizes = None
    if os.path.isfile(rec):
        with open(rec) as f:
            sizes = json.load(f).get('test_sizes')
    fused = [o for n in onnx.load(out, load_external_data=False).graph.node
             if n.op_type in FUSED_OPS for o in n.output if o]
    if fused:
        src, out = (probed(p, fused, os.path.join(d, 'probe%d.onnx' % i))
                    for i, p in enumerate((src, out)))
    feeds = ortcheck.random_inputs(src, sizes=sizes)
    ref, got = ortcheck.run_models([{'model': src, 'inputs': feeds}, {'model': out, 'inputs': feeds}])
    if isinstance(ref, str) or isinstance(got, str):
        return 'onnxruntime: %s' % (ref if isinstance(ref, str) else got)[:120]
    worst = (0.0, 0.0)
    for name, r in ref.items():
        r, g = np.asarray(r, np.float64), np.asarray(got[name], np.float64)
        if r.shape != g.shape:
            return 'output %s: shape %s, expected %s' % (name, g.shape, r.shape)
        if not r.size:
            continue
        err = float(np.max(np.abs(r - g)))
        worst = max(worst, (err / (1e-5 + 1e-3 * float(np.max(np.abs(r)))), err))
    return worst[1], worst[0]


FUSION_RUNS = 3  # the times are the least of these runs (the machine is shared)


def fusion_row(src, d):
    import json
    out = os.path.join(d, 'out.onnx')
    name = os.path.basename(src)[:-5]
    walls, ms = [], {}
    for _ in range(FUSION_RUNS):
        wall, _, rc, err, _ = timed([PPQFMT] + FUSION_ARGS + [src, '-o', out])
        if rc:
            log('  %s: ppqfmt exited %d: %s' % (name, rc, err.strip()[-200:]))
            return None
        rep = json.loads(err)
        walls.append(wall)
        ms = {k: min(v, ms.get(k, v)) for k, v in rep['timings'].items()}
    wall = min(walls)
    fused = ' '.join('%s=%d' % (p['name'].replace('fuse-', ''), p['changes']) for p in rep['passes']
                     if p['name'] in fusion_passes() and p['changes'])
    before, after = op_counts(src), op_counts(out)
    me = ort_max_error(src, out, d)
    left = ['%d>%d' % (before.get(op, 0), after.get(op, 0)) for op in LEFT_OPS]
    return ([name, '%d>%d' % (sum(before.values()), sum(after.values()))] + left +
            [fused or '-'] + (['%.2e' % me[0], '%.2g' % me[1]] if not isinstance(me, str) else [me, '-']) +
            ['%.1f' % sum(ms.get(p, 0) for p in fusion_passes()), '%.1f' % sum(ms.values()),
             '%.0f' % (1000 * wall)])


def bench_fusions():
    """Issue 15's figures: per exported network, nodes and the ops fusions remove before and
    after `ppqfmt --target-opset=17 --enable=fuse-gelu`, the changes each fusion pass made,
    onnxruntime's max error against the original, and the fusion passes' time against the
    whole run."""
    rows = [('model', 'nodes', 'ReduceMean', 'Erf', 'Tanh', 'fusions (pass=changes)', 'max err',
             'err/tol', 'fusion ms', 'passes ms', 'wall ms')]
    d = fresh('fusions')
    for src in fusion_models():
        row = fusion_row(src, d)
        if row:
            rows.append(row)
    shutil.rmtree(d, ignore_errors=True)
    print('\nfusions: ppqfmt %s MODEL -o OUT on each export;\n'
          'a>b: before > after (subgraphs included); max err: max |difference| under onnxruntime\n'
          'of the graph outputs and the values fused nodes write; err/tol: that over\n'
          '1e-5 + 1e-3 max|ref| of the value (<= 1 passes); fusion ms: the\n'
          'fusion passes (%s)\nagainst every pass (passes ms) and the whole run (wall ms), '
          'each the least of %d runs.\n'
          % (' '.join(FUSION_ARGS), ', '.join(fusion_passes()), FUSION_RUNS))
    if len(rows) > 1:
        table(rows)
    else:
        print('  (no models: make test-models, or scripts/export_torchvision.py build/models '
              '--opsets 14 --models %s)' % ','.join(FUSION_MODELS))


def bench_fold():
    """Per real-network export: nodes before and after, what folding left (tests/census.py:
    foldable nodes, Shape/Size of static values), and the whole default run against the run
    without fold (wall, CPU and peak RSS), measured in the same run."""
    sys.path.insert(0, os.path.join(ROOT, 'tests'))
    import census
    rows = [('model', 'nodes', 'after', 'no-fold after', 'foldable left', 'Shape left', 'Shape no-fold',
             'no-fold s', 'default s', 'ratio', 'no-fold MiB', 'default MiB')]
    d = fresh('fold')
    for src in network_models():
        out, base_out = os.path.join(d, 'ppqfmt.onnx'), os.path.join(d, 'nofold.onnx')
        base, ours = timed_alternating([[PPQFMT, '-q', '--no-fold', src, '-o', base_out],
                                        [PPQFMT, '-q', src, '-o', out]])
        if ours[2] or base[2]:
            log('  %s: ppqfmt exited %d: %s' % (src, ours[2] or base[2], (ours[3] or base[3]).strip()[-200:]))
            continue
        before = onnx.load(src, load_external_data=False)
        m, mb = onnx.load(out, load_external_data=False), onnx.load(base_out, load_external_data=False)
        types = census.onnx_types(onnx.load(out))
        shapes = lambda g: sum(n.op_type in ('Shape', 'Size') for n in g.node)  # noqa: E731
        rows.append((os.path.basename(src)[:-5], len(before.graph.node), len(m.graph.node),
                     len(mb.graph.node), len(census.foldable_left(m, types=types)),
                     len(census.static_shapes_left(m, types=types)), shapes(mb.graph),
                     '%.2f' % base[0], '%.2f' % ours[0], '%.2fx' % (ours[0] / base[0]),
                     '%.0f' % (base[1] / MiB), '%.0f' % (ours[1] / MiB)))
    shutil.rmtree(d, ignore_errors=True)
    print('\nconstant folding: default passes against --no-fold on each real-network export (median\n'
          'wall of %d alternating runs each, largest RSS); foldable left / Shape left: nodes with only constant inputs that fold\n'
          'may fold, and Shape/Size of values whose shape onnx infers as static (tests/census.py);\n'
          'main graph node counts. Targets: 0 foldable left, 0 Shape on static models, default\n'
          '<= 1.2x no-fold in time, RSS <= 64 MiB on the 3.2 GB external-data model (above).\n'
          % PAIRED_RUNS)
    if len(rows) > 1:
        table(rows)
    else:
        print('  (no models in %s: run make test-models, or pass --models DIR)' % MODELS)


# ---------------------------------------------------------------- fuse-bn-forward on MaxViT

# issue 30 item 10: torchvision maxvit_t, exported as scripts/export_torchvision.py exports its
# MODELS (random weights after torch.manual_seed(0), its BatchNorm statistics, eval(),
# TrainingMode.PRESERVE, no constant folding, opset 17; input [1, 3, 224, 224]), 125 MB and
# 4,272 nodes. Its MBConv blocks read a BatchNormalization into a 1x1 Conv that another one
# follows: fuse-bn-forward folds forward into a weight fuse-bn already scales.
MAXVIT = os.path.join(BENCH, 'maxvit_t', 'model.onnx')
PY_EXPORT_MAXVIT = r'''
import os, sys, warnings
sys.path.insert(0, sys.argv[2])
import torch, torchvision.models as tvm
from export_torchvision import randomize_bn
torch.manual_seed(0)
model = tvm.maxvit_t(weights=None)
randomize_bn(model, 0)
model.eval()
x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1))
tmp = sys.argv[1] + '.tmp'
with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    torch.onnx.export(model, x, tmp, opset_version=17, training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False, input_names=['input'], output_names=['output'])
os.replace(tmp, sys.argv[1])
'''


def exported_model(path, script, name):
    """path, exported once by script (cached) when torch and torchvision are installed; None
    otherwise."""
    if not os.path.isfile(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        r = subprocess.run([sys.executable, '-c', script, path, SCRIPTS],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode:
            log('  %s export failed (make deps-models installs torch): %s'
                % (name, r.stderr.decode(errors='replace').strip()[-200:]))
            return None
    return path


def maxvit_model():
    return exported_model(MAXVIT, PY_EXPORT_MAXVIT, 'maxvit_t')


def bench_maxvit():
    """The default run against --no-fuse-bn-forward on MAXVIT (medians of alternating runs), the
    passes' milliseconds from --report=json, and python3-onnx's load + infer_shapes + save."""
    import json
    src = maxvit_model()
    print('\nfuse-bn-forward on torchvision maxvit_t (%s, opset 17, PRESERVE\n'
          'export): default passes against --no-fuse-bn-forward, median wall of %d alternating\n'
          'runs; pass ms: the least of the runs with --report=json; python: load+infer_shapes+save,\n'
          'one run.\n'
          'Target: default < 0.5 s, fuse-bn-forward a few ms (it reads each weight once).\n'
          % (os.path.relpath(MAXVIT, ROOT), PAIRED_RUNS))
    if not src:
        print('  (no model: torch and torchvision are needed to export it, make deps-models)')
        return
    d = fresh('maxvit')
    out = os.path.join(d, 'out.onnx')
    base, ours = timed_alternating([[PPQFMT, '-q', '--no-fuse-bn-forward', src, '-o', out],
                                    [PPQFMT, '-q', src, '-o', out]])
    ms = {}
    for _ in range(PAIRED_RUNS):
        _, _, rc, err, _ = timed([PPQFMT, '--report=json', src, '-o', out])
        if rc:
            break
        ms = {k: min(v, ms.get(k, v)) for k, v in json.loads(err)['timings'].items()}
    theirs = timed([sys.executable, '-c', PY_INFER, src, os.path.join(d, 'onnx.onnx')])
    shutil.rmtree(d, ignore_errors=True)
    if ours[2] or base[2]:
        log('  ppqfmt exited %d: %s' % (ours[2] or base[2], (ours[3] or base[3]).strip()[-200:]))
        return
    fwd = ms.get('fuse-bn-forward', 0)
    table([('no-fuse-bn-forward s', 'default s', 'ratio', 'fuse-bn-forward ms', 'other passes ms',
            'python s', 'RSS MiB'),
           ('%.3f' % base[0], '%.3f' % ours[0], '%.2fx' % (ours[0] / base[0]), '%.1f' % fwd,
            '%.1f' % (sum(ms.values()) - fwd),
            '%.2f' % theirs[0] if theirs[2] == 0 else 'failed', '%.0f' % (ours[1] / MiB))])


# ---------------------------------------------------------------- --check

# issue 35: the reference interpreter's speed. torchvision resnet50 at 224x224 (exported as
# scripts/export_torchvision.py exports its MODELS, opset 13, cached in build/bench/) and the
# transformer exports of make test-models, each run as `ppqfmt MODEL --dry-run -q --check=1`:
# the input and the formatted model through the interpreter once each.
RESNET50 = os.path.join(BENCH, 'resnet50_224', 'model.onnx')
PY_EXPORT_RESNET50 = PY_EXPORT_MAXVIT.replace('tvm.maxvit_t', 'tvm.resnet50').replace(
    'opset_version=17', 'opset_version=13')
CHECK_TRANSFORMERS = ('vit_b_16_op17', 'bert_tiny_op17', 'gpt2_tiny_op17', 'llama_tiny_op17')


def resnet50_model():
    return exported_model(RESNET50, PY_EXPORT_RESNET50, 'resnet50')


def bench_check():
    """--check=1 wall, cpu and peak RSS on resnet50 and the transformer exports found."""
    models = [('resnet50 224x224', resnet50_model())]
    models += [(n, os.path.join(MODELS, n + '.onnx')) for n in CHECK_TRANSFORMERS
               if os.path.isfile(os.path.join(MODELS, n + '.onnx'))]
    print('\n--check: ppqfmt MODEL --dry-run -q --check=1 (the interpreter runs the input and the\n'
          'formatted model once each), one run; printed, never asserted.\n'
          'Target: resnet50 at 224x224 in a few seconds on one core.\n')
    rows = [('model', 'wall s', 'cpu s', 'RSS MiB', 'exit', 'note')]
    for name, src in models:
        if not src:
            continue
        wall, rss, rc, err, _, cpu = measure([PPQFMT, src, '--dry-run', '-q', '--check=1'])
        rows.append((name, '%.2f' % wall, '%.2f' % cpu, '%.0f' % (rss / MiB), rc,
                     err.strip().splitlines()[-1][:70] if rc and err.strip() else ''))
    if len(rows) > 1:
        table(rows)
    else:
        print('  (no models: torch is needed for resnet50, make test-models for the transformers)')


# ---------------------------------------------------------------- table

def table(rows):
    w = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for j, r in enumerate(rows):
        print('  '.join(str(c).ljust(w[i]) if i == 0 else str(c).rjust(w[i]) for i, c in enumerate(r)).rstrip())
        if j == 0:
            print('  '.join('-' * x for x in w))


def report(results, py, quick):
    hdr = ['model', 'size', 'cp median s', 'ppqfmt median s', 'ratio', 'peak RSS MiB', 'RSS/size',
           'target', 'met']
    rows = [hdr]
    for r in results:
        size_mib = r['size'] / MiB
        label = '%s (%s)' % (r['name'], {'inline': 'inline', 'external': 'external data'}.get(
            r['kind'], '%d data files' % r['n_files']))
        size = '%.0f MB = %.1f MiB' % (r['size'] / 1e6, size_mib)
        cp = statistics.median(r['cp']) if r['cp'] else None
        if r['error'] or not r['ppq']:
            rows.append([label, size, '%.3f' % cp if cp else '-', 'FAILED', '-', '-', '-', '-', '-'])
            continue
        pq = statistics.median(r['ppq'])
        rss = max(r['rss'])
        ratio = pq / cp
        if r['kind'] == 'inline':
            lim = 1.1 * size_mib + 32
            target = 'wall <= 1.3x cp, RSS <= %.0f MiB' % lim
            met = 'yes' if ratio <= 1.3 and rss / MiB <= lim else \
                'no (%s)' % ', '.join(x for x, bad in [('wall', ratio > 1.3), ('RSS', rss / MiB > lim)] if bad)
        else:
            target = 'wall <= 1.3x cp, RSS <= 256 MiB'
            met = 'yes' if ratio <= 1.3 and rss / MiB <= 256 else \
                'no (%s)' % ', '.join(x for x, bad in [('wall', ratio > 1.3), ('RSS', rss / MiB > 256)] if bad)
        rows.append([label, size, '%.3f' % cp, '%.3f' % pq, '%.2fx' % ratio, '%.1f' % (rss / MiB),
                     '%.3f' % (rss / r['size']), target, met])
        if r['kind'] == 'inline' and py:
            rows.append(['  python3-onnx load+save', '', '', '%.3f' % py['wall'], '%.2fx' % (py['wall'] / cp),
                         '%.1f' % (py['rss'] / MiB), '%.3f' % (py['rss'] / r['size']), 'reference, 1 run', ''])
    print()
    table(rows)
    print('\nratio = ppqfmt median / cp median; peak RSS = largest "Maximum resident set size" of /usr/bin/time -v'
          ' over the ppqfmt runs; RSS/size = peak RSS / (model + data files).')
    if quick:
        print('(--quick: small models; the targets are meant for the full ~600 MB / ~3 GiB models.)')


# ---------------------------------------------------------------- node scaling

def timed_limit(cmd, limit):
    """measure() with a time limit: (wall, rss, rc, stderr, cpu) or None on a
    timeout; cpu = user + system seconds, which other work on a shared machine
    disturbs far less than wall time."""
    got = measure(cmd, limit)
    return got and got[:4] + got[5:]


# A run shorter than this in cpu time is repeated (up to NODES_MAX_REPEAT
# times) and the mean taken: one short run's cpu time varies by milliseconds.
NODES_MIN_CPU = 0.5
NODES_MAX_REPEAT = 20


def timed_repeated(cmd, limit):
    """timed_limit(), repeated while the runs' total cpu time is below
    NODES_MIN_CPU: mean wall and cpu, largest rss."""
    runs = []
    while len(runs) < NODES_MAX_REPEAT:
        got = timed_limit(cmd, limit)
        if got is None or got[2]:
            return got
        runs.append(got)
        if sum(x[4] for x in runs) >= NODES_MIN_CPU:
            break
    n = len(runs)
    return (sum(x[0] for x in runs) / n, max(x[1] for x in runs), 0, runs[-1][3],
            sum(x[4] for x in runs) / n)


# Inputs read per node by each pattern of make_bench_models.NODE_PATTERNS
# (convbn: Conv x, W, B and BatchNormalization x + 4 statistics per pair):
# checked against the model itself at sizes up to 100k (count_uses).
NODE_USES = {'convbn': 4.0, 'bn': 5.0, 'fanbn': 3.5, 'clip': 1.0, 'dead': 1.0, 'split': 2.0}


def count_uses(man):
    """(nodes, uses) of a node-scaling model: counted in the file up to 100k
    nodes (and compared with NODE_USES), from NODE_USES above that."""
    n, pattern = man['params']['nodes'], man['params']['pattern']
    uses = int(round(NODE_USES[pattern] * n))
    if n <= 100000:
        g = onnx.load(os.path.join(BENCH, man['name'], man['model'])).graph
        counted = sum(1 for node in g.node for x in node.input if x)
        if len(g.node) != n or counted != uses:
            sys.exit('bench: %s has %d nodes reading %d inputs, NODE_USES says %d and %d'
                     % (man['name'], len(g.node), counted, n, uses))
    return n, uses


# default and python run in turn this many times per node-scaling model (D P D P ...) and their medians
# are shown: one run of a large model varies with what the machine did just before (docs/BENCHMARKS.md, "Speed and
# memory": free page reporting), and alternating gives both commands the same conditions.
NODES_PAIRS = 3


def bench_nodes_one(man, limit, pairs):
    """{tool: (wall, rss, cpu) or a failure string} for one node-scaling model: default and python
    `pairs` times in turn (medians of wall and cpu, largest rss), then none and loaded once.
    'loaded' is a run that loads the graph and writes nothing (its peak RSS is the loaded graph's
    memory, the mapped input file included)."""
    src = os.path.join(BENCH, man['name'], man['model'])
    out = os.path.join(fresh('nodes'), 'model.onnx')
    warm([src])
    cmds = {'default': [PPQFMT, '-q', src, '-o', out],
            'none': [PPQFMT, '-q', '--passes=none', src, '-o', out],
            'python': [sys.executable, '-c', PY_REF, src, out],
            'loaded': [PPQFMT, '-q', '--passes=identity', '--dry-run', src]}
    runs = {tool: [] for tool in cmds}
    r = {}
    for tool in ['default', 'python'] * pairs + ['none', 'loaded']:
        if tool in r:
            continue  # a run of it failed
        got = timed_repeated(cmds[tool], limit)
        if got is None:
            r[tool] = 'timeout > %d s' % limit
        elif got[2]:
            r[tool] = 'exit %d: %s' % (got[2], (got[3].strip().splitlines() or [''])[-1][:80])
        else:
            runs[tool].append((got[0], got[1], got[4]))
        shown = r.get(tool) or '%.3f s (cpu %.3f s), %.1f MiB' % (got[0], got[4], got[1] / MiB)
        log('  %s %s: %s' % (man['name'], tool, shown))
        if os.path.exists(out):
            os.unlink(out)
    for tool, got in runs.items():
        if tool not in r:
            r[tool] = (statistics.median(x[0] for x in got), max(x[1] for x in got),
                       statistics.median(x[2] for x in got))
    return r


def nodes_report(rows_in, sizes, pairs):
    hdr = ['pattern', 'nodes', 'default s', 'cpu s', 'MiB', 'none s', 'cpu s', 'MiB', 'python s', 'cpu s', 'MiB',
           'def/none', 'def/py', 'us/node', 'vs first', 'step us/node', 'vs first step', 'loaded MiB', 'B/node',
           'B/(node+use)', 'met']
    rows = [hdr]
    base, prev, base_step = {}, {}, {}
    for pattern, (n, uses), r in rows_in:
        cell = lambda t: ('%.3f' % r[t][0], '%.3f' % r[t][2], '%.0f' % (r[t][1] / MiB)) \
            if not isinstance(r[t], str) else (r[t], '-', '-')  # noqa: E731
        ok = all(not isinstance(r[t], str) for t in r)
        row = [pattern, make_bench_models.size_label(n)] + list(cell('default')) + list(cell('none')) \
            + list(cell('python'))
        if not ok:
            rows.append(row + ['-'] * 9 + ['no (failed)'])
            prev.pop(pattern, None)
            continue
        d, none, py = r['default'][2], r['none'][2], r['python'][2]
        per = d / n * 1e6
        base.setdefault(pattern, (n, per))
        flat = per / base[pattern][1] if base[pattern][1] > 0 else 1.0
        # the cost of the nodes added since the size before: the smallest size's us/node also
        # carries the run's fixed costs (start-up, buffers), which would flatter every larger one
        step = (d - prev[pattern][1]) / (n - prev[pattern][0]) * 1e6 if pattern in prev else None
        prev[pattern] = (n, d)
        if step is not None:
            base_step.setdefault(pattern, step)
        step_flat = step / base_step[pattern] if step is not None and base_step[pattern] > 0 else None
        loaded = r['loaded'][1]
        misses = [what for what, bad in [('def/none', n >= 1000000 and d > 1.5 * none),
                                         ('def/py', n >= 1000000 and d > 1.0 * py),
                                         ('per node', flat > 1.5 or (step_flat or 0) > 1.5),
                                         ('memory', n >= 1000000 and loaded > 400 * (n + uses))] if bad]
        ratio = lambda a, b: '%.2fx' % (a / b) if b > 0 else 'n/a (0 s)'  # noqa: E731
        rows.append(row + [ratio(d, none), ratio(d, py), '%.2f' % per, '%.2fx' % flat,
                           '-' if step is None else '%.2f' % step, '-' if step_flat is None else '%.2fx' % step_flat,
                           '%.0f' % (loaded / MiB),
                           '%.0f' % (loaded / n), '%.0f' % (loaded / (n + uses)),
                           'no (%s)' % ', '.join(misses) if misses else 'yes'])
    print()
    table(rows)
    print('\ndefault = ppqfmt MODEL -o OUT; none = ppqfmt --passes=none; python = python3-onnx onnx.load + onnx.save'
          ' (same machine and session): default and python %d times in turn, medians shown (largest MiB), then none'
          ' once. s = wall, cpu s = user + system, MiB = peak RSS.' % pairs)
    print('Ratios and us/node use cpu s (wall time on a shared machine measures the other work as well), the'
          ' kernel\'s own accounting of each run in microseconds; a run under %.1f s of cpu is repeated (at most %d'
          ' times) and the mean shown. step us/node = the cpu s added since the size before over the nodes added'
          ' (free of the fixed start-up cost that inflates the smallest size\'s us/node); vs first step = its'
          ' ratio to the first step.' % (NODES_MIN_CPU, NODES_MAX_REPEAT))
    print('loaded = ppqfmt --passes=identity --dry-run MODEL (loads the graph, writes nothing): its peak RSS, the'
          ' mapped input file included, per node and per node + input read (uses).')
    print('targets: at 1M nodes default <= 1.5x none and <= 1.0x python and the loaded graph <= 400 B per node +'
          ' use (smaller sizes are dominated by the process\'s own few MiB); us/node within 1.5x of the smallest'
          ' size (%s) and step us/node within 1.5x of the first step.' % make_bench_models.size_label(sizes[0]))


def bench_nodes(sizes, limit, pairs):
    """Generates (cached) and measures every node-scaling model; True if all ran."""
    sha = make_bench_models.generator_hash()
    results = []
    for n in sizes:
        subprocess.run([sys.executable, os.path.join(SCRIPTS, 'make_bench_models.py'), '--nodes', str(n), BENCH],
                       check=True)
        for pattern in make_bench_models.NODE_PATTERNS:
            name = make_bench_models.node_model_name(pattern, n)
            man = make_bench_models.manifest_ok(os.path.join(BENCH, name), name, sha)
            if not man:
                sys.exit('bench: %s was not generated' % name)
            results.append((pattern, count_uses(man), bench_nodes_one(man, limit, pairs)))
    results.sort(key=lambda x: (make_bench_models.NODE_PATTERNS.index(x[0]), x[1]))
    nodes_report(results, sizes, pairs)
    return all(not isinstance(v, str) for _, _, r in results for v in r.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--quick', action='store_true', help='~60 MB / ~300 MB models (smoke run)')
    ap.add_argument('--runs', type=int, default=5, help='runs of cp and of ppqfmt per model (default 5)')
    ap.add_argument('--only', choices=['inline', 'external', 'files', 'nodes', 'inference', 'fold',
                                       'fusions', 'maxvit', 'check'])
    ap.add_argument('--models', help='real-network exports for the inference, fold and fusions '
                    'tables (default build/models, where make test-models puts them)')
    ap.add_argument('--sizes', help='node-scaling sizes (default 10k,100k,1M; --quick: 10k,100k)')
    ap.add_argument('--pairs', type=int, default=NODES_PAIRS,
                    help='node scaling: default and python runs in turn per model, medians (default %d)' % NODES_PAIRS)
    ap.add_argument('--timeout', type=int, default=1200, help='seconds before a node-scaling run is stopped')
    ap.add_argument('ppqfmt_args', nargs='*', metavar='-- PPQFMT-ARG', help='extra arguments for ppqfmt')
    a = ap.parse_args()
    if a.runs < 1 or a.pairs < 1:
        ap.error('--runs and --pairs must be at least 1')
    if not os.access(TIME, os.X_OK):
        sys.exit('bench: %s is missing; install it with: apt-get install time' % TIME)
    if not os.access(PPQFMT, os.X_OK):
        sys.exit('bench: %s is missing; run make first' % PPQFMT)
    t_start = time.perf_counter()
    global MODELS
    MODELS = a.models or MODELS
    os.makedirs(BENCH, exist_ok=True)
    shutil.rmtree(RUN, ignore_errors=True)
    sha = make_bench_models.generator_hash()
    names = [n for n in make_bench_models.names_for(a.quick)
             if not a.only or make_bench_models.SPECS[n]['kind'] == a.only]
    if a.only in ('nodes', 'inference', 'fold', 'fusions', 'maxvit', 'check') or a.sizes:
        names = []
    t0 = time.perf_counter()
    mans = []
    for n in names:
        # generate in a child process so its memory is returned before measuring
        subprocess.run([sys.executable, os.path.join(SCRIPTS, 'make_bench_models.py')]
                       + (['--quick'] if a.quick else []) + ['--only', make_bench_models.SPECS[n]['kind'], BENCH],
                       check=True)
        man = make_bench_models.manifest_ok(os.path.join(BENCH, n), n, sha)
        if not man:
            sys.exit('bench: %s was not generated' % n)
        mans.append(man)
    t_gen = time.perf_counter() - t0
    log('ppqfmt: %s' % ' '.join([PPQFMT] + a.ppqfmt_args + ['MODEL', '-o', 'OUT']))
    results, py = [], None
    try:
        for man in mans:
            results.append(bench_model(man, a.runs, a.ppqfmt_args))
            if man['params']['kind'] == 'inline':
                try:
                    py = bench_python(man)
                except Failed as e:
                    log('  python reference failed: %s' % e)
    finally:
        shutil.rmtree(RUN, ignore_errors=True)
    if results:
        report(results, py, a.quick)
    nodes_ok = True
    if not a.only or a.only == 'nodes':
        sizes = a.sizes or ('10k,100k' if a.quick else '10k,100k,1M')
        try:
            nodes_ok = bench_nodes(sorted(make_bench_models.parse_size(x) for x in sizes.split(',')), a.timeout,
                                   a.pairs)
        finally:
            shutil.rmtree(RUN, ignore_errors=True)
    for kind, bench_table in (('inference', bench_inference), ('fold', bench_fold),
                              ('fusions', bench_fusions), ('maxvit', bench_maxvit),
                              ('check', bench_check)):
        if not a.only or a.only == kind:
            try:
                bench_table()
            finally:
                shutil.rmtree(RUN, ignore_errors=True)
    print('\nbench took %.1f s (model generation/cache check %.1f s)' % (time.perf_counter() - t_start, t_gen))
    sys.exit(1 if any(r['error'] for r in results) or not nodes_ok else 0)


if __name__ == '__main__':
    main()
