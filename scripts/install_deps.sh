#!/bin/sh
# install_deps.sh - install what building and testing ppqfmt needs, if missing:
# Debian packages (apt-get), onnxruntime-node (npm, into .deps/npm) and the
# pinned PyPI oracles (a venv in .deps/venv, made with $PYPI_PYTHON), the
# last two for the tests only. Quiet when everything is already there.
set -e
cd "$(dirname "$0")/.."

. scripts/apt_ensure.sh
# nodejs/npm may come from outside Debian (e.g. /usr/local); accept those.
NODE=""
command -v node >/dev/null 2>&1 || NODE="$NODE nodejs"
command -v npm >/dev/null 2>&1 || NODE="$NODE npm"
apt_ensure protobuf-c-compiler libprotobuf-c-dev libonnx-dev python3-onnx python3-numpy \
    libonnx-testdata valgrind $NODE

ORT=.deps/npm/node_modules/onnxruntime-node
ORT_VERSION=1.30.0 # the version the tests were checked with
if [ ! -f "$ORT/package.json" ]; then
    echo "installing onnxruntime-node into .deps/npm (test oracle)"
    mkdir -p .deps/npm
    [ -f .deps/npm/package.json ] || echo '{"name":"ppqfmt-test-deps","private":true}' > .deps/npm/package.json
    (cd .deps/npm && npm install --ignore-scripts --no-audit --no-fund --loglevel=error onnxruntime-node@$ORT_VERSION >/dev/null)
fi

# The pinned PyPI oracles (onnx's newest checker and backend node tests, the
# python onnxruntime), remade whenever scripts/requirements-test.txt changes.
venv_ensure .deps/venv scripts/requirements-test.txt "the PyPI test oracles"
# The Python package's tests: a venv where it is built and installed.
venv_ensure .deps/pyvenv python/requirements-test.txt "the Python package's test tools"
# setuptools as a wheel file, for the test that runs `pip install .` in a
# fresh venv with build isolation and no index (python/tests).
SETUPTOOLS=setuptools-80.9.0-py3-none-any.whl
[ -f .deps/wheels/$SETUPTOOLS ] ||
    .deps/pyvenv/bin/pip download -q --disable-pip-version-check --no-deps -d .deps/wheels \
        setuptools==80.9.0
