/* Several streams on the command line and in one batch (cli_batch.h). */
#include "cli_batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_groups_free(int32_t **lists, uint32_t *lens, uint32_t n)
{
    for (uint32_t i = 0; lists && i < n; i++) free(lists[i]);
    free(lists);
    free(lens);
}

/* Group k of s (from p, len bytes) parsed into lists[k]. */
static int parse_group(const char *p, size_t len, const char *what, uint32_t k, int32_t **list, uint32_t *n)
{
    char name[96];
    snprintf(name, sizeof name, "%s (stream %u)", what, k);
    if (len == 0) return cli_error("%s: stream %u is empty", what, k);
    char *g = malloc(len + 1);
    if (!g) return cli_error("out of memory");
    memcpy(g, p, len);
    g[len] = 0;
    int rc = cli_parse_list(g, list, n, name);
    free(g);
    return rc;
}

int cli_parse_groups(const char *s, const char *what, int32_t ***lists, uint32_t **lens, uint32_t *n)
{
    uint32_t groups = 1;
    for (const char *p = s; *p; p++) groups += *p == ';';
    *n = 0;
    *lists = NULL, *lens = NULL;
    if (groups > CLI_MAX_STREAMS) return cli_error("%s: %u streams, at most %u", what, groups, CLI_MAX_STREAMS);
    *lists = calloc(groups, sizeof **lists);
    *lens = calloc(groups, sizeof **lens);
    if (!*lists || !*lens) return cli_groups_free(*lists, *lens, 0), cli_error("out of memory");
    const char *p = s;
    for (uint32_t k = 0; k < groups; k++) {
        size_t len = strcspn(p, ";");
        if (parse_group(p, len, what, k, &(*lists)[k], &(*lens)[k])) {
            cli_groups_free(*lists, *lens, k);
            *lists = NULL, *lens = NULL;
            return 1;
        }
        p += len + (p[len] == ';');
    }
    *n = groups;
    return 0;
}

int cli_batch_plan(txlm_model *m, uint32_t n, const txlm_session_options *so, txlm_batch_sizes *z)
{
    txlm_status st = txlm_batch_plan(m, n, so, z);
    if (st) return cli_lib_error(st, "planning the batch");
    if (z->total_bytes <= z->available_bytes) return 0;
    return cli_error("a batch of %u streams needs %.1f MiB of device memory (%.1f MiB per stream, %.1f MiB shared); "
                     "%.1f MiB are free: give fewer streams or shorter segments",
                     n, (double)z->total_bytes / 1048576.0,
                     (double)(z->stream_ring_bytes + z->stream_scratch_bytes) / 1048576.0,
                     (double)z->batch_bytes / 1048576.0, (double)z->available_bytes / 1048576.0);
}

int cli_batch_open(cli_batch *cb, txlm_model *m, uint32_t n, const txlm_session_options *so)
{
    memset(cb, 0, sizeof *cb);
    if (cli_batch_plan(m, n, so, &cb->z)) return 1;
    if (!(cb->s = calloc(n, sizeof *cb->s))) return cli_error("out of memory");
    cb->n = n;
    txlm_status st = txlm_batch_create(m, n, so, &cb->b);
    for (uint32_t i = 0; !st && i < n; i++) st = txlm_session_create(m, so, &cb->s[i]);
    if (!st) return 0;
    int rc = cli_lib_error(st, "creating the batch and its sessions");
    cli_batch_free(cb);
    return rc;
}

void cli_batch_free(cli_batch *cb)
{
    for (uint32_t i = 0; cb->s && i < cb->n; i++) txlm_session_free(cb->s[i]);
    free(cb->s);
    txlm_batch_free(cb->b);
    memset(cb, 0, sizeof *cb);
}
