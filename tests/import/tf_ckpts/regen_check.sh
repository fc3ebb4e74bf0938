#!/usr/bin/env bash
# Regenerates the TensorFlow checkpoints with NumPy (gen.py) into a fresh
# folder and runs the same check as on the committed ones, so the
# committed files are what the generator makes. Skipped (77) without NumPy.
#   usage: regen_check.sh CHECKER TXLM_PACK TXLM
set -euo pipefail
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "no NumPy for /usr/bin/python3: skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$here/gen.py" "$work"
for f in $(cd "$here" && find . -type f ! -name '*.py' ! -name '*.sh' ! -name '__pycache__' | grep -v __pycache__); do
  cmp -s "$here/$f" "$work/$f" || { echo "$f: the committed file is not what gen.py writes"; exit 1; }
done
"$1" "$2" "$3" "$work"
