/* The files one command reads and writes, checked together before any
 * work (cli_files.c):
 *  - no output is the same file as an input (the model, the text, a
 *    state), as another output, or, through links, either of them;
 *  - every output file's temporary is created at once, so an output that
 *    cannot be written fails before the work, not after it;
 *  - "-" as an output is standard output, for every flag of every command;
 *    at most one output goes there, binary data never to a terminal, and
 *    what the command would print on standard output (its figures, the
 *    generated text) goes to standard error instead;
 *  - what the command prints on standard output when no flag takes it
 *    never goes into an input either (`score -m M FILE >> FILE`). */
#ifndef TXLM_CLI_FILES_H
#define TXLM_CLI_FILES_H

#include <stddef.h>
#include <stdio.h>

#include "txlm.h"

#define CLI_MAX_INPUTS 8
#define CLI_MAX_OUTPUTS 4

typedef struct cli_files {
    struct {
        const char *what, *path;     /* "-": standard input */
    } in[CLI_MAX_INPUTS];
    int n_in;
    struct {
        const char *flag, *path;     /* "-": standard output */
        int binary, written;
        txlm_output *o;              /* a file's temporary, from cli_files_open */
    } out[CLI_MAX_OUTPUTS];
    int n_out;
    FILE *report;                    /* stdout, or stderr when an output takes stdout */
} cli_files;

/* An empty set: report is stdout. */
void cli_files_init(cli_files *f);
/* An input the command reads (what: "the model", "the text"); NULL paths are skipped. */
void cli_files_input(cli_files *f, const char *what, const char *path);
/* An output (flag: how the user named it, as "--per-token"); NULL paths
 * are skipped. Its index, or -1 for a NULL path. */
int cli_files_output(cli_files *f, const char *flag, const char *path, int binary);
/* The checks above, every output's temporary created: 0, or 1 after
 * printing why (nothing was created then). */
int cli_files_open(cli_files *f);
/* A command without output flags: its inputs (pairs of what and path,
 * ended by a NULL what; NULL paths are skipped) against standard output,
 * as cli_files_open checks them: 0, or 1 after printing why. */
int cli_stdout_not_input(const char *what, const char *path, ...);
/* Output k's bytes (several calls append): a file's temporary, or standard
 * output. 0, or 1 after printing why. */
int cli_files_write(cli_files *f, int k, const void *data, size_t n);
/* Session s's state (txlm_session_save) as output k's bytes: 0, or 1
 * after printing why (what: the flag or command, for the message). */
int cli_files_write_state(cli_files *f, int k, txlm_session *s, const char *what);
/* Every output written to takes its place (one not written to is left as
 * it was); 0, or 1 after printing why. The set is then empty. */
int cli_files_commit(cli_files *f);
/* Every temporary dropped: no output changes. Safe to call twice. */
void cli_files_abort(cli_files *f);

#endif
