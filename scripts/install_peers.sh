#!/bin/sh
# install_peers.sh - install the tools make bench-peers compares ppqfmt with, at the versions
# pinned in scripts/requirements-peers.txt, into their own venv .deps/peers (never .deps/venv,
# the test oracles'), made with $PYPI_PYTHON (the Makefile's, python3 by default; Debian's
# with python3-venv as the fallback). Quiet when the venv already holds this file's pins; a
# changed file remakes it. ppq is not installed: see scripts/bench_peers.py (PPQ_SKIP).
set -e
cd "$(dirname "$0")/.."

. scripts/apt_ensure.sh
venv_ensure .deps/peers scripts/requirements-peers.txt "the peers"
