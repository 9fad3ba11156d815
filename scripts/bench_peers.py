#!/usr/bin/python3
"""make bench-peers (issue 33): ppqfmt side by side with the tools users would pick instead, on the
same models in the same run.

Usage: scripts/bench_peers.py [--quick] [--runs N] [--only NAME,...] [--tools T,...]
                              [--llm 2g|16g] [--cap GiB] [--timeout S] [--out FILE]

Peers (pinned in scripts/requirements-peers.txt, installed by scripts/install_peers.sh into
.deps/peers; the options each runs with are in scripts/peer_run.py): onnxsim, onnxslim,
onnxoptimizer, onnxruntime's quant_pre_process (ort-prep), polygraphy surgeon sanitize
--fold-constants. ppq is not installed: see PPQ_SKIP. ppqfmt runs with its defaults.

Models (generated into build/peers/, cached): torchvision networks exported by
scripts/export_torchvision.py (static, BatchNormalization and the exporter's Constants kept),
user-style exports of scripts/export_transformers.py with dynamic axes and, as `_static`, the
same without dynamic axes (scripts/export_peer_models.py), a small If/Loop model written here,
and the LLaMA-3-8B-shaped decoder of scripts/make_llm.py (--llm 2g: ~2 GB, --llm 16g: ~16 GB;
both external data, run only when asked).

For each model, --runs times (default 3, --quick 1), every tool in turn (the order rotates from
one round to the next), each into a fresh folder under build/peers/run/, as
  /usr/bin/time -v TOOL...   under RLIMIT_AS = --cap GiB (default 12) and a --timeout (s)
(ppqfmt and cp: the cap plus the input's size, since ppqfmt maps its input files read-only
and RLIMIT_AS counts those file pages as if they were allocations)
wall time (the parent's clock), CPU (user + system of the reaped process tree, os.wait4) and
peak RSS (time's "Maximum resident set size"); medians are shown. A tool that fails is shown
with the reason (out of memory under the cap, protobuf's 2 GB limit, its own error, timeout).
The last output of every tool is judged by scripts/peer_check.py in .deps/venv (onnx 1.23.2's
full checker, onnxruntime 1.31.1 equivalence on the same random inputs, and the census the
table shows). With --llm 16g, `cp -r` of the model folder is timed too and onnxruntime is not
run (two sessions of 16 GB would not fit beside the other engineers' work).

Prints one markdown table per model and a summary table, and writes them with the raw figures
to build/peers/results.md and results.json (or --out). Exit status 0 whatever the figures
(a peer's failure is a table entry); 1 when ppqfmt itself failed or its output is not valid.
"""
import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, 'scripts')
PEERS_DIR = os.path.join(ROOT, 'build', 'peers')
MODELS_DIR = os.path.join(PEERS_DIR, 'models')
RUN = os.path.join(PEERS_DIR, 'run')
PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
PEERS_PY = os.path.join(ROOT, '.deps', 'peers', 'bin', 'python')
CHECK_PY = os.path.join(ROOT, '.deps', 'venv', 'bin', 'python')
TIME = '/usr/bin/time'
GiB = 1 << 30
MiB = 1 << 20

TOOLS = ['ppqfmt', 'onnxsim', 'onnxslim', 'onnxoptimizer', 'ort-prep', 'polygraphy']
PPQ_SKIP = ('ppq 0.6.6 requires torch (>=1.6); the only torch wheel PyPI has for Linux x86_64 '
            '(torch 2.15.0) is the CUDA build, which pulls 19 nvidia-*, cuda-* and triton packages '
            '(cuDNN, cuBLAS, NCCL, ..., several GB); the CPU-only wheels are on PyTorch\'s own package '
            'index, not on PyPI, so pip offers no CPU-only route through PyPI alone')

