#!/usr/bin/python3
"""With every pass disabled, ppqfmt must write back the very bytes it read (docs/ARCHITECTURE.md, correct output rule 4).

Runs `$PPQFMT --passes=none [ARGS] model.onnx -o OUT` on every backend-suite model and compares
OUT with the input: byte for byte, or with --check-equal-proto as protobuf messages (for a
rewrite mode that may re-serialize fields in another order). Last line: `fidelity: N passed,
M failed`; exit 1 if M > 0.

    /usr/bin/python3 tests/fidelity.py [--suite-dir DIR] [--filter SUBSTR] [-j N]
                                       [--ppqfmt-args "..."] [--check-equal-proto]
"""
import argparse
import concurrent.futures
import os
import shlex
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
from suite import SUITE_DIR, find_cases, run_ppqfmt  # noqa: E402


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def check(ppqfmt, extra, model, out, equal_proto):
    """Returns None if ppqfmt reproduced the model, else the reason."""
    why = run_ppqfmt([ppqfmt, '--passes=none'] + extra + [model, '-o', out], out)
    if why:
        return why
    with open(model, 'rb') as f:
        a = f.read()
    with open(out, 'rb') as f:
        b = f.read()
    if equal_proto:
        import onnx
        try:
            same = onnx.load_model_from_string(a) == onnx.load_model_from_string(b)
        except Exception as e:  # DecodeError: the output is not a model at all
            return 'output does not parse: %s' % e
        return None if same else 'protobuf messages differ (%d vs %d bytes)' % (len(a), len(b))
    if a != b:
        return 'bytes differ: %d vs %d bytes, first difference at offset %d' % (
            len(a), len(b), first_difference(a, b))
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--suite-dir', default=SUITE_DIR)
    ap.add_argument('--filter', default='')
    ap.add_argument('-j', type=int, default=2, help='parallel ppqfmt runs')
    ap.add_argument('--ppqfmt-args', default='', help='extra ppqfmt arguments')
    ap.add_argument('--name', default='fidelity', help='name on the summary line')
    ap.add_argument('--check-equal-proto', action='store_true',
                    help='compare onnx.load(a) == onnx.load(b) instead of bytes')
    args = ap.parse_args()
    ppqfmt = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
    extra = shlex.split(args.ppqfmt_args)
    if not shutil.which(ppqfmt):
        print('ppqfmt not found or not executable: %s (set PPQFMT)' % ppqfmt, file=sys.stderr)
        return 2
    t0 = time.time()

    cases = find_cases(args.suite_dir, args.filter)

    with tempfile.TemporaryDirectory(prefix='fidelity_') as tmp:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.j)) as pool:
            futs = [(name, pool.submit(check, ppqfmt, extra, model,
                                       os.path.join(tmp, name.replace('/', '__') + '.onnx'),
                                       args.check_equal_proto))
                    for name, model in cases]
            failed = [(name, f.result()) for name, f in futs if f.result()]
    for name, why in failed:
        print('FAIL %s: %s' % (name, why))
    print('time: %.1fs for %d models' % (time.time() - t0, len(cases)))
    print('%s: %d passed, %d failed' % (args.name, len(cases) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
