/* Kept recordings: the one entry, its key and the step buffer (replay.h). */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "pass.h"

/* The pass's step words: each stream's entry (the attention plan's), and
 * on the direct route the element offset of the segment's first row in
 * its ring (the k|v product's DYN_Y). */
static int write_step(txlm_pass *p, txlm_err *err)
{
    txlm_workspace *w = p->w;
    uint32_t *words = p->attn.words;
    if (p->kv == TXLM_KV_DIRECT)
        words[TXLM_STEP_KV_OUT] = txlm_seg_row(p->st[0].s) * 2 * w->m->h.n_head * w->m->dev.dh;
    size_t n = TXLM_ENTRY_TABLE + (size_t)p->n * TXLM_ENTRY_WORDS;
    return txlm_buf_upload(&w->m->ctx->vk, &w->step_host, 0, words, n * sizeof *words, err);
}

/* The one keying rule (replay.h): whether the pass can be kept, its
 * commands depending on nothing its step words do not give. */
static int keyable(const txlm_pass *p)
{
    if (p->out || p->kv == TXLM_KV_COPY) return 0;
    for (uint32_t i = 0; i < p->n; i++) {
        const txlm_session *s = p->st[i].s;
        if (s->capture || s->mlen != s->mem_len || txlm_rk_rows_needed(s, p->st[i].qlen) > s->rk_rows) return 0;
    }
    return 1;
}

/* The key of a keyable pass, malloc'd (NULL: out of host memory). */
static uint64_t *pass_key(const txlm_pass *p)
{
    size_t len = 2 + 3 * (size_t)p->n;
    uint64_t *key = malloc(len * sizeof *key);
    if (!key) return NULL;
    key[0] = len, key[1] = p->kv;
    for (uint32_t i = 0; i < p->n; i++) {
        const txlm_session *s = p->st[i].s;
        key[2 + 3 * i] = s->serial;
        key[3 + 3 * i] = p->st[i].qlen | (uint64_t)s->mlen << 32;
        key[4 + 3 * i] = s->rk_rows;
    }
    return key;
}

/* The slot of a finished recording of key (its slot, key freed), or the
 * slot a new one is recorded into (negated; key kept for it). The slot a
 * new key takes loses its old recording, even if the new one never gets
 * made. */
static int slot_of(txlm_workspace *w, uint64_t *key)
{
    txlm_replay *r = &w->replay;
    for (uint32_t i = 0; i < TXLM_REC_KEPT; i++)
        if (txlm_rec_kept_ready(&w->rec, i + 1) && r->keys[i] && r->keys[i][0] == key[0] &&
            !memcmp(r->keys[i], key, key[0] * sizeof *key))
            return free(key), (int)i + 1;
    uint32_t i = r->next;
    r->next = (i + 1) % TXLM_REC_KEPT;
    txlm_rec_kept_drop(&w->rec, i + 1);
    free(r->keys[i]);
    r->keys[i] = key;
    return -(int)(i + 1);
}

int txlm_replay_begin(txlm_pass *p, int *replayed, txlm_err *err)
{
    txlm_workspace *w = p->w;
    *replayed = 0;
    int rc = write_step(p, err);
    if (rc) return rc;
    /* its commands the same whether kept or not (TXLM_NO_REPLAY compares them) */
    p->all_clusters = keyable(p);
    uint64_t *key = p->all_clusters && txlm_rec_can_keep(&w->rec) ? pass_key(p) : NULL;
    int slot = key ? slot_of(w, key) : 0;
    if (slot > 0) {
        *replayed = 1;
        return txlm_rec_replay(&w->rec, (uint32_t)slot, err);
    }
    rc = slot < 0 ? txlm_rec_begin_kept(&w->rec, (uint32_t)-slot, err) : txlm_rec_begin(&w->rec, err);
    /* the step values move to device memory, where the kernels read them fast */
    if (!rc) txlm_rec_copy(&w->rec, w->step_host.buf, 0, w->step.buf, 0, w->step.size);
    return rc;
}

void txlm_replay_drop(txlm_replay *r, txlm_rec *rec)
{
    for (uint32_t i = 0; i < TXLM_REC_KEPT; i++) {
        txlm_rec_kept_drop(rec, i + 1);
        free(r->keys[i]), r->keys[i] = NULL;
    }
}

void txlm_replay_free(txlm_replay *r)
{
    for (uint32_t i = 0; i < TXLM_REC_KEPT; i++) free(r->keys[i]), r->keys[i] = NULL;
}
