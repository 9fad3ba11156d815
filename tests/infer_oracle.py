#!/usr/bin/python3
"""Shape inference (core/infer/infer.c) against two oracles, on every backend-suite model and testdata model.

For each model, `build/tests/test_infer --dump MODEL` gives ppqfmt's facts for the values of the
main graph; then
  1. onnx: onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True). Wherever
     onnx knows a static dim, ppqfmt must know the same one: a different dtype, rank or dim is a
     conflict, a dim ppqfmt leaves symbolic (or a tensor it leaves untyped) is a miss. Tensors
     typed by one side only are counted both ways; those onnx types and ppqfmt does not are
     listed by producing op (they must not come from ops in the registry).
  2. onnxruntime: every node output of the main graph becomes a graph output, the model runs on
     the case's test_data_set_0 inputs, and each actual shape is checked against ppqfmt's dims
     with the symbols bound from the shapes themselves: no conflict allowed.
  3. the same with every dim of every graph input made symbolic (a dim_param per dim): the
     facts must still agree with onnxruntime's shapes once the symbols are bound, which checks the
     symbolic arithmetic and the propagation of shape values on the whole suite.
  4. what the infer-shapes pass writes: `ppqfmt --passes=infer-shapes` on the symbolic copy,
     its value_info read back (dim_param text as expressions) and checked against onnxruntime's
     shapes like 3; formatting that output again must give the same bytes.
A model passes with no conflict (1, 2 and 3) and no miss on an op ppqfmt has a rule for.
Last lines: a coverage summary, then `infer_oracle: N passed, M failed`.

    /usr/bin/python3 tests/infer_oracle.py [--filter SUBSTR] [--no-ort] [-v]
"""
import argparse
import collections
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import time

import onnx
from onnx import shape_inference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
import ortcheck  # noqa: E402
from backend_conformance import prepare  # noqa: E402
from shape_oracle import (DTYPE_NAME, compare_ort, declared_facts,  # noqa: E402,F401
                          eval_dim, with_all_outputs)
from suite import SUITE_DIR, find_cases  # noqa: E402
import testlib  # noqa: E402

def parse_dims(text):
    """'[1,3,seq]' -> ['1', '3', 'seq']; '?' -> None."""
    if text == '?':
        return None
    inner = text[1:-1]
    return inner.split(',') if inner else []


def run_dump(tool, model):
    """ppqfmt's facts {name: (dtype or None, dims or None)}, ops without rule, issues; or error."""
    p = subprocess.run([tool, '--dump', model], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=120)
    if p.returncode != 0:
        return 'test_infer exit %d: %s' % (p.returncode, p.stderr.decode(errors='replace').strip())
    facts, unknown, issues = {}, [], []
    for line in p.stdout.decode().splitlines():
        parts = line.split('\t')
        if parts[0] == '#unknown-op':
            unknown.append(parts[1])
        elif parts[0] == '#issue':
            issues.append(parts[1:])
        else:
            facts[parts[0]] = (None if parts[1] == '?' else parts[1], parse_dims(parts[2]))
    return facts, unknown, issues


def type_fact(tp, symbolic):
    """(dtype or None, dims or None) of a TypeProto; a sequence or an optional wraps the dtype
    of the tensors it holds, as test_infer --dump writes it ('seq(float)', 'opt(seq(float))');
    None for other types."""
    kind = tp.WhichOneof('value')
    if kind in ('sequence_type', 'optional_type'):
        inner = type_fact(tp.sequence_type.elem_type if kind == 'sequence_type'
                          else tp.optional_type.elem_type, symbolic)
        if inner is None:
            return None
        tag = 'seq' if kind == 'sequence_type' else 'opt'
        return (('%s(%s)' % (tag, inner[0])) if inner[0] else None, inner[1])
    if kind != 'tensor_type':
        return None
    tt = tp.tensor_type
    dt = DTYPE_NAME.get(tt.elem_type) if tt.elem_type else None
    dims = None
    if tt.HasField('shape'):
        dims = [d.dim_value if d.HasField('dim_value') else
                (d.dim_param or None) if symbolic else None for d in tt.shape.dim]
    return dt, dims


def onnx_facts(model, symbolic=False):
    """onnx's inferred types of the main graph: {name: (dtype or None, dims or None)};
    a dim is an int (static) or None (with symbolic, its dim_param when it has one)."""
    try:
        inferred = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception as e:  # onnx refuses some suite models outright: nothing to compare
        return 'onnx: %s' % str(e).splitlines()[0]
    out = {}
    g = inferred.graph
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        fact = type_fact(vi.type, symbolic)
        if fact is not None:
            out[vi.name] = fact
    return out


# Values where onnx's inference is wrong, checked against the case's expected outputs: not
# counted as misses. test_loop13_seq: onnx keeps the rank-0 element shape declared for the empty
# initial sequence, while the body inserts slices of rank 1 (output_0.pb holds shapes (1,) ... (5,)).
ONNX_WRONG = {('node/test_loop13_seq', 'seq_res')}


