#!/usr/bin/python3
"""ONNX backend test suite through ppqfmt, judged by onnxruntime.

For every case: format model.onnx with ppqfmt (default passes), run original and formatted model
on test_data_set_0 under onnxruntime and compare both with the expected outputs. A case counts
only if onnxruntime passes it on the original model; it then passes if the formatted model does.
Last line: `conformance: N passed, M failed, K skipped`; exit 1 if M > 0.

    /usr/bin/python3 tests/backend_conformance.py [--suite-dir DIR] [--filter SUBSTR] [-j N] [-v]
ppqfmt is $PPQFMT or build/ppqfmt.
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import re
import shlex
import shutil
import sys
import tempfile
import time

import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import ortcheck  # noqa: E402
from suite import SUITE_DIR, find_cases, run_ppqfmt as run_cmd  # noqa: E402


def _tensor_type_problem(vi):
    kind = vi.type.WhichOneof('value')
    if kind != 'tensor_type':
        return 'non-tensor input/output (%s)' % kind
    if vi.type.tensor_type.elem_type not in ortcheck.ONNX_DTYPES:
        return 'unsupported element type (%s)' % onnx.TensorProto.DataType.Name(
            vi.type.tensor_type.elem_type)
    return None


def prepare(model_path):
    """Returns (feeds, expected) or raises ValueError(skip reason)."""
    model = onnx.load(model_path)
    ins, outs = ortcheck.real_inputs(model), list(model.graph.output)
    for vi in ins + outs:
        problem = _tensor_type_problem(vi)
        if problem:
            raise ValueError(problem)
    data = os.path.join(os.path.dirname(model_path), 'test_data_set_0')

    def load(prefix, count):
        files = glob.glob(os.path.join(data, prefix + '_*.pb'))
        if len(files) > count:
            raise ValueError('more %s files than graph %ss' % (prefix, prefix))
        return [numpy_helper.to_array(onnx.load_tensor(os.path.join(data, '%s_%d.pb' % (prefix, i))))
                for i in range(len(files))]
    # Fewer input files than inputs: the trailing optional inputs are left out.
    feeds = {vi.name: a for vi, a in zip(ins, load('input', len(ins)))}
    expected = {vi.name: a for vi, a in zip(outs, load('output', len(outs)))}
    return feeds, expected


def run_ppqfmt(ppqfmt, extra, model, out):
    return run_cmd([ppqfmt] + extra + [model, '-o', out], out)


def skip_category(reason):
    """Collapse an error message into a countable category for the summary."""
    m = re.search(r'Could not find an implementation for \w+\((\d+)\)', reason)
    if m:
        return ('ORT: no kernel for opset < 7 (ORT dropped them)' if int(m.group(1)) < 7
                else 'ORT: no CPU kernel for this input type')
    for pat, cat in ((r'preview\.training', 'ORT: ai.onnx.preview.training ops not registered'),
                     (r'locale', 'ORT: string op needs a missing locale (en_US.UTF-8)'),
                     (r'Batchwise recurrent', 'ORT: batchwise (layout=1) RNN not implemented'),
                     (r'^ORT mismatch', 'ORT: output differs from expected'),
                     (r'process died|timed out', 'ORT: crash/timeout'),
                     (r'Load model', 'ORT: model load error'),
                     (r'^cannot read', 'test data unreadable')):
        if re.search(pat, reason):
            return cat
    if reason.startswith(('non-tensor', 'unsupported element', 'more ')):
        return reason
    return 'ORT: other run error'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--suite-dir', default=SUITE_DIR)
    ap.add_argument('--filter', default='')
    ap.add_argument('-j', type=int, default=2, help='parallel ppqfmt runs')
    ap.add_argument('--ppqfmt-args', default='', help='extra ppqfmt arguments')
    ap.add_argument('-v', action='store_true', help='also print each skipped case and why')
    args = ap.parse_args()
    ppqfmt = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
    extra = shlex.split(args.ppqfmt_args)
    if not shutil.which(ppqfmt):
        print('ppqfmt not found or not executable: %s (set PPQFMT)' % ppqfmt, file=sys.stderr)
        return 2
    t0 = time.time()

    cases = find_cases(args.suite_dir, args.filter)
    skipped, failed, passed = {}, {}, []
    ready = []          # (name, model, feeds, expected)
    for name, model in cases:
        try:
            feeds, expected = prepare(model)
        except Exception as e:  # bad/sequence protos, non-tensor types: ORT can't be fed these here
            skipped[name] = str(e) if isinstance(e, ValueError) else 'cannot read test data: %s' % e
            continue
        ready.append((name, model, feeds, expected))

    with tempfile.TemporaryDirectory(prefix='conformance_') as tmp:
        outs = {name: os.path.join(tmp, name.replace('/', '__') + '.onnx') for name, *_ in ready}
        # ppqfmt runs in worker threads while onnxruntime checks the originals: both cores busy.
        pool = concurrent.futures.ThreadPoolExecutor(max(1, args.j))
        fmt = {name: pool.submit(run_ppqfmt, ppqfmt, extra, model, outs[name])
               for name, model, _, _ in ready}
        orig = ortcheck.run_models([{'model': m, 'inputs': f} for _, m, f, _ in ready])

        counted, bonus = [], []
        for (name, model, feeds, expected), got in zip(ready, orig):
            if isinstance(got, str):
                skipped[name] = got.strip().splitlines()[0] if got.strip() else 'ORT error'
                # ORT may run the formatted model (e.g. legacy opset raised to 11): worth a
                # look, but it never counts as pass or fail.
                bonus.append((name, feeds, expected))
                continue
            ok, msg = ortcheck.compare(expected, got)
            if not ok:
                skipped[name] = 'ORT mismatch on original: ' + msg
                fmt[name].cancel()
                continue
            counted.append((name, feeds, expected))

        jobs = []
        for name, feeds, expected in counted + bonus:
            err = fmt[name].result()
            if err and name not in skipped:
                failed[name] = err
            elif not err:
                jobs.append((name, feeds, expected))
        pool.shutdown()
        res = ortcheck.run_models([{'model': outs[n], 'inputs': f} for n, f, _ in jobs])
        bonus_ok = []
        for (name, feeds, expected), got in zip(jobs, res):
            ok, msg = (False, got) if isinstance(got, str) else ortcheck.compare(expected, got)
            if name in skipped:
                if ok:
                    bonus_ok.append(name)
            elif ok:
                passed.append(name)
            elif isinstance(got, str):
                failed[name] = 'ORT failed on formatted model: ' + got.strip().replace('\n', ' | ')
            else:
                failed[name] = 'formatted model output differs: ' + msg

    cats = collections.Counter(skip_category(r) for r in skipped.values())
    if args.v:
        for name in sorted(skipped):
            print('SKIP %s: %s' % (name, skipped[name][:300]))
    for cat, n in sorted(cats.items(), key=lambda kv: -kv[1]):
        print('skipped %4d  %s' % (n, cat))
    for name in sorted(failed):
        print('FAIL %s: %s' % (name, failed[name]))
    if bonus_ok:
        print('info: %d skipped cases (ORT could not run the original) pass after formatting: %s'
              % (len(bonus_ok), ' '.join(sorted(bonus_ok))))
    print('time: %.1fs for %d cases' % (time.time() - t0, len(cases)))
    print('conformance: %d passed, %d failed, %d skipped' % (len(passed), len(failed), len(skipped)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
