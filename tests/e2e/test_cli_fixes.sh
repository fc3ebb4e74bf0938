#!/usr/bin/env bash
# Rough edges of the command line, each checked against what it must do:
# an unknown command is named; an unknown flag in last position is unknown
# (not "needs a value"); -n beyond 32 bits is out of range, not "not an
# integer"; logprobs -o - writes standard output (no file named "-");
# attention refuses to write PNG data under another image name and takes
# --layer last; eval refuses --tgt-len 0; txlm-pack --version; txlm-pack
# --synthetic takes --vocab (with the config's n_token symbols);
# TXLM_DEVICE naming no device is an error in txlm devices.
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
cd "$tmp"
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
# TXLM_DEVICE that matches nothing
expect 1 'matches none' env TXLM_DEVICE=nosuch "$txlm" devices
expect 0 '' env -u TXLM_DEVICE "$txlm" devices
grep -q '^\*' out || { echo "FAIL: txlm devices marks no device"; fails=$((fails + 1)); }
echo "$fails failures"
[ "$fails" = 0 ]
