/* What the packer takes from a checkpoint, read off the tensor table:
 * each stored tensor under its checkpoint name, and the names a
 * checkpoint may also carry as tied copies (torch.save state dicts list a
 * tied tensor under both names, and a shared r bias under every layer). */
#include "pack_names.h"

#include <stdio.h>
#include <stdlib.h>

#include <txlm_status.h>

typedef struct builder {
    txlm_pack_name *names;
    uint32_t n, cap;
    txlm_pack_tie *ties;
    uint32_t n_ties, tie_cap;
} builder;

static void tie(builder *b, const char *src, const char *target)
{
    if (b->n_ties == b->tie_cap) return; /* cannot happen: the caps count every tensor */
    txlm_pack_tie *t = &b->ties[b->n_ties++];
    snprintf(t->src, sizeof t->src, "%s", src);
    snprintf(t->target, sizeof t->target, "%s", target);
}

static int add(void *user, const txlm_tt_slot *s)
{
    builder *b = user;
    if (s->tied) {
        tie(b, s->name, s->tie);
        return 0;
    }
    if (b->n == b->cap) return 0;
    txlm_pack_name *p = &b->names[b->n++];
    p->t = *s;
    snprintf(p->src, sizeof p->src, "%s", s->shared[0] ? s->shared : s->name);
    if (s->shared[0]) tie(b, s->name, s->shared);
    return 0;
}

static int count(void *user, const txlm_tt_slot *s)
{
    (void)s;
    (*(uint32_t *)user)++;
    return 0;
}

int txlm_pack_names(const txlm_hparams *h, txlm_pack_name **names, uint32_t *n_names, txlm_pack_tie **ties,
                    uint32_t *n_ties, txlm_err *err)
{
    uint32_t n = 0;
    txlm_tt_each(h, count, &n);
    builder b = {malloc((n ? n : 1) * sizeof *b.names), 0, n, malloc((n ? n : 1) * sizeof *b.ties), 0, n};
    if (!b.names || !b.ties) {
        free(b.names);
        free(b.ties);
        return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for %u tensor names", n);
    }
    txlm_tt_each(h, add, &b);
    *names = b.names;
    *n_names = b.n;
    *ties = b.ties;
    *n_ties = b.n_ties;
    return 0;
}
