"""Shapes a model declares or ppqfmt infers, checked against the shapes onnxruntime computes.

Shared by tests/infer_oracle.py (the backend suite), tests/test_models.py and
scripts/fuzz_diff.py (random models). Facts are {value name: (dtype name or None,
dims or None)}, a dim being the text of a number, a symbol or an expression of
symbols ('2*seq', '(seq+1)/2'); actual shapes are {value name: ndarray}.
"""
import re

import onnx
from onnx import helper

IDENT = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')


def dtype_names():
    return {v: k.lower() for k, v in onnx.TensorProto.DataType.items()}


DTYPE_NAME = dtype_names()


def eval_dim(expr, env):
    """Value of a dim expression given symbol values, or None while a symbol is unbound or the
    text is cut short (test_infer --dump writes at most a line's worth of a long expression)."""
    names = IDENT.findall(expr)
    if any(n not in env for n in names):
        return None
    try:
        return eval(expr.replace('/', '//'), {'__builtins__': {}}, dict(env))  # noqa: S307
    except SyntaxError:
        return None


def compare_ort(ours, actual, t, problems, tag=''):
    """Binds symbols from the actual shapes, then checks every dim (counters of t.c, a
    Counter, prefixed by tag); appends a message per conflict to problems."""
    env, pending = {}, []
    for v, arr in actual.items():
        dtype, dims = ours.get(v, (None, None))
        if dtype and '(' in dtype:  # a sequence or an optional: not an array
            t.c[tag + 'ort_wrapped'] += 1
            continue
        if dims is None:
            t.c[tag + 'ort_unchecked'] += 1
            continue
        if len(dims) != arr.ndim:
            problems.append('%s: rank %d, onnxruntime %d' % (v, len(dims), arr.ndim))
            t.c[tag + 'ort_conflicts'] += 1
            continue
        pending += [(v, d, int(s), dims) for d, s in zip(dims, arr.shape)]
    progress = True
    while pending and progress:
        progress, rest = False, []
        for v, d, s, dims in pending:
            if IDENT.fullmatch(d) and d not in env:
                env[d] = s
            val = eval_dim(d, env)
            if val is None:
                rest.append((v, d, s, dims))
                continue
            progress = True
            t.c[tag + 'ort_dims'] += 1
            t.c[tag + 'ort_static'] += d.lstrip('-').isdigit()
            if val != s:
                t.c[tag + 'ort_conflicts'] += 1
                problems.append('%s: dim %s = %d, onnxruntime %d (shape %s)' % (v, d, val, s, dims))
        pending = rest
    t.c[tag + 'ort_unchecked'] += len(pending)


def with_all_outputs(model, names, path):
    """Saves to path a copy of model in which the values names are graph outputs too."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    have = {o.name for o in m.graph.output}
    for n in names:
        if n not in have:
            m.graph.output.append(helper.make_empty_tensor_value_info(n))
    onnx.save(m, path)


def declared_facts(g):
    """The declared types of graph g's inputs, value_info and outputs (a dim with neither
    value nor param gets a name of its own: it is bound like a symbol)."""
    facts = {}
    for k, vi in enumerate(list(g.input) + list(g.value_info) + list(g.output)):
        if vi.type.WhichOneof('value') != 'tensor_type':
            continue
        tt = vi.type.tensor_type
        dims = None
        if tt.HasField('shape'):   # k, not len(facts): a value may be declared twice
            dims = [str(d.dim_value) if d.HasField('dim_value') else
                    d.dim_param if d.HasField('dim_param') else 'anon_%d_%d' % (k, i)
                    for i, d in enumerate(tt.shape.dim)]
        facts[vi.name] = (DTYPE_NAME.get(tt.elem_type), dims)
    return facts
