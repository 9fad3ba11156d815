# apt_ensure.sh - sourced by the install scripts. `apt_ensure PKG...` installs
# those of the Debian packages PKG that are missing; quiet when none is.
# `venv_ensure VENV REQ WHAT` makes the Python venv VENV hold the pins of the
# requirements file REQ (WHAT says what for), remaking it whenever REQ changes.
apt_ensure() {
    missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    [ -n "$missing" ] || return 0
    echo "installing Debian packages:$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
}

# The venv is made with $PYPI_PYTHON (the Makefile's, python3 by default); a
# Python without venv support falls back to Debian's with python3-venv.
venv_ensure() {
    mark="$1/$(basename "$2")"
    cmp -s "$2" "$mark" && return 0
    echo "installing $3 into $1 ($2)"
    rm -rf "$1"
    if ! "${PYPI_PYTHON:-python3}" -m venv "$1" 2>/dev/null; then
        rm -rf "$1"
        apt_ensure python3-venv
        /usr/bin/python3 -m venv "$1"
    fi
    "$1/bin/pip" install -q --disable-pip-version-check -r "$2"
    cp "$2" "$mark"
}
