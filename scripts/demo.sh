#!/usr/bin/env bash
# Continues a prompt with the character-level demo model shipped in models/
# (see models/README.md). TXLM names another txlm binary; extra arguments go
# to `txlm generate` (e.g. -n 100, --seed 7, -p "...").
set -euo pipefail
cd "$(dirname "$0")/.."
TXLM=${TXLM:-build/tools/txlm}
exec "$TXLM" generate -m models/demo.txlm -p "The secret of life is" -n 300 --seed 1 \
  --temperature 0.7 --top-k 20 "$@"
