#!/usr/bin/python3
"""--target-opset on the ONNX backend suite: every case raised, checked, and run by onnxruntime.

For every case (scripts/suite.py): ppqfmt --target-opset=N (default 17, with the default passes)
writes the case's model raised to opset N. Then:
  - exit 2 (a node that cannot be adapted): skipped, with the
    reason ppqfmt gave, counted per operator;
  - any other non-zero exit: failed;
  - the output must declare the default-domain opset N (or the model's own when it was above N)
    and pass onnx.checker.check_model(full_check=True);
  - onnxruntime runs the output on test_data_set_0 and must give the expected outputs. A case
    passes when it does; when onnxruntime cannot run the output, the case is failed if it runs
    the original, else skipped (no kernel, unsupported types: see backend_conformance.py).
Last line: `target-opset: N passed, M failed, K skipped`; exit 1 if M > 0.

    /usr/bin/python3 tests/target_opset_suite.py [--opset N] [--filter SUBSTR] [-j N] [-v]
ppqfmt is $PPQFMT or build/ppqfmt.
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

import onnx

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(os.path.dirname(ROOT), 'scripts'))
import ortcheck  # noqa: E402
from backend_conformance import prepare, skip_category  # noqa: E402
from suite import SUITE_DIR, find_cases, run_ppqfmt  # noqa: E402


def default_opset(m):
    return next((o.version for o in m.opset_import if o.domain in ('', 'ai.onnx')), 0)


def check_output(src, out, opset):
    """None when the raised model declares the right opset and passes the full checker."""
    before, after = default_opset(onnx.load(src)), onnx.load(out)
    want = max(before, opset) if before else 0
    if default_opset(after) != want:
        return 'default opset %d, expected %d' % (default_opset(after), want)
    try:
        onnx.checker.check_model(after, full_check=True)
    except Exception as e:  # the checker's own exception types vary between releases
        return 'checker: %s' % str(e).strip().splitlines()[0][:300]
    return None


def cannot_reason(err):
    """'cannot adapt Scan' and the like, from ppqfmt's exit-2 message."""
    m = re.search(r"node '[^']*' \((\w+)\)", err)
    if m:
        return 'ppqfmt exit 2: cannot adapt %s' % m.group(1)
    return 'ppqfmt exit 2: ' + err[-120:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--suite-dir', default=SUITE_DIR)
    ap.add_argument('--filter', default='')
    ap.add_argument('--opset', type=int, default=17)
    ap.add_argument('-j', type=int, default=2, help='parallel ppqfmt runs')
    ap.add_argument('-v', action='store_true', help='also print each skipped case and why')
    args = ap.parse_args()
    ppqfmt = os.environ.get('PPQFMT', os.path.join(os.path.dirname(ROOT), 'build', 'ppqfmt'))
    if not shutil.which(ppqfmt):
        print('ppqfmt not found or not executable: %s (set PPQFMT)' % ppqfmt, file=sys.stderr)
        return 2
    t0 = time.time()
    skipped, failed, passed, rescued = {}, {}, [], []
    ready = []
    cases = find_cases(args.suite_dir, args.filter)
    n_cases = len(cases)
    for name, model in cases:
        try:
            feeds, expected = prepare(model)
        except Exception as e:  # non-tensor or unreadable test data: ORT cannot be fed these
            skipped[name] = str(e) if isinstance(e, ValueError) else 'cannot read test data'
            continue
        ready.append((name, model, feeds, expected))

    with tempfile.TemporaryDirectory(prefix='target_opset_') as tmp:
        outs = {name: os.path.join(tmp, name.replace('/', '__') + '.onnx') for name, *_ in ready}
        cmd = [ppqfmt, '-q', '--target-opset=%d' % args.opset]
        with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
            errs = dict(zip(outs, pool.map(lambda n_m: run_ppqfmt(cmd + [n_m[1], '-o', outs[n_m[0]]],
                                                                  outs[n_m[0]]),
                                           [(n, m) for n, m, _, _ in ready])))
        jobs = []
        for name, model, feeds, expected in ready:
            err = errs[name]
            if err and err.startswith('ppqfmt exit 2'):
                skipped[name] = cannot_reason(err)
            elif err:
                failed[name] = err
            else:
                problem = check_output(model, outs[name], args.opset)
                if problem:
                    failed[name] = problem
                else:
                    jobs.append((name, model, feeds, expected))
        # Raised and original models in one onnxruntime batch: a failure counts only where
        # onnxruntime passes the original case.
        res = ortcheck.run_models([{'model': outs[n], 'inputs': f} for n, _, f, _ in jobs] +
                                  [{'model': m, 'inputs': f} for _, m, f, _ in jobs])
        for i, (name, model, feeds, expected) in enumerate(jobs):
            new, old = res[i], res[len(jobs) + i]
            ok, msg = (False, new) if isinstance(new, str) else ortcheck.compare(expected, new)
            old_ok = not isinstance(old, str) and ortcheck.compare(expected, old)[0]
            if ok:
                passed.append(name)
                if not old_ok:
                    rescued.append(name)
            elif old_ok:
                failed[name] = 'raised model: ' + msg.strip().replace('\n', ' | ')[:300]
            else:
                skipped[name] = msg.strip().splitlines()[0] if msg.strip() else 'ORT error'

    cats = collections.Counter(r if r.startswith('ppqfmt') else skip_category(r)
                               for r in skipped.values())
    if args.v:
        for name in sorted(skipped):
            print('SKIP %s: %s' % (name, skipped[name][:300]))
    for cat, n in sorted(cats.items(), key=lambda kv: (-kv[1], kv[0])):
        print('skipped %4d  %s' % (n, cat))
    for name in sorted(failed):
        print('FAIL %s: %s' % (name, failed[name]))
    for name in sorted(passed):
        print('ok %s' % name)
    if rescued:
        print('info: %d passing cases onnxruntime cannot run at their own opset: %s'
              % (len(rescued), ' '.join(sorted(rescued))))
    print('time: %.1fs for %d cases' % (time.time() - t0, n_cases))
    print('target-opset: %d passed, %d failed, %d skipped' % (len(passed), len(failed),
                                                               len(skipped)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
