#!/usr/bin/python3
"""onnxruntime oracle: run ONNX models through onnxruntime-node (scripts/ort_run.js) and compare.

Library use (tests do `sys.path.insert(0, 'scripts'); import ortcheck`):
    run_models(jobs)            jobs: [{'model': path, 'inputs': {name: ndarray}}]
                                -> [ {output name: ndarray} (in model output order) or error str ]
    random_inputs(model_path, seed=0, sizes=None)
                                -> {input name: ndarray} for every real graph input; a symbolic
                                   dim takes its size from sizes {dim_param: n}, else 1
    compare(ref, got)           -> (ok, message)   tolerance 1e-5 + 1e-3*max|ref| per output
    equiv(a, b, seed=0)         -> (ok, message)   same random inputs, outputs compared
CLI:
    /usr/bin/python3 scripts/ortcheck.py equiv A.onnx B.onnx [--seed N]

The ORT python wheel is not on these machines, hence the detour through node: inputs and outputs
travel as raw little-endian files in a temporary directory, one node process per batch.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, 'ort_run.js')
NODE = os.environ.get('NODE', 'node')
# A job that makes no progress for this long is treated as hung and its node process killed.
JOB_TIMEOUT = float(os.environ.get('ORTCHECK_TIMEOUT', '120'))

# ONNX TensorProto element type -> dtype name understood by numpy and ort_run.js.
ONNX_DTYPES = {1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32',
               7: 'int64', 8: 'string', 9: 'bool', 10: 'float16', 11: 'float64',
               12: 'uint32', 13: 'uint64'}


def _write_input(arr, path):
    if arr.dtype.kind in 'OUS':
        vals = [v.decode('utf-8') if isinstance(v, bytes) else str(v) for v in arr.flat]
        with open(path, 'w') as f:
            json.dump(vals, f)
        return 'string'
    name = arr.dtype.name
    if name not in ONNX_DTYPES.values():
        raise ValueError('dtype %s not supported by the ORT runner' % name)
    arr.astype(arr.dtype.newbyteorder('<'), copy=False).tofile(path)
    return name


def _read_output(o):
    if o['dtype'] == 'string':
        with open(o['file']) as f:
            arr = np.array(json.load(f), dtype=object)
    else:
        arr = np.fromfile(o['file'], dtype=np.dtype(o['dtype']).newbyteorder('<'))
        arr = arr.astype(np.dtype(o['dtype']), copy=False)
    return arr.reshape(o['dims'])


def _run_batch(node_jobs, tmp, tag):
    """Run node once; return {job id: result record} for every job it finished.

    If node dies (native crash) or hangs, the job it had started is given an error record, so the
    caller can restart with the jobs after it."""
    # Own directory per batch: ort_run.js names output files by position within its batch.
    bdir = os.path.join(tmp, 'batch_%s' % tag)
    os.mkdir(bdir)
    res_file = os.path.join(bdir, 'results.json')
    jobs_file = os.path.join(bdir, 'jobs.json')
    with open(jobs_file, 'w') as f:
        json.dump(node_jobs, f)
    progress = res_file + '.progress'
    errf = open(os.path.join(bdir, 'stderr.txt'), 'w+')
    proc = subprocess.Popen([NODE, ORT_RUN, jobs_file, res_file], stdout=errf, stderr=errf)
    last, hung = time.time(), False
    last_size = -1
    while True:
        try:
            proc.wait(timeout=0.5)
            break
        except subprocess.TimeoutExpired:
            size = os.path.getsize(progress) if os.path.exists(progress) else 0
            if size != last_size:
                last, last_size = time.time(), size
            elif time.time() - last > JOB_TIMEOUT:
                proc.kill()
                proc.wait()
                hung = True
                break
    errf.seek(0)
    stderr = errf.read().strip()
    errf.close()
    if proc.returncode == 0 and os.path.exists(res_file):
        with open(res_file) as f:
            return {r['id']: r for r in json.load(f)}
    done, started = {}, None
    if os.path.exists(progress):
        with open(progress) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:      # a half-written last line
                    continue
                if 'start' in rec:
                    started = rec['start']
                else:
                    done[rec['done']['id']] = rec['done']
                    started = None
    if hung:
        why = 'onnxruntime timed out (no progress for %gs)' % JOB_TIMEOUT
    else:
        rc = proc.returncode
        why = 'onnxruntime process died (%s)%s' % (
            'signal %s' % signal.Signals(-rc).name if rc < 0 else 'exit %d' % rc,
            ''.join(': ' + l for l in stderr.splitlines() if l[:1].isalpha())[:300])
    if started is not None:
        done[started] = {'id': started, 'ok': False, 'error': why, 'outputs': []}
    elif not done:
        # Died before running anything (bad module path, ...): fail the whole batch, don't loop.
        for j in node_jobs:
            done[j['id']] = {'id': j['id'], 'ok': False, 'error': why, 'outputs': []}
    return done


def run_models(jobs):
    """jobs: list of {'model': path, 'inputs': {name: ndarray}}. Returns, in job order, either a
    dict output name -> ndarray (model output order) or an error string."""
    tmp = tempfile.mkdtemp(prefix='ortcheck_')
    try:
        node_jobs, out = [], [None] * len(jobs)
        for i, job in enumerate(jobs):
            inputs = []
            try:
                for k, (name, arr) in enumerate(job['inputs'].items()):
                    arr = np.asarray(arr)
                    path = os.path.join(tmp, 'in_%d_%d' % (i, k))
                    dtype = _write_input(arr, path)
                    inputs.append({'name': name, 'dtype': dtype,
                                   'dims': [int(d) for d in arr.shape], 'file': path})
            except ValueError as e:
                out[i] = str(e)
                continue
            node_jobs.append({'id': i, 'model': os.path.abspath(job['model']), 'inputs': inputs})
        records, batch = {}, 0
        while node_jobs:
            got = _run_batch(node_jobs, tmp, batch)
            records.update(got)
            node_jobs = [j for j in node_jobs if j['id'] not in records]
            batch += 1
        for i, rec in records.items():
            if not rec['ok']:
                out[i] = rec['error'] or 'unknown onnxruntime error'
                continue
            try:
                out[i] = {o['name']: _read_output(o) for o in rec['outputs']}
            except (ValueError, TypeError, OSError) as e:
                out[i] = 'cannot read output: %s' % e
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def real_inputs(model):
    """Graph inputs that are not initializers (old IR models list weights as inputs too)."""
    inits = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in inits]


def random_inputs(model_path, seed=0, sizes=None):
    model = onnx.load(model_path, load_external_data=False)
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in real_inputs(model):
        if vi.type.WhichOneof('value') != 'tensor_type':
            raise ValueError('input %s is not a tensor' % vi.name)
        tt = vi.type.tensor_type
        dtype = ONNX_DTYPES.get(tt.elem_type)
        if dtype is None:
            raise ValueError('input %s has unsupported element type %d' % (vi.name, tt.elem_type))
        # Unknown or symbolic dims become 1 unless sized: deterministic, valid for any broadcast.
        shape = tuple(d.dim_value if d.HasField('dim_value') else
                      (sizes or {}).get(d.dim_param, 1) for d in tt.shape.dim)
        if dtype == 'string':
            arr = rng.choice(np.array(['a', 'bb', 'ccc', 'monday'], dtype=object), size=shape)
        elif dtype == 'bool':
            arr = rng.integers(0, 2, size=shape).astype(bool)
        elif dtype.startswith(('int', 'uint')):
            arr = rng.integers(0, 3, size=shape).astype(dtype)
        else:
            arr = rng.uniform(-1, 1, size=shape).astype(dtype)
        feeds[vi.name] = np.asarray(arr)
    return feeds


def _as_str(arr):
    return np.array([v.decode('utf-8') if isinstance(v, bytes) else str(v) for v in arr.flat],
                    dtype=object).reshape(arr.shape)


def compare_one(name, ref, got):
    ref, got = np.asarray(ref), np.asarray(got)
    if ref.shape != got.shape:
        return 'output %s: shape %s, expected %s' % (name, got.shape, ref.shape)
    if ref.dtype.kind in 'OUS' or got.dtype.kind in 'OUS':
        if ref.dtype.kind not in 'OUS' or got.dtype.kind not in 'OUS':
            return 'output %s: dtype %s, expected %s' % (name, got.dtype, ref.dtype)
        bad = _as_str(ref) != _as_str(got)
    elif ref.dtype != got.dtype:
        return 'output %s: dtype %s, expected %s' % (name, got.dtype, ref.dtype)
    elif ref.dtype.kind != 'f':
        bad = ref != got
    else:
        r, g = ref.astype(np.float64), got.astype(np.float64)
        fin = np.isfinite(r)
        tol = 1e-5 + 1e-3 * (np.abs(r[fin]).max() if fin.any() else 0.0)
        with np.errstate(invalid='ignore'):
            # Finite refs within tol; NaN must meet NaN; +-inf must meet the same inf.
            bad = np.where(fin, ~(np.abs(r - g) <= tol),
                           np.where(np.isnan(r), ~np.isnan(g), r != g))
        if bad.any():
            idx = np.unravel_index(np.argmax(bad), bad.shape)
            return 'output %s: %d of %d elements differ, e.g. at %s got %r expected %r (tol %.3g)' % (
                name, int(bad.sum()), bad.size, tuple(int(i) for i in idx), g[idx], r[idx], tol)
        return None
    if np.any(bad):
        idx = np.unravel_index(np.argmax(bad), bad.shape)
        return 'output %s: %d of %d elements differ, e.g. at %s got %r expected %r' % (
            name, int(np.sum(bad)), bad.size, tuple(int(i) for i in idx), got[idx], ref[idx])
    return None


def run_python(model, feeds, log_level=3):
    """{output name: ndarray} of the python onnxruntime (the pinned one of .deps/venv) on
    model, a path or serialized bytes; its refusals raise. For the suites that run in that
    venv; run_models above is the node route the Debian-python suites take."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.log_severity_level = log_level
    sess = ort.InferenceSession(model, opts, providers=['CPUExecutionProvider'])
    return dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))