# name, export spec (or a builder here), sizes for symbolic dims, in --quick
TORCH = [
    ('resnet18_op13', True), ('resnet18_op17', False), ('resnet50_op13', False),
    ('resnet50_op17', False), ('mobilenet_v2_op13', False), ('mobilenet_v2_op17', True),
    ('gpt2_tiny_op17', True), ('gpt2_tiny_static_op17', False),
    ('bert_tiny_op17', False), ('bert_tiny_static_op17', True),
    ('llama_tiny_op17', True), ('llama_tiny_static_op17', False),
    ('whisper_tiny_op17', False), ('whisper_tiny_static_op17', True),
    ('lstm_conv_op17', True), ('lstm_conv_static_op17', False),
    ('swin_t_op17', False), ('swin_t_static_op17', True),
    ('ssdlite320_mobilenet_v3_large_op17', False),
    ('ssdlite320_mobilenet_v3_large_static_op17', False),
]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- models

def make_if_loop(path):
    """Small model with control flow: an If whose condition comes from the (static) input shape
    (foldable), an If on the data (not foldable) and a Loop with a constant trip count whose body
    reads an outer value and holds a Constant and an Identity; opset 17."""
    import onnx
    from onnx import TensorProto as T, helper as h
    F = T.FLOAT
    vi = h.make_tensor_value_info
    then1 = h.make_graph([h.make_node('Relu', ['x'], ['t1'], name='then_relu')], 'then1', [],
                         [vi('t1', F, None)])
    else1 = h.make_graph([h.make_node('Neg', ['x'], ['e1'], name='else_neg')], 'else1', [],
                         [vi('e1', F, None)])
    then2 = h.make_graph([h.make_node('Constant', [], ['three'], name='then2_const',
                                      value=h.make_tensor('v3', F, [], [3.0])),
                          h.make_node('Mul', ['x', 'three'], ['t2'], name='then2_mul')],
                         'then2', [], [vi('t2', F, None)])
    else2 = h.make_graph([h.make_node('Sigmoid', ['x'], ['e2'], name='else2_sig')], 'else2', [],
                         [vi('e2', F, None)])
    body = h.make_graph(
        [h.make_node('Constant', [], ['half'], name='body_const',
                     value=h.make_tensor('vh', F, [], [0.5])),
         h.make_node('Mul', ['x', 'half'], ['xh'], name='body_mul'),
         h.make_node('Add', ['v_in', 'xh'], ['v_sum'], name='body_add'),
         h.make_node('Identity', ['v_sum'], ['v_out'], name='body_id'),
         h.make_node('Identity', ['cond_in'], ['cond_out'], name='body_cond')],
        'body', [vi('i', T.INT64, []), vi('cond_in', T.BOOL, []), vi('v_in', F, [2, 8])],
        [vi('cond_out', T.BOOL, []), vi('v_out', F, [2, 8])])
    nodes = [
        h.make_node('Shape', ['x'], ['xs'], name='shape_x'),
        h.make_node('Gather', ['xs', 'zero'], ['b'], name='batch_dim', axis=0),
        h.make_node('Greater', ['b', 'one'], ['c1'], name='batch_gt1'),
        h.make_node('If', ['c1'], ['y1'], name='if_static', then_branch=then1, else_branch=else1),
        h.make_node('ReduceSum', ['x'], ['sx'], name='sum_x', keepdims=0),
        h.make_node('Greater', ['sx', 'fzero'], ['c2'], name='sum_gt0'),
        h.make_node('If', ['c2'], ['y2'], name='if_data', then_branch=then2, else_branch=else2),
        h.make_node('Loop', ['trip', 'true', 'init'], ['y3'], name='loop', body=body),
        h.make_node('Add', ['y1', 'y3'], ['s'], name='add_loop'),
        h.make_node('Identity', ['s'], ['y'], name='out_id'),
    ]
    inits = [h.make_tensor('zero', T.INT64, [], [0]), h.make_tensor('one', T.INT64, [], [1]),
             h.make_tensor('fzero', F, [], [0.0]), h.make_tensor('trip', T.INT64, [], [3]),
             h.make_tensor('true', T.BOOL, [], [True]),
             h.make_tensor('init', F, [2, 8], [0.25] * 16)]
    g = h.make_graph(nodes, 'if_loop', [vi('x', F, [2, 8])], [vi('y', F, [2, 8]), vi('y2', F, [2, 8])],
                     initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)], producer_name='bench_peers.py')
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)


