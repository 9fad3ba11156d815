#!/usr/bin/python3
"""End-to-end tests of the slice, clip, pad and resize passes and of raising the opset to 10/11.

Usage: tests/test_legacy.py [--keep DIR] [--reference] [PATTERN ...]

For every model of the legacy passes' modules in tests/passes/ (those with an EXPECT: clip.py,
pad.py, slice.py, resize.py, and legacy.py for the other nodes adapted with them, mixtures and
models that cannot be adapted; testdata/<module>/<case>.onnx, made by scripts/make_testdata.py)
this runs ppqfmt
(build/ppqfmt, or $PPQFMT) with the default passes and with only the legacy passes
(--passes=slice,clip,pad,resize), and checks each output for:
  - exit status 0 and onnx.checker.check_model(full_check=True);
  - opset: the default-domain import is 11 and ir_version >= 6, or 10 and >= 5 when Slice-1 is
    the only legacy operator (or both unchanged where the model
    must be left alone: see the modules' EXPECT);
  - no node left in a legacy form (Clip with min/max attributes, Pad with pads, Slice with
    starts, Resize with 2 inputs, Upsample, TopK with k, Scatter, BatchNormalization with
    spatial/is_test/consumed_inputs, Dropout with is_test, Gemm with broadcast), subgraphs
    included;
  - each converted node's inputs: values and dtypes computed from the INPUT node's attributes
    (Clip bounds: scalars of X's dtype, an absent bound stays absent; Pad: int64 pads and a
    scalar constant_value of X's dtype, mode kept; Slice: int64 starts/ends/axes, axes defaulting
    to 0..n-1; Resize-10/Upsample: Resize-11 (X, roi, scales) with asymmetric coordinates and,
    for nearest, nearest_mode floor when every scale >= 1 and ceil when every scale <= 1 -- that
    is what onnxruntime's Resize-10/Upsample compute; TopK: int64 K of shape [1]);
  - graph inputs/outputs unchanged (names and types);
  - numbers: onnxruntime (scripts/ortcheck.py) gives the same outputs for input and output; where
    onnxruntime can't run the input (opset-6 kernels) a numpy reference is used; If conditions
    are tried false and true;
  - idempotence (formatting the output again: same bytes), determinism, --passes=none gives the
    input bytes back; a model that can't be adapted must be reported in --report=json.
--reference replaces ppqfmt by a python reference conversion (reference_convert below) for the
structural and numeric checks: a self-test showing the checks can be met.
Each check prints `ok NAME` or `FAIL NAME: reason` (NAME starts with <module>/<case>; PATTERN: a
substring of it); the last line is
`test_legacy: N passed, M failed`; the exit status is 1 if anything failed.
Environment: PPQFMT (binary), PPQFMT_LEGACY_TESTDATA (another testdata/), PPQFMT_LEGACY_PASSES (the
pass list of the second run).  Run with Debian's /usr/bin/python3 (python3-onnx).
"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

import passes  # tests/passes/, beside this file
import testlib  # tests/, beside this file
from passes.common import attr, sval

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.environ.get("PPQFMT_LEGACY_TESTDATA", os.path.join(REPO, "testdata"))
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))
LEGACY_PASSES = os.environ.get("PPQFMT_LEGACY_PASSES", "slice,clip,pad,resize")
RUN_TIMEOUT = 60
TARGET_OPSET = 11
MIN_IR = 6
# Slice-10 already takes its operands as inputs: a model whose only legacy operator is Slice-1
# is raised to 10 (IR 5), so that a Clip-6 with clip off stays (see expected_target).
SLICE_TARGET, SLICE_MIN_IR = 10, 5

# What ppqfmt must do with a model: EXPECT[case] in its module, a (kind, OP) pair (default:
# "convert").
#   convert          opset 11, every legacy node in its opset-11 form
#   keep             nothing legacy rewritten, opset and IR unchanged, no warning needed
#   cannot OP        nothing legacy rewritten, opset and IR unchanged, a warning names OP
#   either [OP]      convert, or keep (then with a warning naming OP, if OP is given); used
#                    where a correct conversion exists but is not required (mixed up/down or
#                    run-time nearest scales, BN spatial=0, a used Dropout-7 mask)
CONVERT = ("convert", None)

# one model to test: id <module>/<case>, path (relative to TESTDATA), its EXPECT
Model = collections.namedtuple("Model", "id path expect")

T = testlib.Tally("test_legacy", width=700)
report, check = T.report, T.check


# ---------------------------------------------------------------------------
# model helpers
# ---------------------------------------------------------------------------

def scoped_graphs(m):
    """Yield scope chains [graph, ...] (outermost first): the main graph and every subgraph."""
    for chain in testlib.scoped_graphs(m):
        yield [g for _, g in chain]


def scoped_nodes(m):
    """(scope chain, node) for every node, subgraphs included."""
    return [(chain, n) for chain in scoped_graphs(m) for n in chain[-1].node]


def default_opset(m):
    vs = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    return vs[0] if len(vs) == 1 else None


def has_attr(n, name):
    return any(a.name == name for a in n.attribute)


def resolve_init(chain, name):
    """The initializer `name` names when read in the innermost graph of chain (None if it is a
    node output or unknown)."""
    for g in reversed(chain):
        if any(name in n.output for n in g.node):
            return None
        for t in g.initializer:
            if t.name == name:
                return t
    return None


def elem_types(m):
    """value name -> ONNX elem type, from shape inference on the (input) model."""
    try:
        inf = onnx.shape_inference.infer_shapes(m)
    except Exception:
        inf = m
    types = {}
    for chain in scoped_graphs(inf):
        g = chain[-1]
        for v in list(g.input) + list(g.output) + list(g.value_info):
            if v.type.HasField("tensor_type"):
                types[v.name] = v.type.tensor_type.elem_type
        for t in g.initializer:
            types[t.name] = t.data_type
    return types


def np_dtype(elem):
    return helper.tensor_dtype_to_np_dtype(elem) if hasattr(helper, "tensor_dtype_to_np_dtype") \
        else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem]


def is_legacy(n, opset):
    """Why node n (in a model of default opset `opset`) is in a form invalid at opset 11."""
    op = n.op_type
    if n.domain not in ("", "ai.onnx"):
        return None
    if op == "Clip" and (has_attr(n, "min") or has_attr(n, "max")):
        return "Clip with min/max attributes"
    if op == "Pad" and has_attr(n, "pads"):
        return "Pad with a pads attribute"
    if op == "Slice" and has_attr(n, "starts"):
        return "Slice with a starts attribute"
    if op == "Resize" and opset is not None and opset < 11:
        return "Resize-10"
    if op == "Resize" and len(n.input) == 2:
        return "Resize with 2 inputs"
    if op == "Upsample":
        return "Upsample"
    if op == "TopK" and has_attr(n, "k"):
        return "TopK with a k attribute"
    if op == "Scatter":
        return "Scatter"
    if op == "BatchNormalization" and any(has_attr(n, a) for a in
                                          ("spatial", "is_test", "consumed_inputs")):
        return "BatchNormalization with spatial/is_test/consumed_inputs"
    if op == "Dropout" and any(has_attr(n, a) for a in ("is_test", "consumed_inputs")):
        return "Dropout with is_test/consumed_inputs"
    if op == "Gemm" and has_attr(n, "broadcast"):
        return "Gemm with broadcast"
    return None


def find_out_node(out, n):
    """(chain, node) in out standing for input node n: same name, else producer of its output."""
    for chain, m in scoped_nodes(out):
        if n.name and m.name == n.name:
            return chain, m
    for chain, m in scoped_nodes(out):
        if n.output and n.output[0] in m.output:
            return chain, m
    return None, None


def through_dropouts(chain_in, name, out):
    """name and, while its writer in the input is a Dropout the output no longer has
    (eliminate-noops removes inference-form Dropouts), that Dropout's input."""
    names = [name]
    for _ in range(16):
        w = next((n for n in chain_in[-1].node if n.output[:1] == [names[-1]]), None)
        if w is None or w.op_type != "Dropout" or \
                any(m.name == w.name for _, m in scoped_nodes(out)):
            break
        names.append(w.input[0])
    return names


