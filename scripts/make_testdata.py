#!/usr/bin/python3
"""Generate the test models of tests/test_passes.py: every model each pass
module in tests/passes/ registers, into testdata/<pass>/<case>.onnx
(testdata/sample.onnx for `make run`).

Usage: scripts/make_testdata.py [OUTDIR] [PATTERN ...]
  OUTDIR   default: testdata/ next to scripts/ (an argument with a '/' or an
           existing directory is taken as OUTDIR)
  PATTERN  only the models whose <pass>/<case> contains one of them

Deterministic (see tests/passes/build.py): running it twice gives the same
bytes. Run with Debian's python (/usr/bin/python3, python3-onnx 1.12).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import passes  # noqa: E402
from passes import build  # noqa: E402


def main(argv):
    outdir, patterns = os.path.join(HERE, "..", "testdata"), []
    for a in argv[1:]:
        if "/" in a or os.path.isdir(a):
            outdir = a
        else:
            patterns.append(a)
    cases = [c for mod in passes.modules() for c in mod.MODELS.cases
             if not patterns or any(p in "%s/%s" % (mod.MODELS.folder, c.case) for p in patterns)]
    n = build.write(cases, outdir)
    print("make_testdata: wrote %d models to %s" % (n, os.path.normpath(outdir)))


if __name__ == "__main__":
    main(sys.argv)
