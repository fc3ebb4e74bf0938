#!/usr/bin/env bash
# Regenerates the training-code checkpoints with PyTorch (gen.py) into a
# fresh folder and runs the same check as on the committed ones, so the
# committed files are what the generator makes. Skipped (77) without torch.
#   usage: regen_check.sh CHECKER TXLM_PACK TXLM
set -euo pipefail
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "no PyTorch for /usr/bin/python3: skipped"; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -W ignore "$here/gen.py" "$work"
"$1" "$2" "$3" "$work"