def ensure_models(names, llm):
    """{name: {'path', 'sizes', 'external'}} and {name: skip reason}."""
    os.makedirs(MODELS_DIR, exist_ok=True)
    models, skipped = {}, {}
    torch_names = [n for n in names if n in dict(TORCH)]
    if torch_names:
        p = subprocess.run(['/usr/bin/python3', os.path.join(SCRIPTS, 'export_peer_models.py'),
                            MODELS_DIR] + torch_names, capture_output=True, text=True)
        for line in p.stdout.splitlines():
            log('  ' + line)
        if p.returncode:
            log(p.stderr[-2000:])
        for n in torch_names:
            jp = os.path.join(MODELS_DIR, n + '.json')
            rec = json.load(open(jp)) if os.path.exists(jp) else {'skipped': True,
                                                                   'reason': 'export failed'}
            if rec.get('skipped'):
                skipped[n] = 'export: ' + rec.get('reason', '?')
            else:
                models[n] = dict(path=os.path.join(MODELS_DIR, n + '.onnx'),
                                 sizes=rec.get('test_sizes') or {}, external=False)
    if 'if_loop' in names:
        p = os.path.join(MODELS_DIR, 'if_loop.onnx')
        if not os.path.exists(p) or os.path.getmtime(p) < os.path.getmtime(__file__):
            make_if_loop(p)
        models['if_loop'] = dict(path=p, sizes={}, external=False)
    if llm:
        d = os.path.join(PEERS_DIR, 'llm_' + llm)
        subprocess.run(['/usr/bin/python3', os.path.join(SCRIPTS, 'make_llm.py'), d, '--size', llm],
                       check=True, stdout=sys.stderr)
        models['llm_' + llm] = dict(path=os.path.join(d, 'model.onnx'), sizes={'batch': 1, 'seq': 16},
                                    external=True)
    return models, skipped


# ---------------------------------------------------------------- running

def command(tool, src, out):
    if tool == 'ppqfmt':
        return [PPQFMT, src, '-o', out]
    if tool == 'cp':
        return ['cp', '-r', os.path.dirname(src), out]
    return [PEERS_PY, os.path.join(SCRIPTS, 'peer_run.py'), tool, src, out]


def measure(cmd, cap, limit, cwd=None):
    """(wall s, cpu s, peak RSS bytes, rc, stderr tail, timed out) of cmd under /usr/bin/time -v,
    RLIMIT_AS = cap bytes (time and the tool), killed after limit seconds."""
    os.sync()

    def pre():
        os.setsid()
        if cap:
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    with tempfile.NamedTemporaryFile(suffix='.time') as tf, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen([TIME, '-v', '-o', tf.name] + cmd, stdout=subprocess.DEVNULL,
                             stderr=err, preexec_fn=pre, cwd=cwd)
        killed = []

        def kill():
            killed.append(1)
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        timer = threading.Timer(limit, kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        tail = err.read()[-4000:].decode('utf-8', 'replace')
        rss = 0
        for line in open(tf.name, errors='replace'):
            if 'Maximum resident set size' in line:
                rss = int(line.split(':')[1]) * 1024
            if 'Command terminated by signal' in line:
                tail += '\n' + line.strip()
        return wall, ru.ru_utime + ru.ru_stime, rss, p.returncode, tail, bool(killed)


def reason(rc, tail, timed_out, cap, limit, rss=0):
    low = tail.lower()
    if timed_out:
        return 'timeout (%d s)' % limit
    if cap and rss >= 0.9 * cap:
        # an allocation refused under RLIMIT_AS often ends in SIGSEGV or an abort, not a message
        return 'out of memory (%d GiB cap, peak RSS %.1f GiB): %s' % (cap // GiB, rss / GiB, last_line(tail))
    if ('memoryerror' in low or 'bad_alloc' in low or 'cannot allocate memory' in low
            or 'out of memory' in low or 'failed to allocate' in low):
        return 'out of memory (%d GiB cap)' % (cap // GiB)
    if ('2gb' in low or '2 gb' in low or '2gib' in low or 'protobuf' in low and 'limit' in low
            or 'exceeds maximum protobuf' in low or 'larger than 2' in low):
        return 'protobuf 2 GB limit: ' + last_line(tail)
    return 'exit %d: %s' % (rc, last_line(tail))


def last_line(tail):
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip() and not ln.startswith('  File ')
             and not ln.strip().startswith('Command exited')]
    return (lines[-1] if lines else '(no message)')[:200]


def input_bytes(m):
    d = os.path.dirname(m['path'])
    return os.path.getsize(m['path']) + (sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)
                                             if f.endswith('.bin')) if m['external'] else 0)


