#!/usr/bin/env python3
"""test_python.py - the ppqfmt Python package (python/ppqfmt), installed from
this tree with pip into BUILD/pypkg (pyproject.toml, setup.py; the C library
is the one make test built), run with the onnx/onnxruntime of .deps/venv.

Checks: the same bytes as the command line ($PPQFMT) on every testdata model,
from a path and from bytes, and the same exit code as an exception's .code
where it refuses one; usage, input and output errors as exceptions; ModelProto
in, ModelProto out (equal to onnx's reading of the CLI's output, passing the
full checker); external data through paths (kept, and --external-data); the
report dict; the console script; and the README's Python example run as
written (ppqfmt.format, then onnxruntime's quantize_static).
The last line is "test_python: N passed, M failed".
"""
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(REPO, os.environ.get("BUILD", "build"))
PPQFMT = os.path.join(REPO, os.environ.get("PPQFMT", "build/ppqfmt"))
PKG = os.path.join(BUILD, "pypkg")
passed = failed = 0


def check(ok, what):
    global passed, failed
    print(("ok " if ok else "FAIL ") + what)
    passed, failed = passed + bool(ok), failed + (not ok)


def install():
    """pip install . --target PKG, reusing make test's build of the library."""
    env = dict(os.environ, PPQFMT_BUILD_DIR=os.path.relpath(BUILD, REPO))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--upgrade",
                    "--disable-pip-version-check", "--target", PKG, REPO],
                   check=True, env=env, cwd=REPO)
    sys.path.insert(0, PKG)


def cli(args, out):
    """The command line's exit code and output bytes (None if it wrote none)."""
    rc = subprocess.run([PPQFMT, "-q", *args, "-o", out], capture_output=True).returncode
    data = open(out, "rb").read() if rc == 0 else None
    if os.path.exists(out):
        os.remove(out)
    return rc, data


def test_same_as_cli(ppqfmt, tmp):
    models = sorted(os.path.join(d, f) for d, _, fs in os.walk(os.path.join(REPO, "testdata"))
                    for f in fs if f.endswith(".onnx"))
    bad = []
    for path in models:
        rc, want = cli([path], os.path.join(tmp, "cli.onnx"))
        out = os.path.join(tmp, "py.onnx")
        try:
            got_bytes = ppqfmt.format(open(path, "rb").read()) if rc == 0 else None
            ppqfmt.format(path, output=out)
            got_path = open(out, "rb").read()
            os.remove(out)
            code = 0
        except ppqfmt.Error as e:
            code, got_bytes, got_path = e.code, None, None
        uses_external = b"external_data" in open(path, "rb").read() or b"location" in open(
            path, "rb").read()
        same = code == rc and got_path == want and (got_bytes == want or uses_external)
        if not same:
            bad.append(os.path.relpath(path, REPO))
    check(not bad, f"{len(models)} testdata models: the command line's bytes and codes "
          f"{'' if not bad else bad[:5]}")


def test_errors(ppqfmt, tmp):
    sample = os.path.join(REPO, "testdata/sample.onnx")
    for kwargs, cls, code, text in [
        ({"options": {"no-such-option": "1"}}, ppqfmt.UsageError, 1, "unknown option"),
        ({"target_opset": 99}, ppqfmt.UsageError, 1, "--target-opset=99"),
        ({"disable": ["fuse-bm"]}, ppqfmt.UsageError, 1, "did you mean 'fuse-bn'"),
    ]:
        try:
            ppqfmt.format(sample, output=os.path.join(tmp, "x.onnx"), **kwargs)
            check(False, f"{kwargs}: raises")
        except ppqfmt.Error as e:
            check(type(e) is cls and e.code == code and text in str(e), f"{kwargs}: {cls.__name__}")
    try:
        ppqfmt.format(b"not a model")
        check(False, "bad bytes raise")
    except ppqfmt.InputError as e:
        check(e.code == 2 and e.message.startswith("model bytes:"), "bad bytes: InputError (2)")
    try:
        ppqfmt.format(sample, output=os.path.join(tmp, "no-dir", "x.onnx"))
        check(False, "unwritable output raises")
    except ppqfmt.OutputError as e:
        check(e.code == 3, "an unwritable output: OutputError (3)")
    try:
        ppqfmt.format(sample)
        check(False, "a path without output= raises")
    except ppqfmt.UsageError as e:
        check(e.code == 1, "a path without output=: UsageError (1)")


