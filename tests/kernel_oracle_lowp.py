"""kernel_oracle_lowp.py - the interpreter's low-precision Cast, CastLike, QuantizeLinear and
DequantizeLinear (float8, float4e2m1, int4/uint4, int2/uint2) against the ONNX backend node
cases that kernel_oracle.py leaves out as outside ppqfmt's opsets.

onnx 1.23.2 generates these cases at its newest opset, 28. Their ops' versions after opset 25
(Cast-28, QuantizeLinear-28, DequantizeLinear-28) only add element types (float6) to those of
25, with the same attributes; so each such case is stamped at opset 25, checked by onnx's
checker there (its types are allowed at 25), and run as
kernel_oracle.py runs a case: --check-inputs on its data set and the test-only
--check-expected against its expected outputs (1e-5 + 1e-3 * max|expected|, integers exact,
NaN equal to NaN). A wrong result fails; a case the kernels decline (a value whose result
the spec leaves open: a float out of int4's range, a NaN to float4e2m1) is skipped, with its
reason printed.

    .deps/venv/bin/python tests/kernel_oracle_lowp.py [--filter SUBSTR]
Last line: "kernel_oracle_lowp: N passed, M failed, K skipped".
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import defs

import kernel_oracle as ko

OPS = ("Cast", "CastLike", "QuantizeLinear", "DequantizeLinear")
STAMP = 25


def same_attributes(op, opset):
    return set(defs.get_schema(op, STAMP).attributes) == set(defs.get_schema(op, opset).attributes)


def stampable(model):
    """Is model a case of OPS past ko.MAX_OPSET whose ops have the same attributes at STAMP?"""
    opset = ko.default_opset(model)
    if opset is None or opset <= ko.MAX_OPSET:
        return False
    types = {n.op_type for n in model.graph.node}
    return bool(types) and types <= set(OPS) and all(same_attributes(t, opset) for t in types)


def run(d):
    """(verdict, detail) of the case in folder d, stamped at STAMP."""
    path = os.path.join(d, "model.onnx")
    model = onnx.load(path)
    if not stampable(model):
        return None, None
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = STAMP
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as e:  # a type opset 25 does not allow: not this suite's case
        return "skip", "not valid at opset %d: %s" % (STAMP, str(e).splitlines()[0][:100])
    onnx.save(model, path)
    p = subprocess.run([ko.PPQFMT, "--dry-run", "-q", "--passes=none", "--check-inputs=" + d,
                        "--check-expected", path], capture_output=True, text=True, timeout=120)
    msg = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else ""
    if p.returncode == 0:
        return "ok", ""
    return ("skip" if p.returncode == 6 else "fail"), "exit %d: %s" % (p.returncode, msg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--filter")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ppqfmt-kernel-lowp-")
    counts = {"ok": 0, "fail": 0, "skip": 0}
    try:
        for name, d in ko.write_onnx_cases(tmp, args.filter):
            if d is None or not any(k in name for k in ("cast", "quantizelinear")):
                continue
            verdict, detail = run(d)
            if verdict is None:
                continue
            counts[verdict] += 1
            print("ok %s" % name if verdict == "ok" else "%s %s: %s" % (
                verdict.upper(), name, detail))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("kernel_oracle_lowp: %d passed, %d failed, %d skipped" % (
        counts["ok"], counts["fail"], counts["skip"]))
    return 1 if counts["fail"] or not counts["ok"] else 0


if __name__ == "__main__":
    sys.exit(main())