def stripped(inputs):
    inputs = list(inputs)
    while inputs and inputs[-1] == "":
        inputs.pop()
    return inputs


def same(got, exp):
    """None if arrays are equal in dtype, shape and bits."""
    got, exp = np.asarray(got), np.asarray(exp)
    if got.dtype != exp.dtype:
        return "dtype %s, expected %s" % (got.dtype, exp.dtype)
    if got.shape != exp.shape:
        return "shape %s, expected %s" % (got.shape, exp.shape)
    if got.tobytes() != exp.tobytes():
        return "values %s, expected %s" % (got.flatten()[:8].tolist(), exp.flatten()[:8].tolist())
    return None


def input_param(chain, n, idx, what, exp):
    """Input idx of node n is an initializer equal to exp (dtype, shape, values)."""
    if idx >= len(n.input) or not n.input[idx]:
        return "%s %s: input %d (%s) missing" % (n.op_type, n.name, idx, what)
    t = resolve_init(chain, n.input[idx])
    if t is None:
        return "%s %s: %s input '%s' is not an initializer" % (n.op_type, n.name, what,
                                                                n.input[idx])
    err = same(numpy_helper.to_array(t), exp)
    return ("%s %s: %s: %s" % (n.op_type, n.name, what, err)) if err else None


def absent(n, idx):
    return idx >= len(n.input) or n.input[idx] == ""