def producers(model):
    return {o: n.op_type for n in model.graph.node for o in n.output if o}


class Tally:
    def __init__(self):
        self.c = collections.Counter()
        self.miss_ops = collections.Counter()     # registry ops onnx types better
        self.more_ops = collections.Counter()     # ops whose outputs only ppqfmt types
        self.unruled = collections.Counter()      # ops without a rule (models that have them)


def compare_onnx(name, ours, theirs, prod, ruled, t, problems, misses=None):
    """Counts typed/static facts; appends conflict and miss messages to problems (the miss
    messages to misses instead when it is a list)."""
    if misses is None:
        misses = problems
    for v, op in prod.items():
        od, odims = ours.get(v, (None, None))
        xd, xdims = theirs.get(v, (None, None))
        t.c['outputs'] += 1
        t.c['ours_typed'] += od is not None and odims is not None
        t.c['onnx_typed'] += xd is not None and xdims is not None
        if od and odims is not None and not (xd and xdims is not None):
            t.c['ours_only'] += 1
            t.more_ops[op] += 1
        if (name, v) in ONNX_WRONG:
            t.c['onnx_wrong'] += 1
            continue
        if xd and xdims is not None and not (od and odims is not None):
            t.c['onnx_only'] += 1
            if op in ruled:
                t.miss_ops[op] += 1
                misses.append('%s (%s): onnx types it %s %s, ppqfmt does not' % (v, op, xd, xdims))
            continue
        if xd and od and xd != od:
            problems.append('%s (%s): dtype %s, onnx %s' % (v, op, od, xd))
            t.c['conflicts'] += 1
        if xdims is None or odims is None:
            continue
        if len(xdims) != len(odims):
            problems.append('%s (%s): rank %d, onnx %d' % (v, op, len(odims), len(xdims)))
            t.c['conflicts'] += 1
            continue
        for a, b in zip(odims, xdims):
            if b is None:
                t.c['ours_static_extra'] += a.lstrip('-').isdigit()
                continue
            t.c['onnx_static_dims'] += 1
            if not a.lstrip('-').isdigit():
                t.c['static_missed'] += 1
                if op in ruled:
                    t.miss_ops[op] += 1
                    misses.append('%s (%s): dims %s, onnx %s' % (v, op, odims, xdims))
            elif int(a) != b:
                t.c['conflicts'] += 1
                problems.append('%s (%s): dims %s, onnx %s' % (v, op, odims, xdims))


