#!/usr/bin/env bash
# Rough edges of the command line, each checked against what it must do:
# an unknown command is named; an unknown flag in last position is unknown
# (not "needs a value"); -n beyond 32 bits is out of range, not "not an
# integer"; logprobs -o - writes standard output (no file named "-");
# attention refuses to write PNG data under another image name and takes
# --layer last; eval refuses --tgt-len 0; txlm-pack --version; txlm-pack
# --synthetic takes --vocab (with the config's n_token symbols);
# TXLM_DEVICE naming no device is an error in txlm devices; a second -m
# or a model without -m is named as such; generate --streams -n -1 without
# --stop is refused, its summary counts the prompt per stream, --progress
# follows the batch and a long prompt's feeding; a prompt of <unk> is
# warned about; --repeat-last-n is in the usage; a cut state file is
# "truncated", a damaged one "checksum mismatch" once; compare --json keeps
# the significant digits of tiny KL figures; eval prints
# "perplexity x +/- y" as its --help and the README say.
# usage: test_cli_fixes.sh TXLM TXLM_PACK GOLDEN_CASE_DIR
set -uo pipefail
txlm=$(realpath "$1") pack=$(realpath "$2") case_dir=$(realpath "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
# expect STATUS TEXT command...: the status, and TEXT in stderr
expect() {
    local want=$1 text=$2
    shift 2
    "$@" > "$tmp/out" 2> "$tmp/err"
    local got=$?
    if [ "$got" != "$want" ] || { [ -n "$text" ] && ! grep -qF -- "$text" "$tmp/err"; }; then
        echo "FAIL: $* -> status $got (want $want), stderr: $(cat "$tmp/err") (want \"$text\")"
        fails=$((fails + 1))
    else
        echo "ok: $* -> $(head -n 1 "$tmp/err")"
    fi
}
"$pack" "$case_dir" -o "$tmp/m.txlm" > /dev/null || exit 1
m=$tmp/m.txlm
readme=$(dirname "$0")/../../README.md
readme=$(realpath "$readme")
cd "$tmp"
printf 'w5 w9 w12 w7 w8\nw3 w4 w5\n' > text.txt
expect 1 'unknown command "frob"' "$txlm" frob
expect 1 'unknown option "--json"' "$txlm" generate -m "$m" -p w5 -n 5 --json
expect 1 'unknown option "--frob"' "$txlm" eval -m "$m" --frob
expect 1 'unknown option "--frob"' "$txlm" logprobs -m "$m" --frob
expect 1 'unknown option "--frob"' "$txlm" attention -m "$m" --frob
expect 1 'unknown option "--frob"' "$txlm" bench -m "$m" --frob
expect 1 'needs a value' "$txlm" generate -m "$m" -p
expect 1 'out of range' "$txlm" generate -m "$m" -p w5 -n 99999999999
expect 1 'not an integer' "$txlm" generate -m "$m" -p w5 -n 12x
expect 1 'at least 1' "$txlm" eval -m "$m" --tgt-len 0 -
expect 1 'name it .png' "$txlm" attention -m "$m" -p "w5 w9 w12" -o x.jpg
[ ! -e x.jpg ] || { echo "FAIL: x.jpg written"; fails=$((fails + 1)); }
expect 0 '' "$txlm" attention -m "$m" -p "w5 w9 w12 w7" --layer last --head 0 -o last.png
expect 0 '' "$txlm" attention -m "$m" -p "w5 w9 w12 w7" --layer 2 --head 0 -o two.png
cmp -s last.png two.png || { echo "FAIL: --layer last is not the last layer (2)"; fails=$((fails + 1)); }
# logprobs -o -: the same bytes as a file, on standard output
"$txlm" logprobs -m "$m" --tokens 3,4,5 -o lp.f32 || fails=$((fails + 1))
"$txlm" logprobs -m "$m" --tokens 3,4,5 -o - > lp_stdout.f32 || fails=$((fails + 1))
if [ -e ./- ] || ! cmp -s lp.f32 lp_stdout.f32 || [ ! -s lp.f32 ]; then echo "FAIL: logprobs -o -"; fails=$((fails + 1)); else echo "ok: logprobs -o - writes standard output"; fi
# txlm-pack --version, --synthetic with --vocab
v=$("$pack" --version)
[ "$v" = "$("$txlm" --version | sed 's/^txlm /txlm-pack /')" ] || { echo "FAIL: txlm-pack --version: $v"; fails=$((fails + 1)); }
"$pack" --synthetic "$case_dir/config.json" --vocab "$case_dir/vocab.txt" -o syn.txlm > /dev/null || fails=$((fails + 1))
"$txlm" info -m syn.txlm > syn_info.txt || fails=$((fails + 1))
"$txlm" generate -m syn.txlm -p "w5 w9" -n 3 --seed 1 > syn_gen.txt 2> /dev/null || fails=$((fails + 1))
grep -q '^w5 w9 w[0-9]* w[0-9]* w[0-9]*$' syn_gen.txt || { echo "FAIL: synthetic model with the case's vocabulary: $(cat syn_gen.txt)"; fails=$((fails + 1)); }
head -n 5 "$case_dir/vocab.txt" > short_vocab.txt
expect 1 'n_token' "$pack" --synthetic "$case_dir/config.json" --vocab short_vocab.txt -o syn2.txlm
# a model given twice where one is taken, or without -m: said as such
expect 1 '2 models given (-m' "$txlm" eval -m "$m" -m "$m" text.txt
expect 1 'a model is given as -m' "$txlm" info "$m"
expect 1 '-m given twice' "$txlm" generate -m "$m" -m "$m" -p w5
# generate --streams: -n -1 with no stop string would print nothing until
# Ctrl-C: refused; the summary counts the prompt once per stream; --progress
# follows the batch
expect 1 'would run until Ctrl-C' timeout 60 "$txlm" generate -m "$m" -p w5 -n -1 --streams 2
expect 0 'prompt 3 tokens x 4 streams' "$txlm" generate -m "$m" -p "w5 w9 w12" -n 3 --streams 4 --seed 1 --progress
grep -q 'generated' err || { echo "FAIL: generate --streams --progress: $(cat err)"; fails=$((fails + 1)); }
# a prompt of words the model lacks is warned about, as eval warns
expect 0 "of the prompt's tokens are <unk>" "$txlm" generate -m "$m" -p "zz qq xx" -n 2 --seed 1
# a prompt of several segments: its feeding shown with --progress
for i in $(seq 1 40); do printf 'w%d ' $((i % 50 + 2)); done > long.txt
expect 0 'feeding the prompt' "$txlm" generate -m "$m" -f long.txt -n 1 --seed 1 --progress
# the usage lines name --repeat-last-n
for c in generate chat; do
    "$txlm" $c --help | head -n 4 | grep -q -- '\[--repeat-last-n N\]' || { echo "FAIL: $c --help: no --repeat-last-n in the usage"; fails=$((fails + 1)); }
done
# a state file cut short says so; a damaged one says "checksum mismatch" once
"$txlm" generate -m "$m" -p "w5 w9" -n 2 --seed 1 --state-out s.state > /dev/null 2>&1
head -c $(( $(stat -c %s s.state) - 8 )) s.state > cut.state
expect 1 'the file is truncated' "$txlm" generate -m "$m" --state-in cut.state -n 1
python3 -c 'import sys; b = bytearray(open("s.state", "rb").read()); b[len(b) // 2] ^= 1; open("flip.state", "wb").write(b)'
expect 1 'checksum mismatch' "$txlm" generate -m "$m" --state-in flip.state -n 1
[ "$(grep -o 'checksum mismatch' err | wc -l)" = 1 ] || { echo "FAIL: $(cat err)"; fails=$((fails + 1)); }
# compare --json: a small figure keeps its significant digits (not 0.00000010)
"$pack" "$case_dir" -o m16.txlm --dtype f16 > /dev/null
"$txlm" compare -m "$m" -m m16.txlm text.txt --json > cmp.json 2> /dev/null || fails=$((fails + 1))
python3 - cmp.json <<'PY' || { echo "FAIL: compare --json digits: $(cat cmp.json)"; fails=$((fails + 1)); }
import re, sys
text = open(sys.argv[1]).read()
for key in ["kl_mean", "kl_mean_se", "kl_max"]:
    v = re.search(r'"%s": ([-0-9.e+]+)' % key, text).group(1)
    digits = re.sub(r"e.*", "", v).lstrip("-").replace(".", "").lstrip("0")
    assert float(v) == 0 or len(digits) >= 5, (key, v)
PY
# eval prints "perplexity x +/- y", as its --help and the README say
expect 0 '' "$txlm" eval -m "$m" text.txt
grep -Eq ' perplexity [0-9.]+ \+/- [0-9.]+,' out && "$txlm" eval --help | grep -q '"perplexity x +/- y"' &&
    grep -q '"perplexity x +/- y"' "$readme" || { echo "FAIL: eval's perplexity line and its docs"; fails=$((fails + 1)); }
# TXLM_DEVICE that matches nothing
expect 1 'matches none' env TXLM_DEVICE=nosuch "$txlm" devices
expect 0 '' env -u TXLM_DEVICE "$txlm" devices
grep -q '^\*' out || { echo "FAIL: txlm devices marks no device"; fails=$((fails + 1)); }
echo "$fails failures"
[ "$fails" = 0 ]