# ---------------------------------------------------------------------------
# converted-node checks: expectations from the INPUT node's attributes
# ---------------------------------------------------------------------------

def expect_clip(n, chain, m, types):
    errs = []
    if m.op_type != "Clip":
        return ["%s became %s" % (n.name, m.op_type)]
    dt = np_dtype(types.get(n.input[0], onnx.TensorProto.FLOAT))
    for idx, key in ((1, "min"), (2, "max")):
        if has_attr(n, key):
            errs.append(input_param(chain, m, idx, key, np.array(attr(n, key), dtype=dt)))
        elif not absent(m, idx):
            errs.append("Clip %s: %s was absent, now input '%s'" % (n.name, key, m.input[idx]))
    if len(stripped(m.input)) > 3:
        errs.append("Clip %s: inputs %s" % (n.name, list(m.input)))
    return errs


def expect_pad(n, chain, m, types):
    if m.op_type != "Pad":
        return ["%s became %s" % (n.name, m.op_type)]
    dt = np_dtype(types.get(n.input[0], onnx.TensorProto.FLOAT))
    errs = [input_param(chain, m, 1, "pads", np.array(attr(n, "pads"), np.int64))]
    mode_in = sval(attr(n, "mode", b"constant"))
    mode_out = sval(attr(m, "mode", b"constant"))
    if mode_in != mode_out:
        errs.append("Pad %s: mode %s, expected %s" % (n.name, mode_out, mode_in))
    if mode_in == "constant":
        if has_attr(n, "value") or not absent(m, 2):
            errs.append(input_param(chain, m, 2, "constant_value",
                                    np.array(attr(n, "value", 0.0), dtype=dt)))
    elif not absent(m, 2):
        t = resolve_init(chain, m.input[2])
        if t is None or np_dtype(t.data_type) != dt:
            errs.append("Pad %s: constant_value '%s' is not an initializer of dtype %s"
                        % (n.name, m.input[2], dt))
    return errs


def expect_slice(n, chain, m, types):
    if m.op_type != "Slice":
        return ["%s became %s" % (n.name, m.op_type)]
    starts, ends = attr(n, "starts"), attr(n, "ends")
    errs = [input_param(chain, m, 1, "starts", np.array(starts, np.int64)),
            input_param(chain, m, 2, "ends", np.array(ends, np.int64))]
    axes = attr(n, "axes")
    if axes is not None:
        errs.append(input_param(chain, m, 3, "axes", np.array(axes, np.int64)))
    elif not absent(m, 3):
        errs.append(input_param(chain, m, 3, "axes (default 0..n-1)",
                                np.arange(len(starts), dtype=np.int64)))
    if not absent(m, 4):
        errs.append(input_param(chain, m, 4, "steps", np.ones(len(starts), np.int64)))
    return errs


def nearest_mode_for(scales):
    if all(s >= 1 for s in scales):
        return "floor"
    if all(s <= 1 for s in scales):
        return "ceil"
    return None     # mixed: no single Resize-11 reproduces it


def expect_resize(n, chain_in, chain, m, types):
    """Resize-10 / Upsample-7 / Upsample-9 -> Resize-11 (X, roi, scales)."""
    mode = sval(attr(n, "mode", b"nearest"))
    if n.op_type == "Upsample" and has_attr(n, "scales"):
        scales = np.array(attr(n, "scales"), np.float32)
    else:
        t = resolve_init(chain_in, n.input[1])
        scales = numpy_helper.to_array(t) if t is not None else None
    if scales is None:
        # run-time scales: Upsample's are >= 1 (floor); Resize-10 nearest could be either way
        if mode == "nearest" and n.op_type == "Resize":
            return []
        want_nearest = "floor" if mode == "nearest" else None
    else:
        want_nearest = nearest_mode_for(scales.tolist()) if mode == "nearest" else None
        if mode == "nearest" and want_nearest is None:
            return []   # mixed up/down: any correct conversion (e.g. two Resize) is fine
    if m.op_type != "Resize":
        return ["%s became %s, expected Resize" % (n.name, m.op_type)]
    errs = []
    if len(m.input) < 3 or not m.input[1]:
        errs.append("Resize %s: inputs %s, expected (X, roi, scales)" % (n.name, list(m.input)))
    else:
        t = resolve_init(chain, m.input[1])
        if t is None or t.data_type not in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16,
                                            onnx.TensorProto.DOUBLE):
            errs.append("Resize %s: roi '%s' is not a float initializer" % (n.name, m.input[1]))
        if scales is not None:
            errs.append(input_param(chain, m, 2, "scales", scales))
        elif m.input[2] != n.input[1]:
            errs.append("Resize %s: scales input '%s', expected the original '%s'"
                        % (n.name, m.input[2], n.input[1]))
        if not absent(m, 3):
            errs.append("Resize %s: sizes input '%s' given with scales" % (n.name, m.input[3]))
    got_mode = sval(attr(m, "mode", b"nearest"))
    if got_mode != mode:
        errs.append("Resize %s: mode %s, expected %s" % (n.name, got_mode, mode))
    ctm = sval(attr(m, "coordinate_transformation_mode", b"half_pixel"))
    if ctm != "asymmetric":
        errs.append("Resize %s: coordinate_transformation_mode %s, expected asymmetric"
                    % (n.name, ctm))
    if want_nearest:
        nm = sval(attr(m, "nearest_mode", b"round_prefer_floor"))
        if nm != want_nearest:
            errs.append("Resize %s: nearest_mode %s, expected %s (scales %s)"
                        % (n.name, nm, want_nearest, scales.tolist()))
    return errs


