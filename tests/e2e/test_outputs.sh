#!/usr/bin/env bash
# Every file a command writes, checked against what it reads, before the
# work (docs/reliability.md, "Outputs"):
#  - same file: every output flag of every command, given an input of the
#    same command (the model, the text, a prompt file, a state) by its
#    name, through a symbolic link, through a hard link, and as standard
#    input; or another output of the same command: refused with a message,
#    status 1, the input byte for byte as it was, no temporary left;
#  - before the work: an output in a folder that does not exist fails
#    before the model is even read (a damaged model is not reported) and
#    before anything is printed;
#  - standard output appended to an input (`score -m M FILE >> FILE`), for
#    every command: refused the same way, before the work;
#  - "-": standard output for every output flag, the same bytes as the
#    file, no file named "-"; the figures or the text then go to standard
#    error; binary data never to a terminal;
#  - generate -f reads every byte (a NUL byte too, with --binary-ok: without
#    it such a file is refused as not text), as logprobs -f does;
#  - txlm-pack --synthetic --export-safetensors never overwrites its config;
#  - txlm-pack -o -: standard output (the bytes of -o FILE, never a
#    terminal, no temporary left), --export-safetensors - refused, and
#    neither -o - nor --list's lines appended to what it reads.
# usage: test_outputs.sh TXLM TXLM_PACK GOLDEN_CASE_DIR
set -u
txlm=$(realpath "$1") pack=$(realpath "$2") case_dir=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$pack" "$case_dir" -o m.txlm > /dev/null || exit 1
"$pack" "$case_dir" -o m2.txlm --dtype f16 > /dev/null || exit 1
printf 'w5 w9 w12 w7 w8\nw3 w4 w5\n' > text.txt
printf 'w5 w9\n' > prompt.txt
"$txlm" generate -m m.txlm -p w5 -n 2 --seed 1 --state-out s.state > /dev/null 2>&1 || exit 1
printf 'damaged' > broken.txlm

# refused NAME VICTIM CMD...: status 1, "the same file" (or "written twice")
# named, VICTIM unchanged, no temporary left beside it
refused() {
    local name=$1 victim=$2
    shift 2
    cp "$victim" before.bin
    "$@" > out.bin 2> err.txt < /dev/null
    local st=$?
    if [ $st != 1 ] || ! grep -Eq "the same file|written twice" err.txt; then
        bad "$name: status $st: $(cat err.txt)"
    elif ! cmp -s "$victim" before.bin; then
        bad "$name: $victim was changed"
    elif ls -a | grep -q '\.tmp$'; then
        bad "$name: a temporary was left: $(ls -a)"
    else
        echo "ok: $name: $(head -n 1 err.txt)"
    fi
}
# each way of naming VICTIM: by name, a symbolic link, a hard link
each_name() {
    local what=$1 victim=$2 cmd=$3
    rm -f sym.lnk hard.lnk
    ln -s "$victim" sym.lnk && ln "$victim" hard.lnk
    for o in "$victim" sym.lnk hard.lnk; do
        eval "refused \"$what ($o)\" \"$victim\" $(printf '%s' "$cmd" | sed "s|OUT|$o|g")"
    done
    rm -f sym.lnk hard.lnk
}

# ---- the same file -------------------------------------------------------
each_name "logprobs -o = the model" m.txlm '"$txlm" logprobs -m m.txlm --tokens 3,17 -o OUT'
each_name "logprobs -o = the text" text.txt '"$txlm" logprobs -m m.txlm -f text.txt -o OUT'
each_name "eval --per-token = the model" m.txlm '"$txlm" eval -m m.txlm text.txt --per-token OUT'
each_name "eval --per-token = the text" text.txt '"$txlm" eval -m m.txlm text.txt --per-token OUT'
each_name "compare --per-token = model A" m.txlm '"$txlm" compare -m m.txlm -m m2.txlm text.txt --per-token OUT'
each_name "compare --per-token = model B" m2.txlm '"$txlm" compare -m m.txlm -m m2.txlm text.txt --per-token OUT'
each_name "compare --per-token = the text" text.txt '"$txlm" compare -m m.txlm -m m2.txlm text.txt --per-token OUT'
for flag in --f32 --csv; do
    each_name "attention $flag = the model" m.txlm "\"\$txlm\" attention -m m.txlm -p 'w5 w9' $flag OUT"
    each_name "attention $flag = the text" text.txt "\"\$txlm\" attention -m m.txlm -f text.txt $flag OUT"
