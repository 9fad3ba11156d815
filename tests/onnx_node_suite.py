#!/usr/bin/env python3
"""The backend node tests of the pinned onnx from PyPI (every opset it defines) through ppqfmt,
judged by that onnx's checker and the pinned onnxruntime (both in .deps/venv: run with
.deps/venv/bin/python, as tests/run_all.sh does).

The cases come from onnx's own generators (onnx.backend.test.case.node; the wheel ships no
data files), written into a temporary folder. For each case whose inputs and outputs are
tensors: onnxruntime runs the original on the case's first data set; a case counts only when it
gives the expected outputs and the original passes the checker (else it is skipped, by reason). ppqfmt then formats it with the
default passes and --verify-ir; the case passes when ppqfmt exits 0, the output passes
onnx.checker.check_model(full_check=True), and onnxruntime gives the expected outputs on it too
(tolerance 1e-5 + 1e-3*max|expected| per output, scripts/ortcheck.py). Refusals (exit 2) listed
in REFUSED, with the reason, are counted apart; any other refusal fails.
With --target-opset=N ppqfmt also raises every case to opset N first (cases above N stay
as they are, with ppqfmt's warning); the refusals allowed then are REFUSED_RAISE's.
With --round-trip ppqfmt raises every case to opset 26 (--passes=none) and lowers the result
back to the case's own opset (--passes=none --verify-ir): the case passes as above, or ppqfmt
refuses with exit 2 (the raise or the lowering); refusals are counted by reason and printed.
Last line: `onnx_node_suite[-raised|-round-trip]: N passed, M failed, K skipped`; exit 1 if M > 0.

    .deps/venv/bin/python tests/onnx_node_suite.py [--filter SUBSTR] [-j N] [-v]
        [--target-opset=N | --round-trip]
"""
import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import sys
import tempfile
import time
import warnings

import numpy as np
import onnx
import onnxruntime as ort

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import ortcheck  # noqa: E402
from suite import run_ppqfmt  # noqa: E402

PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
# case -> why ppqfmt refuses it (exit 2), each checked to be the input's fault or a form ppqfmt
# cannot keep valid; a refusal not listed here fails.
REFUSED = {}
# With --target-opset: case -> why the raise is refused (the rules of formatter/upgrade*.h).
REFUSED_RAISE = {
    'test_scan_sum': 'Scan-8 (its signature changed in opset 9)',
}
ORT_MAX_IR = 13  # onnxruntime 1.31.1: "max supported IR version: 13"
ROUND_TRIP_MIN, ROUND_TRIP_TOP = 7, 26  # the opsets --target-opset accepts


