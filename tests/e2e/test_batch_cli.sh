#!/usr/bin/env bash
# Several streams in one pass on the command line, each against the same
# work done one stream at a time: logprobs with several --tokens streams
# (ragged lengths, their own segmentations, a one-token stream), eval
# --batch (the authors' parts, each scored alone; --batch 1 the figures of
# the streamed run to the byte), generate --streams (stream i the text of
# --seed S+i alone), bench --batch (the table, and a size that does not
# fit the memory budget reported as such), and the refused inputs.
# usage: test_batch_cli.sh TXLM TXLM_PACK GOLDEN_CASE_DIR (a word model: adaptive_word)
set -uo pipefail
txlm=$(realpath "$1") pack=$(realpath "$2") case_dir=$(realpath "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
"$pack" "$case_dir" -o m.txlm > /dev/null || exit 1

# ---- logprobs: several streams against each alone ------------------------
# f32 files a and b equal within 1e-5 (same length)
close() {
    python3 - "$1" "$2" <<'PY'
import array, sys
a, b = array.array("f"), array.array("f")
a.frombytes(open(sys.argv[1], "rb").read()); b.frombytes(open(sys.argv[2], "rb").read())
assert len(a) == len(b) and len(a) > 0, (len(a), len(b))
worst = max(abs(x - y) for x, y in zip(a, b))
assert worst <= 1e-5, worst
PY
}
streams=("3,17,5,9,250,4,8,11,12,40,7" "8,2,600" "41" "5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21")
segs=("4,4,3" "1,2" "1" "8,8,1")
"$txlm" logprobs -m m.txlm --tokens "$(IFS=';'; echo "${streams[*]}")" --segments "$(IFS=';'; echo "${segs[*]}")" -o multi.f32 || fail "logprobs: several streams"
"$txlm" logprobs -m m.txlm --tokens "$(IFS=';'; echo "${streams[*]}")" -o multi_default.f32 || fail "logprobs: default segments"
: > alone.f32; : > alone_default.f32
for i in "${!streams[@]}"; do
    "$txlm" logprobs -m m.txlm --tokens "${streams[$i]}" --segments "${segs[$i]}" -o one.f32 && cat one.f32 >> alone.f32
    "$txlm" logprobs -m m.txlm --tokens "${streams[$i]}" -o one.f32 && cat one.f32 >> alone_default.f32
done
close multi.f32 alone.f32 || fail "logprobs: streams in one batch differ from each alone"
close multi_default.f32 alone_default.f32 || fail "logprobs: default segments differ from each alone"
# one --segments list shared by every stream (equal lengths)
"$txlm" logprobs -m m.txlm --tokens "3,4,5;6,7,8" --segments 2,1 -o shared.f32 &&
    "$txlm" logprobs -m m.txlm --tokens 3,4,5 --segments 2,1 -o s1.f32 && "$txlm" logprobs -m m.txlm --tokens 6,7,8 --segments 2,1 -o s2.f32 &&
    cat s1.f32 s2.f32 > s12.f32 && close shared.f32 s12.f32 || fail "logprobs: a shared --segments list"
echo "ok: logprobs streams"

# ---- eval --batch: the authors' parts, each scored alone -----------------
python3 - <<'PY'
import random
random.seed(5)
words = ["w%d" % random.randint(2, 700) if random.random() > 0.03 else "qqq" for _ in range(333)]
lines, at = [], 0
while at < len(words):
    n = random.randint(3, 14)
    lines.append(" ".join(words[at:at + n])); at += n
open("text.txt", "w").write("\n".join(lines) + "\n")
PY
for b in 2 3; do "$txlm" eval -m m.txlm text.txt --tgt-len 8 --batch $b --json --per-token "nll$b.f32" > "eval$b.json" 2> "eval$b.err" || fail "eval --batch $b"; done
# each part alone through txlm logprobs (segments of 8): its targets' NLLs, then the figures
python3 - "$txlm" "$case_dir/vocab.txt" <<'PY' || fail "eval --batch: parts alone"
import array, json, math, subprocess, sys
txlm, vocab = sys.argv[1], [l.rstrip("\n") for l in open(sys.argv[2])]
idx = {w: i for i, w in enumerate(vocab)}
ids = []
for line in open("text.txt"):
    ids += [idx.get(w, idx["<unk>"]) for w in line.split()] + [idx["<eos>"]]
for bsz in (2, 3):
    n_step = len(ids) // bsz                      # LMOrderedIterator: the rest is dropped
    nll, unk = [], 0
    for k in range(bsz):
        part = ids[k * n_step:(k + 1) * n_step]
        subprocess.run([txlm, "logprobs", "-m", "m.txlm", "--tokens", ",".join(map(str, part[:-1])),
                        "--segments", ",".join(str(min(8, len(part) - 1 - a)) for a in range(0, len(part) - 1, 8)),
                        "-o", "part.f32"], check=True)
        lp = array.array("f"); lp.frombytes(open("part.f32", "rb").read())
        V = len(lp) // (len(part) - 1)
        nll += [-lp[i * V + part[i + 1]] for i in range(len(part) - 1)]
        unk += sum(t == idx["<unk>"] for t in part[1:])
    got = array.array("f"); got.frombytes(open("nll%d.f32" % bsz, "rb").read())
    assert len(got) == len(nll), (bsz, len(got), len(nll))
    assert max(abs(a - b) for a, b in zip(got, nll)) <= 1e-5
    r = json.load(open("eval%d.json" % bsz))
    n = len(nll); mean = sum(nll) / n
    se = math.sqrt(sum((x - mean) ** 2 for x in nll) / (n - 1) / n)
    assert r["tokens"] == n and r["unk"] == unk and unk > 0, (r, n, unk)
    assert r["batch"] == bsz and r["dropped_tokens"] == len(ids) - bsz * n_step, r
    for key, want in [("mean_nll", mean), ("mean_nll_se", se), ("perplexity", math.exp(mean)), ("perplexity_se", math.exp(mean) * se)]:
        assert abs(r[key] - want) <= 1e-6 + 1e-5 * abs(want), (key, r[key], want)
print("eval --batch 2 and 3: each part alone gives the same NLLs and figures")
PY
grep -q "^txlm: --batch 3: 377 tokens in 3 parts of 125; the last 2 not scored$" eval3.err || fail "eval --batch 3: the dropped remainder is not told ($(cat eval3.err))"
# --batch 1: the figures of the streamed run, to the byte (only the time differs)
"$txlm" eval -m m.txlm text.txt --tgt-len 8 > plain.txt && "$txlm" eval -m m.txlm text.txt --tgt-len 8 --batch 1 > b1.txt &&
    [ "$(sed 's/, [0-9.]* tokens\/s//' plain.txt)" = "$(sed 's/, [0-9.]* tokens\/s//' b1.txt)" ] || fail "eval --batch 1 text: $(cat plain.txt b1.txt)"
"$txlm" eval -m m.txlm text.txt --json --per-token p0.f32 > plain.json && "$txlm" eval -m m.txlm text.txt --json --batch 1 --per-token p1.f32 > b1.json &&
    cmp -s p0.f32 p1.f32 && python3 - <<'PY' || fail "eval --batch 1 JSON"
import json
a, b = open("plain.json").read(), open("b1.json").read()
ja, jb = json.loads(a), json.loads(b)
for k in ("seconds", "tokens_per_second"): ja.pop(k); jb.pop(k)
assert jb.pop("batch") == 1 and jb.pop("dropped_tokens") == 0
assert ja == jb, (ja, jb)
# the figures as printed, byte for byte
fig = lambda s: [f for f in s.split(", ") if not f.startswith(('"seconds"', '"tokens_per_second"', '"batch"', '"dropped'))]
assert fig(a.strip().rstrip("}")) == fig(b.strip().rstrip("}")), (a, b)
PY
echo "ok: eval --batch"

# ---- generate --streams: stream i is --seed S+i alone ---------------------
for opts in "--temp 0" "--temp 0.9 --top-k 50 --repeat-penalty 1.2 --stop w1"; do
    # shellcheck disable=SC2086
    "$txlm" generate -m m.txlm -p "w5 w9 w12" -n 9 --seed 40 --streams 3 $opts > gen.txt 2> /dev/null || fail "generate --streams ($opts)"
    : > alone.txt
    for s in 40 41 42; do
        echo "--- stream $((s - 40)) (seed $s)" >> alone.txt
        # shellcheck disable=SC2086
        "$txlm" generate -m m.txlm -p "w5 w9 w12" -n 9 --seed $s $opts >> alone.txt 2> /dev/null
    done
    cmp -s gen.txt alone.txt || fail "generate --streams 3 ($opts):\n$(cat gen.txt)\nalone:\n$(cat alone.txt)"
done
# a stop string ends one stream early; the others go on
"$txlm" generate -m m.txlm -p "w5" -n 6 --seed 1 --streams 2 --stop w > stop.txt 2> /dev/null &&
    [ "$(grep -c '^w5 *$' stop.txt)" = 2 ] || fail "generate --streams with --stop: $(cat stop.txt)"
echo "ok: generate --streams"

# ---- bench --batch: the table, and a size beyond the memory budget --------
"$txlm" bench -m m.txlm --batch 1,2,3000 --tokens 8 --gen-tokens 2 --reps 2 --tgt-len 8 --mem-len 16 --memory-budget 12 --json > bench.json || fail "bench --batch"
python3 - <<'PY' || fail "bench --batch JSON"
import json
r = json.load(open("bench.json"))
rows = r["batches"]
assert [x["batch"] for x in rows] == [1, 2, 3000], rows
for x in rows[:2]:
    assert x["fits"] and x["eval_tokens_per_s"] > 0 and x["gen_tokens_per_s"] > 0, x
    assert len(x["eval_segment_ms"]) == 3 and len(x["gen_step_ms"]) == 3, x
    assert x["total_bytes"] == x["batch"] * (x["stream_ring_bytes"] + x["stream_scratch_bytes"]) + x["batch_bytes"], x
assert rows[0]["eval_x_batch1"] == 1 and rows[0]["gen_x_batch1"] == 1, rows[0]
# -r 2: the throughput's deviation over the repetitions, for each workload
for x in rows[:2]:
    assert x["eval_tokens_per_s_sd"] >= 0 and x["gen_tokens_per_s_sd"] >= 0, x
big = rows[2]
assert not big["fits"] and "does not fit" in big["why"] and big["total_bytes"] > big["available_bytes"], big
assert "eval_tokens_per_s" not in big, big
PY
"$txlm" bench -m m.txlm --batch 1,2 --tokens 8 --gen-tokens 2 --reps 1 --tgt-len 8 --mem-len 16 > bench.txt || fail "bench --batch text"
grep -Eq '^batch +eval tok/s +\+/- sd +x b1 +seg ms +p50 +p90 +gen tok/s +\+/- sd +x b1 +step ms +p50 +p90 +ring/stream +scratch/stream +shared$' bench.txt &&
    grep -Eq '^ +1 +[0-9.]+ +- +1\.00 ' bench.txt && grep -Eq '^ +2 +[0-9.]+ +- +[0-9.]+ ' bench.txt || fail "bench --batch table: $(cat bench.txt)"
# with -r 3 the deviation is a number; the CSV rows name the model and the device
"$txlm" bench -m m.txlm --batch 1 --workloads eval --tokens 8 --reps 3 --tgt-len 8 --mem-len 16 > bench3.txt &&
    "$txlm" bench -m m.txlm --batch 1 --workloads eval --tokens 8 --reps 3 --tgt-len 8 --mem-len 16 -o csv > bench3.csv ||
    fail "bench --batch -r 3"
grep -Eq '^ +1 +[0-9.]+ +[0-9.]+ +1\.00 ' bench3.txt || fail "bench --batch -r 3 table: $(cat bench3.txt)"
python3 - bench3.csv <<'PY' || fail "bench --batch CSV: $(cat bench3.csv)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 1 and rows[0]["model"] == "m.txlm" and rows[0]["device"], rows
assert float(rows[0]["eval_tokens_per_s_sd"]) >= 0 and rows[0]["gen_tokens_per_s_sd"] == "", rows
PY
# without a batch-1 row there is no ratio ("-", JSON null); a workload left out is null
"$txlm" bench -m m.txlm --batch 2 --workloads gen --tokens 8 --gen-tokens 2 --reps 1 --tgt-len 8 --mem-len 16 --json > b2.json &&
    "$txlm" bench -m m.txlm --batch 2 --workloads gen --tokens 8 --gen-tokens 2 --reps 1 --tgt-len 8 --mem-len 16 > b2.txt ||
    fail "bench --batch 2"
python3 - b2.json <<'PY' || fail "bench --batch 2 JSON: $(cat b2.json)"
import json, sys
row = json.load(open(sys.argv[1]))["batches"][0]
assert row["eval_tokens_per_s"] is None and row["eval_x_batch1"] is None and row["eval_segment_ms"] is None, row
assert row["gen_tokens_per_s"] > 0 and row["gen_x_batch1"] is None and len(row["gen_step_ms"]) == 3, row
PY
grep -Eq '^ +2 +[0-9.]+ +- +- ' b2.txt || fail "bench --batch 2 text: $(cat b2.txt)"
echo "ok: bench --batch"

# ---- refused: one line, status 1 -----------------------------------------
expect() {
    local text=$1
    shift
    "$@" > out.txt 2> err.txt
    local got=$?
    if [ "$got" != 1 ] || ! grep -qF -- "$text" err.txt || [ "$(wc -l < err.txt)" != 1 ]; then
        fail "$* -> status $got, stderr: $(cat err.txt) (want \"$text\")"
    fi
}
expect 'stream 1 is empty' "$txlm" logprobs -m m.txlm --tokens "3,4;;5" -o x.f32
expect 'stream 0 is empty' "$txlm" logprobs -m m.txlm --tokens ";5" -o x.f32
expect 'bad number' "$txlm" logprobs -m m.txlm --tokens "3,4;5,x" -o x.f32
expect 'of stream 1 is outside the vocabulary' "$txlm" logprobs -m m.txlm --tokens "3,4;5,1000" -o x.f32
expect '3 lists for 2 streams' "$txlm" logprobs -m m.txlm --tokens "3,4;5" --segments "1,1;1;1" -o x.f32
expect 'one per stream' "$txlm" logprobs -m m.txlm --tokens "3,4;5;6" --segments "1,1;1" -o x.f32
expect 'but stream 1 has 1 tokens' "$txlm" logprobs -m m.txlm --tokens "3,4;5" --segments "1,1" -o x.f32
expect 'at most 4096' "$txlm" logprobs -m m.txlm --tokens "$(python3 -c 'print(";".join(["3"] * 4097))')" -o x.f32
expect '--batch: 0 streams' "$txlm" eval -m m.txlm text.txt --batch 0
expect '--batch: 2 given twice' "$txlm" bench -m m.txlm --batch 1,2,2
expect 'bad number' "$txlm" bench -m m.txlm --batch 1,2,
expect 'each part needs at least two tokens' "$txlm" eval -m m.txlm text.txt --batch 4000
expect '--streams: 0 streams' "$txlm" generate -m m.txlm -p w5 --streams 0
expect '--streams: 5000 streams' "$txlm" generate -m m.txlm -p w5 --streams 5000
expect 'without --streams' "$txlm" generate -m m.txlm -p w5 --streams 2 --state-out s.state
expect '--batch: 0 streams' "$txlm" bench -m m.txlm --batch 1,0
expect 'leave load and vanilla out' "$txlm" bench -m m.txlm --batch 2 --workloads eval,load
[ -e x.f32 ] && fail "x.f32 written by a refused command"
echo "$fails failures"
[ "$fails" = 0 ]
