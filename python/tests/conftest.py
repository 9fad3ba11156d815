"""conftest.py - what the package's tests share: the package built into a
wheel by `python -m build` from this tree and installed with pip into the
venv the tests run in (.deps/pyvenv; make test builds the C library first and
the wheel reuses it, through PPQFMT_BUILD_DIR), the command line to compare
with, and the result line make test's run_all.sh adds up."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(REPO, os.environ.get("BUILD", "build"))
PPQFMT = os.path.join(REPO, os.environ.get("PPQFMT", "build/ppqfmt"))
SAMPLE = os.path.join(REPO, "testdata", "sample.onnx")


def build_env():
    """setup.py's make reuses make test's build instead of making its own."""
    return dict(os.environ, PPQFMT_BUILD_DIR=os.path.relpath(BUILD, REPO))


@pytest.fixture(scope="session")
def wheel():
    """The wheel `python -m build` makes, installed into this venv."""
    out = os.path.join(BUILD, "dist")
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out,
                    REPO], check=True, env=build_env(), cwd=REPO, stdout=subprocess.DEVNULL)
    (whl,) = glob.glob(os.path.join(out, "ppqfmt-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                    "--disable-pip-version-check", whl], check=True)
    return whl


@pytest.fixture(scope="session")
def ppqfmt(wheel):
    import ppqfmt
    assert os.path.dirname(ppqfmt.__file__) != os.path.join(REPO, "python", "ppqfmt"), \
        "the tests must use the installed package, not the source folder"
    return ppqfmt


def cli(args, out):
    """The command line's exit code and output bytes (None if it wrote none)."""
    rc = subprocess.run([PPQFMT, "-q", *args, "-o", out], capture_output=True).returncode
    data = open(out, "rb").read() if os.path.exists(out) else None
    if data is not None:
        os.remove(out)
    return rc, data


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    count = {k: len(stats.get(k, [])) for k in ("passed", "failed", "error", "skipped")}
    terminalreporter.write_line(f"test_python: {count['passed']} passed, "
                                f"{count['failed'] + count['error']} failed, "
                                f"{count['skipped']} skipped")
