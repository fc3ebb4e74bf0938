/* Kept recordings: their keys and the step buffer (replay.h). */
#include "replay.h"

#include <string.h>

#include "session.h"

int txlm_replay_write_step(txlm_session *s, txlm_err *err)
{
    uint32_t hd = s->m->h.n_head * s->m->dev.dh;
    uint32_t words[4] = {s->kv_base, txlm_seg_row(s) * 2 * hd, 0, 0};
    return txlm_buf_upload(&s->m->ctx->vk, &s->replay.step_host, 0, words, sizeof words, err);
}

void txlm_replay_record_step(txlm_session *s)
{
    txlm_rec_copy(&s->rec, s->replay.step_host.buf, 0, s->replay.step.buf, 0, s->replay.step.size);
}

/* A kept recording serves a segment without outputs or capture, whose
 * position keys exist and whose keys and values do not wrap past the
 * ring's end, once the memory is full (before that mlen grows and no key
 * comes back). */
int txlm_replay_slot(txlm_session *s, const int32_t *tokens, uint32_t qlen, uint32_t want, uint32_t longest)
{
    const txlm_model *m = s->m;
    txlm_replay *r = &s->replay;
    if (want || s->capture || s->mlen != s->mem_len || longest + 1 > s->rk_rows || txlm_seg_row(s) + qlen > s->kv_rows ||
        m->n_emb_parts > 32 || !txlm_rec_can_keep(&s->rec))
        return 0;
    txlm_seg_key key = {qlen, s->mlen, 0};
    for (uint32_t c = 0; c < m->n_emb_parts; c++)
        for (uint32_t i = 0; i < qlen; i++)
            if (tokens[i] >= m->emb[c].id_lo && tokens[i] < m->emb[c].id_hi) key.parts |= 1u << c;
    for (uint32_t i = 0; i < TXLM_REC_KEPT; i++)
        if (txlm_rec_kept_ready(&s->rec, i + 1) && !memcmp(&r->kept[i], &key, sizeof key)) return (int)i + 1;
    uint32_t i = r->next;
    r->next = (i + 1) % TXLM_REC_KEPT;
    r->kept[i] = key;
    /* its old recording is not this key's, even if the new one never gets made */
    txlm_rec_kept_drop(&s->rec, i + 1);
    return -(int)(i + 1);
}