done
refused "attention -o = the model (a .png name)" m.txlm sh -c 'ln -sf m.txlm m.png && "$0" attention -m m.txlm -p "w5 w9" -o m.png' "$txlm"
rm -f m.png
each_name "generate --state-out = the model" m.txlm '"$txlm" generate -m m.txlm -p w5 -n 2 --state-out OUT'
each_name "generate --state-out = the prompt file" prompt.txt '"$txlm" generate -m m.txlm -f prompt.txt -n 2 --state-out OUT'
each_name "generate --state-out = --state-in" s.state '"$txlm" generate -m m.txlm --state-in s.state -n 2 --state-out OUT'
# the text as standard input, redirected from the output's file
refused "eval - < text.txt --per-token text.txt" text.txt sh -c '"$0" eval -m m.txlm - --per-token text.txt < text.txt' "$txlm"
refused "generate -f - < prompt.txt --state-out prompt.txt" prompt.txt sh -c '"$0" generate -m m.txlm -f - -n 2 --state-out prompt.txt < prompt.txt' "$txlm"
# standard output appended to an input
refused "logprobs -o - >> the model" m.txlm sh -c '"$0" logprobs -m m.txlm --tokens 3 -o - >> m.txlm' "$txlm"
# what a command prints on standard output, appended to one of its inputs: every command, before any work
appended() { refused "$1" "$2" sh -c "$3" "$txlm"; }
appended "score >> the text" text.txt '"$0" score -m m.txlm text.txt >> text.txt'
appended "score - < the text >> the text" text.txt '"$0" score -m m.txlm - < text.txt >> text.txt'
appended "score >> the model" m.txlm '"$0" score -m m.txlm text.txt >> m.txlm'
appended "eval >> the text" text.txt '"$0" eval -m m.txlm text.txt >> text.txt'
appended "eval - < the text >> the text" text.txt '"$0" eval -m m.txlm - < text.txt >> text.txt'
appended "compare >> model B" m2.txlm '"$0" compare -m m.txlm -m m2.txlm text.txt >> m2.txlm'
appended "compare >> the text" text.txt '"$0" compare -m m.txlm -m m2.txlm text.txt >> text.txt'
appended "logprobs -f >> the text" text.txt '"$0" logprobs -m m.txlm -f text.txt -o lp_new.f32 >> text.txt'
appended "generate -f >> the prompt file" prompt.txt '"$0" generate -m m.txlm -f prompt.txt -n 2 >> prompt.txt'
appended "generate --state-in >> the state" s.state '"$0" generate -m m.txlm --state-in s.state -n 2 >> s.state'
appended "generate >> the model" m.txlm '"$0" generate -m m.txlm -p w5 -n 2 >> m.txlm'
appended "info >> the model" m.txlm '"$0" info -m m.txlm >> m.txlm'
appended "attention -f >> the text" text.txt '"$0" attention -m m.txlm -f text.txt --csv a_new.csv >> text.txt'
appended "bench >> the model" m.txlm '"$0" bench -m m.txlm -r 1 >> m.txlm'
appended "chat < FILE >> FILE" prompt.txt '"$0" chat -m m.txlm -n 2 < prompt.txt >> prompt.txt'
appended "chat -f >> the starting prompt" prompt.txt '"$0" chat -m m.txlm -f prompt.txt -n 2 >> prompt.txt'
appended "serve >> the model" m.txlm '"$0" serve -m m.txlm --port 0 >> m.txlm'
[ ! -e lp_new.f32 ] && [ ! -e a_new.csv ] || bad "an output of a refused command was written"
# and standard output to any other file is written as before
"$txlm" score -m m.txlm - < text.txt >> scores.tsv && [ "$(head -n 1 scores.tsv | cut -f 1)" = sentence_id ] ||
    bad "score - < text >> another file: $(head -n 2 scores.tsv)"
# two outputs of one command in one file
printf 'old' > twice.out
refused "attention --f32 X --csv X" twice.out "$txlm" attention -m m.txlm -p "w5 w9" --f32 twice.out --csv twice.out
refused "attention --f32 ./X --csv X" twice.out "$txlm" attention -m m.txlm -p "w5 w9" --f32 ./twice.out --csv twice.out
# standard output redirected to an output's file: the output's rename would
# leave what the command prints in a file no name reaches (or the reverse)
printf 'old' > twice.out
stdout_twice() { refused "$1 > X" twice.out sh -c "$2 >> twice.out" "$txlm"; }
stdout_twice "logprobs -o X" '"$0" logprobs -m m.txlm --tokens 3,17 -o twice.out'
stdout_twice "eval --per-token X" '"$0" eval -m m.txlm text.txt --per-token twice.out'
stdout_twice "compare --per-token ./X" '"$0" compare -m m.txlm -m m2.txlm text.txt --per-token ./twice.out'
stdout_twice "attention --csv X" '"$0" attention -m m.txlm -p "w5 w9" --csv twice.out'
stdout_twice "generate --state-out X" '"$0" generate -m m.txlm -p w5 -n 2 --state-out twice.out'
# chat goes on after a /save it refuses
printf '/save twice.out\nw5\n' | "$txlm" chat -m m.txlm -n 2 >> twice.out 2> err.txt
grep -q "/save twice.out and standard output: the same file" err.txt && [ "$(head -c 3 twice.out)" = old ] ||
    bad "chat /save X > X: $(cat err.txt)"
