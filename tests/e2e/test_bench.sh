#!/usr/bin/env bash
# txlm bench on a small packed golden model: every workload runs, the JSON
# carries every figure (positive numbers), the vanilla table has one row
# per attention length, generation is set against the device's copy rate
# with the weight bytes a token reads, --submit-dispatches times a bounded
# context beside a whole one, and bad options fail with a message.
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
# generation against the device's copy rate
assert r["copy_bytes_per_s"] > 0, r
rate = r["step_weight_bytes"] * r["gen_tokens_per_s_median"]
assert abs(r["gen_weight_bytes_per_s_median"] - rate) <= 1e-5 * rate, r
assert abs(r["gen_copy_fraction"] - rate / r["copy_bytes_per_s"]) <= 1e-5 * r["gen_copy_fraction"], r
PY
# The weights a generated token reads, from the hyper-parameters: every
# layer's matrices, biases and norms, and the head cluster (its rows, bias
# and projection) with the cluster logits; f16 halves the matrices and the
# head's rows, the rest stays f32.
step_bytes() {
    "$pack" "$case_dir" -o "$tmp/$1.txlm" --dtype "$1" > /dev/null
    "$txlm" bench -m "$tmp/$1.txlm" --json --workloads gen --mem-len 6 --tgt-len 4 --gen-tokens 2 --reps 1 \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["step_weight_bytes"])'
}
python3 - "$case_dir/config.json" "$(step_bytes f32)" "$(step_bytes f16)" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
d, H, dh, di, L = c["d_model"], c["n_head"], c["d_head"], c["d_inner"], c["n_layer"]
assert c["div_val"] > 1 and c["cutoffs"], "the formula below is for adaptive softmax with projections"
rows, dim, clusters = c["cutoffs"][0], c["d_embed"], len(c["cutoffs"])
matrices = L * (3 * H * dh * d + d * H * dh + 2 * d * di) + rows * dim
vectors = L * (di + d + 2 * H * dh + 4 * d) + rows + clusters * dim + clusters
proj = d * dim
f32 = 4 * (matrices + vectors + proj)
got32, got16 = int(sys.argv[2]), int(sys.argv[3])
assert got32 == f32, f"f32: {got32} bytes a token, expected {f32}"
assert got16 == f32 - 2 * matrices, f"f16: {got16} bytes a token, expected {f32 - 2 * matrices}"
PY
# the table form names each workload
"$txlm" bench -m "$tmp/model.txlm" --workloads eval,gen --mem-len 6 --tgt-len 4 --tokens 4 --reps 1 > "$tmp/out.txt"
grep -q "eval (tgt 4, mem 6)" "$tmp/out.txt" && grep -q "generation (mem 6)" "$tmp/out.txt" &&
    grep -Eq "weights read in generation +[0-9.]+ +GB/s" "$tmp/out.txt" && grep -Eq "device copy rate +[0-9.]+ +GB/s" "$tmp/out.txt" &&
    grep -Eq "^share of the copy rate +[0-9]+ +%" "$tmp/out.txt" || { cat "$tmp/out.txt"; echo "FAIL: table"; exit 1; }
# TXLM_PROFILE=1: each recorder prints device time by kernel; the rows
# add up to the whole and name the kernels a segment and a token run
TXLM_PROFILE=1 "$txlm" bench -m "$tmp/model.txlm" --workloads gen --mem-len 6 --tgt-len 4 --gen-tokens 3 --reps 1 \
    > /dev/null 2> "$tmp/prof.txt"
python3 - "$tmp/prof.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
tables = text.split("device time by kernel, ")[1:]
assert tables, "no profile printed:\n" + text
names = set()
for t in tables:
    rows = [l.split() for l in t.splitlines()[2:] if l.strip()]
    assert rows, t
    share = sum(float(r[-1].rstrip("%")) for r in rows)
    assert abs(share - 100) < 0.5 + 0.05 * len(rows), f"shares add up to {share}:\n{t}"  # each rounded to 0.1
    for r in rows:
        calls, total, each = int(r[-4]), float(r[-3]), float(r[-2])
        assert calls > 0 and total >= 0 and abs(total - calls * each) <= 0.006 + calls * 5e-5 + 1e-3 * total, r  # printed rounded
    names |= {" ".join(r[:-4]) for r in rows}
