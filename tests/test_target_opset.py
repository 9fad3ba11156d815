#!/usr/bin/python3
"""--target-opset and the independence of the legacy-form passes, on testdata/target_opset/.

The models, one per adapted operator, and the tables of runs (CASES, CANNOT, LEGACY_RUNS) with
the structure checks are in tests/passes/target_opset.py (scripts/make_testdata.py writes the
models). For each case in CASES ppqfmt runs twice on the model:
  - `--passes=none --target-opset=N`: the raise alone. Exit 0, default-domain opset N, IR version
    at least the one of N's onnx release, full checker, and the adapted node checked against the
    INPUT node's attributes (which attribute became which input, with which values and type);
  - `--target-opset=N` with the default passes: exit 0, full checker, and onnxruntime gives the
    same outputs for input and output on random inputs (scripts/ortcheck.py).
Models that cannot be adapted must give exit 2, one `ppqfmt:` line naming the operator, and no
output file. The legacy-pass cases (no --target-opset) check which opset the passes raise to and
whether a Clip-6 with clip off stays. Last line: `test_target_opset: N passed, M failed`.
Run with Debian's /usr/bin/python3 (python3-onnx).
"""
import os
import sys
import tempfile

import onnx

import testlib  # tests/, beside this file
from passes.target_opset import (CANNOT, CASES, LEGACY_RUNS, REFERENCES, attr, default_opset,
                                 expect, node)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTDATA = os.path.join(REPO, "testdata", "target_opset")
PPQFMT = os.environ.get("PPQFMT", os.path.join(REPO, "build", "ppqfmt"))

T = testlib.Tally("test_target_opset")
report, check = T.report, T.check
ORT = testlib.ortcheck()


def run(args):
    return testlib.run_ppqfmt(PPQFMT, args)


def raised(name, target, chk, tmp):
    src = os.path.join(TESTDATA, name + ".onnx")
    inp = onnx.load(src)
    label = "%s@%d" % (name, target)
    dst = os.path.join(tmp, label + ".onnx")
    out = testlib.check_raise_alone(check, PPQFMT, label, src, dst, target, testlib.IR_OF_OPSET[target])
    if out is None:
        return
    if chk:
        check("%s: adapted node" % label, chk, inp, out)
    again = os.path.join(tmp, label + ".again.onnx")
    check("%s: raising again changes nothing" % label, lambda: None if run(
        ["--passes=none", "--target-opset=%d" % target, dst, "-o", again])[0] == 0 and
        open(again, "rb").read() == open(dst, "rb").read() else "output changed")
    def equiv(src, full):
        ok, msg = reference_equiv(name, src, full) if name in REFERENCES else ORT.equiv(src, full)
        return None if ok else msg
    testlib.check_default_passes(check, PPQFMT, label, src, os.path.join(tmp, label + ".full.onnx"),
                                 target, equiv)


def reference_equiv(name, src, out):
    """onnxruntime on the raised output against the numpy meaning of the original (it runs
    nothing below opset 7)."""
    feeds = ORT.random_inputs(src)
    got = ORT.run_models([{'model': out, 'inputs': feeds}])[0]
    return (False, got) if isinstance(got, str) else ORT.compare(REFERENCES[name](feeds), got)


def cannot(name, target, word, tmp):
    testlib.check_refused(check, PPQFMT, name, os.path.join(TESTDATA, name + ".onnx"),
                          os.path.join(tmp, name + ".onnx"), target, word)


def legacy_passes(tmp):
    """Without --target-opset: which opset the legacy passes raise to, and Clip-6 with clip
    off."""
    for name, args, opset, kept in LEGACY_RUNS:
        label = "%s %s" % (name, " ".join(args) or "(default)")
        src = os.path.join(TESTDATA, name + ".onnx")
        dst = os.path.join(tmp, name + "_".join(args) + ".legacy.onnx")
        rc, err = run(args + [src, "-o", dst])
        if not check("%s: exit 0" % label, lambda: None if rc == 0 else err):
            continue
        out = onnx.load(dst)

        def shape():
            clip = node(out, "Clip")
            has = attr(clip, "min") is not None and attr(clip, "max") is not None
            expect(default_opset(out) == opset, "opset %d, expected %d" %
                   (default_opset(out), opset))
            expect(has == kept, "Clip-6 attributes %s" % ("gone" if kept else "kept"))
            expect(all(attr(n, "starts") is None for n in out.graph.node), "Slice-1 left")
        check("%s: opset %d, Clip-6 %s" % (label, opset, "kept" if kept else "adapted"), shape)
        check("%s: full checker" % label, onnx.checker.check_model, out, True)
        ok, msg = ORT.equiv(src, dst)
        check("%s: onnxruntime same outputs" % label, lambda: None if ok else msg)


def above(tmp):
    src = os.path.join(TESTDATA, "above13.onnx")
    dst = os.path.join(tmp, "above13.onnx")
    rc, err = run(["--passes=none", "--target-opset=11", src, "-o", dst])
    check("above13 --target-opset=11: lowered (Relu only gained types), exit 0, no warning",
          lambda: None if (rc == 0 and "warning" not in err and
                           testlib.default_opset(onnx.load(dst)) == 11) else
          "exit %d, %r" % (rc, err))


def passes_none(tmp):
    """Without --target-opset, --passes=none gives every model back byte for byte."""
    for name in testlib.models_in(TESTDATA):
        src = os.path.join(TESTDATA, name + ".onnx")
        dst = os.path.join(tmp, name + ".none.onnx")
        rc, err = run(["--passes=none", src, "-o", dst])
        check("%s: --passes=none is byte-identical" % name, lambda: None if rc == 0 and open(
            dst, "rb").read() == open(src, "rb").read() else "exit %d %s" % (rc, err))


def main():
    if not os.access(PPQFMT, os.X_OK):
        report("setup", "ppqfmt not found at %s" % PPQFMT)
        return T.summary()
    with tempfile.TemporaryDirectory(prefix="target_opset_") as tmp:
        for name, target, chk in CASES:
            raised(name, target, chk, tmp)
        for name, target, word in CANNOT:
            cannot(name, target, word, tmp)
        legacy_passes(tmp)
        above(tmp)
        passes_none(tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