"$txlm" eval -m m.txlm text.txt --per-token - > twice.out 2> /dev/null && [ -s twice.out ] ||
    bad "eval --per-token - > X: not written"
rm -f twice.out new.png
"$txlm" attention -m m.txlm -p "w5 w9" -o new.png --csv ./new.png > /dev/null 2> err.txt && bad "attention -o X --csv ./X (new) accepted"
grep -q "written twice" err.txt && [ ! -e new.png ] || bad "attention -o X --csv ./X: $(cat err.txt)"
# chat /save: the starting prompt file (the model and --state-in: text_gen_cli)
printf '/save prompt.txt\nw5\n' | "$txlm" chat -m m.txlm -f prompt.txt -n 2 > /dev/null 2> err.txt
grep -q "the same file as the starting prompt" err.txt && cmp -s prompt.txt <(printf 'w5 w9\n') ||
    bad "chat /save = -f FILE: $(cat err.txt)"
# bench writes no file: -o is the table's format, and a path is refused as one
refused_format() { "$txlm" bench -m m.txlm -o m.txlm > /dev/null 2> err.txt; grep -q "give text, md, csv or json" err.txt; }
cp m.txlm before.bin
refused_format && cmp -s m.txlm before.bin || bad "bench -o m.txlm: $(cat err.txt)"
# txlm-pack --synthetic with the HF export: its config.json beside the export is the input
mkdir -p hf && cp "$case_dir/config.json" hf/config.json
refused_pack() { "$pack" "$@" > /dev/null 2> err.txt; [ $? = 1 ] && grep -q "$refusal" err.txt; }
cp hf/config.json before.bin
refusal="would overwrite the input hf/config.json"
refused_pack --synthetic hf/config.json -o syn.txlm --export-safetensors hf/model.safetensors &&
    cmp -s hf/config.json before.bin && [ ! -e hf/model.safetensors ] || bad "txlm-pack --export-safetensors over its config: $(cat err.txt)"
refusal="hf/vocab.txt: given as two outputs"
refused_pack --synthetic "$case_dir/config.json" -o hf/vocab.txt --export-safetensors hf/model.safetensors ||
    bad "txlm-pack -o = the export's vocab.txt: $(cat err.txt)"

# ---- before the work -----------------------------------------------------
# A damaged model and an output nobody can create: the output is told, not
# the model, and nothing is printed: the outputs come first.
early() {
    local name=$1
    shift
    "$@" > out.txt 2> err.txt < /dev/null
    local st=$?
    if [ $st != 1 ] || ! grep -q "cannot create a file in nosuchdir" err.txt || grep -q "magic\|too short\|broken.txlm" err.txt; then
        bad "$name: status $st: $(cat err.txt)"
    elif [ -s out.txt ]; then
        bad "$name: printed before failing: $(head -c 200 out.txt)"
    else
        echo "ok: $name fails first: $(cat err.txt)"
    fi
}
early "logprobs -o" "$txlm" logprobs -m broken.txlm --tokens 3 -o nosuchdir/x.f32
early "eval --per-token" "$txlm" eval -m broken.txlm text.txt --per-token nosuchdir/x.f32
early "compare --per-token" "$txlm" compare -m broken.txlm -m m.txlm text.txt --per-token nosuchdir/x.tsv
early "attention -o" "$txlm" attention -m broken.txlm -p w5 -o nosuchdir/x.png
early "attention --f32" "$txlm" attention -m broken.txlm -p w5 --f32 nosuchdir/x.f32
early "attention --csv" "$txlm" attention -m broken.txlm -p w5 --csv nosuchdir/x.csv
early "generate --state-out" "$txlm" generate -m broken.txlm -p w5 -n 2 --state-out nosuchdir/x.state
# and with a good model: no generated text before the failure
"$txlm" generate -m m.txlm -p w5 -n 5 --state-out nosuchdir/x.state > out.txt 2> err.txt
[ $? = 1 ] && [ ! -s out.txt ] || bad "generate --state-out nosuchdir: printed $(cat out.txt)"
"$txlm" eval -m m.txlm text.txt --per-token nosuchdir/x.f32 > out.txt 2> err.txt
[ $? = 1 ] && [ ! -s out.txt ] || bad "eval --per-token nosuchdir: printed $(cat out.txt)"