def symbolic_copy(model, path):
    """model with every dim of its real inputs replaced by a symbol, saved to path."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {t.name for t in m.graph.initializer}
    for k, vi in enumerate(m.graph.input):
        if vi.name in inits or vi.type.WhichOneof('value') != 'tensor_type':
            continue
        for j, d in enumerate(vi.type.tensor_type.shape.dim):
            d.dim_param = 'in%d_d%d' % (k, j)
    onnx.save(m, path)


def written_facts(ppqfmt, model, out):
    """Formats model with infer-shapes alone into out; the declared types of the result
    {name: (dtype or None, dims or None)} (a dim with neither value nor param gets a name of
    its own), and whether formatting out again gives the same bytes; or an error string."""
    p = subprocess.run([ppqfmt, '-q', '--passes=infer-shapes', model, '-o', out],
                       stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        return 'ppqfmt exit %d: %s' % (p.returncode, p.stderr.decode(errors='replace').strip())
    again = subprocess.run([ppqfmt, '-q', '--passes=infer-shapes', out, '-o', '-'],
                           stdout=subprocess.PIPE, timeout=120)
    with open(out, 'rb') as f:
        same = again.returncode == 0 and again.stdout == f.read()
    return declared_facts(onnx.load(out).graph), same


def ruled_ops(tool):
    """Op types the registry has a rule for: read from the self-test's registry dump."""
    p = subprocess.run([tool, '--ops'], stdout=subprocess.PIPE, check=True)
    return set(p.stdout.decode().split())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--filter', default='')
    ap.add_argument('--no-ort', action='store_true',
                    help='skip the onnxruntime oracle (the symbolic-input dumps still run)')
    ap.add_argument('-v', action='store_true', help='print every problem')
    args = ap.parse_args()
    tool = os.path.join(ROOT, os.environ.get('BUILD', 'build'), 'tests', 'test_infer')
    ppqfmt = os.environ.get('PPQFMT') or os.path.join(ROOT, os.environ.get('BUILD', 'build'), 'ppqfmt')
    t0 = time.time()
    cases = find_cases(SUITE_DIR, args.filter)
    cases += [(os.path.relpath(p, ROOT), p) for p in testlib.pass_models(ROOT)
              if args.filter in os.path.relpath(p, ROOT)]
    ruled = ruled_ops(tool)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        dumps = list(pool.map(lambda c: run_dump(tool, c[1]), cases))
    t = Tally()
    results, ort_jobs, sym_only = {}, [], []
    tmp = tempfile.TemporaryDirectory(prefix='infer_oracle_')
    for (name, path), dump in zip(cases, dumps):
        problems = []
        results[name] = problems
        if isinstance(dump, str):
            problems.append(dump)
            continue
        ours, unknown, _ = dump
        for op in unknown:
            t.unruled[op] += 1
        try:
            model = onnx.load(path)
        except Exception as e:  # noqa: BLE001 - a model onnx cannot read is not compared
            t.c['onnx_unreadable'] += 1
            continue
        theirs = onnx_facts(model)
        prod = producers(model)
        if isinstance(theirs, str):
            t.c['onnx_refused'] += 1
        else:
            compare_onnx(name, ours, theirs, prod, ruled, t, problems)
        if not name.split('/')[0] in ('node', 'pytorch-converted', 'pytorch-operator', 'simple'):
            continue
        if args.no_ort:  # the symbolic dump still runs: its code paths, not its dims, are checked
            sym = os.path.join(tmp.name, name.replace('/', '__') + '.sym.onnx')
            symbolic_copy(model, sym)
            sym_only.append((name, sym))
            continue
        try:
            feeds, _ = prepare(path)
        except Exception:  # noqa: BLE001 - no usable test data: onnxruntime oracle skipped
            continue
        out = os.path.join(tmp.name, name.replace('/', '__') + '.onnx')
        with_all_outputs(model, list(prod), out)
        sym = os.path.join(tmp.name, name.replace('/', '__') + '.sym.onnx')
        symbolic_copy(model, sym)
        ort_jobs.append((name, out, feeds, sym))
    if ort_jobs:
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            sym_dumps = pool.map(lambda j: run_dump(tool, j[3]), ort_jobs)
            written = pool.map(lambda j: written_facts(ppqfmt, j[3], j[3] + '.fmt.onnx'), ort_jobs)
            got = ortcheck.run_models([{'model': m, 'inputs': f} for _, m, f, _ in ort_jobs])
        index = {c[0]: i for i, c in enumerate(cases)}
        for (name, _, _, _), res, sym, vi in zip(ort_jobs, got, list(sym_dumps), list(written)):
            if isinstance(res, str):
                t.c['ort_skipped'] += 1
                continue
            if isinstance(vi, str):
                results[name].append('infer-shapes: ' + vi)
            else:
                vi_problems = []
                compare_ort(vi[0], res, t, vi_problems, 'vi_')
                results[name] += ['written value_info: ' + p for p in vi_problems]
                if not vi[1]:
                    results[name].append('infer-shapes: formatting its output again changes it')
            t.c['ort_models'] += 1
            compare_ort(dumps[index[name]][0], res, t, results[name])
            if isinstance(sym, str):
                results[name].append('symbolic inputs: ' + sym)
                continue
            sym_problems = []
            compare_ort(sym[0], res, t, sym_problems, 'sym_')
            results[name] += ['symbolic inputs: ' + p for p in sym_problems]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        for (name, _), sym in zip(sym_only, pool.map(lambda j: run_dump(tool, j[1]), sym_only)):
            if isinstance(sym, str):
                results[name].append('symbolic inputs: ' + sym)
    tmp.cleanup()

    failed = {n: p for n, p in results.items() if p}
    for n, p in sorted(failed.items()):
        print('FAIL %s: %s' % (n, p[0] if not args.v else '\n    '.join(p)))
    c = t.c
    pct = lambda a, b: 100.0 * a / b if b else 100.0  # noqa: E731
    print('coverage: %d node outputs; typed with shape: ppqfmt %d (%.1f%%), onnx %d (%.1f%%); '
          'ppqfmt-only %d, onnx-only %d; onnx static dims %d, ppqfmt missed %d; conflicts %d; '
          'onnxruntime: %d models, %d dims checked, %d conflicts, %d values unchecked, %d models '
          'not run; symbolic inputs: %d dims checked (%d static), %d conflicts, %d unchecked; '
          'written value_info: %d dims checked (%d static), %d conflicts, %d values unchecked; '
          '%.0fs' % (
              c['outputs'], c['ours_typed'], pct(c['ours_typed'], c['outputs']), c['onnx_typed'],
              pct(c['onnx_typed'], c['outputs']), c['ours_only'], c['onnx_only'],
              c['onnx_static_dims'], c['static_missed'], c['conflicts'], c['ort_models'],
              c['ort_dims'], c['ort_conflicts'], c['ort_unchecked'], c['ort_skipped'],
              c['sym_ort_dims'], c['sym_ort_static'], c['sym_ort_conflicts'],
              c['sym_ort_unchecked'], c['vi_ort_dims'], c['vi_ort_static'], c['vi_ort_conflicts'],
              c['vi_ort_unchecked'], time.time() - t0))
    if t.miss_ops:
        print('registry ops onnx types better: ' +
              ', '.join('%s %d' % kv for kv in t.miss_ops.most_common()))
    print('ppqfmt-only outputs by op: ' + ', '.join('%s %d' % kv for kv in t.more_ops.most_common()))
    print('ops without a rule: ' + ', '.join('%s %d' % kv for kv in t.unruled.most_common()))
    print('infer_oracle: %d passed, %d failed' % (len(results) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
