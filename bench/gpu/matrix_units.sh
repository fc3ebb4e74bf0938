#!/bin/bash
# The matrix units (VK_KHR_cooperative_matrix) on a lent GPU, in one call of
# under 9 minutes: which fragment shape the device gave, the kernel tests with
# the matrix units required, the commands of a generated token counted on the
# device's own kernels (test_token_dispatches: a layer's dispatches and
# barriers, one stream and batches of 4 and 16), the GPU-relevant test
# suites, the accuracy of an f16 model on them against the FP32 kernels,
# `txlm bench` at batch 1 for f16 (with and without the matrix units) and
# q8_0 (evaluation, generation, and the weight bytes a generated token reads
# per second beside the device's copy rate) and --batch 1,2,4,8,16,32 for the
# wt103-large shape in f16 and q8_0 (evaluation at batch 32 among them),
# bench/compare.py against PyTorch on CUDA, and a TXLM_PROFILE=1 profile
# (docs/performance.md, "Matrix units" and "A token in fewer dispatches").
#
# Here (no GPU): bash bench/gpu/pack.sh (the release build, packed into
# .gpurun/; its cooperative-matrix kernels from the kept SPIR-V). There, from
# the repository root, .gl carried (the loader's and runtime libraries' .debs):
#   bash bench/gpu/matrix_units.sh [OUTDIR]        (OUTDIR: $OUT by default)
# Every step is bounded in time (the budgets below add up to 515 s); the logs
# come back as OUTDIR/matrix_units.tar.gz, with OUTDIR/summary.txt beside it.
set -u
out=${1:-${OUT:-/tmp/txlm-gpu}}
mkdir -p "$out"
logs=$(mktemp -d)
. bench/gpu/setup.sh
export PYTHONUNBUFFERED=1
summary=$out/summary.txt
: > "$summary"

# step NAME SECONDS COMMAND: COMMAND (a line of bash, the functions below
# exported to it) with its output in NAME.txt, its status and time in the summary
step() {
  local name=$1 limit=$2 t0=$SECONDS
  timeout "$limit" bash -c "$3" > "$logs/$name.txt" 2>&1
  local rc=$?
  echo "$name: rc $rc in $((SECONDS - t0)) s (limit $limit)" | tee -a "$summary"
}

info() {
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  $txlm devices
  echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"
}

# the kernel tests with the matrix units required, and the engine against the
# reference on them (f16 and q8_0 segments of 17-33 rows); no validation layer:
# one older than the extension (Debian 12's) turns them off
coopmat_tests() {
  TXLM_VALIDATION=0 TXLM_TEST_WANT_COOPMAT=1 build-gpu/tests/kernels/test_kernels
  echo "kernels rc $?"
  mkdir -p "$logs/ref"
  for c in long_segments_f16 long_segments_q8_0 div1_f16_one_head_128; do
    TXLM_VALIDATION=0 build-gpu/tests/ref/test_engine_ref "$logs/ref" "$c"
    echo "engine_ref $c rc $?"
  done
}

# the wt103-large shape in f16 and q8_0, as bench/compare.py packs them (seed 1)
pack_models() {
  mkdir -p $models
  for dt in f16 q8_0; do
    [ -f $models/wt103-$dt.txlm ] || build-gpu/tools/txlm-pack --synthetic bench/configs/wt103.json --seed 1 \
      --dtype $dt -o $models/wt103-$dt.txlm
  done
}

# a generated token's dispatches and barriers a layer, one stream and a batch's
# (a wt103 token: 18 layers' and the rest of the step, 8: the four clusters'
# gathers and projections); no validation layer, as above
dispatches() {
  mkdir -p "$logs/tok"
  TXLM_VALIDATION=0 build-gpu/tests/ref/test_token_dispatches "$logs/tok"
  echo "token_dispatches rc $?"
}

# batch 1 (f16 with and without the matrix units, q8_0; the table gives the
# weight bytes a generated token reads per second and the device's copy
# rate), then every batch size with them
batches() {
  local common="--mem-len 1600 --tgt-len 128 --tokens 512 --gen-tokens 32"
  for cm in 1 0; do
    echo "== f16, batch 1, TXLM_COOPMAT=$cm"
    TXLM_COOPMAT=$cm $txlm bench -m $models/wt103-f16.txlm --workloads eval,gen $common -r $((cm ? 3 : 1)) -o md
  done
  echo "== q8_0, batch 1"
  $txlm bench -m $models/wt103-q8_0.txlm --workloads eval,gen $common -r 3 -o md
  for dt in f16 q8_0; do
    echo "== $dt, --batch 1,2,4,8,16,32"
    $txlm bench -m $models/wt103-$dt.txlm --batch 1,2,4,8,16,32 --mem-len 1600 --tgt-len 128 --tokens 256 \
      --gen-tokens 16 -r 1 -o md
  done
}

profile() {
  for dt in f16 q8_0; do
    echo "== $dt"
    TXLM_PROFILE=1 $txlm bench -m $models/wt103-$dt.txlm --workloads eval,gen --mem-len 1600 --tgt-len 128 \
      --tokens 256 --gen-tokens 16 --reps 1
  done
}

export txlm models py logs
export -f info coopmat_tests dispatches pack_models batches profile
step info 15 info
step coopmat 45 coopmat_tests
step dispatches 20 dispatches
step suite 90 "$py bench/gpu/suite.py build-gpu/tests.json -j 12 --suites kernels,ref,e2e,batch,attention,scoring \
  --log $logs/suite.log"
step models 40 pack_models
step accuracy 60 "bash bench/matrix_units_accuracy.sh build-gpu $logs/acc"
step batch 120 batches
step compare 95 "$py bench/compare.py --build build-gpu --device cuda --python $py --precisions fp32,fp16 \
  --dtypes f32,f16,q8_0 --models wt103 --mem-len 1600 --tgt-len 128 --tokens 1024 --gen-tokens 64 --reps 1 \
  --vanilla ''"
step profile 30 profile
cp build-gpu/bench-results/results.json "$logs/compare.json" 2>/dev/null
rm -f "$logs"/acc/*.txlm "$logs"/acc/*vocab.txt
{ grep -E "cooperative matrices|no cooperative|rc [0-9]" "$logs/coopmat.txt"; grep -E "stream|layer:|FAIL|rc" "$logs/dispatches.txt"
  tail -3 "$logs/suite.txt"
  grep -E "KL|top-1|==" "$logs/accuracy.txt"; cat "$logs/batch.txt" "$logs/compare.txt"; } >> "$summary" 2>&1
tar -C "$logs" -czf "$out/matrix_units.tar.gz" .
cat "$summary"
