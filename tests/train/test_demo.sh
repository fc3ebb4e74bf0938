#!/usr/bin/env bash
# The shipped demo model, through the txlm binary given as $1:
#   generate      scripts/demo.sh twice: non-empty, longer than the prompt, same text both times,
#                 with common English words in it
#   eval B TOL    `txlm eval` on the committed held-out excerpt gives B bits per character +- TOL
set -euo pipefail
TXLM=$(realpath "$1")
mode=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
case $mode in
generate)
  a=$(TXLM=$TXLM "$root/scripts/demo.sh" -n 120)
  b=$(TXLM=$TXLM "$root/scripts/demo.sh" -n 120)
  if [ "$a" != "$b" ]; then echo "same seed, different text:"; echo "$a"; echo "---"; echo "$b"; exit 1; fi
  n=${#a}
  if [ "$n" -lt 100 ]; then echo "only $n characters generated: $a"; exit 1; fi
  words=$(printf '%s\n' "$a" | tr -c 'A-Za-z' '\n' | grep -x -E 'the|of|and|to|a|is|in|that|it|be' | sort -u | wc -l)
  if [ "$words" -lt 3 ]; then echo "only $words common English words in: $a"; exit 1; fi
  printf '%s\n' "$a" ;;
eval)
  want=$3 tol=$4
  out=$("$TXLM" eval -m "$root/models/demo.txlm" "$root/models/demo_heldout.txt" --json)
  echo "$out"
  got=$(printf '%s' "$out" | sed -n 's/.*"bpc": \([0-9.]*\).*/\1/p')
  [ -n "$got" ] || { echo "no bpc in the output"; exit 1; }
  awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN { d = g - w; if (d < 0) d = -d; if (d > t) { printf "bpc %s, expected %s +- %s\n", g, w, t; exit 1 } }' ;;
*) echo "usage: $0 TXLM generate|eval BPC TOL"; exit 2 ;;
esac
