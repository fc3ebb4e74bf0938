#!/usr/bin/env bash
# The documentation's commands give what the documentation shows:
#   README's demo (scripts/demo.sh) prints the text the README quotes;
#   README's eval of the shipped held-out excerpt prints the bits per
#   character the README and models/README.md give, and docs/research.md's
#   eval --batch 4 of it the figures and the remainder quoted there;
#   every `build/tools/txlm attention` line of README.md and
#   docs/attention.md runs as written and draws the picture beside it
#   (docs/img/*.png, compared pixel by pixel: png_diff).
# usage: test_docs.sh TXLM PNG_DIFF SOURCE_DIR
set -uo pipefail
txlm=$(realpath "$1") png_diff=$(realpath "$2") src=$(realpath "$3")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
cd "$src"

# the demo's text: the README's quoted block, line for line, opens what demo.sh prints
TXLM=$txlm scripts/demo.sh > "$tmp/demo.txt" 2> /dev/null || fails=$((fails + 1))
awk '/scripts\/demo.sh. \(run by the quick start\) prints:/ {f = 1; next} f && /^```$/ {if (in_block) exit; in_block = 1; next} in_block' README.md > "$tmp/quoted.txt"
n=$(wc -l < "$tmp/quoted.txt")
if [ "$n" -lt 3 ] || ! head -n "$n" "$tmp/demo.txt" | cmp -s - "$tmp/quoted.txt"; then
    echo "FAIL: scripts/demo.sh does not print README's text:"; diff "$tmp/quoted.txt" <(head -n "$n" "$tmp/demo.txt"); fails=$((fails + 1))
else
    echo "ok: scripts/demo.sh prints the README's $n lines"
fi

# the held-out excerpt's bits per character, as README.md and models/README.md give them
cmd=$(grep -m1 '^build/tools/txlm eval -m models/demo.txlm models/demo_heldout.txt$' README.md)
[ -n "$cmd" ] || { echo "FAIL: README has no eval command for the excerpt"; fails=$((fails + 1)); }
bpc=$("$txlm" eval -m models/demo.txlm models/demo_heldout.txt | sed -n 's/.*bits per character \([0-9.]*\).*/\1/p')
quoted=$(sed -n 's/^# models\/demo_heldout.txt: .*bits per character \([0-9.]*\).*/\1/p' README.md)
short=$(printf '%.3f' "$bpc")
if [ -z "$bpc" ] || [ "$bpc" != "$quoted" ] || ! grep -q "and $short on the 2.8 KB excerpt" README.md || ! grep -q "| $short" models/README.md; then
    echo "FAIL: eval gives $bpc bits per character; README quotes $quoted"; fails=$((fails + 1))
else
    echo "ok: eval on the excerpt gives $bpc bits per character, as quoted"
fi

# docs/research.md's eval --batch example: the figures and the remainder it quotes
quoted=$(grep -A1 -m1 '^\$ build/tools/txlm eval -m models/demo.txlm models/demo_heldout.txt --batch 4$' docs/research.md | sed -n 2p)
got=$("$txlm" eval -m models/demo.txlm models/demo_heldout.txt --batch 4 2> "$tmp/batch.err")
figs() { printf '%s\n' "$1" | sed 's/, [0-9.]* tokens\/s$//'; }
if [ -z "$quoted" ] || [ "$(figs "$quoted")" != "$(figs "$got")" ] || ! grep -qF "\`$(cat "$tmp/batch.err")\`" docs/research.md; then
    echo "FAIL: eval --batch 4 prints \"$got\" and \"$(cat "$tmp/batch.err")\"; docs/research.md quotes \"$quoted\""; fails=$((fails + 1))
else
    echo "ok: eval --batch 4 on the excerpt gives the figures docs/research.md quotes"
fi

# every attention command of the docs, as written, against its picture
export TEXT
TEXT=$(sed -n 's/^TEXT="\(.*\)"$/\1/p' docs/attention.md | head -n 1)
[ -n "$TEXT" ] || { echo "FAIL: no TEXT in docs/attention.md"; fails=$((fails + 1)); }
grep -h '^build/tools/txlm attention -m models/' README.md docs/attention.md | sort -u > "$tmp/cmds"
while read -r line; do
    out=$(printf '%s\n' "$line" | sed -n 's/.* -o \(docs\/img\/[^ ]*\.png\).*/\1/p')
    [ -n "$out" ] || { echo "FAIL: no docs/img picture in: $line"; fails=$((fails + 1)); continue; }
    mine="$tmp/$(basename "$out")"
    run=${line/build\/tools\/txlm/\"\$txlm\"}
    run=${run/-o $out/-o \"\$mine\"}
    if ! eval "$run" > /dev/null || ! "$png_diff" "$out" "$mine"; then
        echo "FAIL: $line"; fails=$((fails + 1))
    fi
done < "$tmp/cmds"
[ "$(wc -l < "$tmp/cmds")" -ge 3 ] || { echo "FAIL: fewer attention commands than expected"; fails=$((fails + 1)); }
echo "$fails failures"
[ "$fails" = 0 ]
