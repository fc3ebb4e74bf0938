#!/usr/bin/env bash
# Remakes the attention pictures of the documentation (docs/img/attention*.png).
#   scripts/attention-pictures.sh [MODEL.txlm [TEXT [SEGMENT_LEN]]]
# Without arguments: the golden test model adaptive_word (random weights, so
# the pictures show the layout rather than learnt behaviour) and a text in its
# vocabulary. With a trained model, pass it and a sentence of its language.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x build/tools/txlm ] || { echo "build first: meson setup build && meson compile -C build" >&2; exit 1; }

model="${1:-}"
text="${2:-w12 w7 w3 w44 w5 w12 w7 w9 w100 w3 w250 w12 w7 w3 w44 w5 w12 w7 w9 w100 w3 w8 w17 w12 w7 w3 w44 w5 w12 w7 w9 w100}"
if [ -z "$model" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  model="$tmp/adaptive_word.txlm"
  build/tools/txlm-pack tests/golden/adaptive_word -o "$model" > /dev/null
fi
txlm=build/tools/txlm
# a short last segment keeps a long-context model's pictures legible
seg=(); [ -z "${3:-}" ] || seg=(--segment-len "$3")
$txlm attention -m "$model" -p "$text" "${seg[@]}" -o docs/img/attention.png
$txlm attention -m "$model" -p "$text" "${seg[@]}" --layer all --head all --by-distance -o docs/img/attention-distance.png
$txlm attention -m "$model" -p "$text" "${seg[@]}" --layer last --head 0 --terms --grid-cols 3 -o docs/img/attention-terms.png
ls -l docs/img/attention*.png