def run_model(name, m, tools, runs, cap, limit, big=False):
    """Times every tool on one model; returns {tool: record} and the last output paths.
    big (the 16 GB model): each output is judged (no onnxruntime) and deleted as soon as it is
    written, so that at most one output is on the disk beside the model; the judgement is
    returned in place of the path."""
    recs = {t: dict(wall=[], cpu=[], rss=[], fail=None) for t in tools}
    outs = {}
    for r in range(runs):
        order = tools[r % len(tools):] + tools[:r % len(tools)]
        for t in order:
            if recs[t]['fail']:
                continue
            d = os.path.join(RUN, name, t)
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)
            out = os.path.join(d, 'copy' if t == 'cp' else 'model.onnx')
            # ppqfmt maps its input files read-only (file pages, not allocations), which
            # RLIMIT_AS counts: its cap is the same 12 GiB plus the input's bytes
            tcap = cap + input_bytes(m) if t in ('ppqfmt', 'cp') and cap else cap
            # in the run's own folder: quant_pre_process leaves its temporary files
            # (sym_shape_infer_temp.onnx, UUID.data) in the working directory when it fails
            wall, cpu, rss, rc, tail, to = measure(command(t, m['path'], out), tcap, limit, cwd=d)
            ok = rc == 0 and not to and (t == 'cp' or os.path.exists(out))
            log('  %-14s %-13s run %d: %7.2f s wall %7.2f s cpu %8.1f MiB%s' % (
                name, t, r + 1, wall, cpu, rss / MiB, '' if ok else '  FAILED ' + reason(rc, tail, to, cap, limit, rss)))
            if not ok:
                recs[t]['fail'] = reason(rc, tail, to, cap, limit, rss)
                recs[t].update(wall=[wall], cpu=[cpu], rss=[rss])
                shutil.rmtree(d, ignore_errors=True)
                continue
            recs[t]['wall'].append(wall)
            recs[t]['cpu'].append(cpu)
            recs[t]['rss'].append(rss)
            if t != 'cp':
                outs[t] = out
                if big and r == runs - 1:
                    outs[t] = check(m, {t: out}, ort=False).get(t, {})
            if big:
                shutil.rmtree(d, ignore_errors=True)
    return recs, outs


