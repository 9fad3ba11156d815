#!/usr/bin/python3
"""External data: ppqfmt loads tensors stored beside the model, keeps them there
(copying the data files when the output goes to another folder), moves large
initializers into one file with --external-data, and refuses what cannot work.

Last line: `test_external: N passed, M failed`; exit 1 on failure.
"""
import filecmp
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import ortcheck  # noqa: E402

PPQFMT = os.environ.get('PPQFMT', os.path.join(ROOT, 'build', 'ppqfmt'))
results = []


def check(name, ok, why=''):
    results.append(ok)
    print(('ok %s' % name) if ok else ('FAIL %s: %s' % (name, why)))


def make_model(folder):
    """Conv+BN (folded by ppqfmt) then MatMul with a weight nothing changes;
    every initializer in weights.bin."""
    r = np.random.default_rng(0)
    inits = [numpy_helper.from_array(a.astype(np.float32), n) for n, a in [
        ('W', r.normal(0, 1, (8, 3, 3, 3))), ('s', r.uniform(.5, 1.5, 8)), ('b', r.normal(0, .5, 8)),
        ('m', r.normal(0, .5, 8)), ('v', r.uniform(.5, 2, 8)), ('M', r.normal(0, 1, (6, 5)))]]
    nodes = [helper.make_node('Conv', ['X', 'W'], ['c'], name='conv'),
             helper.make_node('BatchNormalization', ['c', 's', 'b', 'm', 'v'], ['n'], name='bn'),
             helper.make_node('MatMul', ['n', 'M'], ['Y'], name='mm')]
    g = helper.make_graph(nodes, 'ext', [helper.make_tensor_value_info('X', TensorProto.FLOAT, [1, 3, 8, 8])],
                          [helper.make_tensor_value_info('Y', TensorProto.FLOAT, [1, 8, 6, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    path = os.path.join(folder, 'model.onnx')
    onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location='weights.bin', size_threshold=0)
    onnx.checker.check_model(path, full_check=True)
    return path


def run(*args, stdin=None):
    p = subprocess.run([PPQFMT] + list(args), stdin=stdin, capture_output=True)
    return p.returncode, p.stderr.decode()


def locations(path):
    m = onnx.load(path, load_external_data=False)
    return {e.value for t in m.graph.initializer for e in t.external_data if e.key == 'location'}


def valid(path):
    try:
        onnx.checker.check_model(path, full_check=True)
        return ''
    except Exception as e:  # the checker raises several kinds
        return str(e).splitlines()[0]


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'in')
        os.mkdir(src)
        model = make_model(src)
        before = open(os.path.join(src, 'weights.bin'), 'rb').read()

        # Same folder: data file shared, not copied.
        out = os.path.join(src, 'same.onnx')
        rc, err = run(model, '-o', out)
        check('same folder: exit 0', rc == 0, err)
        # M is unchanged: still in weights.bin. W is folded with the BN: its new
        # bytes stay external, in a data file named after the output.
        check('same folder: unchanged tensor still in weights.bin, folded one in same.onnx.data',
              locations(out) == {'weights.bin', 'same.onnx.data'}, locations(out))
        ok, msg = ortcheck.equiv(model, out)
        check('same folder: equivalent', ok, msg)
        check('same folder: valid', not valid(out), valid(out))

        # Another folder: the data file is copied beside the output.
        dst = os.path.join(tmp, 'out')
        os.mkdir(dst)
        out = os.path.join(dst, 'fmt.onnx')
        rc, err = run(model, '-o', out)
        check('other folder: exit 0', rc == 0, err)
        check('other folder: folded weight beside it', os.path.exists(os.path.join(dst, 'fmt.onnx.data')))
        check('other folder: weights.bin copied',
              filecmp.cmp(os.path.join(src, 'weights.bin'), os.path.join(dst, 'weights.bin'), shallow=False))
        ok, msg = ortcheck.equiv(model, out)
        check('other folder: equivalent', ok, msg)
        check('other folder: valid', not valid(out), valid(out))
        check('other folder: BN folded', 'BatchNormalization' not in
              [n.op_type for n in onnx.load(out, load_external_data=False).graph.node])

        # --passes=none elsewhere: same model bytes, data copied.
        out = os.path.join(dst, 'none.onnx')
        rc, err = run('--passes=none', model, '-o', out)
        check('passes=none: model bytes identical', rc == 0 and filecmp.cmp(model, out, shallow=False), err)

        # --external-data: large initializers move into one new file.
        out = os.path.join(dst, 'moved.onnx')
        rc, err = run('--external-data=moved.bin', '--size-threshold=100', model, '-o', out)
        check('--external-data: exit 0', rc == 0, err)
        check('--external-data: names moved.bin', locations(out) == {'moved.bin'}, locations(out))
        small = [t.name for t in onnx.load(out, load_external_data=False).graph.initializer
                 if not t.external_data]
        check('--external-data: small tensors stay inline', len(small) > 0, small)
        ok, msg = ortcheck.equiv(model, out)
        check('--external-data: equivalent', ok, msg)
        check('--external-data: valid', not valid(out), valid(out))

        # What cannot work is refused with one line and a documented code.
        with open(model, 'rb') as f:
            rc, err = run('-', '-o', os.path.join(dst, 'x.onnx'), stdin=f)
        check('external model from stdin refused (2)', rc == 2 and 'standard input' in err, (rc, err))
        rc, err = run(model, '-o', '-', stdin=subprocess.DEVNULL)
        check('external model to stdout refused (1)', rc == 1 and 'standard output' in err, (rc, err))
        rc, err = run('--external-data=../x.bin', model, '-o', os.path.join(dst, 'y.onnx'))
        check('--external-data outside the folder refused (1)', rc == 1, (rc, err))
        check('input data file unchanged',
              open(os.path.join(src, 'weights.bin'), 'rb').read() == before)
    failed = results.count(False)
    print('test_external: %d passed, %d failed' % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
