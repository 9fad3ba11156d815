#!/bin/sh
# install_model_deps.sh - install what the real-network tests need, if missing:
# Debian's torch and torchvision (large), used only by scripts/export_torchvision.py
# to export test models under /usr/bin/python3. Quiet when they are already there.
set -e
cd "$(dirname "$0")/.."

PKGS="python3-torch python3-torchvision"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing Debian packages:$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi
