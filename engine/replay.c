/* Kept recordings: their keys and the step buffer (replay.h). */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "session.h"

int txlm_replay_write_step(txlm_session *s, txlm_err *err)
{
    uint32_t hd = s->m->h.n_head * s->m->dev.dh;
    uint32_t words[4] = {s->kv_base, 0, 0, 0}; /* word 0: memory row 0's ring row (kv_dyn 1) */
    words[TXLM_STEP_KV_OUT] = txlm_seg_row(s) * 2 * hd;
    return txlm_buf_upload(&s->m->ctx->vk, &s->replay.step_host, 0, words, sizeof words, err);
}

void txlm_replay_record_step(txlm_session *s)
{
    txlm_rec_copy(&s->rec, s->replay.step_host.buf, 0, s->replay.step.buf, 0, s->replay.step.size);
}

/* Bit c: a token in embedding cluster c (the embedding records a gather per cluster used). */
static uint32_t token_parts(const txlm_model *m, const int32_t *tokens, uint32_t n)
{
    uint32_t parts = 0;
    for (uint32_t c = 0; c < m->n_emb_parts; c++)
        for (uint32_t i = 0; i < n; i++)
            if (tokens[i] >= m->emb[c].id_lo && tokens[i] < m->emb[c].id_hi) parts |= 1u << c;
    return parts;
}

/* The slot a new key takes, its old recording dropped: it is not this
 * key's, even if the new one never gets made. */
static uint32_t take_slot(txlm_session *s)
{
    txlm_replay *r = &s->replay;
    uint32_t i = r->next;
    r->next = (i + 1) % TXLM_REC_KEPT;
    txlm_rec_kept_drop(&s->rec, i + 1);
    r->kept[i] = (txlm_seg_key){0};
    free(r->pass_kept[i]);
    r->pass_kept[i] = NULL;
    return i;
}

/* A kept recording serves a segment without outputs or capture, whose
 * position keys exist and whose keys and values do not wrap past the
 * ring's end, once the memory is full (before that mlen grows and no key
 * comes back). */
int txlm_replay_slot(txlm_session *s, const int32_t *tokens, uint32_t qlen, uint32_t want)
{
    const txlm_model *m = s->m;
    txlm_replay *r = &s->replay;
    if (want || s->capture || s->mlen != s->mem_len || txlm_rk_rows_needed(s, qlen) > s->rk_rows || txlm_seg_row(s) + qlen > s->kv_rows ||
        m->n_emb_parts > 32 || !txlm_rec_can_keep(&s->rec))
        return 0;
    txlm_seg_key key = {qlen, s->mlen, token_parts(m, tokens, qlen)};
    for (uint32_t i = 0; i < TXLM_REC_KEPT; i++)
        if (txlm_rec_kept_ready(&s->rec, i + 1) && !memcmp(&r->kept[i], &key, sizeof key)) return (int)i + 1;
    uint32_t i = take_slot(s);
    r->kept[i] = key;
    return -(int)(i + 1);
}

int txlm_replay_pass_keyable(const txlm_pass *p, uint32_t want)
{
    if (want || !p->attn) return 0;
    for (uint32_t i = 0; i < p->n; i++) {
        const txlm_session *s = p->st[i].s;
        if (s->mlen != s->mem_len || txlm_rk_rows_needed(s, p->st[i].qlen) > s->rk_rows) return 0;
    }
    return 1;
}

int txlm_replay_pass_slot(const txlm_pass *p)
{
    txlm_session *w = p->w;
    txlm_replay *r = &w->replay;
    if (!p->all_clusters || !txlm_rec_can_keep(&w->rec)) return 0;
    size_t len = 1 + 3 * (size_t)p->n;
    uint64_t *key = malloc(len * sizeof *key);
    if (!key) return 0;
    key[0] = len;
    for (uint32_t i = 0; i < p->n; i++) {
        const txlm_session *s = p->st[i].s;
        key[1 + 3 * i] = s->serial;
        key[2 + 3 * i] = p->st[i].qlen | (uint64_t)s->mlen << 32;
        key[3 + 3 * i] = s->rk_rows;
    }
    for (uint32_t i = 0; i < TXLM_REC_KEPT; i++)
        if (txlm_rec_kept_ready(&w->rec, i + 1) && r->pass_kept[i] && r->pass_kept[i][0] == len &&
            !memcmp(r->pass_kept[i], key, len * sizeof *key))
            return free(key), (int)i + 1;
    uint32_t i = take_slot(w);
    r->pass_kept[i] = key;
    return -(int)(i + 1);
}

void txlm_replay_free(txlm_replay *r)
{
    for (uint32_t i = 0; i < TXLM_REC_KEPT; i++) free(r->pass_kept[i]), r->pass_kept[i] = NULL;
}