def expect_topk(n, chain, m, types):
    if m.op_type != "TopK":
        return ["%s became %s" % (n.name, m.op_type)]
    errs = [input_param(chain, m, 1, "K", np.array([attr(n, "k")], np.int64))]
    if attr(m, "axis", -1) != attr(n, "axis", -1):
        errs.append("TopK %s: axis %s, expected %s" % (n.name, attr(m, "axis", -1),
                                                       attr(n, "axis", -1)))
    if attr(m, "largest", 1) != 1 or attr(m, "sorted", 1) != 1:
        errs.append("TopK %s: largest/sorted changed" % n.name)
    return errs


def expect_kept_attrs(n, m, names_defaults):
    errs = []
    for name, dflt in names_defaults:
        if attr(m, name, dflt) != attr(n, name, dflt):
            errs.append("%s %s: %s %r, expected %r" % (n.op_type, n.name, name,
                                                       attr(m, name, dflt), attr(n, name, dflt)))
    return errs


def check_converted(inp, out, strict):
    """Every legacy node of inp is converted as its attributes say.  strict: nodes that other
    passes may remove or replace (BatchNormalization, Dropout, Gemm) must still be there."""
    types = elem_types(inp)
    opset = default_opset(inp)
    errs = []
    for chain_in, n in scoped_nodes(inp):
        op = n.op_type
        interesting = is_legacy(n, opset) or op in ("Clip", "BatchNormalization", "Dropout",
                                                     "Gemm", "Upsample", "Resize")
        if not interesting:
            continue
        chain, m = find_out_node(out, n)
        if m is None:
            if strict or op in ("Clip", "Pad", "Slice", "Resize", "Upsample", "TopK", "Scatter"):
                errs.append("node %s (%s) is gone" % (n.name, op))
            continue
        if op == "Clip":
            errs += expect_clip(n, chain, m, types)
        elif op == "Pad":
            errs += expect_pad(n, chain, m, types)
        elif op == "Slice" and has_attr(n, "starts"):
            errs += expect_slice(n, chain, m, types)
        elif op == "Upsample" or (op == "Resize" and len(n.input) == 2):
            errs += expect_resize(n, chain_in, chain, m, types)
        elif op == "TopK" and has_attr(n, "k"):
            errs += expect_topk(n, chain, m, types)
        elif op == "Scatter":
            if m.op_type != "ScatterElements":
                errs.append("Scatter %s became %s, expected ScatterElements" % (n.name, m.op_type))
            elif len(m.input) != len(n.input) or attr(m, "axis", 0) != attr(n, "axis", 0) or \
                    any(y not in through_dropouts(chain_in, x, out) for x, y in zip(n.input, m.input)):
                errs.append("ScatterElements %s: inputs/axis changed" % n.name)
        elif op == "BatchNormalization" and attr(n, "spatial", 1) == 0:
            pass        # per-activation BN: only the numbers can tell
        elif op == "BatchNormalization" and m.op_type == op:
            errs += expect_kept_attrs(n, m, [("epsilon", 1e-5), ("momentum", 0.9)])
        elif op == "BatchNormalization" and strict:
            errs.append("BatchNormalization %s became %s" % (n.name, m.op_type))
        elif op == "Dropout" and m.op_type == op:
            errs += expect_kept_attrs(n, m, [("ratio", 0.5)])
        elif op == "Gemm" and m.op_type == op:
            errs += expect_kept_attrs(n, m, [("alpha", 1.0), ("beta", 1.0), ("transA", 0),
                                             ("transB", 0)])
    return "; ".join(e for e in errs if e) or None


def check_no_legacy(inp, out):
    opset = default_opset(out)
    left = ["%s %s (%s)" % (n.op_type, n.name, is_legacy(n, opset)) for _, n in scoped_nodes(out)
            if is_legacy(n, opset)]
    return ("legacy nodes left: %s" % left) if left else None


