#!/bin/sh
# txlm info on a packed golden case: every tensor line gives its dtype, and
# the per-dtype and overall byte totals add up to the tensor lines; the
# 1.1 and 1.2 fields are shown.
# usage: test_info.sh TXLM TXLM_PACK CASE_DIR WORK_DIR
set -eu
txlm=$1 pack=$2 dir=$3 work=$4
mkdir -p "$work"
model="$work/info-q8_0.txlm"
"$pack" "$dir" --dtype q8_0 -o "$model"
"$txlm" info -m "$model" > "$work/info.txt"
rm -f "$model"
# an HF checkpoint keeps txlm's empty start and the authors' same_length rule
grep -q '^  same_length_rule 0 (the authors.* zero_memory 0 (a session starts from an empty memory)$' "$work/info.txt" ||
    { echo "FAIL: txlm info does not show same_length_rule 0 and zero_memory 0"; exit 1; }
awk '
  /^  [^ ]+ +(f32|f16|q8_0|q4_0) +\[/ { n[$2]++; b[$2] += $(NF - 1); all += $(NF - 1); lines++ }
  /^total tensor bytes: / { total = $4 }
  /^  (f32|f16|q8_0|q4_0) +[0-9]+ tensors, / { sn[$1] = $2; sb[$1] = $4 }
  /^tensors \(/ { want = substr($2, 2) + 0 }
  END {
    bad = lines == 0 || lines != want || total != all || n["q8_0"] == 0 || n["f32"] == 0
    for (d in n) if (sn[d] != n[d] || sb[d] != b[d]) bad = 1
    for (d in sn) if (!(d in n)) bad = 1
    if (bad) { print "FAIL: txlm info totals do not add up"; exit 1 }
    print "ok: " lines " tensors, " all " bytes"
  }' "$work/info.txt"
