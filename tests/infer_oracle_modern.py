#!/usr/bin/env python3
"""Shape and type inference (core/infer, core/ops) on the pinned onnx's backend node cases at
opset 18 and above, against onnxruntime 1.31.1's actual outputs and onnx 1.23.2's strict
inference (run with .deps/venv/bin/python; tests/infer_oracle.py is the Debian-onnx half).

For each case whose default-domain opset is at least --min-opset (default 0: every case, the
opset 18 and later ones included; about 20 s) and that
onnxruntime runs with every node output of the main graph made a graph output:
  1. `build/tests/test_infer --dump` gives ppqfmt's facts for the values of the main graph;
  2. every value ppqfmt types must have onnxruntime's element type, and every dim it declares
     must equal onnxruntime's (symbols bound from the shapes themselves, scripts/shape_oracle.py):
     a difference fails the case;
  3. onnx.shape_inference.infer_shapes(strict_mode=True, data_prop=True): a value onnx types
     with a static dim where ppqfmt does not, on an op ppqfmt has a rule for, is a miss. Misses
     are counted and listed (the aim is none), not failed. A dtype, rank or static dim that
     differs from onnx's fails the case; cases onnxruntime cannot run (opsets 27 and 28, missing
     kernels) are checked against onnx alone, and counted as skipped when they agree.
Last lines: the counts, then `infer_oracle_modern: N passed, M failed, K skipped`.

    .deps/venv/bin/python tests/infer_oracle_modern.py [--filter SUBSTR] [--min-opset N] [-v]
"""
import argparse
import collections
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, shape_inference

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
sys.path.insert(0, os.path.join(ROOT, 'tests'))
from infer_oracle import Tally, compare_onnx, producers, ruled_ops, run_dump, type_fact  # noqa: E402
from onnx_node_suite import collect, ort_run  # noqa: E402
from shape_oracle import compare_ort, with_all_outputs  # noqa: E402

TOOL = os.path.join(ROOT, os.environ.get('BUILD', 'build'), 'tests', 'test_infer')
# The element types of onnx 1.23 that ppqfmt does not know yet (int2, uint2, float8e8m0: types
# 24 to 26): the loader refuses a Cast to them, inference leaves them unknown. Cases whose every
# difference is one of these are skipped with this reason, until the type work lands.
UNKNOWN_TYPE = 'not an ONNX element type'
UNKNOWN_TYPE_WHY = 'an element type ppqfmt does not know yet (int2, uint2, float8e8m0)'


def default_opset(model):
    return max((o.version for o in model.opset_import if o.domain in ('', 'ai.onnx')), default=0)


def strict_facts(model):
    """onnx's strict inference of the main graph ({name: (dtype, dims)}), or its refusal."""
    try:
        inferred = shape_inference.infer_shapes(model, check_type=True, strict_mode=True,
                                                data_prop=True)
    except Exception as e:
        return 'onnx strict: %s' % str(e).strip().splitlines()[0][:150]
    g = inferred.graph
    facts = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        fact = type_fact(vi.type, False)
        if fact is not None:
            facts[vi.name] = fact
    return facts


def dtype_conflicts(ours, actual):
    """Values whose numpy array type differs from the element type ppqfmt declares."""
    out = []
    for v, arr in actual.items():
        dt = ours.get(v, (None, None))[0]
        if not dt or '(' in dt:
            continue
        try:
            want = helper.tensor_dtype_to_np_dtype(onnx.TensorProto.DataType.Value(dt.upper()))
        except (KeyError, ValueError):
            continue
        got = np.asarray(arr).dtype
        if want != got and not (want.kind in 'OSU' and got.kind in 'OSU'):
            out.append('%s: dtype %s, onnxruntime %s' % (v, dt, got))
    return out


