/* The lines txlm chat reads (chat_input.h). libedit's readline() gives
 * the line without its '\n'; one is put back, so that a line typed and a
 * line piped are the same text to the model (a word model's <eos>). */
#include "chat_input.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>

void chat_input_open(chat_input *in)
{
    memset(in, 0, sizeof *in);
    in->terminal = isatty(STDIN_FILENO) && isatty(STDERR_FILENO);
    if (!in->terminal) return;
    /* Ctrl-C is the chat's (it ends the chat at the prompt): libedit must not catch it */
    rl_catch_signals = 0;
    rl_instream = stdin;
    rl_outstream = stderr; /* the prompt is not part of the conversation on stdout */
    using_history();
}

static const char *from_terminal(chat_input *in, size_t *len)
{
    char *got = readline("> ");
    if (!got) {
        fputc('\n', stderr); /* Ctrl-D or Ctrl-C: the shell's prompt starts on a line of its own */
        return NULL;
    }
    size_t n = strlen(got);
    if (n) add_history(got);
    if (n + 2 > in->cap) {
        char *b = realloc(in->line, n + 2);
        if (!b) return free(got), NULL;
        in->line = b, in->cap = n + 2;
    }
    memcpy(in->line, got, n);
    in->line[n] = '\n', in->line[n + 1] = 0;
    free(got);
    *len = n + 1;
    return in->line;
}

const char *chat_input_read(chat_input *in, size_t *len)
{
    if (in->terminal) return from_terminal(in, len);
    errno = 0;
    ssize_t n = getline(&in->line, &in->cap, stdin);
    if (n < 0) return NULL;
    *len = (size_t)n;
    return in->line;
}

void chat_input_close(chat_input *in)
{
    free(in->line);
    memset(in, 0, sizeof *in);
}
