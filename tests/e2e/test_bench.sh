#!/usr/bin/env bash
# txlm bench on a small packed golden model: every workload runs, the JSON
# carries every figure (positive numbers), the vanilla table has one row
# per attention length, and bad options fail with a message.
# usage: test_bench.sh TXLM TXLM_PACK GOLDEN_CASE_DIR
set -euo pipefail
txlm=$1 pack=$2 case_dir=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$pack" "$case_dir" -o "$tmp/model.txlm" > /dev/null
printf '\x05\x00\x00\x00\x09\x00\x00\x00\x0c\x00\x00\x00\x07\x00\x00\x00' > "$tmp/ids.i32"
"$txlm" bench -m "$tmp/model.txlm" --json --workloads load,eval,gen,vanilla --mem-len 6 --tgt-len 4 --tokens 8 \
    --gen-tokens 3 --reps 2 --attn-lens 5,9 --ids "$tmp/ids.i32" > "$tmp/out.json"
python3 - "$tmp/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k in ["context_s", "load_s_median", "eval_tokens_per_s_median", "gen_tokens_per_s_median"]:
    assert isinstance(r[k], (int, float)) and r[k] > 0, f"{k}: {r.get(k)}"
for k in ["load_s", "eval_tokens_per_s", "gen_tokens_per_s"]:
    assert len(r[k]) == 2 and all(x > 0 for x in r[k]), f"{k}: {r[k]}"
assert [v["attn_len"] for v in r["vanilla"]] == [5, 9], r["vanilla"]
assert all(v["xl_ms_per_token"] > 0 and v["vanilla_ms_per_token"] > 0 for v in r["vanilla"]), r["vanilla"]
assert r["mem_len"] == 6 and r["tgt_len"] == 4 and r["gen_tokens"] == 3, r
PY
# the table form names each workload
"$txlm" bench -m "$tmp/model.txlm" --workloads eval,gen --mem-len 6 --tgt-len 4 --tokens 4 --reps 1 > "$tmp/out.txt"
grep -q "eval (tgt 4, mem 6)" "$tmp/out.txt" && grep -q "generation (mem 6)" "$tmp/out.txt" || { cat "$tmp/out.txt"; echo "FAIL: table"; exit 1; }
fails() {
    if "$txlm" bench "$@" > /dev/null 2> "$tmp/err"; then echo "FAIL: accepted: $*"; exit 1; fi
    grep -q "^txlm: " "$tmp/err" || { echo "FAIL: no message for: $*"; exit 1; }
}
fails -m "$tmp/model.txlm" --workloads eval,fly
fails -m "$tmp/model.txlm" --reps 0
fails -m "$tmp/model.txlm" --attn-lens 5,0 --workloads vanilla
fails --tokens 4
printf '\x05\x00\x00' > "$tmp/bad.i32"
fails -m "$tmp/model.txlm" --ids "$tmp/bad.i32"
printf '\xff\xff\x00\x00' > "$tmp/big.i32"
fails -m "$tmp/model.txlm" --ids "$tmp/big.i32" --workloads eval
echo "txlm bench: every workload and the error cases behave"
