#!/usr/bin/env bash
# Inputs meant as text that are plainly not: every command that takes a
# text file (eval, score, compare, generate -f, chat -f, logprobs -f,
# attention -f) refuses one holding a NUL byte, or mostly not UTF-8, in
# its first 4 KiB, with one line and before the model is opened (the
# model here is no model at all, so a refusal after opening it would name
# the model instead); --binary-ok reads it; standard input is judged too,
# from a file and from a pipe. txlm score warns when most of a text's
# tokens are <unk>, as eval does; a text read through the look-ahead is
# scored as before, from a file and from a pipe, across the block's end.
# usage: test_text_inputs.sh TXLM TXLM_PACK GOLDEN_CASE_DIR
set -uo pipefail
txlm=$(realpath "$1") pack=$(realpath "$2") case_dir=$(realpath "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# refused TEXT command...: status 1, nothing on stdout, one line on stderr holding TEXT
refused() {
    local text=$1
    shift
    if [ -n "${STDIN:-}" ]; then "$@" > "$tmp/out" 2> "$tmp/err" < "$STDIN"; else "$@" > "$tmp/out" 2> "$tmp/err"; fi
    local got=$? lines
    lines=$(wc -l < "$tmp/err")
    if [ "$got" != 1 ] || [ "$lines" != 1 ] || [ -s "$tmp/out" ] || ! grep -qF -- "$text" "$tmp/err"; then
        fail "$* -> status $got, $lines lines: $(cat "$tmp/err") (want one line with \"$text\")"
    else
        echo "ok: $* -> $(cat "$tmp/err")"
    fi
}
"$pack" "$case_dir" -o "$tmp/m.txlm" > /dev/null 2>&1 || exit 1
cd "$tmp"
m=m.txlm
printf 'w5 w9 w12 w7 w8\nw3 w4 w5\n' > text.txt
cp text.txt notamodel.txlm   # opening it as a model fails: a refusal of the text comes first
# no NUL byte, no byte of it text: stray UTF-8 continuation and lead bytes, control bytes
for i in $(seq 1 200); do printf '\x81\x92\xa3\xb4\xc5\xd6\xe7\xf8\x01\x02\x03\x04\x11\x12\x13\x14'; done > noise.bin
printf 'caf\xe9 au lait, na\xefve, \xa9 2024 \xe2\x80\x94 UTF-8 beside Latin-1\n' > latin1.txt
want='not text (a NUL byte at byte'

for input in "$m" noise.bin; do
    w=$want
    [ "$input" = noise.bin ] && w='not text (3200 of its first 3200 bytes are neither UTF-8 text nor whitespace)'
    refused "$input: $w" "$txlm" score -m notamodel.txlm "$input"
    refused "$input: $w" "$txlm" eval -m notamodel.txlm "$input"
    refused "$input: $w" "$txlm" compare -m notamodel.txlm -m notamodel.txlm -f "$input"
    refused "$input: $w" "$txlm" generate -m notamodel.txlm -f "$input" -n 1
    refused "$input: $w" "$txlm" chat -m notamodel.txlm -f "$input"
    refused "$input: $w" "$txlm" logprobs -m notamodel.txlm -f "$input" -o lp.f32
    refused "$input: $w" "$txlm" attention -m notamodel.txlm -f "$input" -o a.png
done
[ ! -e lp.f32 ] && [ ! -e a.png ] || fail "an output was written"
# the case of the report: the model given as the text
refused "--binary-ok reads it anyway" "$txlm" score -m "$m" "$m"
# standard input: a file, then a pipe
STDIN=$m refused "standard input: $want" "$txlm" score -m notamodel.txlm -
cat "$m" | refused "standard input: $want" "$txlm" score -m notamodel.txlm -
STDIN=$m refused "standard input: $want" "$txlm" generate -m notamodel.txlm -f - -n 1

# text that is not all UTF-8 is still text; --binary-ok passes the check (the model is then opened)
"$txlm" score -m "$m" latin1.txt > /dev/null 2> err || fail "score of Latin-1 text: $(cat err)"
"$txlm" score -m notamodel.txlm "$m" --binary-ok > /dev/null 2> err
grep -qF 'loading the model' err || fail "--binary-ok: $(cat err)"
"$txlm" generate -m notamodel.txlm -f noise.bin --binary-ok -n 1 > /dev/null 2> err
grep -qF 'loading the model' err || fail "generate --binary-ok: $(cat err)"

# score warns of <unk> as eval does, and not for the model's own words
printf 'these words are not in its vocabulary w5 at all\n' > unk.txt
"$txlm" score -m "$m" unk.txt > /dev/null 2> err || fail "score unk.txt: $(cat err)"
grep -qF "of the text's tokens are <unk>" err || fail "no <unk> warning from score: $(cat err)"
"$txlm" eval -m "$m" unk.txt > /dev/null 2> err_eval || fail "eval unk.txt: $(cat err_eval)"
grep -qF '<unk>' err_eval || fail "no <unk> warning from eval: $(cat err_eval)"
"$txlm" score -m "$m" text.txt > /dev/null 2> err || fail "score text.txt: $(cat err)"
[ ! -s err ] || fail "score of the model's words says: $(cat err)"

# lines across the look-ahead's end (4096 bytes), and a last line without a line feed:
# the same rows from a file, a redirected file and a pipe
for i in $(seq 1 1000); do printf 'w%d w%d w3 ' $((i % 97 + 2)) $((i % 13 + 2)); [ $((i % 9)) = 0 ] && echo; done > long.txt
printf 'w5 w6' >> long.txt
[ "$(wc -c < long.txt)" -gt 8192 ] || fail "long.txt is short"
"$txlm" score -m "$m" long.txt > file.tsv 2> /dev/null || fail "score long.txt"
"$txlm" score -m "$m" - < long.txt > redirected.tsv 2> /dev/null || fail "score - < long.txt"
cat long.txt | "$txlm" score -m "$m" - > piped.tsv 2> /dev/null || fail "cat long.txt | score -"
cmp -s file.tsv redirected.tsv && cmp -s file.tsv piped.tsv || fail "long.txt scored differently through standard input"
# a row a word, and one for the <eos> of each line feed
rows=$(($(wc -l < file.tsv) - 1)) want_rows=$(($(wc -w < long.txt) + $(wc -l < long.txt)))
[ "$rows" = "$want_rows" ] || fail "long.txt: $rows rows for $want_rows tokens"
[ "$(cut -f1 file.tsv | tail -n 1)" = "$(($(wc -l < long.txt) + 1))" ] || fail "long.txt: lines miscounted"

[ "$fails" = 0 ] && echo "all passed" || echo "$fails failed"
exit $((fails != 0))
