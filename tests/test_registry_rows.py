#!/usr/bin/env python3
"""The op registry (core/ops) against the pinned onnx's operator schemas (run with
.deps/venv/bin/python: onnx 1.23.2, which defines ai.onnx opsets up to 28).

For every ai.onnx operator version from opset 18 on (onnx.defs.get_all_schemas_with_history),
`build/tests/test_infer --rows` must list a row with that since-version, and its input and output
count bounds must be the schema's (min_input, max_input, min_output, max_output; a variadic
bound is onnx's 2**31-1, the registry's 0xffff). Deprecated versions need no row. One check per
operator version; last line: `test_registry_rows: N passed, M failed`.
"""
import os
import subprocess
import sys

import onnx
import onnx.defs

import testlib  # tests/, beside this file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(REPO, os.environ.get('BUILD', 'build'), 'tests', 'test_infer')
FIRST = 18
VARIADIC_ONNX, VARIADIC_ROW = 2 ** 31 - 1, 0xffff

T = testlib.Tally('test_registry_rows')


def rows():
    out = subprocess.run([TOOL, '--rows'], stdout=subprocess.PIPE, check=True).stdout.decode()
    table = {}
    for line in out.splitlines():
        dom, op, since, *bounds = line.split('\t')
        table[(dom, op, int(since))] = tuple(VARIADIC_ONNX if int(b) == VARIADIC_ROW else int(b)
                                             for b in bounds)
    return table


def main():
    table = rows()
    for s in sorted(onnx.defs.get_all_schemas_with_history(),
                    key=lambda s: (s.name, s.since_version)):
        if s.domain not in ('', 'ai.onnx') or s.since_version < FIRST or s.deprecated:
            continue
        want = (s.min_input, s.max_input, s.min_output, s.max_output)
        got = table.get(('ai.onnx', s.name, s.since_version))
        T.check('%s-%d' % (s.name, s.since_version), lambda: None if got == want else
                'no row' if got is None else 'bounds %s, onnx %s' % (got, want))
    return T.summary()


if __name__ == '__main__':
    sys.exit(main())
