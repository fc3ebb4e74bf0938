#!/bin/bash
# What the matrix units (VK_KHR_cooperative_matrix) change in an f16 model's
# next-token distributions: `txlm compare` of the model's weights stored as
# f32 (an f32 model never takes the matrix units: the FP32 kernels) against
# the same weights stored as f16 (docs/performance.md, "Matrix units").
#
#   bench/matrix_units_accuracy.sh BUILD WORKDIR [TEXT]
#
# Two models: the demo model (f16, character-level) on models/demo_heldout.txt,
# and a synthetic wt103-shaped f16 model (bench/configs/wt103.json, seed 1)
# whose vocabulary is TEXT's words by frequency, padded to 267,735 symbols, on
# TEXT (default: the GNU GPL 3 of /usr/share/common-licenses, else the demo's
# held-out text). Where the device has no matrix units, or with
# TXLM_COOPMAT=0, both sides run the same FP32 kernels and the KL is 0.
# TXLM_RUN, where set, is put before the txlm commands: on the CPU, Mesa
# 26.2's lavapipe with the GPU kernels (the matrix units run only there):
#   TXLM_RUN="scripts/newer-vulkan.sh run" TXLM_GPU_KERNELS=1 TXLM_TEXEL=0 \
#     bench/matrix_units_accuracy.sh build /tmp/acc
set -eu
build=$1 work=$2
text=${3:-/usr/share/common-licenses/GPL-3}
[ -f "$text" ] || text=models/demo_heldout.txt
run=${TXLM_RUN:-}
mkdir -p "$work"
retype=$build/bench/retype_model
txlm=$build/tools/txlm

echo "== demo model (f16) on models/demo_heldout.txt"
$retype models/demo.txlm "$work/demo-as32.txlm" f32
$run "$txlm" compare -m "$work/demo-as32.txlm" -m models/demo.txlm models/demo_heldout.txt

echo "== synthetic wt103-shaped f16 model on $text"
python3 - "$text" "$work/wt103-vocab.txt" <<'PY'
import collections, sys
words = open(sys.argv[1], encoding="utf-8", errors="replace").read().split()
vocab = ["<eos>", "<unk>"] + [w for w, _ in collections.Counter(words).most_common()]
vocab += [f"w{i}" for i in range(len(vocab), 267735)]
open(sys.argv[2], "w").write("\n".join(vocab[:267735]) + "\n")
PY
[ -f "$work/wt103-f16.txlm" ] || $build/tools/txlm-pack --synthetic bench/configs/wt103.json --seed 1 \
  --vocab "$work/wt103-vocab.txt" --dtype f16 -o "$work/wt103-f16.txlm" > /dev/null
[ -f "$work/wt103-as32.txlm" ] || $retype "$work/wt103-f16.txlm" "$work/wt103-as32.txlm" f32
$run "$txlm" compare -m "$work/wt103-as32.txlm" -m "$work/wt103-f16.txlm" "$text"
