#!/bin/sh
# A help2man include file: a COMMANDS section holding `txlm COMMAND --help`
# for every command that `txlm --help` lists, verbatim.
# usage: txlm-commands.sh PATH/TO/txlm
set -eu
txlm=$1
echo "[COMMANDS]"
"$txlm" --help 2>&1 | sed -n '/^commands:/,/^$/p' | awk 'NF && !/^commands:/ {print $1}' |
while read -r cmd; do
    printf '.SS "txlm %s"\n.nf\n' "$cmd"
    # roff: backslashes doubled; a line starting with . or ' kept as text
    "$txlm" "$cmd" --help 2>&1 | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"
    printf '.fi\n'
done
