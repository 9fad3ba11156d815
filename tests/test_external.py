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
    p = subprocess.run([PPQFMT] + list(args), stdin=stdin, capture_output=True, timeout=120)
    return p.returncode, p.stderr.decode()


# Several 1 MiB chunks and a partial one; Gemm rows not a multiple of 4 wide.
BIG = {'conv': (128, 64, 11, 11), 'gemm': (1000, 1027), 'gemm_transB': (1027, 1000)}


def make_big_model(path, kind, dtype, external):
    """Conv or Gemm with a weight of several MiB + BN: ppqfmt writes the
    folded weight chunk by chunk, filled on a second thread."""
    r = np.random.default_rng(1)
    shape = BIG[kind]
    c = shape[1] if kind == 'gemm' else shape[0]
    arrays = {'W': r.normal(0, 1, shape), 's': r.uniform(.5, 1.5, c), 'b': r.normal(0, .5, c),
              'm': r.normal(0, .5, c), 'v': r.uniform(.5, 2, c)}
    inits = [numpy_helper.from_array(a.astype(dtype), n) for n, a in arrays.items()]
    elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]
    if kind == 'conv':
        lin = helper.make_node('Conv', ['X', 'W'], ['c'], name='lin')
        x_shape, y_shape = [1, 64, 11, 11], [1, c, 1, 1]
    else:
        lin = helper.make_node('Gemm', ['X', 'W'], ['c'], name='lin', transB=int(kind != 'gemm'))
        x_shape, y_shape = [2, 1000], [2, c]
    nodes = [lin, helper.make_node('BatchNormalization', ['c', 's', 'b', 'm', 'v'], ['Y'], name='bn')]
    g = helper.make_graph(nodes, 'big', [helper.make_tensor_value_info('X', elem, x_shape)],
                          [helper.make_tensor_value_info('Y', elem, y_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    onnx.save_model(m, path, save_as_external_data=external, location='big.bin', size_threshold=0)
    return path


def expected_fold(model_path, kind):
    """The folded weight computed here in double, independently of ppqfmt."""
    m = onnx.load(model_path)
    a = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in m.graph.initializer}
    k = a['s'] / np.sqrt(a['v'] + float(np.float32(1e-5)))  # epsilon is a float attribute
    return a['W'] * {'conv': k[:, None, None, None], 'gemm': k[None, :], 'gemm_transB': k[:, None]}[kind]


def folded_weight_matches(model_path, out_path, kind):
    out = onnx.load(out_path)
    ops = [n.op_type for n in out.graph.node]
    if len(ops) != 1 or ops[0] not in ('Conv', 'Gemm') or len(out.graph.node[0].input) != 3:
        return 'not one Conv/Gemm with a bias: %s' % ops
    w = {t.name: numpy_helper.to_array(t) for t in out.graph.initializer}[out.graph.node[0].input[1]]
    exp = expected_fold(model_path, kind).astype(w.dtype)
    if w.shape != exp.shape or not np.array_equal(w, exp):
        return 'folded weight differs from the fold computed here (%d of %d elements)' % (
            np.count_nonzero(w != exp) if w.shape == exp.shape else -1, exp.size)
    return ''


def test_big_folded_weights(tmp):
    """Big generated tensors: inline, external, through a pipe, float and
    double (the per-element path), and a write error half way."""
    for kind, dtype, external in [('conv', np.float32, False), ('conv', np.float32, True),
                                  ('conv', np.float64, False), ('gemm', np.float32, False),
                                  ('gemm_transB', np.float32, True), ('gemm', np.float64, False)]:
        name = '%s %s %s' % (kind, np.dtype(dtype).name, 'external' if external else 'inline')
        folder = os.path.join(tmp, 'big_' + name.replace(' ', '_'))
        os.mkdir(folder)
        model = make_big_model(os.path.join(folder, 'model.onnx'), kind, dtype, external)
        out = os.path.join(folder, 'out.onnx')
        rc, err = run(model, '-o', out)
        check('big %s: exit 0' % name, rc == 0, err)
        why = folded_weight_matches(model, out, kind)
        check('big %s: folded weight equals the fold in double' % name, not why, why)
        check('big %s: valid' % name, not valid(out), valid(out))
        if dtype == np.float32:
            ok, msg = ortcheck.equiv(model, out)
            check('big %s: equivalent' % name, ok, msg)
        if not external:
            p = subprocess.run([PPQFMT, model, '-o', '-'], capture_output=True, timeout=120)
            check('big %s: to a pipe, same bytes as to a file' % name,
                  p.returncode == 0 and p.stdout == open(out, 'rb').read(), p.stderr.decode())
            rc, err = run(model, '-o', '/dev/full')
            check('big %s: write error half way: exit 3, one line' % name,
                  rc == 3 and err.count('\n') == 1 and 'No space left' in err, (rc, err))


def test_dotdot_inside(tmp):
    """A location whose '..' stays inside the model's folder (sub/../weights.bin)
    is read; one that leaves it (sub/../../weights.bin) is still refused."""
    folder = os.path.join(tmp, 'dotdot')
    os.makedirs(os.path.join(folder, 'sub'))
    model = make_model(folder)
    m = onnx.load(model, load_external_data=False)
    for location, want in (('sub/../weights.bin', 0), ('sub/../../weights.bin', 2)):
        for t in m.graph.initializer:
            for e in t.external_data:
                if e.key == 'location':
                    e.value = location
        path = os.path.join(folder, 'dotdot.onnx')
        onnx.save(m, path)
        out = os.path.join(folder, 'dotdot.out.onnx')
        rc, err = run(path, '-o', out)
        check('location %s: exit %d' % (location, want), rc == want, (rc, err))
        if want == 0 and rc == 0:
            check('location %s: valid' % location, not valid(out), valid(out))
            ok, msg = ortcheck.equiv(model, out)
            check('location %s: equivalent' % location, ok, msg)


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
        test_dotdot_inside(tmp)
        test_big_folded_weights(tmp)
    failed = results.count(False)
    print('test_external: %d passed, %d failed' % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
