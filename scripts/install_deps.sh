#!/bin/sh
# install_deps.sh - install what building and testing ppqfmt needs, if missing:
# Debian packages (apt-get) and onnxruntime-node (npm, into .deps/npm, the
# test oracle only). Quiet when everything is already there.
set -e
cd "$(dirname "$0")/.."

PKGS="protobuf-c-compiler libprotobuf-c-dev libonnx-dev python3-onnx python3-numpy libonnx-testdata nodejs npm"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# nodejs/npm may come from outside Debian (e.g. /usr/local); accept those.
command -v node >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ nodejs//')
command -v npm >/dev/null 2>&1 && missing=$(echo "$missing" | sed 's/ npm//')
if [ -n "$missing" ]; then
    echo "installing Debian packages:$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

ORT=.deps/npm/node_modules/onnxruntime-node
if [ ! -f "$ORT/package.json" ]; then
    echo "installing onnxruntime-node into .deps/npm (test oracle)"
    mkdir -p .deps/npm
    [ -f .deps/npm/package.json ] || echo '{"name":"ppqfmt-test-deps","private":true}' > .deps/npm/package.json
    (cd .deps/npm && npm install --ignore-scripts --no-audit --no-fund --loglevel=error onnxruntime-node >/dev/null)
fi
