/* Running a text through one session and keeping its last segment's attention. */
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "cli.h"

void attn_mask(uint32_t qlen, uint32_t mlen, uint32_t mem_len, int same_length, unsigned char *masked)
{
    uint32_t klen = mlen + qlen;
    int64_t mask_len = (int64_t)klen - mem_len, shift = mask_len > 0 ? (int64_t)qlen - mask_len : (int64_t)qlen;
    for (uint32_t i = 0; i < qlen; i++)
        for (uint32_t j = 0; j < klen; j++)
            masked[(size_t)i * klen + j] = j > mlen + i || (same_length && (int64_t)j <= (int64_t)i - shift);
}

static char *symbol_copy(const txlm_model *m, int32_t id)
{
    size_t len = 0;
    const char *s = txlm_token_symbol(m, id, &len);
    if (!s) s = "?", len = 1;
    char *c = malloc(len + 1);
    if (c) memcpy(c, s, len), c[len] = 0;
    return c;
}

static int fetch(txlm_model *m, txlm_session *s, const txlm_session_options *so, const int32_t *keys, attn_run *r)
{
    txlm_model_params p;
    txlm_model_get_params(m, &p);
    txlm_status st = txlm_session_attention(s, 0, NULL, NULL, &r->shape);
    if (st) return cli_lib_error(st, "reading the attention");
    const txlm_attention_shape *sh = &r->shape;
    size_t plane = (size_t)sh->n_head * sh->qlen * sh->klen;
    r->probs = calloc(sh->n_layer, sizeof *r->probs);
    r->terms = r->have_terms ? calloc(sh->n_layer, sizeof *r->terms) : NULL;
    r->masked = malloc((size_t)sh->qlen * sh->klen);
    r->key_labels = calloc(sh->klen, sizeof *r->key_labels);
    if (!r->probs || (r->have_terms && !r->terms) || !r->masked || !r->key_labels) return cli_error("out of memory");
    for (uint32_t l = 0; l < sh->n_layer; l++) {
        r->probs[l] = malloc(plane * sizeof(float));
        if (r->have_terms) r->terms[l] = malloc(4 * plane * sizeof(float));
        if (!r->probs[l] || (r->have_terms && !r->terms[l])) return cli_error("out of memory for the attention matrices");
        st = txlm_session_attention(s, l, r->probs[l], r->have_terms ? r->terms[l] : NULL, NULL);
        if (st) return cli_lib_error(st, "reading the attention");
    }
    uint32_t mem_len = so->mem_len ? so->mem_len : p.mem_len;
    int same_length = so->same_length >= 0 ? so->same_length != 0 : p.same_length;
    attn_mask(sh->qlen, sh->mlen, mem_len, same_length, r->masked);
    for (uint32_t j = 0; j < sh->klen; j++)
        if (!(r->key_labels[j] = symbol_copy(m, keys[j]))) return cli_error("out of memory");
    return 0;
}

int attn_run_tokens(txlm_model *m, const txlm_session_options *so, const int32_t *tokens, uint32_t n,
                    uint32_t seg_len, int terms, attn_run *out)
{
    memset(out, 0, sizeof *out);
    out->have_terms = terms;
    txlm_session_options o = *so;
    o.max_segment = seg_len < n ? seg_len : n; /* capture buffers scale with it */
    txlm_session *s = NULL;
    txlm_status st = txlm_session_create(m, &o, &s);
    if (st) return cli_lib_error(st, "creating a session");
    int rc = 0;
    uint32_t done = 0, mlen = 0;
    while (!rc && done < n) {
        uint32_t len = n - done < seg_len ? n - done : seg_len;
        /* Only the last segment is looked at; the ones before take the fast path. */
        if (done + len == n && (st = txlm_session_capture_attention(s, terms ? TXLM_CAPTURE_TERMS : TXLM_CAPTURE_PROBS)))
            rc = cli_lib_error(st, "capturing attention");
        mlen = txlm_session_memory_len(s);
        if (!rc && (st = txlm_session_feed(s, tokens + done, len, NULL))) rc = cli_lib_error(st, "running the model");
        done += len;
    }
    if (!rc) {
        out->first_query = n - (n - 1) % seg_len - 1;
        rc = fetch(m, s, &o, tokens + out->first_query - mlen, out);
    }
    txlm_session_free(s);
    if (rc) attn_run_free(out);
    return rc;
}

void attn_run_free(attn_run *r)
{
    for (uint32_t l = 0; l < r->shape.n_layer; l++) {
        if (r->probs) free(r->probs[l]);
        if (r->terms) free(r->terms[l]);
    }
    for (uint32_t j = 0; r->key_labels && j < r->shape.klen; j++) free(r->key_labels[j]);
    free(r->probs);
    free(r->terms);
    free(r->masked);
    free(r->key_labels);
    memset(r, 0, sizeof *r);
}

int attn_select(const attn_run *r, int layer, int head, attn_slice **out, uint32_t *n)
{
    const txlm_attention_shape *sh = &r->shape;
    uint32_t l0 = layer == ATTN_ALL ? 0 : (uint32_t)layer, l1 = layer == ATTN_ALL ? sh->n_layer : l0 + 1;
    uint32_t per_layer = head == ATTN_ALL ? sh->n_head : 1;
    size_t mat = (size_t)sh->qlen * sh->klen, plane = (size_t)sh->n_head * mat;
    *n = (l1 - l0) * per_layer;
    *out = calloc(*n, sizeof **out);
    if (!*out) return cli_error("out of memory");
    for (uint32_t l = l0, k = 0; l < l1; l++)
        for (uint32_t hh = 0; hh < per_layer; hh++, k++) {
            attn_slice *s = &(*out)[k];
            s->layer = l;
            s->head = head == ATTN_ALL ? (int)hh : head;
            for (int t = 0; t < 5; t++) {
                if (t < 4 && !r->have_terms) continue;
                const float *src = t < 4 ? r->terms[l] + t * plane : r->probs[l];
                if (!(s->m[t] = calloc(mat, sizeof(float)))) {
                    attn_slices_free(*out, *n);
                    *out = NULL;
                    return cli_error("out of memory");
                }
                uint32_t h0 = s->head == ATTN_MEAN ? 0 : (uint32_t)s->head;
                uint32_t h1 = s->head == ATTN_MEAN ? sh->n_head : h0 + 1;
                for (uint32_t h = h0; h < h1; h++)
                    for (size_t e = 0; e < mat; e++) s->m[t][e] += src[h * mat + e] / (float)(h1 - h0);
            }
        }
    return 0;
}

void attn_slices_free(attn_slice *s, uint32_t n)
{
    for (uint32_t k = 0; s && k < n; k++)
        for (int t = 0; t < 5; t++) free(s[k].m[t]);
    free(s);
}