def compare(ref, got):
    """ref, got: dict output name -> ndarray. Returns (ok, message)."""
    if set(ref) != set(got):
        return False, 'output names differ: expected %s, got %s' % (sorted(ref), sorted(got))
    errs = [e for e in (compare_one(n, ref[n], got[n]) for n in ref) if e]
    return (not errs), ('; '.join(errs) if errs else '%d outputs match' % len(ref))


def equiv(model_a, model_b, seed=0):
    try:
        feeds = random_inputs(model_a, seed)
    except Exception as e:  # unreadable model (protobuf DecodeError, ...) or non-tensor input
        return False, 'cannot make inputs for %s: %s' % (model_a, e)
    ra, rb = run_models([{'model': model_a, 'inputs': feeds}, {'model': model_b, 'inputs': feeds}])
    if isinstance(ra, str):
        return False, 'onnxruntime failed on %s: %s' % (model_a, ra)
    if isinstance(rb, str):
        return False, 'onnxruntime failed on %s: %s' % (model_b, rb)
    return compare(ra, rb)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = ap.add_subparsers(dest='cmd', required=True)
    p = sub.add_parser('equiv', help='exit 0 if both models compute the same outputs')
    p.add_argument('a')
    p.add_argument('b')
    p.add_argument('--seed', type=int, default=0)
    args = ap.parse_args(argv)
    ok, msg = equiv(args.a, args.b, args.seed)
    print(('equivalent: ' if ok else 'NOT equivalent: ') + msg)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