def expected_target(m):
    """(opset, minimum IR) the legacy passes raise m to: 11 when it holds a legacy Clip, Pad,
    Resize or Upsample, else 10 (Slice-1 alone)."""
    opset = default_opset(m)
    if any((is_legacy(n, opset) and n.op_type in ("Pad", "Resize", "Upsample")) or
           (n.op_type == "Clip" and opset < 11) for _, n in scoped_nodes(m)):
        return TARGET_OPSET, MIN_IR
    return SLICE_TARGET, SLICE_MIN_IR


def check_opset_raised(inp, out):
    errs = []
    target, min_ir = expected_target(inp)
    if default_opset(out) != target:
        errs.append("default opset %s, expected %d" % (
            [(o.domain, o.version) for o in out.opset_import], target))
    if out.ir_version < min_ir:
        errs.append("ir_version %d, expected >= %d" % (out.ir_version, min_ir))
    def others(m):
        return sorted((o.domain, o.version) for o in m.opset_import
                      if o.domain not in ("", "ai.onnx"))
    other_in, other_out = others(inp), others(out)
    if other_in != other_out:
        errs.append("other opset imports %s, expected %s" % (other_out, other_in))
    return "; ".join(errs) or None


def check_kept_legacy(inp, out, strict):
    """Nothing legacy rewritten: opset/IR unchanged, every legacy node byte-identical.  Not
    strict: BatchNormalization/Dropout/Gemm may be gone or replaced (other passes)."""
    errs = []
    if [(o.domain, o.version) for o in out.opset_import] != \
            [(o.domain, o.version) for o in inp.opset_import]:
        errs.append("opset_import %s, expected %s" % (
            [(o.domain, o.version) for o in out.opset_import],
            [(o.domain, o.version) for o in inp.opset_import]))
    if out.ir_version != inp.ir_version:
        errs.append("ir_version %d, expected %d" % (out.ir_version, inp.ir_version))
    opset = default_opset(inp)
    for _, n in scoped_nodes(inp):
        if is_legacy(n, opset) or n.op_type in ("Clip", "Resize", "TopK"):
            _, m = find_out_node(out, n)
            lenient = not strict and n.op_type in ("BatchNormalization", "Dropout", "Gemm")
            if lenient and (m is None or m.op_type != n.op_type):
                continue
            if m is None:
                errs.append("%s %s is gone" % (n.op_type, n.name))
            elif m.SerializeToString() != n.SerializeToString():
                errs.append("%s %s changed: %s" % (n.op_type, n.name,
                                                   " ".join(str(m).split())[:200]))
    return "; ".join(errs) or None


def warnings_of(report_json):
    found = []
    for p in report_json.get("passes", []):
        for w in p.get("warnings", []):
            found.append((p.get("name"), w if isinstance(w, str) else json.dumps(w)))
    return found


def check_warns(report_json, op):
    if report_json is None:
        return "no JSON report on stderr"
    ws = warnings_of(report_json)
    if not any(op in w for _, w in ws):
        return "no warning naming %s; warnings: %s" % (op, ws)
    return None


# ---------------------------------------------------------------------------
# numbers
# ---------------------------------------------------------------------------

ortcheck = testlib.ortcheck


def numpy_reference(m, feeds):
    """Evaluate the main graph of m with numpy, for the few ops whose old versions onnxruntime
    has no kernel for.  Returns {output: array} or raises NotImplementedError."""
    env = dict(feeds)
    for t in m.graph.initializer:
        env.setdefault(t.name, numpy_helper.to_array(t))
    for n in m.graph.node:
        x = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op == "BatchNormalization":
            eps = attr(n, "epsilon", 1e-5)
            shp = (1, -1) + (1,) * (x[0].ndim - 2)
            s, b, mu, var = (v.astype(np.float64).reshape(shp) for v in x[1:5])
            y = ((x[0] - mu) / np.sqrt(var + eps) * s + b).astype(x[0].dtype)
        elif op == "Dropout":
            y = x[0].copy()
        elif op == "Flatten":
            ax = attr(n, "axis", 1)
            y = x[0].reshape(int(np.prod(x[0].shape[:ax])), -1)
        elif op == "Gemm":
            a, b = x[0].astype(np.float64), x[1].astype(np.float64)
            if attr(n, "transA", 0):
                a = a.T
            if attr(n, "transB", 0):
                b = b.T
            y = attr(n, "alpha", 1.0) * a @ b
            if len(x) > 2 and x[2] is not None:
                y = y + attr(n, "beta", 1.0) * x[2]
            y = y.astype(x[0].dtype)
        elif op == "Conv" and x[1].ndim == 4 and x[1].shape[2:] == (1, 1) \
                and not any(attr(n, "pads", [0]) or [0]) and attr(n, "strides", [1, 1]) == [1, 1]:
            grp = attr(n, "group", 1)
            w = x[1][:, :, 0, 0].astype(np.float64)            # [Cout, Cin/group]
            cin, cout = x[0].shape[1] // grp, w.shape[0] // grp
            parts = [np.einsum("oi,nihw->nohw", w[g * cout:(g + 1) * cout],
                               x[0][:, g * cin:(g + 1) * cin].astype(np.float64))
                     for g in range(grp)]
            y = np.concatenate(parts, axis=1)
            if len(x) > 2 and x[2] is not None:
                y = y + x[2].reshape(1, -1, 1, 1)
            y = y.astype(x[0].dtype)
        elif op == "Clip" and len(x) == 1:
            lo, hi = attr(n, "min"), attr(n, "max")
            y = x[0]
            if lo is not None:
                y = np.maximum(y, np.array(lo, y.dtype))
            if hi is not None:
                y = np.minimum(y, np.array(hi, y.dtype))
        else:
            raise NotImplementedError("no numpy reference for %s" % op)
        env[n.output[0]] = y
    return {o.name: env[o.name] for o in m.graph.output}


