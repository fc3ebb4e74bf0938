#!/bin/sh
# Batch-size tables (docs/performance.md, "Several streams per pass"):
# `txlm bench --batch` on the wt103- and base-shaped synthetic models,
# made once with txlm-pack --synthetic into build/bench-models (as
# compare.py does). Usage: bench/batch_table.sh [BUILD_DIR] [BATCHES]
set -eu
build=${1:-build}
batches=${2:-1,2,4,8}
models=$build/bench-models
mkdir -p "$models"
for m in wt103-f32 wt103-q8_0 base-f32 base-q8_0; do
    cfg=${m%-*} dt=${m#*-}
    [ -f "$models/$m.txlm" ] || "$build/tools/txlm-pack" --synthetic "bench/configs/$cfg.json" --seed 1 --dtype "$dt" \
        -o "$models/$m.txlm" >/dev/null
    echo "### $m"
    echo
    "$build/tools/txlm" bench -m "$models/$m.txlm" --batch "$batches" --mem-len 640 --tgt-len 128 --tokens 256 \
        --gen-tokens 32 -r 1 -o md
    echo
done
