/* The lines txlm chat reads (chat_input.c): on a terminal through
 * libedit (line editing, and history: the Up arrow brings back a line),
 * its "> " prompt on standard error; from a pipe or a file plainly, with
 * no prompt at all. */
#ifndef TXLM_CHAT_INPUT_H
#define TXLM_CHAT_INPUT_H

#include <stddef.h>

typedef struct chat_input {
    int terminal;   /* standard input is a terminal: libedit */
    char *line;     /* the last line read, ending with '\n' (but a last one without it) */
    size_t cap;
} chat_input;

void chat_input_open(chat_input *in);
/* The next line and its length, or NULL at the end (end of input, or an
 * interrupted read: Ctrl-C). On a terminal the end leaves the cursor on a
 * new line. */
const char *chat_input_read(chat_input *in, size_t *len);
void chat_input_close(chat_input *in);

#endif