# ---- "-" is standard output ------------------------------------------------
same_as_file() {
    local name=$1 file=$2
    if [ -e ./- ]; then bad "$name -: a file named \"-\" was made"; rm -f ./-
    elif ! cmp -s "$file" stdout.bin; then bad "$name -: standard output differs from the file"
    else echo "ok: $name - writes standard output"; fi
}
"$txlm" logprobs -m m.txlm --tokens 3,17 -o lp.f32 && "$txlm" logprobs -m m.txlm --tokens 3,17 -o - > stdout.bin
same_as_file "logprobs -o" lp.f32
"$txlm" eval -m m.txlm text.txt --per-token nll.f32 > /dev/null && "$txlm" eval -m m.txlm text.txt --per-token - > stdout.bin 2> err.txt
same_as_file "eval --per-token" nll.f32
grep -q "^text.txt: [0-9]* tokens, mean NLL .* perplexity " err.txt || bad "eval --per-token -: the figures not on stderr: $(cat err.txt)"
"$txlm" compare -m m.txlm -m m2.txlm text.txt --per-token pos.tsv > /dev/null &&
    "$txlm" compare -m m.txlm -m m2.txlm text.txt --per-token - > stdout.bin 2> err.txt
same_as_file "compare --per-token" pos.tsv
grep -q "KL(A || B)" err.txt || bad "compare --per-token -: the figures not on stderr"
for flag in -o --f32 --csv; do
    out=a.bin
    [ $flag = -o ] && out=a.png
    "$txlm" attention -m m.txlm -p "w5 w9 w12" $flag $out && "$txlm" attention -m m.txlm -p "w5 w9 w12" $flag - > stdout.bin
    same_as_file "attention $flag" $out
done
"$txlm" generate -m m.txlm -p "w5 w9" -n 4 --seed 3 --state-out g.state > g.txt 2> /dev/null &&
    "$txlm" generate -m m.txlm -p "w5 w9" -n 4 --seed 3 --state-out - > stdout.bin 2> err.txt
same_as_file "generate --state-out" g.state
grep -qFx "$(cat g.txt)" err.txt || bad "generate --state-out -: the text not on stderr: $(cat err.txt)"
# "-" as an input that is a file elsewhere: --state-in - and bench --ids - read standard input
"$txlm" generate -m m.txlm -n 3 --seed 5 --state-in g.state --state-out gs_file.state > gs_file.txt 2> /dev/null &&
    "$txlm" generate -m m.txlm -n 3 --seed 5 --state-in - --state-out gs_stdin.state < g.state > gs_stdin.txt 2> err.txt &&
    cmp -s gs_file.state gs_stdin.state && cmp -s gs_file.txt gs_stdin.txt || bad "generate --state-in -: $(cat err.txt)"
"$txlm" generate -m m.txlm -f - --state-in - -n 2 < g.state > /dev/null 2> err.txt
[ $? = 1 ] && grep -q "only one of them can read standard input" err.txt || bad "generate -f - --state-in -: $(cat err.txt)"
"$txlm" chat -m m.txlm --state-in - < g.state > /dev/null 2> err.txt
[ $? = 1 ] && grep -q "standard input holds the conversation" err.txt || bad "chat --state-in -: $(cat err.txt)"
printf '/load -\n' | "$txlm" chat -m m.txlm -n 2 > /dev/null 2> err.txt
grep -q "/load -: standard input holds the conversation" err.txt || bad "chat /load -: $(cat err.txt)"
printf '\005\000\000\000\011\000\000\000' > ids.bin
"$txlm" bench -m m.txlm --ids - --workloads gen -r 1 < ids.bin > /dev/null 2> err.txt || bad "bench --ids -: $(cat err.txt)"
[ ! -e ./- ] || bad "an input \"-\" looked for a file named -"

# binary data to a terminal is refused; text is not
on_tty() {
    python3 - "$@" <<'PY'
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
_, st = os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128)
PY
}
for cmd in "logprobs -m m.txlm --tokens 3 -o -" "eval -m m.txlm text.txt --per-token -" "attention -m m.txlm -p w5 --f32 -" \
           "attention -m m.txlm -p w5 -o -" "generate -m m.txlm -p w5 -n 2 --state-out -"; do
    on_tty "$txlm" $cmd > tty.txt
    st=$?
    [ $st = 1 ] && grep -q "binary data is not written to a terminal" tty.txt || bad "$cmd on a terminal: status $st: $(head -c 300 tty.txt)"
