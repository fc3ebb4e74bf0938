/* safetensors + config.json + vocab.txt, the folder txlm-pack reads. */
#include "export_hf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <txlm_status.h>

#include "atomic_write.h"

typedef struct strbuf {
    char *p;
    size_t len, cap;
    int oom;
} strbuf;

static void sb_printf(strbuf *b, const char *fmt, ...) TXLM_PRINTF(2, 3);
static void sb_printf(strbuf *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = b->oom ? 0 : vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (b->oom || n < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap + (size_t)n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

static const char *st_dtype(uint32_t dt)
{
    switch (dt) {
    case TXLM_DT_F32: return "F32";
    case TXLM_DT_F16: return "F16";
    case TXLM_DT_BF16: return "BF16";
    default: return NULL;
    }
}

/* Header: {"__metadata__":{"format":"pt"},"name":{dtype, shape, data_offsets},...}
 * padded with spaces to a multiple of 8 bytes. */
static int st_header(const txlm_checkpoint *ck, strbuf *b, txlm_err *err)
{
    uint64_t off = 0;
    sb_printf(b, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (uint32_t i = 0; i < ck->n_tensors; i++) {
        const txlm_src_tensor *t = &ck->tensors[i];
        if (!st_dtype(t->dtype)) return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "tensor '%s': dtype %u cannot be exported", t->name, t->dtype);
        if (strpbrk(t->name, "\"\\") || strlen(t->name) != strcspn(t->name, "\x01\x02\x03\x04\x05\x06\x07\x08\t\n\r"))
            return txlm_fail(err, TXLM_ERR_UNSUPPORTED, "tensor name '%s' would need JSON escapes", t->name);
        sb_printf(b, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", t->name, st_dtype(t->dtype));
        for (uint32_t d = 0; d < t->rank; d++) sb_printf(b, "%s%" PRIu64, d ? "," : "", t->dims[d]);
        sb_printf(b, "],\"data_offsets\":[%" PRIu64 ",%" PRIu64 "]}", off, off + t->nbytes);
        off += t->nbytes;
    }
    sb_printf(b, "}");
    while (!b->oom && b->len % 8) sb_printf(b, " ");
    return b->oom ? txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for the safetensors header") : 0;
}

static int write_safetensors(const txlm_checkpoint *ck, txlm_atomic *out, txlm_err *err)
{
    strbuf hdr = {0};
    int rc = st_header(ck, &hdr, err);
    uint8_t len[8];
    for (int i = 0; i < 8; i++) len[i] = (uint8_t)((uint64_t)hdr.len >> (8 * i));
    if (!rc) rc = txlm_atomic_write(out, len, 8, err);
    if (!rc) rc = txlm_atomic_write(out, hdr.p, hdr.len, err);
    for (uint32_t i = 0; !rc && i < ck->n_tensors; i++) rc = txlm_atomic_write(out, ck->tensors[i].data, ck->tensors[i].nbytes, err);
    free(hdr.p);
    return rc;
}

/* The double with the fewest digits that rounds to f: 1e-05, not 9.99999974737875e-06. */
static double shortest(float f)
{
    char buf[32];
    for (int digits = 1; digits < 9; digits++) {
        snprintf(buf, sizeof buf, "%.*g", digits, (double)f);
        if ((float)strtod(buf, NULL) == f) return strtod(buf, NULL);
    }
    return f;
}

static void add_u32(cJSON *o, const char *key, uint32_t v) { cJSON_AddNumberToObject(o, key, (double)v); }

static char *config_json(const txlm_hparams *h)
{
    cJSON *o = cJSON_CreateObject(), *arch = cJSON_AddArrayToObject(o, "architectures");
    cJSON_AddItemToArray(arch, cJSON_CreateString("TransfoXLLMHeadModel"));
    cJSON_AddStringToObject(o, "model_type", "transfo-xl");
    add_u32(o, "n_token", h->n_token);
    add_u32(o, "vocab_size", h->n_token);
    add_u32(o, "d_model", h->d_model);
    add_u32(o, "d_embed", h->d_embed);
    add_u32(o, "n_head", h->n_head);
    add_u32(o, "d_head", h->d_head);
    add_u32(o, "d_inner", h->d_inner);
    add_u32(o, "n_layer", h->n_layer);
    add_u32(o, "div_val", h->div_val);
    cJSON *cut = cJSON_AddArrayToObject(o, "cutoffs"), *tp = cJSON_AddArrayToObject(o, "tie_projs");
    for (uint32_t i = 0; i < h->n_cutoffs; i++) cJSON_AddItemToArray(cut, cJSON_CreateNumber(h->cutoffs[i]));
    for (uint32_t i = 0; i < txlm_n_clusters(h); i++) cJSON_AddItemToArray(tp, cJSON_CreateBool(h->tie_projs[i]));
    /* older readers derive tie_projs from this flag; an explicit tie_projs wins in HF and txlm */
    int share = !h->tie_projs[0];
    for (uint32_t i = 1; i < txlm_n_clusters(h); i++) share &= h->tie_projs[i] != 0;
    cJSON_AddBoolToObject(o, "proj_share_all_but_first", share);
    cJSON_AddBoolToObject(o, "tie_weight", h->tie_weight);
    cJSON_AddBoolToObject(o, "tie_word_embeddings", h->tie_weight);
    cJSON_AddBoolToObject(o, "pre_lnorm", h->pre_lnorm);
    cJSON_AddBoolToObject(o, "untie_r", h->untie_r);
    cJSON_AddBoolToObject(o, "same_length", h->same_length);
    cJSON_AddNumberToObject(o, "clamp_len", h->clamp_len);
    add_u32(o, "mem_len", h->mem_len);
    add_u32(o, "tgt_len", h->tgt_len);
    add_u32(o, "ext_len", h->ext_len);
    add_u32(o, "attn_type", h->attn_type);
    cJSON_AddNumberToObject(o, "layer_norm_epsilon", shortest(h->layer_norm_epsilon));
    cJSON_AddBoolToObject(o, "adaptive", 1);
    cJSON_AddNumberToObject(o, "sample_softmax", -1);
    cJSON_AddNumberToObject(o, "dropout", 0);
    cJSON_AddNumberToObject(o, "dropatt", 0);
    cJSON_AddNumberToObject(o, "eos_token_id", 0);
    char *s = cJSON_Print(o);
    cJSON_Delete(o);
    return s;
}

static int write_config(const txlm_hparams *h, txlm_atomic *out, txlm_err *err)
{
    char *s = config_json(h);
    if (!s) return txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for config.json");
    int rc = txlm_atomic_write(out, s, strlen(s), err);
    cJSON_free(s);
    return rc;
}

static int write_vocab(const txlm_vocab *v, txlm_atomic *out, txlm_err *err)
{
    strbuf b = {0};
    for (uint32_t i = 0; i < v->n; i++) {
        uint32_t len;
        const char *s = txlm_vocab_sym(v, i, &len);
        if (len == 0 || memchr(s, '\n', len))
            return free(b.p), txlm_fail(err, TXLM_ERR_UNSUPPORTED, "symbol %" PRIu32 " cannot be one line of vocab.txt", i);
        sb_printf(&b, "%.*s\n", (int)len, s);
    }
    int rc = b.oom ? txlm_fail(err, TXLM_ERR_OUT_OF_MEMORY, "out of memory for vocab.txt") : txlm_atomic_write(out, b.p, b.len, err);
    free(b.p);
    return rc;
}

int txlm_export_hf(const txlm_hparams *h, const txlm_vocab *v, const txlm_checkpoint *ck, const char *st_path,
                   txlm_err *err)
{
    /* config.json and vocab.txt go beside the safetensors file */
    const char *slash = strrchr(st_path, '/');
    int dir_len = slash ? (int)(slash - st_path) : 1;
    const char *dir = slash ? st_path : ".";
    char final[3][4096];
    snprintf(final[0], sizeof final[0], "%s", st_path);
    snprintf(final[1], sizeof final[1], "%.*s/config.json", dir_len, dir);
    snprintf(final[2], sizeof final[2], "%.*s/vocab.txt", dir_len, dir);
    if (strlen(st_path) >= sizeof final[0] - 16)
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: path too long", st_path);
    if (!strcmp(final[0], final[1]) || !strcmp(final[0], final[2]))
        return txlm_fail(err, TXLM_ERR_INVALID_ARGUMENT, "%s: would be overwritten by config.json or vocab.txt", st_path);
    /* one missing folder level is created (and removed again on failure) */
    char folder[4096];
    snprintf(folder, sizeof folder, "%.*s", dir_len, dir);
    int made = mkdir(folder, 0755) == 0;
    /* All three are written in full before the first replaces anything. */
    txlm_atomic out[3];
    memset(out, 0, sizeof out);
    int rc = 0;
    for (int i = 0; !rc && i < 3; i++) rc = txlm_atomic_open(&out[i], final[i], err);
    if (!rc) rc = write_safetensors(ck, &out[0], err);
    if (!rc) rc = write_config(h, &out[1], err);
    if (!rc) rc = write_vocab(v, &out[2], err);
    for (int i = 0; !rc && i < 3; i++) rc = txlm_atomic_commit(&out[i], err);
    for (int i = 0; i < 3; i++) txlm_atomic_abort(&out[i]);
    if (rc && made) rmdir(folder);
    return rc;
}
