#!/bin/bash
# The GPU run in one call, on a machine that has a Vulkan driver and PyTorch
# with CUDA but no build tools: run from the repository root with a release
# build in build-gpu (configured here at the same absolute path, its test list
# in build-gpu/tests.json) and the runtime libraries as .debs in .gl/.
#
#   bash bench/gpu/run.sh STEPS [OUTDIR]    STEPS: any of info,suite,bench,profile
#
# Every step writes its log to OUTDIR and is bounded in time, so one stuck step
# still leaves the others' results.
set -u
steps=",$1,"; out=${2:-${OUT:-/tmp/txlm-gpu}}; mkdir -p "$out"
. bench/gpu/setup.sh

if [[ $steps == *,info,* ]]; then
  { nvidia-smi; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
    echo "VK_DRIVER_FILES=${VK_DRIVER_FILES:-}"; $txlm devices
    TXLM_VALIDATION=1 timeout 60 $txlm generate -m models/demo.txlm -p "The " -n 40 --seed 1; echo "rc $?"
  } > "$out/info.txt" 2>&1
  tail -25 "$out/info.txt"
fi
if [[ $steps == *,suite,* ]]; then
  timeout ${SUITE_S:-200} $py bench/gpu/suite.py build-gpu/tests.json -j 12 --skip install --log "$out/suite.log" > "$out/suite.txt" 2>&1
  echo "suite rc $?"; grep -v "^PASS" "$out/suite.txt" | tail -60
fi
if [[ $steps == *,bench,* ]]; then
  # the device's copy rate as PyTorch sees it, beside txlm's own (vkCmdCopyBuffer)
  $py -c "
import time, torch
x = torch.empty(256 << 20, dtype=torch.uint8, device='cuda'); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
torch.cuda.synchronize(); t = time.perf_counter()
for _ in range(20): y.copy_(x)
torch.cuda.synchronize(); r = 20 * x.numel() / (time.perf_counter() - t)
print(f'PyTorch device copy: {r / 1e9:.1f} GB/s copied ({2 * r / 1e9:.1f} GB/s read + written)')" > "$out/copy.txt" 2>&1
  cat "$out/copy.txt"
  timeout ${BENCH_S:-270} $py bench/compare.py --build build-gpu --device cuda --python $py --precisions fp32,tf32,fp16 \
    --dtypes f32,f16,q8_0 --models wt103 --mem-len 1600 --tgt-len 128 --tokens 1024 --gen-tokens 64 \
    --reps ${REPS:-2} --vanilla '' > "$out/bench.md" 2> "$out/bench.log"
  echo "bench rc $?"; cp build-gpu/bench-results/results.json "$out/bench.json" 2>/dev/null
  cat "$out/bench.md"; tail -5 "$out/bench.log"
fi
if [[ $steps == *,profile,* ]]; then
  for dt in f16 q8_0; do
    [ -f $models/wt103-$dt.txlm ] || build-gpu/tools/txlm-pack --synthetic bench/configs/wt103.json --seed 1 \
      --dtype $dt -o $models/wt103-$dt.txlm
    TXLM_PROFILE=1 timeout 60 $txlm bench -m $models/wt103-$dt.txlm --workloads eval,gen --mem-len 1600 \
      --tgt-len 128 --tokens 256 --gen-tokens 16 --reps 1 > "$out/profile-$dt.txt" 2>&1
    echo "profile $dt rc $?"
  done
  for dt in f32 q8_0; do
    timeout 60 build-gpu/bench/bench_gen_profile $dt 5 > "$out/genprof-$dt.txt" 2>&1; echo "gen profile $dt rc $?"
  done
  head -c 2500 "$out/profile-f16.txt"; cat "$out/genprof-q8_0.txt" | tail -30
fi
