#!/usr/bin/python3
"""Output stability: with default passes, ppqfmt's output for every testdata
model and every backend-suite model must stay byte-identical to the stored
digests in tests/output_digests.txt (made from release v0.2's build).

For each model, `$PPQFMT MODEL -o FRESH_DIR/model.onnx` runs in a new folder;
the digest line records ppqfmt's exit code and the SHA-256 of every file it
left in that folder (the model, and any external data written beside it), so a
changed output, a new failure or a new success all show as a difference.

    /usr/bin/python3 tests/output_digests.py [--filter SUBSTR] [-j N] [--update]
                                             [--ppqfmt-args "--verify-ir"]

--update rewrites tests/output_digests.txt from the current build: use it only
when a change of output is intended, and say in the commit which models changed
and why (the run prints them before rewriting). Last line:
`output_digests: N passed, M failed`; exit 1 if M > 0.
"""
import argparse
import concurrent.futures
import glob
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
from testlib import Tally  # noqa: E402

DIGESTS = os.path.join(ROOT, 'tests', 'output_digests.txt')
SUITE = '/usr/share/libonnx-testdata/data'
SUITE_PARTS = ['node', 'pytorch-converted', 'pytorch-operator', 'simple']
PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
TIMEOUT = 120


def models():
    """{key: path}; keys are paths relative to the repository or to the suite."""
    found = {}
    for pattern in ['testdata/*.onnx', 'testdata/*/*.onnx']:  # sample.onnx, testdata/<pass>/
        for p in sorted(glob.glob(os.path.join(ROOT, pattern))):
            found[os.path.relpath(p, ROOT)] = p
    for part in SUITE_PARTS:
        for p in sorted(glob.glob(os.path.join(SUITE, part, '*', 'model.onnx'))):
            found['suite/' + os.path.relpath(p, SUITE)] = p
    return found


def sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def digest(path, extra=()):
    """'rc=N FILE=SHA ...' for one default-passes run of ppqfmt on path (extra: more
    arguments, which must not change the output, e.g. --verify-ir)."""
    d = tempfile.mkdtemp(prefix='ppqfmt-digest-')
    try:
        try:
            p = subprocess.run([PPQFMT] + list(extra) + [path, '-o', os.path.join(d, 'model.onnx')],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=TIMEOUT)
            rc = str(p.returncode)
        except subprocess.TimeoutExpired:
            rc = 'timeout'
        files = ['%s=%s' % (f, sha256(os.path.join(d, f))) for f in sorted(os.listdir(d))]
        return ' '.join(['rc=' + rc] + files)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def load_digests():
    stored = {}
    if os.path.exists(DIGESTS):
        with open(DIGESTS) as f:
            for line in f:
                if line.strip() and not line.startswith('#'):
                    key, value = line.rstrip('\n').split('\t', 1)
                    stored[key] = value
    return stored


def save_digests(current):
    with open(DIGESTS + '.tmp', 'w') as f:
        f.write('# ppqfmt default-passes output per model: exit code and SHA-256 of each output file.\n'
                '# Made by tests/output_digests.py --update; checked by tests/output_digests.py.\n')
        for key in sorted(current):
            f.write('%s\t%s\n' % (key, current[key]))
    os.replace(DIGESTS + '.tmp', DIGESTS)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--filter', default='', help='only models whose key contains this')
    ap.add_argument('-j', type=int, default=2, help='parallel ppqfmt runs')
    ap.add_argument('--update', action='store_true', help='rewrite the digest file from this build')
    ap.add_argument('--ppqfmt-args', default='',
                    help='more ppqfmt arguments that leave the output as it is (--verify-ir)')
    a = ap.parse_args()
    if not os.access(PPQFMT, os.X_OK):
        sys.exit('output_digests: %s is missing; run make first' % PPQFMT)
    todo = {k: p for k, p in models().items() if a.filter in k}
    if not todo:
        sys.exit('output_digests: no model matches')
    with concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        extra = a.ppqfmt_args.split()
        current = dict(zip(todo, pool.map(lambda p: digest(p, extra), todo.values())))
    stored = load_digests()
    t = Tally('output_digests')
    for key in sorted(current):
        want = stored.get(key)
        if want is None:
            err = 'no stored digest (run with --update to add it)'
        elif want != current[key]:
            err = 'output changed: stored %s, now %s' % (want, current[key])
        else:
            err = None
        t.report(key, err)
    if not a.filter:
        for key in sorted(set(stored) - set(current)):
            t.report(key, 'stored digest for a model that no longer exists')
    if a.update:
        if a.filter:
            current = {**stored, **current}
        save_digests(current)
        print('output_digests: %s rewritten (%d models)' % (os.path.relpath(DIGESTS, ROOT), len(current)))
        return 0
    return t.summary()


if __name__ == '__main__':
    sys.exit(main())