assert any(n.startswith("attn") for n in names) and any("gemv" in n or "linear" in n for n in names), names
PY
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
fails -m "$tmp/model.txlm" -o yaml
# -r N: each repeated figure's mean and standard deviation, against a direct computation on its series
"$txlm" bench -m "$tmp/model.txlm" -r 4 -o json --workloads load,eval,gen --tokens 4 --gen-tokens 2 --mem-len 6 --tgt-len 4 > "$tmp/r.json"
python3 - "$tmp/r.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
for k in ["load_s", "eval_tokens_per_s", "gen_tokens_per_s"]:
    v = r[k]
    assert len(v) == 4, (k, v)
    for name, want in [("mean", statistics.mean(v)), ("sd", statistics.stdev(v)), ("median", statistics.median(v))]:
        got = r[f"{k}_{name}"]
        # the runs and the figures are both printed to 6 significant digits:
        # an sd far below the runs inherits their rounding
        assert abs(got - want) <= 1e-5 * abs(want) + 5e-6 * max(map(abs, v)) + 1e-12, (k, name, got, want)
PY
# the same figures as a text table (mean +/- sd), Markdown and CSV
# (evaluation only: generation also times the device's copy rate, which takes seconds)
for f in text md csv; do
    "$txlm" bench -m "$tmp/model.txlm" -r 3 -o "$f" --workloads eval --tokens 8 --mem-len 6 --tgt-len 4 > "$tmp/r.$f"
done
grep -Eq '^eval \(tgt 4, mem 6\) +[0-9.]+ +[0-9.]+ \+/- [0-9.]+ +tokens/s \(3\)$' "$tmp/r.text" || { echo "FAIL: text table"; cat "$tmp/r.text"; exit 1; }
grep -Eq '^\| eval \(tgt 4, mem 6\) \| [0-9.]+ \| [0-9.]+ ± [0-9.]+ \| tokens/s \| 3 \|$' "$tmp/r.md" || { echo "FAIL: md table"; cat "$tmp/r.md"; exit 1; }
python3 - "$tmp/r.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["workload"] for r in rows] == ["device opened", "eval (tgt 4, mem 6)"], rows
r = rows[1]
assert float(r["median"]) > 0 and float(r["mean"]) > 0 and float(r["sd"]) >= 0 and r["reps"] == "3", r
# every row names the model and the device; no label starts with a space
assert all(x["model"].endswith("model.txlm") and x["device"] for x in rows), rows
assert all(x["workload"] == x["workload"].strip() for x in rows), rows
PY
# -r 1: one run has no deviation to tell: none shown (not "+/- 0.00"), null in JSON, empty in CSV
"$txlm" bench -m "$tmp/model.txlm" -r 1 --workloads eval --tokens 8 --mem-len 6 --tgt-len 4 > "$tmp/r1.txt"
grep -Eq '^eval \(tgt 4, mem 6\) +[0-9.]+ +[0-9.]+ +tokens/s \(1\)$' "$tmp/r1.txt" && ! grep -q '+/- 0.00' "$tmp/r1.txt" ||
    { echo "FAIL: -r 1 table"; cat "$tmp/r1.txt"; exit 1; }
"$txlm" bench -m "$tmp/model.txlm" -r 1 -o json --workloads eval --tokens 8 --mem-len 6 --tgt-len 4 |
    python3 -c 'import json, sys; r = json.load(sys.stdin); assert r["eval_tokens_per_s_sd"] is None, r' ||
    { echo "FAIL: -r 1 JSON"; exit 1; }
"$txlm" bench -m "$tmp/model.txlm" -r 1 -o csv --workloads eval --tokens 8 --mem-len 6 --tgt-len 4 | grep -q ',,tokens/s,1$' ||
    { echo "FAIL: -r 1 CSV"; exit 1; }
# one model a run: a second -m is refused, not silently taken instead of the first
if "$txlm" bench -m "$tmp/model.txlm" -m "$tmp/other.txlm" > /dev/null 2> "$tmp/err"; then echo "FAIL: two -m accepted"; exit 1; fi
grep -q "once per model" "$tmp/err" || { echo "FAIL: two -m: $(cat "$tmp/err")"; exit 1; }
# --submit-dispatches: the bounded context against the whole one, both rows, positive rates
"$txlm" bench -m "$tmp/model.txlm" --submit-dispatches 5 -r 2 --json --tokens 8 --gen-tokens 3 --mem-len 6 --tgt-len 4 |
    python3 -c 'import json, sys
r = json.load(sys.stdin)
assert r["submit_dispatches"] == 5 and r["whole"]["eval_ratio"] == 1, r
assert all(r[k][f] > 0 for k in ("whole", "bounded") for f in ("eval_tokens_per_s", "gen_tokens_per_s", "gen_ratio")), r' ||
    { echo "FAIL: --submit-dispatches"; exit 1; }
fails -m "$tmp/model.txlm" --submit-dispatches 5 --batch 1,2
fails -m "$tmp/model.txlm" --submit-dispatches 5 --workloads load,eval
echo "txlm bench: every workload and the error cases behave"
