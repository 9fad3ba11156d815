#!/bin/sh
# install_model_deps.sh - install what the real-network tests need, if missing:
# Debian's torch and torchvision (large), used only by scripts/export_torchvision.py
# to export test models under /usr/bin/python3. Quiet when they are already there.
set -e
cd "$(dirname "$0")/.."

. scripts/apt_ensure.sh
apt_ensure python3-torch python3-torchvision