def feed_sets(inp_path, inp):
    oc = ortcheck()
    base = oc.random_inputs(inp_path, 0)
    inits = {t.name for t in inp.graph.initializer}
    conds = [i.name for i in inp.graph.input if i.name not in inits
             and i.type.tensor_type.elem_type == onnx.TensorProto.BOOL
             and len(i.type.tensor_type.shape.dim) == 0]
    if not conds:
        return [base]
    sets = []
    for value in (False, True):
        f = dict(base)
        for c in conds:
            f[c] = np.array(value)
        sets.append(f)
    return sets


def check_numbers(inp_path, out_path, inp):
    oc = ortcheck()
    errs = []
    for feeds in feed_sets(inp_path, inp):
        ra, rb = oc.run_models([{"model": inp_path, "inputs": feeds},
                                {"model": out_path, "inputs": feeds}])
        what = "onnxruntime on the input"
        if isinstance(ra, str):
            try:
                ra = numpy_reference(inp, feeds)
                what = "numpy reference"
            except Exception as e:
                return "onnxruntime can't run the input (%s) and %s" % (ra[:200], e)
        if isinstance(rb, str):
            try:        # an old opset left as it was: onnxruntime may lack its kernels
                rb = numpy_reference(onnx.load(out_path), feeds)
            except Exception:
                errs.append("onnxruntime failed on the output: %s" % rb)
                continue
        ok, msg = oc.compare(ra, rb)
        if not ok:
            errs.append("vs %s: %s" % (what, msg))
    return "; ".join(errs) or None


# ---------------------------------------------------------------------------
# python reference conversion (--reference): what a correct pass produces
# ---------------------------------------------------------------------------

def _unique(used, base):
    name, k = base, 1
    while name in used:
        name, k = "%s_%d" % (base, k), k + 1
    used.add(name)
    return name


def _used_names(m):
    used = set()
    for chain in scoped_graphs(m):
        g = chain[-1]
        used |= {v.name for v in list(g.input) + list(g.output) + list(g.value_info)}
        used |= {t.name for t in g.initializer}
        for n in g.node:
            used |= set(n.input) | set(n.output) | {n.name}
    return used


def _blocker(m):
    """An op that can't be adapted to opset 11, or None."""
    opset = default_opset(m)
    used = {i for _, x in scoped_nodes(m) for i in x.input} | {o.name for o in m.graph.output}
    for chain, n in scoped_nodes(m):
        if n.op_type == "Scan" and opset == 8:
            return "Scan"
        if n.op_type == "BatchNormalization" and attr(n, "spatial", 1) == 0:
            return "BatchNormalization"
        if n.op_type == "Dropout" and opset < 10 and len(n.output) > 1 and n.output[1] in used:
            return "Dropout"
        if n.op_type in ("Upsample", "Resize") and len(n.input) >= 2:
            t = resolve_init(chain, n.input[1])
            if t is None and sval(attr(n, "mode", b"nearest")) == "nearest" \
                    and n.op_type == "Resize":
                return "Resize"     # dynamic scales: floor or ceil unknown
    return None


