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


def make_model(folder, seed=0):
    """Conv+BN (folded by ppqfmt) then MatMul with a weight nothing changes;
    every initializer in weights.bin."""
    r = np.random.default_rng(seed)
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


def test_folded_external(tmp):
    """fold of an external weight (Transpose, then Cast to float16 and back:
    results of a writer chunk or more, computed while written): the result
    stays external, in OUTPUT.data, equal to numpy's and equivalent."""
    folder = os.path.join(tmp, 'fold_ext')
    os.mkdir(folder)
    w = np.random.default_rng(2).normal(0, 1, (300, 1000)).astype(np.float32)
    nodes = [helper.make_node('Transpose', ['W'], ['wt'], name='tr'),
             helper.make_node('Cast', ['wt'], ['wh'], name='c16', to=TensorProto.FLOAT16),
             helper.make_node('Cast', ['wh'], ['wf'], name='c32', to=TensorProto.FLOAT),
             helper.make_node('MatMul', ['X', 'wf'], ['Y'], name='mm')]
    g = helper.make_graph(nodes, 'fold_ext', [helper.make_tensor_value_info('X', TensorProto.FLOAT, [2, 1000])],
                          [helper.make_tensor_value_info('Y', TensorProto.FLOAT, [2, 300])],
                          [numpy_helper.from_array(w, 'W')])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])
    model = os.path.join(folder, 'model.onnx')
    onnx.save_model(m, model, save_as_external_data=True, location='w.bin', size_threshold=0)
    out = os.path.join(folder, 'out.onnx')
    rc, err = run(model, '-o', out)
    check('fold external: exit 0', rc == 0, err)
    o = onnx.load(out)
    check('fold external: only the MatMul left', [n.op_type for n in o.graph.node] == ['MatMul'],
          [n.op_type for n in o.graph.node])
    check('fold external: the folded weight is in out.onnx.data', locations(out) == {'out.onnx.data'},
          locations(out))
    got = {t.name: numpy_helper.to_array(t) for t in o.graph.initializer}.get(o.graph.node[0].input[1])
    check('fold external: the weight is float32(float16(W.T))',
          got is not None and np.array_equal(got, w.T.astype(np.float16).astype(np.float32)))
    ok, msg = ortcheck.equiv(model, out)
    check('fold external: equivalent', ok, msg)


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


def external_entries(path):
    """{tensor name: (location, offset, length)} of the model at path."""
    m = onnx.load(path, load_external_data=False)
    out = {}
    for t in m.graph.initializer:
        info = {e.key: e.value for e in t.external_data}
        if info:
            out[t.name] = (info['location'], int(info.get('offset', 0)), int(info['length']))
    return out


def read(path):
    with open(path, 'rb') as f:
        return f.read()


def no_temporaries(folder):
    return [f for f in os.listdir(folder) if f.startswith('.ppqfmt-')]


def test_data_named_like_output(tmp, model):
    """Issue 11 item 2: --external-data naming the output itself is a usage
    error, and nothing is written."""
    d = os.path.join(tmp, 'same_name')
    os.mkdir(d)
    rc, err = run('--external-data=a.onnx', model, '-o', os.path.join(d, 'a.onnx'))
    check('--external-data=NAME equal to the output name: exit 1, says so',
          rc == 1 and 'output file itself' in err and err.count('\n') == 1, (rc, err))
    check('--external-data=NAME equal to the output name: nothing written',
          os.listdir(d) == [], os.listdir(d))


def test_foreign_data_file(tmp, model):
    """Issue 11 item 3: a data file in the target folder that the output does
    not own (another model uses it) is never replaced (exit 3); a rerun onto
    the same output replaces its own data files."""
    other_src = os.path.join(tmp, 'other_src')
    os.mkdir(other_src)
    other_model = make_model(other_src, seed=7)  # other weights, same file name weights.bin
    d = os.path.join(tmp, 'shared_folder')
    os.mkdir(d)
    rc, err = run('--passes=none', other_model, '-o', os.path.join(d, 'other.onnx'))
    check('foreign data: the other model is written', rc == 0, err)
    theirs = read(os.path.join(d, 'weights.bin'))
    mine = os.path.join(d, 'mine.onnx')
    rc, err = run('--passes=none', model, '-o', mine)
    check('foreign data: copy beside refused (exit 3), one line naming the file',
          rc == 3 and 'weights.bin' in err and err.count('\n') == 1, (rc, err))
    check('foreign data: the other model\'s weights.bin unchanged, no output, no temporary',
          read(os.path.join(d, 'weights.bin')) == theirs and not os.path.exists(mine)
          and not no_temporaries(d), os.listdir(d))
    ok, msg = ortcheck.equiv(other_model, os.path.join(d, 'other.onnx'))
    check('foreign data: the other model still computes what it did', ok, msg)
    rc, err = run('--external-data=weights.bin', '--size-threshold=0', model, '-o', mine)
    check('foreign data: --external-data onto it refused (exit 3)', rc == 3 and 'weights.bin' in err,
          (rc, err))
    check('foreign data: still unchanged', read(os.path.join(d, 'weights.bin')) == theirs)
    # Reruns onto the same output: the data files are the output's own.
    for args, label in [([], 'copied and folded data'), (['--external-data=w.bin'], '--external-data')]:
        out = os.path.join(tmp, 'rerun', 'a.onnx')
        os.makedirs(os.path.dirname(out), exist_ok=True)
        rcs = [run(*args, model, '-o', out) for _ in range(2)]
        check('rerun onto the same output (%s): exit 0 twice' % label,
              [rc for rc, _ in rcs] == [0, 0], rcs)
        ok, msg = ortcheck.equiv(model, out)
        check('rerun onto the same output (%s): equivalent' % label, ok, msg)
    # The same bytes are already there (two models sharing one data file).
    rc, err = run('--passes=none', other_model, '-o', os.path.join(d, 'other2.onnx'))
    check('a data file with the very bytes to copy is used as it is: exit 0', rc == 0, err)


