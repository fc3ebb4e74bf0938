#!/usr/bin/env bash
# tools/txlm/txlm-completion.bash, as bash runs it on Tab: the commands of
# `txlm --help`, each command's options from its own --help, txlm-pack's
# options, and file names for anything else.
# usage: test_completion.sh COMPLETION_SCRIPT TXLM TXLM_PACK
set -euo pipefail
source "$1"
txlm=$2 pack=$3
fails=0
# $1: the function; $2: what it should offer (space-separated, in order); the rest: the words
expect() {
    local fn=$1 want=$2; shift 2
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
    "$fn" || true  # (compgen fails when nothing matches: the comparison below tells)
    local got="${COMPREPLY[*]}"
    if [ "$got" = "$want" ]; then
        echo "ok: '${*:2}' -> '$got'"
    else
        echo "FAIL: '${*:2}' -> '$got', expected '$want'"; fails=$((fails + 1))
    fi
}
expect _txlm "generate" "$txlm" ge
expect _txlm "serve" "$txlm" se
expect _txlm "--temp --temperature" "$txlm" generate --tem
expect _txlm "--api-key --api-key-file" "$txlm" serve --api-k
expect _txlm "--state-in" "$txlm" chat --state
expect _txlm "--state-in --state-out" "$txlm" generate --state
expect _txlm "" "$txlm" generate -m ""
expect _txlm_pack "--dtype" "$pack" --dt
expect _txlm_pack "--tokenizer" "$pack" in -o out.txlm --tok
# every command of txlm --help offered after "txlm "
COMP_WORDS=("$txlm" ""); COMP_CWORD=1; _txlm || true
all=" ${COMPREPLY[*]} "
for cmd in devices info eval score generate chat serve bench --version; do
    [[ $all == *" $cmd "* ]] || { echo "FAIL: 'txlm ' does not offer $cmd: $all"; fails=$((fails + 1)); }
done
[ $fails -eq 0 ] && echo "bash completion: commands, options and files as expected"
exit $fails
