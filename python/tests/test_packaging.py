"""test_packaging.py - the package as users get it: the wheel `python -m
build` makes (the library, the command line, the console script), `pip
install .` from the clone into a fresh venv, the console script being the
command line, and the README's Python example run as written (ppqfmt.format,
then onnxruntime's quantize_static)."""
import os
import re
import subprocess
import sys
import zipfile

import numpy as np
import onnx

from conftest import PPQFMT, REPO, SAMPLE, build_env

WHEELS = os.path.join(REPO, ".deps", "wheels")


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for want in ("ppqfmt/__init__.py", "ppqfmt/_lib.py", "ppqfmt/libppqfmt.so", "ppqfmt/ppqfmt"):
        assert want in names
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "ppqfmt = ppqfmt.__main__:main" in zipfile.ZipFile(wheel).read(entry).decode()
    assert re.search(r"-cp\d+-cp\d+-linux_x86_64\.whl$|-py3-none-linux_x86_64\.whl$",
                     os.path.basename(wheel)), "a platform wheel: it carries compiled code"


def test_wheel_needs_only_libc(wheel, tmp_path):
    """protobuf-c is linked in: the compiled files need glibc only."""
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
    for name in ("libppqfmt.so", "ppqfmt"):
        dynamic = subprocess.run(["readelf", "-d", str(tmp_path / "ppqfmt" / name)],
                                 capture_output=True, text=True, check=True).stdout
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
        assert needed and needed <= {"libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"}, (name, needed)


def test_pip_install_in_fresh_venv(tmp_path):
    """`pip install .` as a user runs it, in a new venv: build isolation, its
    setuptools from the deps step's wheel folder (no index); then the package
    and the console script installed there format a model."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index", "--find-links",
                    WHEELS, "--disable-pip-version-check", REPO], check=True, env=build_env(),
                   cwd=REPO)
    code = ("import ppqfmt, sys; d = ppqfmt.format(open(sys.argv[1], 'rb').read()); "
            "print(ppqfmt.__file__, len(d))")
    r = subprocess.run([str(venv / "bin" / "python"), "-c", code, SAMPLE], capture_output=True,
                       text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(str(venv)) and int(r.stdout.split()[1]) > 0
    out = str(tmp_path / "out.onnx")
    r = subprocess.run([str(venv / "bin" / "ppqfmt"), SAMPLE, "-o", out])
    assert r.returncode == 0 and os.path.getsize(out) > 0


def test_console_script(ppqfmt):
    want = subprocess.run([PPQFMT, "--version"], capture_output=True, text=True).stdout
    r = subprocess.run([sys.executable, "-m", "ppqfmt", "--version"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stdout == want
    script = os.path.join(os.path.dirname(sys.executable), "ppqfmt")
    r = subprocess.run([script, "--bogus"], capture_output=True, text=True)
    assert r.returncode == 1 and "unknown option" in r.stderr


class Reader:
    """Calibration data for the README example: a few random inputs."""

    def __init__(self, model_path):
        import onnxruntime
        inp = onnxruntime.InferenceSession(model_path).get_inputs()[0]
        rng = np.random.default_rng(0)
        self.data = iter([{inp.name: rng.standard_normal(inp.shape).astype(np.float32)}
                          for _ in range(4)])

    def get_next(self):
        return next(self.data, None)


def test_readme_example(ppqfmt, tmp_path, monkeypatch):
    text = open(os.path.join(REPO, "README.md")).read()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert len([line for line in code.splitlines() if line.strip()]) <= 5
    os.symlink(SAMPLE, tmp_path / "model.onnx")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {"calibration_reader": Reader("model.onnx")})
    ops = {n.op_type for n in onnx.load("model.int8.onnx").graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