def check(m, outs, ort):
    job = dict(ref=m['path'], outs=outs, sizes=m['sizes'], ort=ort)
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f:
        json.dump(job, f)
    try:
        p = subprocess.run([CHECK_PY, os.path.join(SCRIPTS, 'peer_check.py'), f.name],
                           capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode:
        log(p.stderr[-2000:])
        return {}
    return json.loads(p.stdout)


# ---------------------------------------------------------------- tables

def med(xs):
    return statistics.median(xs) if xs else None


def fmt_s(x):
    return '' if x is None else ('%.2f' % x if x < 100 else '%.0f' % x)


def fmt_mib(x):
    return '' if x is None else '%.0f' % (x / MiB)


def short(s, n=70):
    s = ' '.join(str(s).split())
    return s if len(s) <= n else s[:n - 1] + '…'


HEAD = ('| tool | wall s | cpu s | peak RSS MiB | result | checker | onnxruntime | nodes | '
        'Const/Id | foldable | Shape | fused | value_info | BN |')


def model_table(name, m, recs, checks):
    ref = checks.get('ref', {})
    lines = ['### %s' % name, '',
             'original: %s nodes, %s Constant/Identity, %s foldable, %s Shape/Size%s, %s BN, '
             'value_info %.0f%%, %s fused ops, opset %s, %.1f MB' % (
                 ref.get('nodes'), ref.get('const_identity'), ref.get('foldable'), ref.get('shape'),
                 ' (static inputs)' if ref.get('static') else '', ref.get('bn'),
                 100 * ref.get('vi_cov', 0), ref.get('fused'), ref.get('opset'),
                 input_bytes(m) / 1e6)
             if ref else 'original: not judged', '', HEAD,
             '|' + '---|' * 14]
    for t, r in recs.items():
        c = checks.get(t, {})
        if r.get('skip'):
            lines.append('| %s | | | | skipped: %s |' % (t, short(r['skip'], 120)) + ' |' * 9)
            continue
        res = 'failed: ' + short(r['fail'], 90) if r['fail'] else 'ok'
        if t == 'cp':
            lines.append('| cp -r | %s | %s | %s | ok |%s' % (fmt_s(med(r['wall'])), fmt_s(med(r['cpu'])),
                                                               fmt_mib(med(r['rss'])), ' |' * 9))
            continue
        fused = ', '.join('%s %d' % kv for kv in sorted(c.get('fused_ops', {}).items())) or '0'
        cells = [t, fmt_s(med(r['wall'])), fmt_s(med(r['cpu'])), fmt_mib(med(r['rss'])), res]
        if r['fail'] or not c:
            cells += [''] * 9
        else:
            cells += [short(c['checker'], 60), short(c['equiv'], 60), str(c['nodes']),
                      str(c['const_identity']), str(c['foldable']),
                      str(c['shape']) + (' (static)' if c.get('static') else ''), fused,
                      '%.0f%%' % (100 * c['vi_cov']), str(c['bn'])]
        lines.append('| ' + ' | '.join(cells) + ' |')
    base = checks.get('ppqfmt', {}).get('ops')
    diffs = []
    for t in recs:
        ops = checks.get(t, {}).get('ops')
        if t == 'ppqfmt' or not base or ops is None:
            continue
        d = {k: ops.get(k, 0) - base.get(k, 0) for k in set(ops) | set(base)}
        d = sorted((k, v) for k, v in d.items() if v)
        if d:
            diffs.append('- %s: %s' % (t, ', '.join('%s %+d' % kv for kv in d)))
    if diffs:
        lines += ['', 'Nodes by type against ppqfmt\'s output (negative: the tool left fewer):', ''] + diffs
    return '\n'.join(lines) + '\n'


def summary(results, tools):
    lines = ['| tool | ran | valid (full checker) | equivalent (onnxruntime) | failed | '
             'wall, sum s | wall vs ppqfmt (median) | peak RSS max MiB | nodes left (sum) | '
             'Const/Id left | foldable left | Shape left on static | BN left | fused ops | '
             'value_info (median) |', '|' + '---|' * 15]
    for t in tools:
        ran = valid = equiv = failed = 0
        wall = []
        ratios = []
        rss = []
        nodes = ci = fold = shp = bn = fused = 0
        cov = []
        reasons = []
        for name, res in results.items():
            r = res['recs'].get(t)
            if not r or r.get('skip'):
                continue
            ran += 1
            if r['fail']:
                failed += 1
                reasons.append('%s: %s' % (name, short(r['fail'], 50)))
                continue
            c = res['checks'].get(t, {})
            valid += c.get('checker') == 'ok'
            equiv += c.get('equiv') == 'ok'
            w = med(r['wall'])
            wall.append(w)
            base = res['recs'].get('ppqfmt')
            if base and not base['fail'] and base['wall']:
                ratios.append(w / med(base['wall']))
            rss.append(med(r['rss']))
            if 'nodes' in c:
                nodes += c['nodes']
                ci += c['const_identity']
                fold += c['foldable']
                shp += c['shape'] if c.get('static') else 0
                bn += c['bn']
                fused += c['fused']
                cov.append(c['vi_cov'])
        lines.append('| %s | %d | %d | %d | %d | %s | %s | %s | %d | %d | %d | %d | %d | %d | %s |' % (
            t, ran, valid, equiv, failed, fmt_s(sum(wall)) if wall else '',
            '%.2f×' % med(ratios) if ratios else '', fmt_mib(max(rss)) if rss else '', nodes, ci,
            fold, shp, bn, fused, '%.0f%%' % (100 * med(cov)) if cov else ''))
    return '\n'.join(lines) + '\n'


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--quick', action='store_true', help='a subset, one run each (< 10 minutes)')
    ap.add_argument('--runs', type=int)
    ap.add_argument('--only', help='models, comma separated (names as in the tables)')
    ap.add_argument('--tools', default=','.join(TOOLS))
    ap.add_argument('--llm', choices=['2g', '16g'], help='add the LLaMA-shaped decoder of this size')
    ap.add_argument('--no-torch', action='store_true', help='no torch exports (with --llm: it alone)')
    ap.add_argument('--cap', type=float, default=12, help='memory cap, GiB (RLIMIT_AS)')
    ap.add_argument('--timeout', type=float, help='seconds per run (default 600, --quick 180)')
    ap.add_argument('--out', default=os.path.join(PEERS_DIR, 'results'))
    a = ap.parse_args()
    runs = a.runs or (1 if a.quick else 3)
    limit = a.timeout or (180 if a.quick else 600)
    cap = int(a.cap * GiB)
    tools = a.tools.split(',')

    if not os.path.exists(PEERS_PY):
        sys.exit('no %s: run make bench-peers (scripts/install_peers.sh installs the peers)' % PEERS_PY)
    names = [] if a.no_torch else [n for n, q in TORCH if q or not a.quick] + ['if_loop']
    if a.only:
        want = a.only.split(',')
        names = [n for n in names + [n for n, _ in TORCH] if n in want]
        names = sorted(set(names), key=(names.index))
    big = a.llm == '16g'
    if big:
        # the model (unless made), one output at a time, and 30 GB left for everyone else
        d = os.path.join(PEERS_DIR, 'llm_16g')
        made = os.path.exists(os.path.join(d, 'manifest.txt'))
        need = (1 if made else 2) * 16.1e9 + 30e9
        st = os.statvfs(ROOT)
        free = st.f_bavail * st.f_frsize
        if free < need:
            sys.exit('--llm 16g needs %.0f GB of free disk (one output, %sand 30 GB to spare); %.0f GB free'
                     % (need / 1e9, '' if made else 'the model ', free / 1e9))
    models, skipped = ensure_models(names, a.llm)
    if big:
        tools = tools + ['cp']

    results = {}
    out_md = []
    for name in [n for n in names if n in models] + [n for n in models if n not in names]:
        m = models[name]
        log('%s:' % name)
        recs, outs = run_model(name, m, tools, runs, cap, limit, big and m['external'])
        recs['ppq'] = dict(skip=PPQ_SKIP)
        if big and m['external']:
            checks = dict(outs, ref=check(m, {}, ort=False).get('ref', {}))
            for c in checks.values():
                c.setdefault('equiv', 'not run (16 GB: two sessions would not fit in memory)')
        else:
            checks = check(m, outs, ort=True)
        results[name] = dict(recs=recs, checks=checks, path=os.path.relpath(m['path'], ROOT))
        out_md.append(model_table(name, m, recs, checks))
        print(out_md[-1], flush=True)
        if m['external']:  # the big outputs go once judged
            shutil.rmtree(os.path.join(RUN, name), ignore_errors=True)
    for n, why in skipped.items():
        out_md.append('### %s\n\nskipped: %s\n' % (n, why))
        print(out_md[-1])
    s = '## Summary\n\n' + summary(results, [t for t in tools if t != 'cp']) + \
        '\nppq: skipped: %s.\n' % PPQ_SKIP
    print(s, flush=True)
    with open(a.out + '.md', 'w') as f:
        f.write('\n'.join(out_md) + '\n' + s)
    with open(a.out + '.json', 'w') as f:
        json.dump(results, f, indent=1)
    log('wrote %s.md and %s.json' % (a.out, a.out))
    bad = [n for n, r in results.items()
           if r['recs']['ppqfmt']['fail'] or r['checks'].get('ppqfmt', {}).get('checker') != 'ok']
    if bad:
        log('ppqfmt failed or wrote an invalid model on: %s' % ', '.join(bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