done
on_tty "$txlm" attention -m m.txlm -p w5 --csv - > tty.txt || bad "attention --csv - on a terminal: $(head -c 300 tty.txt)"
"$txlm" attention -m m.txlm -p w5 --f32 - --csv - > /dev/null 2> err.txt && bad "two outputs to standard output accepted"
grep -q "only one output can go to standard output" err.txt || bad "two outputs to standard output: $(cat err.txt)"

# ---- txlm-pack: "-" is standard output too -----------------------------------
mkdir -p stage && rm -f ./-
TMPDIR=$work/stage "$pack" "$case_dir" -o - > p_stdout.txlm 2> err.txt || bad "txlm-pack -o -: $(cat err.txt)"
cmp -s p_stdout.txlm m.txlm && [ ! -e ./- ] && [ -z "$(ls -A stage)" ] ||
    bad "txlm-pack -o -: not the bytes of -o FILE, a file named \"-\" made, or a temporary left: $(ls -A . stage | tr '\n' ' ')"
TMPDIR=$work/stage "$pack" "$case_dir" -o - 2> /dev/null | cmp -s - m.txlm || bad "txlm-pack -o - | pipe: other bytes"
"$pack" --synthetic "$case_dir/config.json" -o syn_file.txlm > /dev/null 2>&1 &&
    "$pack" --synthetic "$case_dir/config.json" -o - --export-safetensors exp/model.safetensors > syn_out.txlm 2> err.txt &&
    cmp -s syn_file.txlm syn_out.txlm && [ -s exp/model.safetensors ] && [ -s exp/config.json ] && [ -s exp/vocab.txt ] ||
    bad "txlm-pack -o - --export-safetensors: $(cat err.txt)"
"$pack" --synthetic "$case_dir/config.json" -o x.txlm --export-safetensors - > /dev/null 2> err.txt
[ $? = 1 ] && grep -q "export is three files" err.txt && [ ! -e ./- ] && [ ! -e x.txlm ] || bad "--export-safetensors -: $(cat err.txt)"
on_tty "$pack" "$case_dir" -o - > tty.txt
[ $? = 1 ] && grep -q "binary data is not written to a terminal" tty.txt || bad "txlm-pack -o - on a terminal: $(head -c 300 tty.txt)"
refused_pack_stdout() {
    local name=$1 victim=$2
    cp "$victim" before.bin
    sh -c "$3" "$pack" 2> err.txt
    if [ $? != 1 ] || ! grep -q "$4" err.txt || ! cmp -s "$victim" before.bin; then bad "$name: $(cat err.txt)"
    else echo "ok: $name: $(cat err.txt)"; fi
}
refused_pack_stdout "txlm-pack M --dtype f16 -o - >> M" m.txlm '"$0" m.txlm --dtype f16 -o - >> m.txlm' "would overwrite the input"
refused_pack_stdout "txlm-pack --list M >> M" m.txlm '"$0" --list m.txlm >> m.txlm' "a listing never goes into what it reads"
mkdir -p ck && cp "$case_dir/config.json" "$case_dir/model.safetensors" "$case_dir/vocab.txt" ck/ && printf 'x' > ck/listing.txt
refused_pack_stdout "txlm-pack --list DIR >> DIR/FILE" ck/listing.txt '"$0" --list ck >> ck/listing.txt' "a listing never goes into"
"$pack" --list ck > listing.txt 2> err.txt && grep -q "transformer" listing.txt || bad "txlm-pack --list DIR > elsewhere: $(cat err.txt)"

# ---- generate -f reads every byte ------------------------------------------
printf 'w5 \000w9 w12\n' > nul.txt
"$txlm" logprobs -m m.txlm -f nul.txt -o nul.f32 --binary-ok || bad "logprobs -f nul.txt"
rows=$(( $(stat -c %s nul.f32) / 4 / $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["n_token"])' "$case_dir/config.json") ))
"$txlm" generate -m m.txlm -f nul.txt -n 1 --seed 1 --binary-ok > gen.bin 2> err.txt || bad "generate -f nul.txt: $(cat err.txt)"
grep -q "prompt $rows tokens" err.txt || bad "generate -f: the prompt is not every byte ($rows tokens, as logprobs -f): $(cat err.txt)"
cmp -s <(head -c "$(stat -c %s nul.txt)" gen.bin) nul.txt || bad "generate -f: the prompt shown is not the file's bytes"

echo "$fails failures"
[ "$fails" = 0 ]
