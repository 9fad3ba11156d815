#!/usr/bin/python3
"""The kernel oracle: every fold kernel against the ONNX backend test suite.

For each node case (/usr/share/libonnx-testdata/data/node/*) whose every node
has a kernel (the kernel tables in core/ops/eval_*.c, read here from the
sources), the case's inputs (test_data_set_0/input_N.pb) become
initializers, ppqfmt runs `--passes=constant,fold`, and each graph output
must come back as an initializer equal to output_N.pb: exactly for integer
and bool results, within the suite's tolerance (rtol 1e-3, atol 1e-7) for
floats (one step for bfloat16, see compare()), NaN where NaN is expected.

Cases of operator versions newer than the suite (python3-onnx 1.12 stops at
opset 17) are written here after the later suite's cases of the same names
(Pad-18's axes input, Pad-19's wrap mode), their expected outputs computed by
numpy's np.pad and checked against onnxruntime's before use: see NEWER.

A case is skipped (with its reason) when an op has no kernel, its opset is
older than the kernel's, an input or output has an element type the kernels
do not take (strings, float8, complex, 4-bit), or the kernel declines the
node (ppqfmt's "not folded: ..." warning: for example an integer division by
zero). Each case prints `ok`, `skip` or `FAIL`; the last line is
`fold_oracle: N passed, M failed` (and the skips by reason before it).

    /usr/bin/python3 tests/fold_oracle.py [SUBSTRING ...]
"""
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

import testlib  # tests/, beside this file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))
SUITE = "/usr/share/libonnx-testdata/data/node"
RTOL, ATOL = 1e-3, 1e-7
T = onnx.TensorProto
SUPPORTED = {T.FLOAT, T.FLOAT16, T.BFLOAT16, T.DOUBLE, T.INT8, T.INT16, T.INT32, T.INT64,
             T.UINT8, T.UINT16, T.UINT32, T.UINT64, T.BOOL}

tally = testlib.Tally("fold_oracle")


def kernels():
    """{op type: smallest since-version} from the kernel tables the registry lists
    (core/ops/ops_registry.c) but those marked interpreter_only (their definition ends in
    `true}`), less the ops the fold pass never folds (fold_excluded()'s list in
    formatter/fold.c): those kernels serve --check only."""
    found = {}
    registry = open(os.path.join(REPO, "core", "ops", "ops_registry.c")).read()
    tables = set(re.findall(r"&(eval_\w+_kernels)", registry))
    for path in glob.glob(os.path.join(REPO, "core", "ops", "eval_*.c")):
        text = open(path).read()
        if not any(re.search(r"OpKernelTable %s = \{[^;]*, false\};" % t, text) for t in tables):
            continue
        for op, since in re.findall(r'\{"", "(\w+)", (\d+), eval_\w+\}', text):
            found[op] = min(int(since), found.get(op, 1 << 30))
    fold = open(os.path.join(REPO, "formatter", "fold.c")).read()
    never = re.search(r"never\[\] = \{(.*?)\};", fold, re.S)
    for op in re.findall(r'"(\w+)"', never.group(1)):
        found.pop(op, None)
    return found


def opset(m):
    return next((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), 1)


def why_skip(m, ks):
    """The reason the case cannot be folded by construction, or None."""
    for n in m.graph.node:
        if n.domain not in ("", "ai.onnx") or n.op_type not in ks and n.op_type != "Constant":
            return "no kernel for %s" % n.op_type
        if n.op_type in ks and opset(m) < ks[n.op_type]:
            return "%s kernel starts at opset %d" % (n.op_type, ks[n.op_type])
    for vi in list(m.graph.input) + list(m.graph.output):
        if vi.type.WhichOneof("value") != "tensor_type":
            return "non-tensor value"
        if vi.type.tensor_type.elem_type not in SUPPORTED:
            return "element type %s" % T.DataType.Name(vi.type.tensor_type.elem_type)
    return None


def as_constants(m, inputs):
    """m with every graph input turned into an initializer of its value. The
    suite stores bfloat16 values as UINT16 tensors of the same bits: they
    get the declared type back."""
    for vi, t in zip(list(m.graph.input), inputs):
        t.name = vi.name
        if vi.type.tensor_type.elem_type == T.BFLOAT16 and t.data_type == T.UINT16:
            t.data_type = T.BFLOAT16
        m.graph.initializer.append(t)
    del m.graph.input[:]
    return m


