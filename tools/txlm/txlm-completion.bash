# bash completion for txlm and txlm-pack, installed as
# share/bash-completion/completions/txlm and .../txlm-pack.
# The commands and each command's options are read from the program's own
# --help when Tab is pressed, so they are always those of the txlm being
# run; any other word completes as a file name (models, texts, outputs).

# The options a --help text names: -x and --long words that begin a line,
# or follow a space, a comma, '[' or '(' and end at a space, ',', ']', '='
# or the line's end. $@: the program and its command.
_txlm_help_options()
{
    "$@" --help 2>&1 | grep -oE -- '(^|[ ,[(])--?[a-zA-Z][a-zA-Z0-9-]*([ ,=]|]|$)' |
        sed -E 's/^[ ,[(]//; s/[ ,=]$//; s/]$//' | sort -u
}

_txlm_complete_words()
{
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "$1" -- "$2"))
}

_txlm()
{
    local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        # the commands `txlm --help` lists under "commands:"
        _txlm_complete_words "$("$prog" --help 2>&1 | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
--help
--version" "$cur"
    elif [[ $cur == -* ]]; then
        _txlm_complete_words "$(_txlm_help_options "$prog" "${COMP_WORDS[1]}")" "$cur"
    else
        compopt -o default 2> /dev/null || true  # (outside a completion, as in tests, there is none to set)
        COMPREPLY=()
    fi
}

_txlm_pack()
{
    local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
    if [[ $cur == -* ]]; then
        _txlm_complete_words "$(_txlm_help_options "$prog")" "$cur"
    else
        compopt -o default 2> /dev/null || true  # (outside a completion, as in tests, there is none to set)
        COMPREPLY=()
    fi
}

complete -F _txlm txlm
complete -F _txlm_pack txlm-pack
