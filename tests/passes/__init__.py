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


def discover(testdata, key, patterns=()):
    """(found, missing) for the pass modules that have the attribute key
    (SPECS: tests/test_passes.py; EXPECT: tests/test_legacy.py). found:
    (module, id, path, registered) for each case a module registers and each
    other .onnx in its folder (registered False), id <module>/<case>, path
    relative to testdata, only those whose id contains one of patterns when
    any are given; missing: the registered paths not in testdata."""
    found, missing = [], []
    for mod in modules():
        if not hasattr(mod, key):
            continue
        name = mod.__name__.split(".")[-1]
        cases = {c.path: c.case for c in mod.MODELS.cases}
        folder = mod.MODELS.folder
        d = os.path.join(testdata, folder)
        on_disk = {os.path.join(folder, f): f[:-5]
                   for f in (os.listdir(d) if os.path.isdir(d) else []) if f.endswith(".onnx")}
        for path in sorted(set(cases) | set(on_disk)):
            if not os.path.exists(os.path.join(testdata, path)):
                missing.append(path)
                continue
            mid = "%s/%s" % (name, cases.get(path, on_disk.get(path)))
            if not patterns or any(p in mid for p in patterns):
                found.append((mod, mid, path, path in cases))
    return found, missing