def test_nothing_written_before_failure(tmp, model):
    """Issue 11 item 8: every target is checked before anything is written;
    a failure leaves no data file written or replaced."""
    d = os.path.join(tmp, 'late_failure')
    os.makedirs(os.path.join(d, 'out.onnx'))
    rc, err = run('--external-data=w.bin', model, '-o', os.path.join(d, 'out.onnx'))
    check('output is a directory: exit 3', rc == 3, (rc, err))
    check('output is a directory: no data file written',
          sorted(os.listdir(d)) == ['out.onnx'], os.listdir(d))
    rc, err = run('--passes=none', model, '-o', os.path.join(d, 'out.onnx'))
    check('output is a directory: no data file copied (exit 3)',
          rc == 3 and sorted(os.listdir(d)) == ['out.onnx'], (rc, err, os.listdir(d)))


def test_alignment(tmp, model):
    """Issue 11 item 15: external tensors are 64-byte aligned, not padded to
    4 KiB; --page-align asks for 4 KiB."""
    d = os.path.join(tmp, 'align')
    os.mkdir(d)
    sizes = {t.name: numpy_helper.to_array(t).nbytes for t in onnx.load(model).graph.initializer}
    for flag, align in [(None, 64), ('--page-align', 4096)]:
        out = os.path.join(d, 'a%d.onnx' % align)
        rc, err = run(*([flag] if flag else []), '--external-data=a%d.bin' % align,
                      '--size-threshold=1', model, '-o', out)
        ent = external_entries(out) if rc == 0 else {}
        offs = sorted(o for _, o, _ in ent.values())
        # The tightest packing at this alignment, from the tensors' sizes.
        end = 0
        for _, o, n in sorted(ent.values(), key=lambda e: e[1]):
            end = -(-end // align) * align + n
        size = os.path.getsize(os.path.join(d, 'a%d.bin' % align)) if rc == 0 else -1
        check('alignment %d: exit 0, every offset a multiple of %d' % (align, align),
              rc == 0 and ent and all(o % align == 0 for o in offs), (rc, err, offs))
        check('alignment %d: data file as small as that alignment allows' % align,
              size == end and end < sum(sizes.values()) + align * len(ent), (size, end))
        if align == 64:
            check('alignment 64: some offset not on a page (no 4 KiB padding)',
                  any(o % 4096 for o in offs), offs)
        ok, msg = ortcheck.equiv(model, out)
        check('alignment %d: equivalent' % align, ok, msg)


def test_link_external(tmp, model, src):
    """--link-external: the input's data files are hard-linked beside the
    output, never copied; across filesystems it is refused (exit 3)."""
    d = os.path.join(tmp, 'linked')
    os.mkdir(d)
    out = os.path.join(d, 'l.onnx')
    rc, err = run('--link-external', '--passes=none', model, '-o', out)
    same = rc == 0 and os.stat(os.path.join(d, 'weights.bin')).st_ino == \
        os.stat(os.path.join(src, 'weights.bin')).st_ino
    check('--link-external: exit 0, weights.bin is a hard link of the input\'s', same, (rc, err))
    ok, msg = ortcheck.equiv(model, out)
    check('--link-external: equivalent', ok, msg)
    rc, err = run('--link-external', model, '-o', out)
    check('--link-external: rerun with the folds: exit 0', rc == 0, err)
    before = read(os.path.join(src, 'weights.bin'))
    rc, err = run(model, '-o', out)
    check('--link-external then a copying rerun: the input\'s data file unchanged',
          rc == 0 and read(os.path.join(src, 'weights.bin')) == before, (rc, err))
    other_fs = '/dev/shm'
    if not os.path.isdir(other_fs) or os.stat(other_fs).st_dev == os.stat(src).st_dev:
        print('skip --link-external across filesystems: no second filesystem at %s' % other_fs)
        return
    with tempfile.TemporaryDirectory(dir=other_fs) as shm:
        rc, err = run('--link-external', model, '-o', os.path.join(shm, 'x.onnx'))
        check('--link-external across filesystems: exit 3, says why, nothing written',
              rc == 3 and 'filesystem' in err and os.listdir(shm) == [], (rc, err, os.listdir(shm)))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_folded_external(tmp)
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
        test_data_named_like_output(tmp, model)
        test_foreign_data_file(tmp, model)
        test_nothing_written_before_failure(tmp, model)
        test_alignment(tmp, model)
        test_link_external(tmp, model, src)
        check('input data file still unchanged',
              open(os.path.join(src, 'weights.bin'), 'rb').read() == before)
        test_big_folded_weights(tmp)
    failed = results.count(False)
    print('test_external: %d passed, %d failed' % (len(results) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
