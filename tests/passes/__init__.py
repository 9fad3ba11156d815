"""tests/passes: one module per pass, named after the pass (its C file in
formatter/; '-' in the pass name is '_' here), plus pipeline (models that run
several passes at once), legacy (the legacy-form passes together) and
target_opset (--target-opset). Each module holds the builders of its test
models (registered in MODELS, written to testdata/<module>/<case>.onnx by
scripts/make_testdata.py) and what each must look like after formatting:
SPECS, checked by tests/test_passes.py (PASS: the pass name; None: the
default pipeline only); or EXPECT, checked by tests/test_legacy.py (clip, pad,
slice, resize, legacy); target_opset's tables are tests/test_target_opset.py's.
build.py and common.py hold what they share."""
import importlib
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = ("__init__", "build", "common")


def names():
    """The pass modules' names, sorted."""
    return sorted(f[:-3] for f in os.listdir(HERE)
                  if f.endswith(".py") and f[:-3] not in SHARED)


def modules():
    """The pass modules, imported, in names() order."""
    return [importlib.import_module("passes." + n) for n in names()]
