#!/usr/bin/python3
"""Every backend-suite model formatted with the default passes must pass
onnx.checker.check_model(full_check=True) whenever the original does (docs/ARCHITECTURE.md, correct output rule 1).

Last line: `checker: N passed, M failed, K skipped` (K: originals the checker rejects);
exit 1 if M > 0.   /usr/bin/python3 tests/checker_suite.py [--filter SUBSTR] [--ppqfmt-args ...]
"""
import argparse
import multiprocessing
import os
import shlex
import sys
import tempfile

import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
from suite import SUITE_DIR, find_cases, run_ppqfmt  # noqa: E402


def checker_error(path):
    try:
        onnx.checker.check_model(onnx.load(path), full_check=True)
        return None
    except Exception as e:  # the checker raises several exception types
        return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def check_case(job):
    """(name, status, reason): status is 'pass', 'fail' or 'skip'."""
    name, model, out, cmd = job
    if checker_error(model):
        return name, 'skip', 'original fails the checker'
    why = run_ppqfmt(cmd + [model, '-o', out], out)
    if why:
        return name, 'fail', why
    err = checker_error(out)
    os.unlink(out)
    return (name, 'fail', 'checker: ' + err) if err else (name, 'pass', '')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--suite-dir', default=SUITE_DIR)
    ap.add_argument('--filter', default='')
    ap.add_argument('--ppqfmt-args', default='')
    args = ap.parse_args()
    ppqfmt = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
    cmd = [ppqfmt] + shlex.split(args.ppqfmt_args)
    with tempfile.TemporaryDirectory(prefix='checker_') as tmp:
        jobs = [(name, model, os.path.join(tmp, name.replace('/', '__') + '.onnx'), cmd)
                for name, model in find_cases(args.suite_dir, args.filter)]
        with multiprocessing.Pool(2) as pool:
            results = pool.map(check_case, jobs, chunksize=8)
    counts = {'pass': 0, 'fail': 0, 'skip': 0}
    for name, status, why in results:
        counts[status] += 1
        if status == 'fail':
            print('FAIL %s: %s' % (name, why))
    print('checker: %d passed, %d failed, %d skipped' % (counts['pass'], counts['fail'], counts['skip']))
    return 1 if counts['fail'] else 0


if __name__ == '__main__':
    sys.exit(main())