def default_opset(model):
    return next((o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')), 0)


def round_trip(path, opset):
    """Raises path to ROUND_TRIP_TOP, then lowers that to opset: None when path.out was
    written, else why not (a 'ppqfmt exit N: ...' line from the step that stopped)."""
    raised = path + '.raised'
    err = run_ppqfmt([PPQFMT, '-q', '--passes=none', '--target-opset=%d' % ROUND_TRIP_TOP,
                      path, '-o', raised], raised)
    if err:
        return err.replace('ppqfmt exit', 'raise: ppqfmt exit', 1)
    return run_ppqfmt([PPQFMT, '-q', '--passes=none', '--verify-ir',
                       '--target-opset=%d' % opset, raised, '-o', path + '.out'], path + '.out')


def refusal_reason(err):
    """A refusal's message without node, value and function names: countable."""
    m = re.search(r'cannot (lower|raise) opset.*', err)
    why = m.group(0) if m else err
    why = re.sub(r"node '[^']*' \((\w+)\)", r'\1', why)
    why = re.sub(r"'[^']*'", "'...'", why)
    return re.sub(r'(cannot (lower|raise) opset) \d+ to \d+', r'\1', why)[:160]


def as_arrays(values):
    """The data set's values as ndarrays (numpy scalars, TensorProtos of types numpy lacks);
    None when one is a sequence, map or optional."""
    out = []
    for v in values:
        if isinstance(v, onnx.TensorProto):
            v = onnx.numpy_helper.to_array(v)
        elif isinstance(v, np.generic):
            v = np.asarray(v)
        if not isinstance(v, np.ndarray):
            return None
        out.append(v)
    return out


def collect(filt):
    """[(name, model, feeds, expected)] for the node cases, or skip reasons."""
    import onnx.backend.test.case.node as node_cases
    with warnings.catch_warnings():  # the generators divide by zero on purpose
        warnings.simplefilter('ignore')
        np.seterr(all='ignore')
        cases = node_cases.collect_testcases(None)
    ready, skipped = [], {}
    for c in cases:
        if filt and filt not in c.name:
            continue
        inputs, outputs = (as_arrays(d) for d in c.data_sets[0])
        graph = c.model.graph
        if inputs is None or outputs is None:
            skipped[c.name] = 'non-tensor input or output'
            continue
        feeds = {vi.name: a for vi, a in zip(graph.input, inputs)}
        expected = {vi.name: a for vi, a in zip(graph.output, outputs)}
        ready.append((c.name, c.model, feeds, expected))
    return ready, skipped, len(cases)


def ort_readable(path):
    """path's model as onnxruntime can read it: onnx writes its newest IR version, onnxruntime
    reads up to ORT_MAX_IR, and no opset it runs needs a newer one (a copy beside path)."""
    model = onnx.load(path)
    if model.ir_version <= ORT_MAX_IR:
        return path
    model.ir_version = ORT_MAX_IR
    onnx.save(model, path + '.ir%d' % ORT_MAX_IR)
    return path + '.ir%d' % ORT_MAX_IR


def ort_category(msg):
    """A short, countable form of onnxruntime's refusal."""
    for pat, form in ((r'Opset (\d+) is under development.*till opset (\d+)',
                       'ORT: opset %s not released (it runs up to %s)'),
                      (r'Numpy_type (\d+) can', 'ORT python: no numpy type for ONNX type %s'),
                      (r'Could not find an implementation for (\w+\(\d+\))', 'ORT: no kernel %s')):
        m = re.search(pat, msg, re.S)
        if m:
            return form % m.groups()
    return 'ORT: ' + re.sub(r'Load model from \S+ failed:\S+', '', msg).strip()[:150]


def ort_run(path, feeds):
    """{output name: ndarray} or a refusal (ort_category)."""
    try:
        return ortcheck.run_python(ort_readable(path), feeds, log_level=4)
    except Exception as e:  # onnxruntime's own refusals: a skip reason on the original
        return ort_category(str(e))


def checker_error(path):
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
        return None
    except Exception as e:
        return 'checker: %s' % str(e).strip().splitlines()[0][:200]


def bumped_refusal(model, feeds, target, path):
    """onnxruntime's refusal of the original with only its default-domain opset set to target
    (the raise of a model none of whose operators changed), or None when it runs."""
    bumped = onnx.ModelProto()
    bumped.CopyFrom(model)
    for imp in bumped.opset_import:
        if imp.domain in ('', 'ai.onnx') and imp.version < target:
            imp.version = target
    onnx.save(bumped, path)
    got = ort_run(path, feeds)
    return got if isinstance(got, str) else None


def judge(name, model, feeds, expected, out, ppqfmt_err, target=0):
    """'pass', ('fail', why), ('refused', why), ('ort-limit', why) for a case ORT passes on
    the original. ort-limit: with a target opset, ORT refuses the output as it refuses the
    original with only its opset number raised (no kernel or function for an operator version
    at the new opset: onnxruntime's gap, not ppqfmt's)."""
    if ppqfmt_err:
        return ('refused', ppqfmt_err) if 'exit 2' in ppqfmt_err else ('fail', ppqfmt_err)
    err = checker_error(out)
    if err:
        return 'fail', err
    got = ort_run(out, feeds)
    if isinstance(got, str) and target and bumped_refusal(model, feeds, target,
                                                          out + '.bumped') == got:
        return 'ort-limit', got
    if isinstance(got, str):
        return 'fail', 'on the output: ' + got
    ok, msg = ortcheck.compare(expected, got)
    return 'pass' if ok else ('fail', 'output differs: ' + msg)


def main():
    ort.set_default_logger_severity(4)  # refusals are reported per case
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--filter', default='')
    ap.add_argument('-j', type=int, default=2, help='parallel ppqfmt runs')
    ap.add_argument('-v', action='store_true', help='also list the skipped cases')
    ap.add_argument('--target-opset', type=int, default=0,
                    help='also raise every case to this opset (ppqfmt --target-opset)')
    ap.add_argument('--round-trip', action='store_true',
                    help='raise every case to opset %d and lower it back' % ROUND_TRIP_TOP)
    args = ap.parse_args()
    suite = 'onnx_node_suite' + ('-raised' if args.target_opset else
                                 '-round-trip' if args.round_trip else '')
    allowed = REFUSED_RAISE if args.target_opset else REFUSED
    extra = ['--target-opset=%d' % args.target_opset] if args.target_opset else []
    t0 = time.time()
    ready, skipped, total = collect(args.filter)
    failed, refused, passed = {}, {}, 0
    tmp = tempfile.mkdtemp(prefix='onnx_node_suite_')
    try:
        paths = {}
        for name, model, _, _ in ready:
            os.makedirs(os.path.join(tmp, name))
            paths[name] = os.path.join(tmp, name, 'model.onnx')
            onnx.save(model, paths[name])
        pool = concurrent.futures.ThreadPoolExecutor(max(1, args.j))
        if args.round_trip:  # the opsets --target-opset can lower to
            for name, model, _, _ in ready:
                if not ROUND_TRIP_MIN <= default_opset(model) <= ROUND_TRIP_TOP:
                    skipped[name] = 'round trip: default-domain opset %d outside %d..%d' % (
                        default_opset(model), ROUND_TRIP_MIN, ROUND_TRIP_TOP)
            ready = [case for case in ready if case[0] not in skipped]
            runs = {name: pool.submit(round_trip, paths[name], default_opset(model))
                    for name, model, _, _ in ready}
        else:
            runs = {name: pool.submit(run_ppqfmt, [PPQFMT, '--verify-ir', '-q'] + extra +
                                      [paths[name], '-o', paths[name] + '.out'],
                                      paths[name] + '.out')
                    for name, *_ in ready}
        for name, model, feeds, expected in ready:
            got = ort_run(paths[name], feeds)
            ok, msg = (False, got) if isinstance(got, str) else ortcheck.compare(expected, got)
            if not ok:
                skipped[name] = msg if isinstance(got, str) else 'ORT mismatch on the original'
                continue
            if checker_error(paths[name]):  # onnx 1.23.2: test_mvn's own function body
                skipped[name] = 'the original fails the checker'
                continue
            verdict = judge(name, model, feeds, expected, paths[name] + '.out',
                            runs[name].result(), args.target_opset)
            if verdict == 'pass':
                passed += 1
            elif verdict[0] == 'ort-limit':
                skipped[name] = 'raised: %s, also on the original at opset %d' % (
                    verdict[1], args.target_opset)
            elif verdict[0] == 'refused' and args.round_trip:
                refused[name] = refusal_reason(verdict[1])
            elif verdict[0] == 'refused' and name in allowed and allowed[name] in verdict[1]:
                refused[name] = allowed[name]
            else:
                failed[name] = verdict[1]
        pool.shutdown()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for why, n in collections.Counter(skipped.values()).most_common():
        print('skipped %4d  %s' % (n, why[:120]))
    if args.v:
        for name in sorted(skipped):
            print('SKIP %s: %s' % (name, skipped[name]))
    if args.round_trip:
        for why, n in collections.Counter(refused.values()).most_common():
            print('refused %4d  %s' % (n, why))
    for name in sorted(refused):
        print('refused %s: %s' % (name, refused[name]))
    for name in sorted(failed):
        print('FAIL %s: %s' % (name, failed[name]))
    print('onnx %s, onnxruntime %s, opset %d: %.1fs for %d cases' % (
        onnx.__version__, ort.__version__, onnx.defs.onnx_opset_version(), time.time() - t0, total))
    print('%s: %d passed, %d failed, %d skipped' % (
        suite, passed, len(failed), len(skipped) + len(refused)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