def onnx_only(name, model, path, ruled, t):
    """For a case onnxruntime cannot run (an opset above 26, a missing kernel): ppqfmt's facts
    against onnx's strict inference alone; the conflicts (misses are not counted here)."""
    dump = run_dump(TOOL, path)
    if isinstance(dump, str):
        return [dump]
    theirs = strict_facts(model)
    if isinstance(theirs, str):
        return []
    problems = []
    t.c['onnx_only_cases'] += 1
    compare_onnx(name, dump[0], theirs, producers(model), ruled, t, problems, [])
    unknown = ('dtype unknown, onnx %s' % dt for dt in ('int2', 'uint2', 'float8e8m0'))
    unknown = tuple(unknown)
    return [p + ' (%s)' % UNKNOWN_TYPE if p.endswith(unknown) else p for p in problems]


def judge(name, model, feeds, path, ruled, t):
    """('pass'|'fail'|'skip', messages, misses)."""
    dump = run_dump(TOOL, path)
    if isinstance(dump, str):
        return 'fail', [dump], []
    ours, _, _ = dump
    prod = producers(model)
    probe = path + '.all.onnx'
    with_all_outputs(model, list(prod), probe)
    actual = ort_run(probe, feeds)
    if isinstance(actual, str):
        return 'skip', ['onnxruntime with every value an output: ' + actual[:100]], []
    problems = dtype_conflicts(ours, actual)
    t.c['ort_conflicts'] += len(problems)
    compare_ort(ours, actual, t, problems)
    misses = []
    theirs = strict_facts(model)
    if isinstance(theirs, str):
        t.c['onnx_strict_refused'] += 1
    else:
        compare_onnx(name, ours, theirs, prod, ruled, t, [], misses)
    return ('fail' if problems else 'pass'), problems, misses


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--filter', default='')
    ap.add_argument('--min-opset', type=int, default=0)
    ap.add_argument('-v', action='store_true')
    args = ap.parse_args()
    if not os.access(TOOL, os.X_OK):
        print('infer_oracle_modern: 0 passed, 1 failed, 0 skipped (no %s)' % TOOL)
        return 1
    ready, skipped, _ = collect(args.filter)
    ruled = ruled_ops(TOOL)
    t = Tally()
    passed, failed, missed = 0, {}, {}
    tmp = tempfile.mkdtemp(prefix='infer_oracle_modern_')
    try:
        for name, model, feeds, _ in ready:
            if default_opset(model) < args.min_opset:
                continue
            path = os.path.join(tmp, name + '.onnx')
            onnx.save(model, path)
            if isinstance(ort_run(path, feeds), str):
                skipped[name] = 'onnxruntime refuses the original'
                problems = onnx_only(name, model, path, ruled, t)
                if problems and all(UNKNOWN_TYPE in p for p in problems):
                    skipped[name] = UNKNOWN_TYPE_WHY
                elif problems:
                    failed[name] = problems
                continue
            verdict, msgs, misses = judge(name, model, feeds, path, ruled, t)
            if misses:
                missed[name] = misses
            if verdict == 'pass':
                passed += 1
            elif verdict == 'skip':
                skipped[name] = msgs[0]
            else:
                failed[name] = msgs
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for why, n in collections.Counter(skipped.values()).most_common():
        print('skipped %4d  %s' % (n, why[:120]))
    for name in sorted(missed):
        print('less than onnx %s: %s' % (name, '; '.join(missed[name])[:300]))
    for name in sorted(failed):
        print('FAIL %s: %s' % (name, '; '.join(failed[name])[:400]))
    print('values checked against onnxruntime: %d dims, %d unchecked; %d cases onnxruntime '
          'cannot run checked against onnx alone; onnx strict refused %d cases; %d cases where '
          'ppqfmt infers less than onnx (%s)' % (
              t.c['ort_dims'], t.c['ort_unchecked'], t.c['onnx_only_cases'],
              t.c['onnx_strict_refused'], len(missed),
              ', '.join('%s %d' % kv for kv in t.miss_ops.most_common()) or 'none'))
    print('infer_oracle_modern: %d passed, %d failed, %d skipped' % (
        passed, len(failed), len(skipped)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