def reference_convert(m):
    """(converted model, warnings).  Mirrors the rules the tests check."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    opset = default_opset(m)
    target, min_ir = expected_target(m)
    if not any(is_legacy(n, opset) and n.op_type in ("Clip", "Pad", "Slice", "Resize")
               for _, n in scoped_nodes(m)):
        return m, []
    blocker = _blocker(m)
    if blocker:
        return m, ["cannot raise the opset to 11: %s can't be adapted" % blocker]
    types = elem_types(m)
    used = _used_names(m)

    def drop(n, *names):
        keep = [a for a in n.attribute if a.name not in names]
        del n.attribute[:]
        n.attribute.extend(keep)

    def param(g, base, arr):
        name = _unique(used, base)
        g.initializer.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    # innermost graphs first: rebuilding an outer node list copies the converted subgraphs
    for chain in reversed(list(scoped_graphs(m))):
        g = chain[-1]
        new_nodes = []
        for n in g.node:
            op = n.op_type
            dt = np_dtype(types.get(n.input[0], onnx.TensorProto.FLOAT)) if n.input else None
            if op == "Clip" and (has_attr(n, "min") or has_attr(n, "max")):
                ins = [n.input[0]]
                for key in ("min", "max"):
                    ins.append(param(g, n.name + "_" + key, np.array(attr(n, key), dt))
                               if has_attr(n, key) else "")
                drop(n, "min", "max")
                del n.input[:]
                n.input.extend(stripped(ins))
            elif op == "Pad" and has_attr(n, "pads"):
                ins = [n.input[0], param(g, n.name + "_pads", np.array(attr(n, "pads"), np.int64))]
                if sval(attr(n, "mode", b"constant")) == "constant":
                    ins.append(param(g, n.name + "_value", np.array(attr(n, "value", 0.0), dt)))
                drop(n, "pads", "value")
                del n.input[:]
                n.input.extend(ins)
            elif op == "Slice" and has_attr(n, "starts"):
                st = attr(n, "starts")
                ax = attr(n, "axes", list(range(len(st))))
                ins = [n.input[0], param(g, n.name + "_starts", np.array(st, np.int64)),
                       param(g, n.name + "_ends", np.array(attr(n, "ends"), np.int64)),
                       param(g, n.name + "_axes", np.array(ax, np.int64))]
                drop(n, "starts", "ends", "axes")
                del n.input[:]
                n.input.extend(ins)
            elif op == "Upsample" or (op == "Resize" and opset < 11):
                if has_attr(n, "scales"):
                    scales = np.array(attr(n, "scales"), np.float32)
                else:
                    t = resolve_init(chain, n.input[1])
                    scales = numpy_helper.to_array(t) if t is not None else None
                mode = sval(attr(n, "mode", b"nearest"))
                roi = param(g, n.name + "_roi", np.array([], np.float32))
                n.op_type = "Resize"
                drop(n, "scales")
                n.attribute.append(helper.make_attribute("coordinate_transformation_mode",
                                                         "asymmetric"))
                nm = nearest_mode_for(scales.tolist()) if scales is not None else "floor"
                if mode == "nearest" and nm is None:
                    # mixed up/down: upscaled axes first (floor), then downscaled ones (ceil)
                    up = np.where(scales >= 1, scales, 1).astype(np.float32)
                    down = np.where(scales < 1, scales, 1).astype(np.float32)
                    mid = _unique(used, n.output[0] + "_up")
                    first = helper.make_node(
                        "Resize", [n.input[0], roi, param(g, n.name + "_scales_up", up)], [mid],
                        name=_unique(used, n.name + "_up"), mode="nearest",
                        coordinate_transformation_mode="asymmetric", nearest_mode="floor")
                    new_nodes.append(first)
                    ins = [mid, roi, param(g, n.name + "_scales_down", down)]
                    nm = "ceil"
                elif len(n.input) == 1:
                    ins = [n.input[0], roi, param(g, n.name + "_scales", scales)]
                else:
                    ins = [n.input[0], roi, n.input[1]]
                if mode == "nearest":
                    n.attribute.append(helper.make_attribute("nearest_mode", nm))
                del n.input[:]
                n.input.extend(ins)
            elif op == "TopK" and has_attr(n, "k"):
                n.input.append(param(g, n.name + "_k", np.array([attr(n, "k")], np.int64)))
                drop(n, "k")
            elif op == "Scatter":
                n.op_type = "ScatterElements"
            elif op == "BatchNormalization":
                drop(n, "spatial", "is_test", "consumed_inputs")
            elif op == "Dropout":
                drop(n, "is_test", "consumed_inputs")
            elif op == "Gemm":
                drop(n, "broadcast")
            new_nodes.append(n)
        nodes = [onnx.NodeProto.FromString(x.SerializeToString()) for x in new_nodes]
        del g.node[:]
        g.node.extend(nodes)
    for o in m.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = target
    m.ir_version = max(m.ir_version, min_ir)
    return m, []


# ---------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------

def run_ppqfmt(src, dst, args):
    """(returncode, stderr text, parsed JSON report or None)."""
    p = subprocess.run([PPQFMT] + args + [src, "-o", dst], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    text = p.stderr.decode("utf-8", "replace")
    rep = None
    for line in text.splitlines():
        if line.lstrip().startswith("{"):
            try:
                rep = json.loads(line)
            except ValueError:
                pass
    if rep is None:
        try:
            rep = json.loads(text)
        except ValueError:
            pass
    return p.returncode, text, rep


def produce(src, dst, args, reference):
    if reference:
        m, warns = reference_convert(onnx.load(src))
        with open(dst, "wb") as f:
            f.write(m.SerializeToString())
        return 0, "", {"passes": [{"name": "reference", "warnings": warns}]}
    return run_ppqfmt(src, dst, args)


def test_run(model, label, args, src, workdir, reference, expect):
    name = "%s/%s" % (model, label)
    dst = os.path.join(workdir, "%s.%s.onnx" % (model.replace("/", "."), label))
    if os.path.exists(dst):
        os.remove(dst)
    try:
        rc, err, rep = produce(src, dst, args + ["--report=json"], reference)
    except subprocess.TimeoutExpired:
        report("%s: exit 0" % name, "timed out after %ds" % RUN_TIMEOUT)
        return None
    if not check("%s: exit 0" % name, lambda: None if rc == 0 and os.path.exists(dst) else
                 "exit %d: %s" % (rc, err.strip()[-300:])):
        return None
    inp = onnx.load(src)
    try:
        out = onnx.load(dst)
    except Exception as e:
        report("%s: output loads" % name, e)
        return None
    check("%s: full checker" % name, lambda: onnx.checker.check_model(out, full_check=True))
    kind, op = expect
    converted = default_opset(out) != default_opset(inp)
    if kind == "either":
        kind = "convert" if converted else ("cannot" if op else "keep")
        print("# %s: %s" % (name, "converted" if converted else "left as it was"))
    if kind == "convert":
        check("%s: opset raised (11, or 10 for Slice alone)" % name, check_opset_raised, inp, out)
        check("%s: no legacy forms left" % name, check_no_legacy, inp, out)
        check("%s: converted nodes" % name, check_converted, inp, out, label != "default")
    else:
        check("%s: nothing legacy rewritten" % name, check_kept_legacy, inp, out,
              label != "default")
    if kind == "cannot":
        check("%s: warning names %s" % (name, op), check_warns, rep, op)
    check("%s: graph interface" % name, testlib.check_interface, inp, out, True)
    check("%s: same numbers" % name, check_numbers, src, dst, inp)
    return dst


def test_model(m, workdir, reference):
    model, base = m.id, m.id.replace("/", ".")
    src = os.path.join(TESTDATA, m.path)
    out = test_run(model, "default", [], src, workdir, reference, m.expect)
    test_run(model, "legacy-passes", ["--passes=" + LEGACY_PASSES], src, workdir, reference,
             m.expect)
    if reference:
        return
    if out is not None:
        def idem():
            again = os.path.join(workdir, base + ".again.onnx")
            rc, err, _ = run_ppqfmt(out, again, [])
            if rc != 0:
                return "exit %d on its own output: %s" % (rc, err.strip()[-300:])
            return None if open(again, "rb").read() == open(out, "rb").read() else \
                "formatting the output again changes it"
        check("%s: idempotent" % model, idem)

        def determ():
            second = os.path.join(workdir, base + ".second.onnx")
            rc, err, _ = run_ppqfmt(src, second, [])
            if rc != 0:
                return "exit %d: %s" % (rc, err.strip()[-300:])
            return None if open(second, "rb").read() == open(out, "rb").read() else \
                "a second run gives different bytes"
        check("%s: deterministic" % model, determ)

    def none():
        dst = os.path.join(workdir, base + ".none.onnx")
        rc, err, _ = run_ppqfmt(src, dst, ["--passes=none"])
        if rc != 0:
            return "exit %d: %s" % (rc, err.strip()[-300:])
        return None if open(dst, "rb").read() == open(src, "rb").read() else \
            "--passes=none changed the bytes"
    check("%s: --passes=none is byte-identical" % model, none)


def discover(patterns):
    """(models, missing): a Model for each case the legacy passes' modules (those with an
    EXPECT) register and for each other .onnx in their folders (expected to convert); see
    passes.discover."""
    found, missing = passes.discover(TESTDATA, "EXPECT", patterns)
    return [Model(mid, path, mod.EXPECT.get(mid.split("/", 1)[1], CONVERT))
            for mod, mid, path, _ in found], missing


def main(argv):
    keep, reference, patterns = None, False, []
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--keep" and args:
            keep = args.pop(0)
        elif a == "--reference":
            reference = True
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            patterns.append(a)
    models, missing = discover(patterns)
    if not reference and not (os.path.isfile(PPQFMT) and os.access(PPQFMT, os.X_OK)):
        report("setup", "ppqfmt not found at %s (build it, or set PPQFMT)" % PPQFMT)
    elif not models:
        report("setup", "no models in %s (run scripts/make_testdata.py)" % TESTDATA)
    else:
        if not patterns:
            report("testdata complete", ("models missing from %s: %s" % (TESTDATA, missing))
                   if missing else None)
        workdir = keep or tempfile.mkdtemp(prefix="test_legacy_")
        os.makedirs(workdir, exist_ok=True)
        try:
            for m in models:
                test_model(m, workdir, reference)
        finally:
            if keep is None:
                shutil.rmtree(workdir, ignore_errors=True)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