def test_model_proto(ppqfmt, onnx, tmp):
    sample = os.path.join(REPO, "testdata/sample.onnx")
    rc, want = cli(["--target-opset=13", sample], os.path.join(tmp, "cli.onnx"))
    model = onnx.load(sample)
    got, report = ppqfmt.format(model, target_opset=13, report=True)
    check(isinstance(got, onnx.ModelProto) and got == onnx.load_from_string(want),
          "ModelProto in, ModelProto out: the command line's model")
    onnx.checker.check_model(got, full_check=True)
    check(model == onnx.load(sample), "the input ModelProto is left as it was")
    check(isinstance(report, dict) and "passes" in report, "report=True: the JSON report as a dict")


def test_external(ppqfmt, onnx, np, tmp):
    from onnx import helper, numpy_helper, TensorProto
    w = np.arange(4096, dtype=np.float32).reshape(64, 64)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
        [numpy_helper.from_array(w, "w")])
    src_dir, out_dir = os.path.join(tmp, "src"), os.path.join(tmp, "out")
    os.makedirs(src_dir), os.makedirs(out_dir)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save_model(model, os.path.join(src_dir, "m.onnx"), save_as_external_data=True,
                    location="m.bin", size_threshold=0)
    out = os.path.join(out_dir, "m.onnx")
    ret = ppqfmt.format(os.path.join(src_dir, "m.onnx"), output=out)
    loaded = onnx.load(out)
    check(ret == out and os.path.exists(os.path.join(out_dir, "m.bin")) and
          np.array_equal(numpy_helper.to_array(loaded.graph.initializer[0]), w),
          "external data through paths: the data file is copied beside the output")
    out2 = os.path.join(out_dir, "n.onnx")
    ppqfmt.format(os.path.join(src_dir, "m.onnx"), output=out2, external_data="n.bin")
    check(os.path.getsize(os.path.join(out_dir, "n.bin")) >= w.nbytes and
          np.array_equal(numpy_helper.to_array(onnx.load(out2).graph.initializer[0]), w),
          "external_data=: the weights in the new data file")


def test_console_script(tmp):
    env = dict(os.environ, PYTHONPATH=PKG)
    r = subprocess.run([sys.executable, "-m", "ppqfmt", "--version"], capture_output=True,
                       text=True, env=env)
    want = subprocess.run([PPQFMT, "--version"], capture_output=True, text=True).stdout
    script = os.path.join(PKG, "bin", "ppqfmt")
    r2 = subprocess.run([script, "--bogus"], capture_output=True, text=True, env=env)
    check(r.returncode == 0 and r.stdout == want and r2.returncode == 1 and
          "unknown option" in r2.stderr, "the ppqfmt console script is the command line")


class Reader:
    """Calibration data for the README example: a few random inputs."""

    def __init__(self, np, model_path):
        import onnxruntime
        inp = onnxruntime.InferenceSession(model_path).get_inputs()[0]
        rng = np.random.default_rng(0)
        self.data = iter([{inp.name: rng.standard_normal(inp.shape).astype(np.float32)}
                          for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


def test_readme_example(np, tmp):
    text = open(os.path.join(REPO, "README.md")).read()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    check(len([line for line in code.splitlines() if line.strip()]) <= 5,
          "the README's Python example is at most 5 lines")
    os.symlink(os.path.join(REPO, "testdata/sample.onnx"), os.path.join(tmp, "model.onnx"))
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        exec(compile(code, "README.md", "exec"),
             {"calibration_reader": Reader(np, "model.onnx")})
        import onnx
        q = onnx.load("model.int8.onnx")
        ops = {n.op_type for n in q.graph.node}
        check("QuantizeLinear" in ops and "DequantizeLinear" in ops,
              "the README example runs: a quantized model")
    finally:
        os.chdir(cwd)


def main():
    install()
    import numpy as np
    import onnx
    import ppqfmt
    with tempfile.TemporaryDirectory() as tmp:
        test_same_as_cli(ppqfmt, tmp)
        test_errors(ppqfmt, tmp)
        test_model_proto(ppqfmt, onnx, tmp)
        test_external(ppqfmt, onnx, np, tmp)
        test_console_script(tmp)
    with tempfile.TemporaryDirectory() as tmp:
        test_readme_example(np, tmp)
    print(f"test_python: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
