#!/usr/bin/env bash
# Installs what is missing (Debian), builds txlm into build/, and runs the
# model shipped in models/.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for p in $(cat .ci/packages); do
  # only the tests need these (the PyTorch cross-checks, the Python package's pytest suite,
  # txlm-glib from JavaScript and Python: gjs and python3-gi bring GTK 3 and systemd, 85
  # packages and 41 MB more); those tests skip without them. python3-numpy, python3-pip and
  # python3-venv stay: the Python package (docs/python.md) installs and runs with them; so do
  # libglib2.0-dev, gobject-introspection and libgirepository1.0-dev (txlm-glib and its
  # typelib, docs/embedding.md: 25 packages, 9 MB). The GTK4 app and its display test and
  # the Qt example (GTK 4, Xvfb, xdotool, the desktop-file validators, Qt 6: some 300
  # packages, 110 MB to download, longer than the whole quick start) are one more line,
  # README's "Desktop"; their tests skip without them. The Debian packaging tools
  # (docs/packaging.md) only build the packages, which CI does.
  case $p in python3-torch|libopenblas0-pthread|python3-pytest|python3-pandas|python3-distributed|gjs|python3-gi) continue ;;
    libgtk-4-dev|libgl1-mesa-dri|xvfb|xauth|xdotool|desktop-file-utils|appstream|qt6-base-dev) continue ;;
    debhelper|dh-python|pybuild-plugin-pyproject|python3-setuptools|help2man|lintian|autopkgtest) continue ;; esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi

[ -d build ] || meson setup build > /dev/null
meson compile -C build > /dev/null

exec scripts/demo.sh