def bfloat16_bits(a):
    """float32 values of bfloat16 bits held as uint16 (the suite's form)."""
    return (a.astype(np.uint32) << 16).view(np.float32)


def compare(got, exp, declared):
    """None if got matches exp (see the module comment). bfloat16 results
    may differ by one bfloat16 step (relative 2**-7): this suite (onnx 1.12)
    made them by truncating float32, onnxruntime and ppqfmt round to
    nearest even (as onnx's own data does since 1.14)."""
    rtol = RTOL
    if declared == T.BFLOAT16 and exp.dtype == np.uint16:
        exp, rtol = bfloat16_bits(exp), 2.0 ** -7
    if got.dtype != exp.dtype or got.shape != exp.shape:
        return "got %s%s, expected %s%s" % (got.dtype, got.shape, exp.dtype, exp.shape)
    if exp.dtype.kind in "f" or exp.dtype == np.dtype("float16"):
        nan = np.isnan(exp)
        if not np.array_equal(nan, np.isnan(got)):
            return "NaN in different places"
        g, e = got[~nan].astype(np.float64), exp[~nan].astype(np.float64)
        bad = ~np.isclose(g, e, rtol=rtol, atol=ATOL) & ~(g == e)
        return None if not bad.any() else "%d of %d elements differ (first: %r vs %r)" % (
            bad.sum(), bad.size, g[bad][0], e[bad][0])
    return None if np.array_equal(got, exp) else "values differ: %r vs %r" % (
        got.ravel()[:8], exp.ravel()[:8])


# name: (opset, pads, axes or None, mode, constant value or None), on a [1, 3, 4, 5] input
NEWER = {
    "pad18_constant_axes": (18, [0, 3, 0, 4], [1, 3], "constant", 1.2),
    "pad18_constant_negative_axes": (18, [0, 3, 0, 4], [-3, -1], "constant", 1.2),
    "pad18_reflect_axes": (18, [1, 2, 3, 0], [2, 3], "reflect", None),
    "pad18_edge_axes": (18, [2, 1, 1, 3], [0, -2], "edge", None),
    "pad18_constant_axes_crop": (18, [-1, 2, 1, -2], [2, 3], "constant", 0.5),
    "pad19_wrap": (19, [0, 0, 1, 1, 0, 0, 1, 1], None, "wrap", None),
    "pad19_wrap_axes": (19, [2, 5, 0, 1], [2, 3], "wrap", None),
}


def np_pad(x, pads, axes, mode, value):
    """What Pad computes, from numpy: the spec crops negative pads first."""
    r = x.ndim
    axes = list(range(r)) if axes is None else [a % r for a in axes]
    width = [[0, 0] for _ in range(r)]
    for k, a in enumerate(axes):
        width[a] = [pads[k], pads[k + len(axes)]]
    crop = tuple(slice(max(-lo, 0), x.shape[a] - max(-hi, 0)) for a, (lo, hi) in enumerate(width))
    width = [(max(lo, 0), max(hi, 0)) for lo, hi in width]
    if mode == "constant":
        return np.pad(x[crop], width, mode, constant_values=value or 0)
    return np.pad(x[crop], width, mode)


