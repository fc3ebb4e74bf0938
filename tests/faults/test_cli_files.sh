#!/bin/sh
# The files the command-line tools write and read (docs/reliability.md):
#  - a symbolic link planted at every old temporary name ("OUT.tmp") of
#    every output is not followed: its target keeps its bytes, the output
#    is a new regular file, the link stays as it was;
#  - a failed write (a directory as output, a full disk) leaves the old
#    output byte for byte and no temporary file;
#  - a FIFO given as any input is refused at once with a message; `timeout`
#    turns a tool that waits on it into a failure (status 124), not a hang;
#  - "-" (standard input) still works where a command reads text.
# usage: test_cli_files.sh TXLM TXLM_PACK GOLDEN_DIR
set -u
txlm=$(realpath "$1") pack=$(realpath "$2") golden=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failed=0
bad() { echo "FAIL: $*"; failed=1; }

"$pack" "$golden/char_preln" -o m.txlm || exit 1
printf victim > victim

# plant NAME...: a link NAME.tmp -> victim for each output NAME
plant() { for f in "$@"; do ln -sf "$work/victim" "$f.tmp"; done; }
# unplanted WHAT NAME...: the victim is intact, each NAME a regular file, each link still a link
unplanted() {
  what=$1
  shift
  [ "$(cat victim)" = victim ] || bad "$what: the link's target was overwritten"
  for f in "$@"; do
    { [ -f "$f" ] && [ ! -L "$f" ]; } || bad "$what: $f is not a new regular file"
    [ -L "$f.tmp" ] || bad "$what: the link $f.tmp was removed or replaced"
    rm -f "$f.tmp"
  done
}

# --- outputs -----------------------------------------------------------
plant out.txlm
"$pack" "$golden/char_preln" -o out.txlm || bad "txlm-pack beside a planted link"
unplanted "txlm-pack -o" out.txlm

mkdir hf
plant syn.txlm hf/model.safetensors hf/config.json hf/vocab.txt
"$pack" --synthetic "$golden/char_preln/config.json" -o syn.txlm --export-safetensors hf/model.safetensors ||
  bad "txlm-pack --export-safetensors beside planted links"
unplanted "txlm-pack --export-safetensors" syn.txlm hf/model.safetensors hf/config.json hf/vocab.txt

plant lp.f32
"$txlm" logprobs -m m.txlm --tokens 3,17,5 -o lp.f32 || bad "logprobs beside a planted link"
unplanted "txlm logprobs -o" lp.f32

plant a.png a.csv a.f32
"$txlm" attention -m m.txlm --tokens 3,17,5,9 -o a.png --csv a.csv --f32 a.f32 || bad "attention beside planted links"
unplanted "txlm attention -o --csv --f32" a.png a.csv a.f32

# Failures keep the old output and leave no temporary ("old.txlm.<random>.tmp").
leftovers() { ls -a | grep -c '\.tmp$'; }
printf old > old.txlm
mkdir outdir
: > err.txt
before=$(ls -a | wc -l)
"$pack" "$golden/char_preln" -o outdir 2> err.txt && bad "txlm-pack wrote over a directory"
grep -q "is a directory" err.txt || bad "a directory as output: $(cat err.txt)"
[ -d outdir ] || bad "the directory given as output is gone"
# a file-size limit makes writes fail (EFBIG) as a full disk does (ENOSPC)
(ulimit -f 32 && trap '' XFSZ && exec "$pack" "$golden/char_preln" -o old.txlm) 2> err.txt &&
  bad "txlm-pack succeeded past the file-size limit"
grep -q "File too large" err.txt || bad "full disk: $(cat err.txt)"
[ "$(cat old.txlm)" = old ] || bad "a failed txlm-pack changed the old output"
[ "$(leftovers)" = 0 ] || bad "a failed txlm-pack left a temporary: $(ls)"
[ "$(ls -a | wc -l)" = "$before" ] || bad "failures left files: $(ls)"

# --- inputs ------------------------------------------------------------
mkfifo fifo
# refused WHAT CMD...: exit 1 within the timeout, naming the FIFO
refused() {
  what=$1
  shift
  timeout 15 "$@" < /dev/null > out.txt 2> err.txt
  st=$?
  [ $st = 124 ] && { bad "$what: waited on the FIFO (timeout)"; return; }
  [ $st = 1 ] && grep -q ": not a regular file (a FIFO)" err.txt || bad "$what: exit $st: $(cat err.txt)"
}
refused "info -m" "$txlm" info -m fifo
refused "generate -m" "$txlm" generate -m fifo -p w
refused "generate -f" "$txlm" generate -m m.txlm -f fifo
refused "eval -m" "$txlm" eval -m fifo victim
refused "eval FILE" "$txlm" eval -m m.txlm fifo
refused "logprobs -m" "$txlm" logprobs -m fifo --tokens 1 -o x.f32
refused "logprobs -f" "$txlm" logprobs -m m.txlm -f fifo -o x.f32
refused "attention -m" "$txlm" attention -m fifo -p w -o x.png
refused "attention -f" "$txlm" attention -m m.txlm -f fifo -o x.png
refused "bench -m" "$txlm" bench -m fifo
refused "bench --ids" "$txlm" bench -m m.txlm --ids fifo
mkdir ck
cp "$golden/char_preln/config.json" "$golden/char_preln/model.safetensors" "$golden/char_preln/vocab.txt" ck/
refused "txlm-pack --config" "$pack" ck --config fifo -o x.txlm
refused "txlm-pack --weights" "$pack" ck --weights fifo -o x.txlm
refused "txlm-pack --vocab" "$pack" ck --vocab fifo -o x.txlm
refused "txlm-pack --synthetic" "$pack" --synthetic fifo -o x.txlm
mv ck/config.json config.json && mkfifo ck/config.json
refused "txlm-pack DIR/config.json" "$pack" ck -o x.txlm
[ ! -e x.txlm ] && [ ! -e x.f32 ] && [ ! -e x.png ] || bad "a refused input still produced an output"

# Standard input, where a command reads text.
printf 'abc abc abc\n' | timeout 60 "$txlm" eval -m m.txlm - > out.txt 2> err.txt || bad "eval - (stdin): $(cat err.txt)"
grep -q "^-: 3 tokens, mean NLL" out.txt || bad "eval - (stdin): $(cat out.txt)"

[ $failed = 0 ] && echo "files of the command-line tools: all checks passed"
exit $failed
