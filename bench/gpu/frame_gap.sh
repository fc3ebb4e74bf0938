#!/bin/bash
# Sharing a GPU with a renderer (docs/performance.md, "Sharing a GPU with a
# renderer"), on a lent GPU, in one call of about 6 minutes:
#   - bench/frame_gap: a program's frame loop (a clear every 16.7 ms on its
#     own device and queue) while txlm scores 128-token segments of the
#     wt103 shape in f16 (mem 640): the longest gap between frames, its 99th
#     percentile, late frames and txlm's tokens/s, alone, with txlm on the
#     program's queue (whole segments; at most 64 and 16 dispatches a
#     submission) and with txlm on a device of its own (normal and low
#     priority, whole and 16), 3 rounds of 6 s alternating them;
#   - txlm bench --submit-dispatches 64 and 16: what the bound costs,
#     eval and generation, repetitions alternating with whole segments.
#
# Here (no GPU): bash bench/gpu/pack.sh (the release build, frame_gap in it,
# packed into .gpurun/). There, from the repository root, .gl carried:
#   bash bench/gpu/frame_gap.sh [OUTDIR]           (OUTDIR: $OUT by default)
# Every step is bounded in time (the limits add up to 360 s); the logs come
# back in OUTDIR, with OUTDIR/summary.txt.
set -u
out=${1:-${OUT:-/tmp/txlm-gpu}}
mkdir -p "$out"
. bench/gpu/setup.sh
summary=$out/summary.txt
: > "$summary"

# step NAME SECONDS COMMAND: its output in OUTDIR/NAME.txt, status and time in the summary
step() {
  local name=$1 limit=$2 t0=$SECONDS
  timeout "$limit" bash -c "$3" > "$out/$name.txt" 2>&1
  echo "$name: rc $? in $((SECONDS - t0)) s (limit $limit)" | tee -a "$summary"
}

info() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  $txlm devices
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"
}

model() {
  mkdir -p $models
  [ -f $models/wt103-f16.txlm ] || build-gpu/tools/txlm-pack --synthetic bench/configs/wt103.json --seed 1 \
    --dtype f16 -o $models/wt103-f16.txlm
}

gaps() {
  build-gpu/bench/frame_gap -m $models/wt103-f16.txlm --mem-len 640 --tgt-len 128 --seconds 6 --rounds 3 \
    --configs alone,shared,shared:64,shared:16,own,own:16,own-low,own-low:16
}

split_cost() {
  for n in 64 16; do
    $txlm bench -m $models/wt103-f16.txlm --submit-dispatches $n --mem-len 640 --tgt-len 128 --tokens 512 \
      --gen-tokens 64 -r 5 -o md
  done
}

export txlm models
export -f info model gaps split_cost
step info 15 info
step model 40 model
step frame_gap 230 gaps
step split_cost 75 split_cost
{ cat "$out/frame_gap.txt"; cat "$out/split_cost.txt"; } >> "$summary" 2>&1
cat "$summary"