def write_newer(root):
    """The NEWER cases as suite-style case folders under root; their paths, and
    {path: why} for those whose numpy output onnxruntime does not reproduce."""
    x = np.random.default_rng(19).standard_normal((1, 3, 4, 5)).astype(np.float32)
    paths, jobs = [], []
    for name, (ver, pads, axes, mode, value) in sorted(NEWER.items()):
        feeds = [("x", x), ("pads", np.array(pads, np.int64))]
        names = ["x", "pads", "value" if value is not None else "", "axes" if axes else ""]
        if value is not None:
            feeds.append(("value", np.array(value, np.float32)))
        if axes:
            feeds.append(("axes", np.array(axes, np.int64)))
        while not names[-1]:
            names.pop()
        y = np_pad(x, pads, axes, mode, value)
        node = onnx.helper.make_node("Pad", names, ["y"], mode=mode)
        vi = onnx.helper.make_tensor_value_info
        g = onnx.helper.make_graph(
            [node], name, [vi(n, numpy_helper.from_array(a).data_type, a.shape) for n, a in feeds],
            [vi("y", T.FLOAT, y.shape)])
        m = onnx.helper.make_model(g, opset_imports=[onnx.helper.make_opsetid("", ver)])
        case = os.path.join(root, "newer", name)
        os.makedirs(os.path.join(case, "test_data_set_0"))
        onnx.save(m, os.path.join(case, "model.onnx"))
        for i, (n, a) in enumerate(feeds):
            onnx.save_tensor(numpy_helper.from_array(a, n),
                             os.path.join(case, "test_data_set_0", "input_%d.pb" % i))
        onnx.save_tensor(numpy_helper.from_array(y, "y"),
                         os.path.join(case, "test_data_set_0", "output_0.pb"))
        paths.append(case)
        jobs.append(dict(model=os.path.join(case, "model.onnx"), inputs=dict(feeds), y=y))
    got = testlib.ortcheck().run_models([dict(model=j["model"], inputs=j["inputs"]) for j in jobs])
    wrong = {}
    for case, j, g in zip(paths, jobs, got):
        if isinstance(g, str) or not np.array_equal(g["y"], j["y"]):
            wrong[case] = "onnxruntime disagrees with numpy's expected output: %s" % (
                g if isinstance(g, str) else "%r vs %r" % (g["y"].ravel()[:6], j["y"].ravel()[:6]))
    return paths, wrong


def run_case(case, ks, tmp):
    m = onnx.load(os.path.join(case, "model.onnx"))
    reason = why_skip(m, ks)
    if reason:
        return testlib.SKIP + reason
    data = os.path.join(case, "test_data_set_0")
    ins = [onnx.load_tensor(p) for p in sorted(glob.glob(os.path.join(data, "input_*.pb")),
                                                key=lambda p: int(re.findall(r"\d+", p)[-1]))]
    outs = [onnx.load_tensor(p) for p in sorted(glob.glob(os.path.join(data, "output_*.pb")),
                                                 key=lambda p: int(re.findall(r"\d+", p)[-1]))]
    if len(ins) != len(m.graph.input):
        return testlib.SKIP + "inputs and input files differ in number (optional inputs)"
    src, dst = os.path.join(tmp, "in.onnx"), os.path.join(tmp, "out.onnx")
    onnx.save(as_constants(m, ins), src)
    # --fold-growth (hidden): Expand/Tile/ConstantOfShape fold however much
    # they grow, so that their kernels are tested too.
    p = subprocess.run([PPQFMT, "--passes=constant,fold", "--fold-growth=1000000", src, "-o", dst],
                       capture_output=True, text=True, timeout=60)
    if p.returncode:
        return "ppqfmt exit %d: %s" % (p.returncode, p.stderr.strip()[-300:])
    out = onnx.load(dst)
    inits = {t.name: t for t in out.graph.initializer}
    for vi, exp in zip(out.graph.output, outs):
        if vi.name not in inits:
            declined = re.search(r"not folded: .*", p.stderr)
            if declined:
                return testlib.SKIP + "kernel declined: " + declined.group(0)[12:]
            return "output %s not folded (%d nodes left)" % (vi.name, len(out.graph.node))
        err = compare(numpy_helper.to_array(inits[vi.name]), numpy_helper.to_array(exp),
                      vi.type.tensor_type.elem_type)
        if err:
            return "output %s: %s" % (vi.name, err)
    return None


def main(patterns):
    ks = kernels()
    skipped = collections.Counter()
    with tempfile.TemporaryDirectory() as tmp:
        newer, wrong = write_newer(tmp)
        for case in sorted(glob.glob(os.path.join(SUITE, "*"))) + newer:
            name = os.path.basename(case)
            if patterns and not any(p in name for p in patterns):
                continue
            try:
                err = wrong.get(case) or run_case(case, ks, tmp)
            except Exception as e:  # a broken output fails the case, not the runner
                err = "%s: %s" % (type(e).__name__, e)
            if err and err.startswith(testlib.SKIP):
                reason = err[len(testlib.SKIP):]
                skipped[re.sub(r"^no kernel for .*", "no kernel", reason)] += 1
            tally.report(name, err)
    for reason, n in sorted(skipped.items(), key=lambda x: -x[1]):
        print("skipped %d: %s" % (n, reason))
    return tally.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
